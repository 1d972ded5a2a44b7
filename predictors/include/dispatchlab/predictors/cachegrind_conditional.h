#pragma once
// Cachegrind's conditional-branch predictor (valgrind's cachegrind/cg_branchpred.c, --branch-sim=yes):
// 2^14 2-bit counters, starting at 0 (not taken), indexed by the last 7 conditional outcomes above
// the branch address's low 7 bits (amd64: no low bits dropped). It keeps its own history of
// conditionals only, not the GlobalHistory. With btb_512x1 it is the pair of predictors whose
// counts cachegrind reports, so a trace's numbers here can be checked against cachegrind's.
#include <memory>

#include "dispatchlab/predictors/branch_predictor.h"

namespace dlab::predictors {

std::unique_ptr<DirectionPredictor> make_cachegrind_conditional();

}  // namespace dlab::predictors
