// The memory-dependence predictors on traces whose answer is known by hand: the window's rules
// (what aliases, what is resolved), each predictor's learning, and the K-copy shape: a table that
// holds the live load-store pairs stops flushing, one too small for them keeps flushing.
#include "dispatchlab/predictors/memory_dependence.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

namespace dlab::predictors {
namespace {

MemoryAccess store(uint64_t instruction, uint64_t pc, uint64_t address, uint32_t size = 8) {
  return {instruction, pc, address, size, AccessKind::kStore};
}
MemoryAccess load(uint64_t instruction, uint64_t pc, uint64_t address, uint32_t size = 8) {
  return {instruction, pc, address, size, AccessKind::kLoad};
}

// `pairs` store-load pairs, each a store at pc 0x1000 + 64 i and a load of the same slot at
// 0x1000 + 64 i + 8, two instructions apart; every pair `gap` instructions after the previous one.
// The K-copy model's shape: K handlers, each storing the stack slot the next one loads.
MemoryOrderCounts run_pairs(MemoryDependencePredictor& p, uint32_t window, int pairs, int rounds, uint64_t gap = 10) {
  MemoryOrderWindow w(p, window);
  uint64_t at = 0;
  for (int r = 0; r < rounds; ++r)
    for (int i = 0; i < pairs; ++i, at += gap) {
      uint64_t pc = 0x1000 + 64 * static_cast<uint64_t>(i);
      w.access(store(at, pc, 0x8000));
      w.access(load(at + 2, pc + 8, 0x8000));
    }
  return w.counts();
}

TEST(MemoryOrderWindow, AlwaysSpeculatingFlushesEveryAliasingLoadAndNeverSpeculatingNone) {
  auto always = make_always_speculate();
  auto c = run_pairs(*always, 64, 4, 10);
  EXPECT_EQ(c.loads, 40u);
  EXPECT_EQ(c.stores, 40u);
  EXPECT_EQ(c.aliasing_loads, 40u);
  EXPECT_EQ(c.flushes, 40u);
  auto never = make_never_speculate();
  c = run_pairs(*never, 64, 4, 10);
  EXPECT_EQ(c.aliasing_loads, 40u);
  EXPECT_EQ(c.flushes, 0u);
}

TEST(MemoryOrderWindow, AStoreOutsideTheWindowIsResolved) {
  auto always = make_always_speculate();
  MemoryOrderWindow w(*always, 8);
  w.access(store(0, 0x10, 0x100));
  w.access(load(8, 0x20, 0x100));  // 8 instructions later: resolved
  w.access(store(9, 0x10, 0x100));
  w.access(load(16, 0x20, 0x100));  // 7 later: still in flight
  EXPECT_EQ(w.counts().aliasing_loads, 1u);
  EXPECT_EQ(w.counts().flushes, 1u);
}

TEST(MemoryOrderWindow, OnlyOverlappingBytesAliasAndTheYoungestStoreIsTheOne) {
  auto always = make_always_speculate();
  MemoryOrderWindow w(*always, 100);
  w.access(store(0, 0x10, 0x100, 8));
  w.access(load(1, 0x20, 0x108, 8));  // the next 8 bytes: no overlap
  w.access(load(2, 0x24, 0x0f8, 8));  // the 8 before: none
  w.access(load(3, 0x28, 0x104, 4));  // inside the store: overlaps
  w.access(load(4, 0x2c, 0x0ff, 2));  // one byte in: overlaps
  EXPECT_EQ(w.counts().aliasing_loads, 2u);
  EXPECT_EQ(w.counts().flushes, 2u);
}

TEST(MemoryOrderWindow, AStoreAndALoadOfOneInstructionAreNotOrdered) {
  // A read-modify-write instruction loads before it stores: its own store is not older.
  auto always = make_always_speculate();
  MemoryOrderWindow w(*always, 100);
  w.access(load(5, 0x10, 0x100));
  w.access(store(5, 0x10, 0x100));
  w.access(load(5, 0x10, 0x100));
  EXPECT_EQ(w.counts().aliasing_loads, 0u);
}

TEST(MemoryOrderWindow, RejectsATraceOutOfOrderAndEmptyAccesses) {
  auto always = make_always_speculate();
  EXPECT_THROW(MemoryOrderWindow(*always, 0), std::invalid_argument);
  MemoryOrderWindow w(*always, 10);
  w.access(load(5, 0x10, 0x100));
  EXPECT_THROW(w.access(load(4, 0x10, 0x100)), std::invalid_argument);
  EXPECT_THROW(w.access(load(6, 0x10, 0x100, 0)), std::invalid_argument);
}

TEST(StoreSets, APairFlushesOnceAndThenWaits) {
  auto p = make_store_sets({.ssit_entries = 4096, .lfst_entries = 128, .clear_interval = 0});
  auto c = run_pairs(*p, 64, 1, 100);
  EXPECT_EQ(c.aliasing_loads, 100u);
  EXPECT_EQ(c.flushes, 1u);
}

TEST(StoreSets, PairsThatFitFlushOnceEach) {
  // 16 pairs (32 PCs) in an SSIT of 4096 entries: each pair flushes once, then waits.
  auto fits = make_store_sets({.ssit_entries = 4096, .lfst_entries = 128, .clear_interval = 0});
  auto c = run_pairs(*fits, 64, 16, 50);
  EXPECT_EQ(c.flushes, 16u);
  EXPECT_EQ(c.waited_loads, 0u);
}

TEST(StoreSets, AnUntaggedTableTooSmallMergesSetsInsteadOfFlushing) {
  // 64 pairs (128 PCs) in 16 SSIT entries and 4 ids: PCs share entries, and the merge rule (the
  // smaller id wins) pulls every pair into a few sets. Store sets then make loads wait for stores
  // they do not overlap rather than flush: an overflowing untagged SSIT does not give the seeds'
  // K-copy flushes (a tagged table that evicts would; docs/predictors.md).
  auto small = make_store_sets({.ssit_entries = 16, .lfst_entries = 4, .clear_interval = 0});
  auto c = run_pairs(*small, 64, 64, 50, 3);  // pairs three instructions apart: 21 stores in flight
  EXPECT_EQ(c.aliasing_loads, 64u * 50u);
  EXPECT_LE(c.flushes, 64u);  // at most each pair's first meeting; then every load is in a set with its store
  auto always = make_always_speculate();
  EXPECT_EQ(run_pairs(*always, 64, 64, 50, 3).flushes, 64u * 50u);
}

TEST(StoreSets, ATaggedTableFlushesEveryPairOnceTheLivePairsOutnumberItsEntries) {
  // 16 ways, one set: 8 pairs (16 PCs) fit and flush once each; 9 pairs (18 PCs) visited in turn
  // evict each other under LRU, and every pair flushes in every round: the seeds' "live pairs
  // count" step, at the table's capacity.
  StoreSetsConfig tagged{.ssit_entries = 16, .ssit_ways = 16, .lfst_entries = 128, .clear_interval = 0};
  auto fits = make_store_sets(tagged);
  EXPECT_EQ(run_pairs(*fits, 64, 8, 50).flushes, 8u);
  auto over = make_store_sets(tagged);
  EXPECT_EQ(run_pairs(*over, 64, 9, 50).flushes, 9u * 50u);
  // The same 9 pairs in an untagged table of 16: shared entries, merged sets, no repeated flushes.
  auto untagged = make_store_sets({.ssit_entries = 16, .lfst_entries = 128, .clear_interval = 0});
  EXPECT_LE(run_pairs(*untagged, 64, 9, 50).flushes, 9u);
}

TEST(StoreSets, ClearingForgetsTheSetsAndEachPairFlushesOncePerPeriod) {
  // 4 pairs, 10 instructions apart: 40 instructions a round; clear every 400: 25 periods in 1000 rounds.
  auto p = make_store_sets({.ssit_entries = 4096, .lfst_entries = 128, .clear_interval = 400});
  EXPECT_EQ(run_pairs(*p, 64, 4, 250).flushes, 4u * 25u);
}

TEST(StoreSets, ALoadJoinsTheSetsOfBothStoresItFollows) {
  // One load after either of two stores (pcs 0x10 and 0x20): after one violation with each, it
  // waits for both (one set), whichever comes.
  auto p = make_store_sets({.ssit_entries = 4096, .lfst_entries = 128, .clear_interval = 0});
  MemoryOrderWindow w(*p, 64);
  uint64_t at = 0;
  for (int r = 0; r < 20; ++r, at += 20) {
    w.access(store(at, r % 2 ? 0x10 : 0x20, 0x100));
    w.access(load(at + 1, 0x30, 0x100));
  }
  EXPECT_EQ(w.counts().flushes, 2u);
}

TEST(StoreSets, ALoadWaitingForItsSetCountsAFalseDependenceWhenItDoesNotOverlap) {
  auto p = make_store_sets({.ssit_entries = 4096, .lfst_entries = 128, .clear_interval = 0});
  MemoryOrderWindow w(*p, 5);
  w.access(store(0, 0x10, 0x100));
  w.access(load(1, 0x20, 0x100));  // flushed: now one set
  w.access(store(10, 0x10, 0x200));
  w.access(load(11, 0x20, 0x100));  // waits for the store to 0x200: false dependence
  EXPECT_EQ(w.counts().flushes, 1u);
  EXPECT_EQ(w.counts().waited_loads, 1u);
}

TEST(LoadCounter, AlphaLoadWaitTableWaitsAfterAViolationUntilCleared) {
  auto p = make_load_counter({.polarity = CounterPolarity::kWaitAfterViolation, .entries = 1024, .bits = 1, .clear_interval = 100});
  // One pair every 10 instructions for 1000 instructions: 10 clearing periods, one flush in each.
  auto c = run_pairs(*p, 64, 1, 100);
  EXPECT_EQ(c.flushes, 10u);
}

TEST(LoadCounter, ConfidentSpeculationFlushesOnlyWhenAnAliasFollowsALongSafeRun) {
  auto p = make_load_counter({.polarity = CounterPolarity::kSpeculateWhenConfident, .entries = 1024, .bits = 2, .clear_interval = 0});
  MemoryOrderWindow w(*p, 5);  // each store resolved before the next iteration's load
  // A load that aliases its store every 8th time: 7 safe runs bring the 2-bit counter to 3 (it
  // speculates from the 4th), so every alias after the first round is a flush; the first alias comes
  // at iteration 0, while the load still waits.
  uint64_t at = 0;
  for (int i = 0; i < 80; ++i, at += 10) {
    w.access(store(at, 0x10, i % 8 == 0 ? 0x100 : 0x200));
    w.access(load(at + 1, 0x20, 0x100));
  }
  EXPECT_EQ(w.counts().aliasing_loads, 10u);
  EXPECT_EQ(w.counts().flushes, 9u);
}

// Each configuration is valid but for the one field named, and the error must name that field.
void expect_rejected(const std::function<void()>& make, const std::string& names) {
  try {
    make();
    ADD_FAILURE() << "accepted a configuration with bad " << names;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(names), std::string::npos) << e.what();
  }
}

TEST(Predictors, RejectBadSizesNamingThem) {
  expect_rejected([] { make_store_sets({.ssit_entries = 1000, .lfst_entries = 128}); }, "SSIT's entries");
  expect_rejected([] { make_store_sets({.ssit_entries = 0, .lfst_entries = 128}); }, "SSIT's entries");
  expect_rejected([] { make_store_sets({.ssit_entries = 16, .lfst_entries = 0}); }, "LFST");
  expect_rejected([] { make_store_sets({.ssit_entries = 16, .ssit_ways = 3, .lfst_entries = 128}); }, "SSIT's ways");
  expect_rejected([] { make_store_sets({.ssit_entries = 16, .ssit_ways = 32, .lfst_entries = 128}); }, "fewer than its 32 ways");
  expect_rejected([] { make_load_counter({.entries = 3, .bits = 1}); }, "counter table's entries");
  expect_rejected([] { make_load_counter({.entries = 1024, .bits = 9}); }, "counter bits");
  expect_rejected([] { make_load_counter({.entries = 1024, .bits = 0}); }, "counter bits");
}

}  // namespace
}  // namespace dlab::predictors
