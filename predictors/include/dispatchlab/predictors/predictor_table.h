#pragma once
// The memory-dependence predictors by name: the one table of them (docs/predictors.md prints it).
// Each row says where its mechanism and where its sizes come from; a size that no source gives is
// marked assumed.
#include <memory>
#include <string>
#include <vector>

#include "dispatchlab/predictors/memory_dependence.h"

namespace dlab::predictors {

// A row's sizes are in its `make` alone; its predictor's name() spells them out.
struct PredictorRow {
  std::string name;
  std::string what;
  std::string mechanism_source;
  std::string sizes_source;
  std::unique_ptr<MemoryDependencePredictor> (*make)();
};

const std::vector<PredictorRow>& memory_dependence_predictors();
// The rows named in a comma-separated list ("all": every row); std::invalid_argument naming the
// unknown name and the known ones.
std::vector<const PredictorRow*> select_predictors(const std::string& list);

}  // namespace dlab::predictors
