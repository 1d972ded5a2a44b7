#include "dispatchlab/predictors/btb.h"

#include <bit>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

namespace dlab::predictors {
namespace {

class Btb final : public IndirectPredictor {
 public:
  explicit Btb(const BtbConfig& c) : config_(checked(c)), sets_(c.entries / c.ways), slots_(c.entries) {}
  std::string name() const override {
    return fmt::format("btb(entries={}, ways={}, {})", config_.entries, config_.ways,
                       config_.tagged ? "tagged, LRU, last target" : "untagged, direct-mapped, last target");
  }
  uint64_t predict(uint64_t pc, GlobalHistory&) override {
    if (!config_.tagged) return slots_[pc & (sets_ - 1)].target;
    Slot* s = find(pc);
    return s ? s->target : 0;
  }
  void update(uint64_t pc, GlobalHistory&, uint64_t target) override {
    if (!config_.tagged) {
      slots_[pc & (sets_ - 1)].target = target;
      return;
    }
    Slot* s = find(pc);
    if (!s) {
      Slot* first = &slots_[static_cast<size_t>(pc & (sets_ - 1)) * config_.ways];
      s = first;
      for (Slot* w = first; w != first + config_.ways; ++w)
        if (!w->valid || (s->valid && w->last_use < s->last_use)) {
          s = w;
          if (!w->valid) break;
        }
      s->valid = true;
      s->pc = pc;
    }
    s->target = target;
    s->last_use = ++clock_;
  }

 private:
  struct Slot {
    bool valid = false;
    uint64_t pc = 0, target = 0, last_use = 0;
  };
  static const BtbConfig& checked(const BtbConfig& c) {
    if (c.entries == 0 || !std::has_single_bit(c.entries)) throw std::invalid_argument(fmt::format("BTB entries must be a power of two, not {}", c.entries));
    if (c.ways == 0 || !std::has_single_bit(c.ways) || c.ways > c.entries)
      throw std::invalid_argument(fmt::format("BTB ways must be a power of two up to its entries, not {}", c.ways));
    if (!c.tagged && c.ways != 1) throw std::invalid_argument("an untagged BTB is direct-mapped (1 way)");
    return c;
  }
  Slot* find(uint64_t pc) {
    Slot* first = &slots_[static_cast<size_t>(pc & (sets_ - 1)) * config_.ways];
    for (Slot* w = first; w != first + config_.ways; ++w)
      if (w->valid && w->pc == pc) {
        w->last_use = ++clock_;
        return w;
      }
    return nullptr;
  }
  BtbConfig config_;
  uint64_t sets_;
  std::vector<Slot> slots_;
  uint64_t clock_ = 0;
};

}  // namespace

std::unique_ptr<IndirectPredictor> make_btb(const BtbConfig& config) { return std::make_unique<Btb>(config); }

}  // namespace dlab::predictors
