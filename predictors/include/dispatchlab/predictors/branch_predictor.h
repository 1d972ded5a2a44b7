#pragma once
// The two kinds of branch predictor: an indirect-branch target predictor (indirect jumps and
// calls) and a conditional-branch direction predictor. Both read the trace's GlobalHistory as it
// was before the branch; update() must follow predict() for the same branch, before the history
// records it. Every number they produce is *simulated*, by the predictor they name.
#include <cstdint>
#include <string>

#include "dispatchlab/predictors/global_history.h"

namespace dlab::predictors {

class IndirectPredictor {
 public:
  virtual ~IndirectPredictor() = default;
  // The configuration, spelled out.
  virtual std::string name() const = 0;
  // The predicted target; 0 when the predictor has none (a miss: a mispredict).
  virtual uint64_t predict(uint64_t pc, GlobalHistory& history) = 0;
  virtual void update(uint64_t pc, GlobalHistory& history, uint64_t target) = 0;
};

class DirectionPredictor {
 public:
  virtual ~DirectionPredictor() = default;
  virtual std::string name() const = 0;
  virtual bool predict(uint64_t pc, GlobalHistory& history) = 0;
  virtual void update(uint64_t pc, GlobalHistory& history, bool taken) = 0;
};

}  // namespace dlab::predictors
