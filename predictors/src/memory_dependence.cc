#include "dispatchlab/predictors/memory_dependence.h"

#include <algorithm>
#include <bit>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

namespace dlab::predictors {
namespace {

void check_power_of_two(const char* what, uint64_t n) {
  if (n == 0 || !std::has_single_bit(n)) throw std::invalid_argument(fmt::format("{} must be a power of two, not {}", what, n));
}

// A direct-mapped, untagged table's index: the pc's low bits folded with the next ones, so that
// handlers laid out at a power-of-two stride do not all land in one entry.
uint32_t table_index(uint64_t pc, uint32_t entries) {
  const int shift = std::countr_zero(entries);
  return static_cast<uint32_t>((pc ^ (pc >> shift)) & (entries - 1));
}

bool overlaps(uint64_t a, uint32_t a_size, uint64_t b, uint32_t b_size) { return a < b + b_size && b < a + a_size; }

// Periodic clearing of a predictor's table, every `interval` instructions (0: never): due once at
// the first instruction of each period.
class PeriodicClearing {
 public:
  explicit PeriodicClearing(uint64_t interval) : interval_(interval) {}
  bool due(uint64_t instruction) {
    if (interval_ == 0) return false;
    uint64_t period = instruction / interval_;
    if (period == period_) return false;
    period_ = period;
    return true;
  }

 private:
  uint64_t interval_;
  uint64_t period_ = 0;
};

// The Store Set Identifier Table. Untagged and direct-mapped (ways == 0, the paper's): a pc reads
// whatever id its entry holds, another pc's included. Tagged and set-associative (ways > 0): a pc
// finds its own entry or none, and a pc given an id takes the least recently used way of its set,
// evicting that pc's id: the table then forgets pairs once the live ones outnumber its entries.
class StoreSetIdTable {
 public:
  StoreSetIdTable(uint32_t entries, uint32_t ways) : entries_(entries), ways_(ways), slots_(entries) {
    check_power_of_two("the SSIT's entries", entries);
    if (ways > 0) {
      check_power_of_two("the SSIT's ways", ways);
      if (ways > entries) throw std::invalid_argument(fmt::format("the SSIT has {} entries, fewer than its {} ways", entries, ways));
    }
  }
  std::optional<uint32_t> find(uint64_t pc) {
    if (ways_ == 0) return slots_[table_index(pc, entries_)].id;
    Slot* s = lookup(pc);
    if (!s) return std::nullopt;
    s->last_use = ++clock_;
    return s->id;
  }
  void assign(uint64_t pc, uint32_t id) {
    if (ways_ == 0) {
      slots_[table_index(pc, entries_)].id = id;
      return;
    }
    Slot* s = lookup(pc);
    if (!s) {
      Slot* first = &slots_[static_cast<size_t>(table_index(pc, entries_ / ways_)) * ways_];
      s = std::min_element(first, first + ways_, [](const Slot& a, const Slot& b) {
        return (a.id ? a.last_use + 1 : 0) < (b.id ? b.last_use + 1 : 0);  // an empty way first, then the least recently used
      });
      s->pc = pc;
    }
    s->id = id;
    s->last_use = ++clock_;
  }
  void clear() {
    for (Slot& s : slots_) s.id.reset();
  }

