#include "dispatchlab/predictors/cachegrind_conditional.h"

#include <vector>

namespace dlab::predictors {
namespace {

class CachegrindConditional final : public DirectionPredictor {
 public:
  std::string name() const override { return "cachegrind_conditional(16384x2 bits, index = 7 conditional outcomes : 7 address bits)"; }
  bool predict(uint64_t pc, GlobalHistory&) override { return counters_[index(pc)] >= 2; }
  void update(uint64_t pc, GlobalHistory&, bool taken) override {
    uint8_t& c = counters_[index(pc)];
    if (taken && c < 3) ++c;
    if (!taken && c > 0) --c;
    history_ = (history_ << 1) | (taken ? 1u : 0u);
  }

 private:
  static constexpr uint32_t kBits = 7;
  uint32_t index(uint64_t pc) const {
    uint32_t mask = (1u << kBits) - 1;
    return ((history_ & mask) << kBits) | static_cast<uint32_t>(pc & mask);
  }
  std::vector<uint8_t> counters_ = std::vector<uint8_t>(1u << (2 * kBits), 0);
  uint32_t history_ = 0;
};

}  // namespace

std::unique_ptr<DirectionPredictor> make_cachegrind_conditional() { return std::make_unique<CachegrindConditional>(); }

}  // namespace dlab::predictors
