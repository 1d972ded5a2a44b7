#include "dispatchlab/predictors/branch_predictor_table.h"

#include <algorithm>

#include "dispatchlab/predictors/row_selection.h"
#include "dispatchlab/predictors/btb.h"
#include "dispatchlab/predictors/cachegrind_conditional.h"
#include "dispatchlab/predictors/ittage.h"
#include "dispatchlab/predictors/tage.h"

namespace dlab::predictors {
namespace {

// The 64 KB ITTAGE of the CBP-3 submission: a 4,096-entry base and 15 tagged tables.
IttageConfig ittage_64kb() {
  IttageConfig c{.base_log_entries = 12, .tables = {}, .confidence_bits = 2, .tick_log = 6};
  const uint32_t history[15] = {0, 10, 16, 27, 44, 60, 96, 109, 219, 449, 487, 714, 1313, 2146, 3881};
  for (uint32_t i = 1; i <= 15; ++i) {
    uint32_t log = i == 1 ? 11 : i <= 4 ? 10 : i <= 13 ? 9 : 8;
    uint32_t tag = i == 1 ? 6 : std::min<uint32_t>(7 + i, 16);
    c.tables.push_back({log, tag, history[i - 1]});
  }
  return c;
}

// A core's indirect target array as an ITTAGE: two thirds of the entries in the base, a third in
// four tagged tables of an eighth each (assumed), histories 10 to 160 bits (assumed).
IttageConfig ittage_core(uint32_t base_log) {
  return {.base_log_entries = base_log, .tables = geometric_tables(4, 10, 160, base_log - 3, 9), .confidence_bits = 2, .tick_log = 6};
}

}  // namespace

const std::vector<BranchPredictorRow>& branch_predictors() {
  static const std::vector<BranchPredictorRow> rows = [] {
    std::vector<BranchPredictorRow> r;
    r.push_back({"btb_512x1", "cachegrind's indirect predictor: 512 untagged last targets, indexed by the branch address's low bits",
                 "valgrind, cachegrind/cg_branchpred.c (--branch-sim=yes: 2^9 untagged targets, the address's low 9 bits on amd64)", "the same",
                 [] { return make_btb({.entries = 512, .ways = 1, .tagged = false}); }, nullptr});
    r.push_back({"ittage_64kb", "ITTAGE at the CBP-3 configuration: a 4,096-entry base and 15 tagged tables, histories 0 to 3,881 bits",
                 "Seznec, \"A 64-Kbytes ITTAGE indirect branch predictor\", JWAC-2/CBP-3, 2011",
                 "the table sizes, tag widths and history lengths of the submission's simulator as public copies of it give them "
                 "(not checked against the paper's own table); targets are stored whole, not as its 25-bit offset and region pointer, "
                 "so this row holds more than 64 KB",
                 [] { return make_ittage(ittage_64kb()); }, nullptr});
    r.push_back({"ittage_zen3", "ITTAGE of 1,536 entries: a 1,024-entry base and four tagged tables of 128, histories 10 to 160 bits",
                 "Seznec, JWAC-2/CBP-3, 2011 (AMD does not publish that its indirect target array is an ITTAGE: assumed)",
                 "1,536 indirect-target entries: AMD's Zen 3 software optimization guide (as issue 46 cites it); the split, tags and histories assumed",
                 [] { return make_ittage(ittage_core(10)); }, nullptr});
    r.push_back({"ittage_zen4", "ITTAGE of 3,072 entries (Zen 4 and Zen 5): a 2,048-entry base and four tagged tables of 256, histories 10 to 160 bits",
                 "Seznec, JWAC-2/CBP-3, 2011 (AMD does not publish that its indirect target array is an ITTAGE: assumed)",
                 "3,072 indirect-target entries: AMD's Zen 4 and Zen 5 software optimization guides (as issue 46 cites them); the split, tags and histories assumed",
                 [] { return make_ittage(ittage_core(11)); }, nullptr});
    r.push_back({"tage_62kbit", "TAGE: a 4,096-counter bimodal base and four tagged tables of 1,024 entries, histories 5 to 65 bits (62 Kbit)",
                 "Seznec and Michaud, \"A case for (partially) TAgged GEometric history length branch prediction\", JILP 8, 2006",
                 "assumed, near the paper's 64 Kbit budget (its own 64 Kbit configuration is not checked here); useful counters aged every 2^18 branches (assumed)",
                 nullptr, [] { return make_tage({.base_log_entries = 12, .tables = geometric_tables(4, 5, 65, 10, 7), .u_reset_period = uint64_t{1} << 18}); }});
    r.push_back({"cachegrind_conditional", "cachegrind's conditional predictor: 16,384 2-bit counters indexed by 7 conditional outcomes and 7 address bits",
                 "valgrind, cachegrind/cg_branchpred.c (--branch-sim=yes)", "the same", nullptr, [] { return make_cachegrind_conditional(); }});
    r.push_back({"bimodal_4k", "4,096 2-bit counters indexed by pc, no history: the TAGE row's base alone, for comparison", "Smith, ISCA 1981 (2-bit counters)", "assumed",
                 nullptr, [] { return make_bimodal(12); }});
    return r;
  }();
  return rows;
}

std::vector<const BranchPredictorRow*> select_branch_predictors(const std::string& list) { return select_rows(branch_predictors(), list); }

}  // namespace dlab::predictors