 private:
  struct Slot {
    uint64_t pc = 0;
    std::optional<uint32_t> id;
    uint64_t last_use = 0;
  };
  Slot* lookup(uint64_t pc) {
    Slot* first = &slots_[static_cast<size_t>(table_index(pc, entries_ / ways_)) * ways_];
    for (Slot* s = first; s != first + ways_; ++s)
      if (s->id && s->pc == pc) return s;
    return nullptr;
  }
  uint32_t entries_, ways_;
  std::vector<Slot> slots_;
  uint64_t clock_ = 0;
};

class StoreSets final : public MemoryDependencePredictor {
 public:
  explicit StoreSets(const StoreSetsConfig& c) : config_(c), ssit_(c.ssit_entries, c.ssit_ways) {
    if (c.lfst_entries == 0) throw std::invalid_argument("the LFST needs at least one entry");
  }
  std::string name() const override {
    return fmt::format("store_sets(ssit={}{}, lfst={}, clear={})", config_.ssit_entries,
                       config_.ssit_ways ? fmt::format(" tagged {}-way LRU", config_.ssit_ways) : std::string(" untagged"),
                       config_.lfst_entries, config_.clear_interval);
  }
  std::optional<uint32_t> store_fetched(uint64_t pc, uint64_t instruction) override {
    clear_if_due(instruction);
    return ssit_.find(pc);
  }
  LoadWait load_fetched(uint64_t pc, uint64_t instruction) override {
    clear_if_due(instruction);
    auto set = ssit_.find(pc);
    if (!set) return {};
    return {LoadWait::Kind::kStoreSet, *set};
  }
  void load_resolved(uint64_t pc, const LoadWait&, std::optional<uint64_t> store_pc, bool flushed) override {
    if (!flushed) return;
    auto load_set = ssit_.find(pc);
    auto store_set = ssit_.find(*store_pc);
    uint32_t id;
    if (!load_set && !store_set) {
      id = next_set_;
      next_set_ = (next_set_ + 1) % config_.lfst_entries;
    } else if (!load_set) {
      id = *store_set;
    } else if (!store_set) {
      id = *load_set;
    } else {
      id = std::min(*load_set, *store_set);
    }
    ssit_.assign(pc, id);
    ssit_.assign(*store_pc, id);
  }

 private:
  void clear_if_due(uint64_t instruction) {
    if (clearing_.due(instruction)) ssit_.clear();
  }
  StoreSetsConfig config_;
  StoreSetIdTable ssit_;
  uint32_t next_set_ = 0;  // ids handed out in turn; past the LFST's size they are reused
  PeriodicClearing clearing_{config_.clear_interval};
};

class LoadCounter final : public MemoryDependencePredictor {
 public:
  explicit LoadCounter(const LoadCounterConfig& c) : config_(checked(c)), counters_(c.entries, 0), max_((1u << c.bits) - 1) {}
  std::string name() const override {
    return fmt::format("load_counter({}, entries={}, bits={}, clear={})",
                       config_.polarity == CounterPolarity::kWaitAfterViolation ? "wait_after_violation" : "speculate_when_confident",
                       config_.entries, config_.bits, config_.clear_interval);
  }
  std::optional<uint32_t> store_fetched(uint64_t, uint64_t instruction) override {
    clear_if_due(instruction);
    return std::nullopt;
  }
  LoadWait load_fetched(uint64_t pc, uint64_t instruction) override {
    clear_if_due(instruction);
    uint8_t c = counters_[table_index(pc, config_.entries)];
    bool wait = config_.polarity == CounterPolarity::kWaitAfterViolation ? c != 0 : c != max_;
    return {wait ? LoadWait::Kind::kEveryStore : LoadWait::Kind::kNothing, 0};
  }
  void load_resolved(uint64_t pc, const LoadWait&, std::optional<uint64_t> store_pc, bool flushed) override {
    uint8_t& c = counters_[table_index(pc, config_.entries)];
    if (config_.polarity == CounterPolarity::kWaitAfterViolation) {
      if (flushed) c = max_;
    } else if (store_pc) {
      c = 0;  // an overlap, flushed or waited for: confidence starts again
    } else if (c < max_) {
      ++c;
    }
  }

