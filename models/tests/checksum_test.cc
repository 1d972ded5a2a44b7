// Every placement and dispatch mode of a model runs the same program to the same checksum: the
// placements move state around, never change what is computed.
#include <iostream>
#include <map>
#include <set>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "dispatchlab/models/models.h"

namespace dlab::models {
namespace {

TEST(Checksums, StackVariantsAgreeInEveryDispatchModeForEverySeed) {
  size_t excluded = 0;
  for (const auto& n : not_generated()) excluded += n.model == "stack";
  EXPECT_EQ(excluded, 8u);  // sp_spill and sp_wt_pn outside plain tail calls, each with its reason
  for (uint64_t seed : {1, 2, 3}) {
    auto prog = build_stack_program({16, seed, 500});
    std::map<uint64_t, std::vector<std::string>> by_checksum;
    int placements = 0;
    for (const auto& e : all_entries()) {
      if (e.model != "stack") continue;
      ModelInstance m(e, prog);
      m.run(3);
      by_checksum[m.checksum()].push_back(e.placement + "/" + e.dispatch);
      ++placements;
    }
    size_t left_out = 0;  // not built in this build (DLAB_ALL_MODELS=OFF): `just models` checks them
    for (const auto& n : not_built()) left_out += n.model == "stack";
    EXPECT_EQ(placements, 13 * 5 - static_cast<int>(excluded) - static_cast<int>(left_out));
    EXPECT_EQ(by_checksum.size(), 1u) << "seed " << seed << ": placements disagree";
    if (by_checksum.size() > 1)
      for (const auto& [sum, names] : by_checksum) ADD_FAILURE() << std::hex << sum << ": " << names.front() << " and " << names.size() - 1 << " more";
  }
}

// What a build may leave out: the stack machine's placements beyond sp in the one-function modes
// (DLAB_ALL_MODELS) and the K-copy models in goto and goto_nodup (DLAB_COMPARED_ENGINES), each
// refused with the option that builds it.
TEST(Registry, OnlyTheOneFunctionModesPlacementsBeyondSpAndKCopyGotoAreLeftOutAndTheyAreNamedAsSuch) {
  for (const auto& n : not_built()) {
    const bool kcopy_goto = n.model.starts_with("kcopy_") && (n.dispatch == "goto" || n.dispatch == "goto_nodup");
    if (!kcopy_goto) {
      EXPECT_EQ(n.model, "stack");
      EXPECT_NE(n.placement, "sp");
      EXPECT_TRUE(n.dispatch == "goto" || n.dispatch == "goto_nodup" || n.dispatch == "switch") << n.dispatch;
    }
    try {
      find_entry(n.model, n.placement, n.dispatch);
      ADD_FAILURE() << n.placement << "/" << n.dispatch << " is found though not built";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(kcopy_goto ? "-DDLAB_COMPARED_ENGINES=ON" : "-DDLAB_ALL_MODELS=ON"), std::string::npos)
          << e.what();
    }
  }
  // Built or left out, never both; every entry the K-copy research needs is built or left out
  // saying how to build it, and the stack machine's sp in every mode is built.
  auto left_out = [](const char* model, const char* d) {
    for (const auto& n : not_built())
      if (n.model == model && n.placement == "sp" && n.dispatch == d) return true;
    return false;
  };
  for (const auto& e : all_entries())
    for (const auto& n : not_built()) EXPECT_FALSE(e.model == n.model && e.placement == n.placement && e.dispatch == n.dispatch);
  for (const char* d : {"tail", "tail_pn", "goto", "goto_nodup", "switch"}) {
    EXPECT_TRUE(has_entry("kcopy_p", "sp", d) || left_out("kcopy_p", d)) << d;
    EXPECT_TRUE(has_entry("stack", "sp", d)) << d;
  }
  for (const char* d : {"tail", "tail_pn", "switch"}) EXPECT_TRUE(has_entry("kcopy_p", "sp", d)) << d;
}

// A mode's properties and an entry's convention come from the spec's rows (handlers.json).
TEST(Registry, ModesAndConventionsAreReadFromTheSpecRows) {
  EXPECT_TRUE(dispatch_mode("tail_pn").preserve_none && dispatch_mode("tail_pn").handlers_are_functions());
  EXPECT_FALSE(dispatch_mode("tail").preserve_none);
  EXPECT_FALSE(dispatch_mode("goto").handlers_are_functions() || dispatch_mode("goto_nodup").handlers_are_functions());
  size_t baselines = 0;
  for (const auto& m : dispatch_modes()) baselines += m.is_baseline();
  EXPECT_EQ(baselines, 1u);
  EXPECT_TRUE(dispatch_mode("switch").is_baseline());
  EXPECT_THROW(dispatch_mode("tail_nope"), std::invalid_argument);
  EXPECT_EQ(find_entry("stack", "sp", "tail").convention(), "default");
  EXPECT_EQ(find_entry("stack", "sp", "tail_pn").convention(), "preserve_none");
  EXPECT_EQ(find_entry("stack", "sp_wt_pn", "tail").convention(), "preserve_none");  // the placement's pn
}

TEST(Checksums, DifferentSeedsGiveDifferentResults) {
  // Guards against a checksum that ignores the computation.
  const auto& e = find_entry("stack", "sp", "tail");
  ModelInstance a(e, build_stack_program({16, 1, 300})), b(e, build_stack_program({16, 2, 300}));
  a.run(1);
  b.run(1);
  EXPECT_NE(a.checksum(), b.checksum());
}

TEST(Checksums, KCopyDispatchModesAgree) {
  for (char kind : {'u', 'p', 'o'})
    for (const char* order : {"cyclic", "random", "block8"})
      for (int copies : {1, 7, 64, 512}) {
        KCopyParams p{kind, copies, Order::parse(order), 5, 4000};
        auto prog = build_kcopy_program(p);
        std::set<uint64_t> sums;
        int modes = 0, left_out = 0;
        for (const auto& e : all_entries()) {
          if (e.model != kcopy_model(kind)) continue;
          ModelInstance m(e, prog);
          m.run(2);
          sums.insert(m.checksum());
          ++modes;
        }
        for (const auto& n : not_built()) left_out += n.model == kcopy_model(kind);
        EXPECT_EQ(modes + left_out, 5);
        EXPECT_GE(modes, 3);  // tail, tail_pn and switch in every build
        EXPECT_EQ(sums.size(), 1u) << kind << " " << order << " K=" << copies;
      }
}

TEST(Programs, OrdersVisitTheRightCopies) {
  EXPECT_EQ(order_sequence(Order::parse("cyclic"), 3, 7, 1), (std::vector<uint32_t>{0, 1, 2, 0, 1, 2, 0}));
  auto blocks = order_sequence(Order::parse("block2"), 4, 70, 1);
  // 16 passes over copies {0,1}, then over {2,3}.
  for (size_t i = 0; i < 32; ++i) EXPECT_EQ(blocks[i], i % 2);
  for (size_t i = 32; i < 64; ++i) EXPECT_EQ(blocks[i], 2 + i % 2);
  auto rnd = order_sequence(Order::parse("random"), 8, 4000, 9);
  std::set<uint32_t> seen(rnd.begin(), rnd.end());
  EXPECT_EQ(seen.size(), 8u);
  EXPECT_EQ(rnd, order_sequence(Order::parse("random"), 8, 4000, 9));  // seeded
  EXPECT_THROW(Order::parse("zigzag"), std::invalid_argument);
  EXPECT_THROW(Order::parse("block0"), std::invalid_argument);
}

TEST(Programs, KCopyProgramsUseOnlyTheFirstKCopies) {
  auto prog = build_kcopy_program({'u', 4, Order::parse("random"), 1, 1000});
  uint32_t first_u = opcode("kcopy_u", "u", 0);
  for (size_t i = 1; i + 1 < prog.size(); ++i) EXPECT_LT(prog[i].op - first_u, 4u);
  EXPECT_EQ(prog.front().op, opcode("kcopy_u", "c", 0));
  EXPECT_EQ(prog.back().op, exit_op("kcopy_u"));
  EXPECT_EQ(build_kcopy_program({'p', 4, Order::parse("cyclic"), 1, 100}).size(), 1 + 200 + 1u);
  EXPECT_THROW(build_kcopy_program({'u', 513, Order::parse("cyclic"), 1, 1000}), std::invalid_argument);
}

TEST(Programs, ShapeCountsHandlersAndPairsWithTheWrapAround) {
  // ops 1 2 1 3, then the exit-like wrap back to the first: pairs 12 21 13 31.
  std::vector<DlInst> p = {{1, 0}, {2, 0}, {1, 0}, {3, 0}};
  ProgramShape s = program_shape(p);
  EXPECT_EQ(s.dispatches, 4u);
  EXPECT_EQ(s.distinct_handlers, 3u);
  EXPECT_EQ(s.distinct_pairs, 4u);
  // The research's stack program: 64 statements, ~450 dispatches; longer programs have more pairs.
  auto short_prog = build_stack_program({17, 1, 64}), long_prog = build_stack_program({17, 1, 2000});
  EXPECT_GT(short_prog.size(), 300u);
  EXPECT_LT(short_prog.size(), 700u);
  EXPECT_LT(program_shape(short_prog).distinct_pairs, program_shape(long_prog).distinct_pairs);
  EXPECT_THROW(build_stack_program({17, 1, 0}), std::invalid_argument);
  EXPECT_THROW(build_kcopy_program({'u', 4, Order::parse("cyclic"), 1, 0}), std::invalid_argument);
}

TEST(Programs, StackProgramsExerciseEveryKind) {
  auto prog = build_stack_program({64, 3, 400});
  std::set<std::string> kinds;
  for (const auto& in : prog)
    for (const auto& k : layout("stack"))
      if (in.op >= k.first_op && in.op < k.first_op + k.copies) kinds.insert(k.kind);
  EXPECT_EQ(kinds, (std::set<std::string>{"S", "W", "b", "c", "g", "l", "s", "t", "u", "w"}));
}

}  // namespace
}  // namespace dlab::models
