#include "dispatchlab/predictors/predictor_table.h"

#include "dispatchlab/predictors/row_selection.h"

namespace dlab::predictors {

const std::vector<PredictorRow>& memory_dependence_predictors() {
  static const std::vector<PredictorRow> rows = [] {
    std::vector<PredictorRow> r;
    r.push_back({"always_speculate", "every load runs ahead: every aliasing load is flushed (the upper bound)", "", "", &make_always_speculate});
    r.push_back({"never_speculate", "every load waits for every older store: no flush (the lower bound)", "", "", &make_never_speculate});
    r.push_back({"store_sets", "store sets as the paper builds them: an untagged, direct-mapped SSIT, cleared periodically",
                 "Chrysos and Emer, ISCA 1998", "assumed: the paper's evaluated sizes as commonly cited, and its clearing in cycles taken as instructions",
                 [] { return make_store_sets({.ssit_entries = 4096, .ssit_ways = 0, .lfst_entries = 128, .clear_interval = 1000000}); }});
    r.push_back({"store_sets_tagged", "store sets with a tagged, set-associative SSIT (LRU): forgets pairs past its capacity",
                 "Chrysos and Emer, ISCA 1998 (the tagging and replacement are this toolkit's)", "assumed",
                 [] { return make_store_sets({.ssit_entries = 1024, .ssit_ways = 4, .lfst_entries = 128, .clear_interval = 1000000}); }});
    r.push_back({"load_wait_table", "one bit per load pc: wait after a flush, until the periodic clearing",
                 "Kessler, IEEE Micro 19(2), 1999 (Alpha 21264)", "assumed: the clearing in cycles taken as instructions",
                 [] { return make_load_counter({.polarity = CounterPolarity::kWaitAfterViolation, .entries = 1024, .bits = 1, .clear_interval = 16384}); }});
    r.push_back({"load_counter_confident", "a saturating counter per load pc: speculate once it is full of loads in a row that met no aliasing store",
                 "Doweck, Intel white paper, 2006 (Core's memory disambiguation)", "assumed",
                 [] { return make_load_counter({.polarity = CounterPolarity::kSpeculateWhenConfident, .entries = 256, .bits = 4, .clear_interval = 0}); }});
    return r;
  }();
  return rows;
}

std::vector<const PredictorRow*> select_predictors(const std::string& list) { return select_rows(memory_dependence_predictors(), list); }

}  // namespace dlab::predictors