 private:
  // Checked before anything is sized or shifted by it.
  static const LoadCounterConfig& checked(const LoadCounterConfig& c) {
    check_power_of_two("the counter table's entries", c.entries);
    if (c.bits < 1 || c.bits > 8) throw std::invalid_argument(fmt::format("counter bits must be 1 to 8, not {}", c.bits));
    return c;
  }
  void clear_if_due(uint64_t instruction) {
    if (clearing_.due(instruction)) std::fill(counters_.begin(), counters_.end(), 0);
  }
  LoadCounterConfig config_;
  std::vector<uint8_t> counters_;
  uint8_t max_;
  PeriodicClearing clearing_{config_.clear_interval};
};

class Fixed final : public MemoryDependencePredictor {
 public:
  explicit Fixed(bool speculate) : speculate_(speculate) {}
  std::string name() const override { return speculate_ ? "always_speculate" : "never_speculate"; }
  std::optional<uint32_t> store_fetched(uint64_t, uint64_t) override { return std::nullopt; }
  LoadWait load_fetched(uint64_t, uint64_t) override {
    return {speculate_ ? LoadWait::Kind::kNothing : LoadWait::Kind::kEveryStore, 0};
  }
  void load_resolved(uint64_t, const LoadWait&, std::optional<uint64_t>, bool) override {}

 private:
  bool speculate_;
};

}  // namespace

MemoryOrderWindow::MemoryOrderWindow(MemoryDependencePredictor& predictor, uint32_t window)
    : predictor_(predictor), window_(window) {
  if (window == 0) throw std::invalid_argument("the instruction window must hold at least one instruction");
}

void MemoryOrderWindow::access(const MemoryAccess& a) {
  if (started_ && a.instruction + 1 < counts_.instructions)
    throw std::invalid_argument(fmt::format("access at instruction {} after one at instruction {}: a trace comes in program order",
                                            a.instruction, counts_.instructions - 1));
  if (a.size == 0) throw std::invalid_argument(fmt::format("access at instruction {} has size 0", a.instruction));
  started_ = true;
  counts_.instructions = a.instruction + 1;
  // Stores fetched `window` or more instructions ago are resolved: no load can run ahead of them.
  while (!stores_.empty() && a.instruction - stores_.front().instruction >= window_) stores_.pop_front();
  if (a.kind == AccessKind::kStore) {
    ++counts_.stores;
    stores_.push_back({a.instruction, a.pc, a.address, a.size, predictor_.store_fetched(a.pc, a.instruction)});
    return;
  }
  ++counts_.loads;
  LoadWait wait = predictor_.load_fetched(a.pc, a.instruction);
  // The youngest older unresolved store the load overlaps: the one whose data it should have had.
  auto it = std::find_if(stores_.rbegin(), stores_.rend(), [&](const InFlightStore& s) {
    return s.instruction < a.instruction && overlaps(s.address, s.size, a.address, a.size);
  });
  std::optional<uint64_t> aliasing;
  bool flushed = false;
  if (it != stores_.rend()) {
    aliasing = it->pc;
    ++counts_.aliasing_loads;
    bool waited = wait.kind == LoadWait::Kind::kEveryStore || (wait.kind == LoadWait::Kind::kStoreSet && it->set == wait.set);
    flushed = !waited;
    if (flushed) ++counts_.flushes;
  } else if (wait.kind != LoadWait::Kind::kNothing) {
    bool any_in_set = wait.kind == LoadWait::Kind::kEveryStore ? !stores_.empty()
                                                                : std::any_of(stores_.begin(), stores_.end(), [&](const InFlightStore& s) { return s.set == wait.set; });
    if (any_in_set) ++counts_.waited_loads;
  }
  predictor_.load_resolved(a.pc, wait, aliasing, flushed);
}

std::unique_ptr<MemoryDependencePredictor> make_store_sets(const StoreSetsConfig& config) { return std::make_unique<StoreSets>(config); }
std::unique_ptr<MemoryDependencePredictor> make_load_counter(const LoadCounterConfig& config) { return std::make_unique<LoadCounter>(config); }
std::unique_ptr<MemoryDependencePredictor> make_always_speculate() { return std::make_unique<Fixed>(true); }
std::unique_ptr<MemoryDependencePredictor> make_never_speculate() { return std::make_unique<Fixed>(false); }

}  // namespace dlab::predictors
