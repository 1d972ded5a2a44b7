#pragma once
// Memory-order flushes, simulated: a trace's loads and stores run through an instruction window and
// a memory-dependence predictor. A load that the predictor lets run ahead of an older store still in
// the window, to an overlapping address, is a memory-order violation: the core flushes (a "machine
// clear") and the predictor learns. This is the research's "flushes" metric where no PMU counts it.
//
// The window is the model's one timing assumption: a store is unresolved (its address or data not
// yet known to the load) while fewer than `window` instructions have been fetched after it, and
// resolved after. A load that overlaps no unresolved store can never be flushed, whatever the
// predictor says. Every figure this produces is *simulated*, by the predictor and window it names.
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>

namespace dlab::predictors {

enum class AccessKind { kLoad, kStore };

// One memory access of a trace, in program order. `instruction` is the instruction's position in the
// whole trace (memory or not): the window is counted in instructions, not in accesses.
struct MemoryAccess {
  uint64_t instruction = 0;
  uint64_t pc = 0;
  uint64_t address = 0;
  uint32_t size = 0;
  AccessKind kind = AccessKind::kLoad;
};

// What a load waits for, as its predictor said when the load was fetched.
struct LoadWait {
  enum class Kind {
    kNothing,     // runs as soon as its address is known (speculates past every unresolved store)
    kEveryStore,  // waits until every older store is resolved (can never be flushed)
    kStoreSet,    // waits for the older stores fetched with store-set id `set`
  };
  Kind kind = Kind::kNothing;
  uint32_t set = 0;
};

// A predictor: told each store and load as it is fetched, and each load's outcome.
class MemoryDependencePredictor {
 public:
  virtual ~MemoryDependencePredictor() = default;
  virtual std::string name() const = 0;
  // A store fetched: the store-set id it carries (loads waiting on that set wait for it), or none.
  virtual std::optional<uint32_t> store_fetched(uint64_t pc, uint64_t instruction) = 0;
  virtual LoadWait load_fetched(uint64_t pc, uint64_t instruction) = 0;
  // The load's outcome: the youngest unresolved older store it overlaps (its pc), if any, and
  // whether it was flushed (it ran ahead of that store).
  virtual void load_resolved(uint64_t pc, const LoadWait& wait, std::optional<uint64_t> aliasing_store_pc, bool flushed) = 0;
};

struct MemoryOrderCounts {
  uint64_t instructions = 0;  // the last access's instruction + 1: the trace's length as seen here
  uint64_t loads = 0;
  uint64_t stores = 0;
  uint64_t aliasing_loads = 0;  // loads that overlapped an unresolved older store
  uint64_t flushes = 0;         // of those, the ones that ran ahead of it: memory-order violations
  uint64_t waited_loads = 0;    // loads that overlapped no unresolved store but were held behind one (false dependences)
};

class MemoryOrderWindow {
 public:
  // window: instructions after which a store is resolved (at least 1).
  MemoryOrderWindow(MemoryDependencePredictor& predictor, uint32_t window);
  // Accesses must come in program order (non-decreasing `instruction`); std::invalid_argument if not.
  void access(const MemoryAccess& a);
  const MemoryOrderCounts& counts() const { return counts_; }
  uint32_t window() const { return window_; }

 private:
  struct InFlightStore {
    uint64_t instruction, pc, address;
    uint32_t size;
    std::optional<uint32_t> set;
  };
  MemoryDependencePredictor& predictor_;
  uint32_t window_;
  std::deque<InFlightStore> stores_;  // unresolved stores, oldest first
  MemoryOrderCounts counts_;
  bool started_ = false;
};

// Store sets (G. Z. Chrysos and J. S. Emer, "Memory Dependence Prediction using Store Sets", ISCA
// 1998): a PC-indexed Store Set Identifier Table (SSIT) gives loads and stores a store-set id; a
// load waits for the stores fetched before it in its set (the Last Fetched Store Table chains a
// set's stores in order, so waiting for the last one waits for all; the LFST's size is the number of
// ids). On a violation the load and the store are put in one set: a new id if neither has one, the
// other's if one has, the smaller if both have (the paper's merge rule). The SSIT is cleared every
// `clear_interval` instructions (the paper clears on cycles; a trace has instructions), which
// removes the false dependences old violations left. The SSIT is direct-mapped and untagged: two
// PCs that index one entry share it, so in a table too small for the live load-store pairs the sets
// merge and loads wait for stores they do not overlap; they are not flushed again
// (predictors/tests/memory_dependence_test.cc shows both).
// No size has a default: every configuration names its own (predictor_table.cc's rows, the tests).
struct StoreSetsConfig {
  uint32_t ssit_entries = 0;  // a power of two
  // 0: untagged and direct-mapped, as in the paper. N (a power of two): tagged, N-way
  // set-associative with least-recently-used replacement; a pc not in the table has no set (its
  // load speculates), so the table forgets pairs once the live ones outnumber its entries.
  uint32_t ssit_ways = 0;
  uint32_t lfst_entries = 0;    // store-set ids (at least 1)
  uint64_t clear_interval = 0;  // instructions; 0: never cleared
};
std::unique_ptr<MemoryDependencePredictor> make_store_sets(const StoreSetsConfig& config);

// A per-load-PC table of saturating counters (untagged, direct-mapped), in two polarities.
//  - kWaitAfterViolation: a load speculates until it is flushed, then waits while its counter is
//    non-zero; the table is cleared every `clear_interval` instructions. With 1-bit entries this is
//    the Alpha 21264's load-wait table (R. E. Kessler, "The Alpha 21264 Microprocessor", IEEE Micro
//    19(2), 1999).
//  - kSpeculateWhenConfident: a load waits for every older store until its counter has seen
//    2^bits - 1 loads in a row that overlapped no unresolved store, then speculates; an overlap
//    resets it (the scheme described for Intel's Core memory disambiguation, J. Doweck, "Inside
//    Intel Core Microarchitecture and Smart Memory Access", Intel white paper, 2006).
enum class CounterPolarity { kWaitAfterViolation, kSpeculateWhenConfident };
struct LoadCounterConfig {
  CounterPolarity polarity = CounterPolarity::kWaitAfterViolation;
  uint32_t entries = 0;  // a power of two
  uint32_t bits = 0;     // 1..8
  uint64_t clear_interval = 0;  // instructions; 0: never cleared
};
std::unique_ptr<MemoryDependencePredictor> make_load_counter(const LoadCounterConfig& config);

// The two bounds every predictor lies between: never wait (every aliasing load is flushed) and
// wait for every older store (none is).
std::unique_ptr<MemoryDependencePredictor> make_always_speculate();
std::unique_ptr<MemoryDependencePredictor> make_never_speculate();

}  // namespace dlab::predictors
