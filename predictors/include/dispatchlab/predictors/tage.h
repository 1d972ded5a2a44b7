#pragma once
// TAGE (A. Seznec and P. Michaud, "A case for (partially) TAgged GEometric history length branch
// prediction", JILP 8, 2006): a bimodal base (2-bit counters indexed by pc) and tagged tables
// indexed by the pc hashed with the global history folded to geometrically growing lengths. A
// tagged entry holds a partial tag, a signed 3-bit prediction counter and a 2-bit useful counter.
//  - Prediction: the hitting table of longest history (the provider) gives the direction (its
//    counter's sign); when its entry looks newly allocated (a weak counter, useful 0) and the
//    USE_ALT_ON_NA counter is not negative, the alternate (the next hitting table, or the base) does.
//  - Update: the provider's counter moves toward the outcome; its useful counter moves up when it
//    was right and the alternate differed, down when it was wrong and the alternate differed.
//  - Allocation: on a misprediction, when the provider is not the longest table, one entry is taken
//    in a longer table whose useful counter is 0 (weak counter toward the outcome, useful 0), a
//    shorter one chosen twice as often as the next (the paper's random choice, from a generator
//    seeded the same every time); if none is free, the longer tables' useful counters are decremented.
//  - The useful counters are aged every `u_reset_period` branches: their high bits, then their low
//    bits, are cleared in turn.
// Not modelled: the paper's 16-bit path history as a separate input (path bits from indirect
// targets are in the GlobalHistory instead).
#include <cstdint>
#include <memory>
#include <vector>

#include "dispatchlab/predictors/branch_predictor.h"
#include "dispatchlab/predictors/ittage.h"

namespace dlab::predictors {

struct TageConfig {
  uint32_t base_log_entries = 0;          // bimodal: 2^n 2-bit counters
  std::vector<TaggedTableConfig> tables;  // by increasing history
  uint64_t u_reset_period = 0;            // branches; 0: never
};
std::unique_ptr<DirectionPredictor> make_tage(const TageConfig& config);
// The simplest direction predictor, for comparison: the bimodal table alone.
std::unique_ptr<DirectionPredictor> make_bimodal(uint32_t log_entries);

}  // namespace dlab::predictors
