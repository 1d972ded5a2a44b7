#pragma once
// A last-target branch target buffer for indirect branches: `entries` targets in sets of `ways`,
// indexed by the branch's pc, predicting the target the branch took last. Tagged: a pc not in its
// set has no prediction, and takes the set's least recently used way. Untagged (ways must be 1): a
// pc reads whatever target its entry holds, another branch's included, as cachegrind's 512-entry
// indirect predictor does (valgrind's cachegrind/cg_branchpred.c: 2^9 targets, starting at 0,
// indexed by the branch address's low 9 bits on amd64).
#include <cstdint>
#include <memory>

#include "dispatchlab/predictors/branch_predictor.h"

namespace dlab::predictors {

struct BtbConfig {
  uint32_t entries = 0;  // a power of two
  uint32_t ways = 0;     // a power of two, at most entries
  bool tagged = true;
};
std::unique_ptr<IndirectPredictor> make_btb(const BtbConfig& config);

}  // namespace dlab::predictors
