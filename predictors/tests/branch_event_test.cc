// Branch events from an instruction stream: targets are the next instruction's address, a
// conditional is taken when that is not pc + size, the last instruction's branch has no target;
// the sites file's errors name their line.
#include "dispatchlab/predictors/branch_event.h"

#include <gtest/gtest.h>

#include <sstream>
#include <vector>

#include "dispatchlab/predictors/lackey_trace.h"

namespace dlab::predictors {
namespace {

TEST(BranchEvents, AHandMadeStreamGivesItsBranches) {
  // A conditional at 0x10 (2 bytes) falls through once and is taken once; an indirect jump at 0x20
  // goes to 0x40 then 0x50; a return at 0x40; a direct jump at 0x50; the trace ends on the jump at 0x20.
  std::istringstream trace(
      "==1== Lackey\n"
      "I  00000010,2\n"  // conditional, next 0x12: not taken
      "I  00000012,3\n"
      " L 00008000,8\n"
      "I  00000010,2\n"  // conditional, next 0x20: taken
      "I  00000020,2\n"  // indirect jump to 0x40
      "I  00000040,1\n"  // return to 0x20
      "I  00000020,2\n"  // indirect jump to 0x50
      "I  00000050,5\n"  // direct jump to 0x20
      "I  00000020,2\n");  // indirect jump: the last instruction, no target
  BranchSites sites{{0x10, BranchKind::kConditional}, {0x20, BranchKind::kIndirectJump}, {0x40, BranchKind::kReturn}, {0x50, BranchKind::kDirect}};
  std::vector<BranchEvent> got;
  BranchEventStream stream(sites, [&](const BranchEvent& b) { got.push_back(b); });
  LackeyTotals t = read_lackey_instructions(trace, "t", [&](uint64_t pc, uint32_t size) { stream.instruction(pc, size); });
  EXPECT_TRUE(stream.finish());
  EXPECT_EQ(t.instructions, 8u);
  EXPECT_EQ(t.accesses, 1u);
  ASSERT_EQ(got.size(), 6u);
  auto expect = [&](size_t i, uint64_t pc, BranchKind kind, bool taken, uint64_t target) {
    EXPECT_EQ(got[i].pc, pc) << i;
    EXPECT_EQ(got[i].kind, kind) << i;
    EXPECT_EQ(got[i].taken, taken) << i;
    EXPECT_EQ(got[i].target, target) << i;
  };
  expect(0, 0x10, BranchKind::kConditional, false, 0x12);
  expect(1, 0x10, BranchKind::kConditional, true, 0x20);
  expect(2, 0x20, BranchKind::kIndirectJump, true, 0x40);
  expect(3, 0x40, BranchKind::kReturn, true, 0x20);
  expect(4, 0x20, BranchKind::kIndirectJump, true, 0x50);
  expect(5, 0x50, BranchKind::kDirect, true, 0x20);
}

TEST(BranchEvents, AStreamEndingOffABranchDropsNothing) {
  BranchSites sites{{0x10, BranchKind::kDirect}};
  int n = 0;
  BranchEventStream stream(sites, [&](const BranchEvent&) { ++n; });
  stream.instruction(0x10, 2);
  stream.instruction(0x30, 2);
  EXPECT_FALSE(stream.finish());
  EXPECT_EQ(n, 1);
}

// A sampled trace (dlabtrace --sample): the jump at 0x20 is the last instruction before a gap, so
// what follows the "X" line is not its target; it is dropped, never predicted against 0x90. The
// jump before the gap's first-after instruction (0x20 -> 0x40) is kept: 0x40 is its real target.
TEST(BranchEvents, ABranchBeforeASampledGapIsDropped) {
  std::istringstream trace(
      "I  00000020,2\n"   // indirect jump to 0x40
      "I  00000040,2\n"   // indirect jump: its successor ran untraced
      "X 5000\n"
      "I  00000090,2\n"
      "I  00000020,2\n"   // indirect jump to 0x40
      "I  00000040,2\n");
  BranchSites sites{{0x20, BranchKind::kIndirectJump}, {0x40, BranchKind::kIndirectJump}};
  std::vector<BranchEvent> got;
  BranchEventStream stream(sites, [&](const BranchEvent& b) { got.push_back(b); });
  uint64_t dropped = 0;
  LackeyTotals t = read_lackey_trace(
      trace, "t", [&](uint64_t pc, uint32_t size) { stream.instruction(pc, size); }, [](const MemoryAccess&) {},
      [&] { dropped += stream.gap(); });
  EXPECT_EQ(t.instructions, 5005u);
  EXPECT_EQ(dropped, 1u);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].pc, 0x20u);
  EXPECT_EQ(got[0].target, 0x40u);
  EXPECT_EQ(got[1].pc, 0x20u);
  EXPECT_EQ(got[1].target, 0x40u);
  EXPECT_TRUE(stream.finish());  // the last jump at 0x40 has no target either
}

TEST(BranchSitesFile, ReadsPcsAndKinds) {
  std::istringstream in("# objdump's branches\n\n0x401000 indirect_jump\n401002\tconditional\n  401010 return  \n401020 indirect_call\n401030 direct\n");
  BranchSites s = read_branch_sites(in, "s");
  ASSERT_EQ(s.size(), 5u);
  EXPECT_EQ(s.at(0x401000), BranchKind::kIndirectJump);
  EXPECT_EQ(s.at(0x401002), BranchKind::kConditional);
  EXPECT_EQ(s.at(0x401010), BranchKind::kReturn);
  EXPECT_EQ(s.at(0x401020), BranchKind::kIndirectCall);
  EXPECT_EQ(s.at(0x401030), BranchKind::kDirect);
}

TEST(BranchSitesFile, AMalformedLineIsAnErrorWithItsLine) {
  for (const char* bad : {"401000\n", "40z000 direct\n", "401000 jump\n", "0x direct\n", "401000 direct\n"}) {
    std::istringstream in(std::string("401000 direct\n") + bad);
    try {
      read_branch_sites(in, "sites.txt");
      ADD_FAILURE() << "accepted " << bad;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("sites.txt:2:"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace dlab::predictors
