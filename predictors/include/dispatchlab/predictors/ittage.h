#pragma once
// ITTAGE (A. Seznec, "A 64-Kbytes ITTAGE indirect branch predictor", JWAC-2/CBP-3, 2011; first in
// A. Seznec and P. Michaud, JILP 2006): a tagless base table of targets indexed by pc, and tagged
// tables indexed by the pc hashed with the global history folded to geometrically growing lengths.
// An entry holds a partial tag, a target, a confidence counter and a useful bit.
//  - Prediction: the hitting table of longest history (the provider) gives the target; when its
//    confidence is 0 (newly allocated) and the USE_ALT_ON_NA counter is not negative, the next
//    hitting table (the alternate, or the base) gives it instead.
//  - Update: a correct provider gains confidence; a wrong one loses it, and at 0 its target is
//    replaced. The useful bit is set when the provider was right and the alternate differed.
//  - Allocation: when the provider's target was wrong, one entry is taken in a longer-history table
//    whose useful bit is clear (the first such, from the provider's next table); each table passed
//    over with its bit set counts toward a tick that, at 2^tick_log, clears every useful bit.
// Not modelled: the paper's target region table (targets are stored whole), the in-flight
// (speculative) state, and its allocation of more than one entry per miss.
#include <cstdint>
#include <memory>
#include <vector>

#include "dispatchlab/predictors/branch_predictor.h"

namespace dlab::predictors {

struct TaggedTableConfig {
  uint32_t log_entries = 0;  // 1..20
  uint32_t tag_bits = 0;     // 1..16
  uint32_t history = 0;      // bits of global history (0..GlobalHistory::kMaxLength)
};

struct IttageConfig {
  uint32_t base_log_entries = 0;          // the tagless base table: 2^n targets
  std::vector<TaggedTableConfig> tables;  // by increasing history
  uint32_t confidence_bits = 2;
  uint32_t tick_log = 6;
};
std::unique_ptr<IndirectPredictor> make_ittage(const IttageConfig& config);

// n tagged tables with geometric history lengths from `shortest` to `longest`: L(i) = shortest *
// (longest/shortest)^(i/(n-1)), rounded (the TAGE paper's series), each of 2^log_entries entries
// with tags of tag_bits + i bits (capped at 16).
std::vector<TaggedTableConfig> geometric_tables(uint32_t n, uint32_t shortest, uint32_t longest, uint32_t log_entries, uint32_t tag_bits);

}  // namespace dlab::predictors
