#pragma once
// The branch predictors by name: the one table of them (docs/predictors.md prints it), as
// predictor_table.h is for the memory-dependence predictors. Each row says where its mechanism and
// its sizes come from; a size that no source gives is marked assumed. A row makes either an
// indirect-branch target predictor (indirect jumps and calls) or a conditional direction predictor.
#include <memory>
#include <string>
#include <vector>

#include "dispatchlab/predictors/branch_predictor.h"

namespace dlab::predictors {

// Bits one indirect jump or call adds to the global history: the number the CBP-3 ITTAGE
// simulator uses (see the ittage_64kb row); every row reads that one history.
inline constexpr uint32_t kPathBitsPerIndirect = 10;

struct BranchPredictorRow {
  std::string name;
  std::string what;
  std::string mechanism_source;
  std::string sizes_source;
  // Exactly one is set.
  std::unique_ptr<IndirectPredictor> (*make_indirect)() = nullptr;
  std::unique_ptr<DirectionPredictor> (*make_direction)() = nullptr;
};

const std::vector<BranchPredictorRow>& branch_predictors();
// The rows named in a comma-separated list ("all": every row); std::invalid_argument naming the
// unknown name and the known ones.
std::vector<const BranchPredictorRow*> select_branch_predictors(const std::string& list);

}  // namespace dlab::predictors
