// Lackey's trace format, read as a stream: instructions give the pc and the instruction count,
// M is a load and a store of one instruction, valgrind's own lines are skipped, and a malformed
// line is an error naming its line.
#include "dispatchlab/predictors/lackey_trace.h"

#include <gtest/gtest.h>

#include <sstream>
#include <vector>

namespace dlab::predictors {
namespace {

TEST(LackeyTrace, AccessesCarryTheirInstructionsPcAndPosition) {
  std::istringstream in(
      "==123== Lackey, an example Valgrind tool\n"
      "I  0401ab70,3\n"
      " S 1fff000528,8\n"
      "I  0401ab73,5\n"
      "I  0401b770,1\n"
      " L 1fff000520,4\n"
      " M 00001000,2\n");
  std::vector<MemoryAccess> got;
  LackeyTotals t = read_lackey(in, "t.txt", [&](const MemoryAccess& a) { got.push_back(a); });
  EXPECT_EQ(t.instructions, 3u);
  EXPECT_EQ(t.accesses, 4u);
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[0].kind, AccessKind::kStore);
  EXPECT_EQ(got[0].pc, 0x0401ab70u);
  EXPECT_EQ(got[0].instruction, 0u);
  EXPECT_EQ(got[0].address, 0x1fff000528u);
  EXPECT_EQ(got[0].size, 8u);
  EXPECT_EQ(got[1].kind, AccessKind::kLoad);
  EXPECT_EQ(got[1].instruction, 2u);
  EXPECT_EQ(got[1].pc, 0x0401b770u);
  EXPECT_EQ(got[2].kind, AccessKind::kLoad);  // M: the load first, then the store
  EXPECT_EQ(got[3].kind, AccessKind::kStore);
  EXPECT_EQ(got[3].address, 0x1000u);
}

// dlabtrace's "X count": instructions outside its range advance the instruction count (the window's
// clock) with no line of their own, and are not handed on as instructions.
TEST(LackeyTrace, SkippedInstructionsAdvanceTheCountOnly) {
  std::istringstream in(
      "I  0401ab70,3\n"
      " S 1fff000528,8\n"
      "X 1000\n"
      "I  0401ab73,5\n"
      " L 1fff000528,8\n");
  std::vector<MemoryAccess> got;
  std::vector<uint64_t> pcs;
  LackeyTotals t = read_lackey_trace(in, "t.txt", [&](uint64_t pc, uint32_t) { pcs.push_back(pc); },
                                     [&](const MemoryAccess& a) { got.push_back(a); });
  EXPECT_EQ(t.instructions, 1002u);
  EXPECT_EQ(pcs, (std::vector<uint64_t>{0x0401ab70u, 0x0401ab73u}));
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].instruction, 0u);
  EXPECT_EQ(got[1].instruction, 1001u);  // 1 traced + 1000 skipped before it
}

// A sampled trace's gap ("G count") counts its instructions but moves the accesses' clock by at
// most gap_clock: past the window, not past a clearing period's worth of untraced instructions.
TEST(LackeyTrace, ASampledGapMovesTheClockByAtMostGapClock) {
  std::istringstream in(
      "I  0401ab70,3\n"
      " S 1fff000528,8\n"
      "G 1000000\n"
      "I  0401ab73,5\n"
      " L 1fff000528,8\n"
      "X 10\n"
      "I  0401ab78,5\n"
      " L 1fff000528,8\n");
  std::vector<MemoryAccess> got;
  int gaps = 0;
  LackeyTotals t = read_lackey_trace(in, "t.txt", [](uint64_t, uint32_t) {}, [&](const MemoryAccess& a) { got.push_back(a); },
                                     [&] { ++gaps; }, 65);
  EXPECT_EQ(t.instructions, 1000013u);
  EXPECT_EQ(t.clock, 78u);  // 1 + 65 + 1 + 10 + 1
  EXPECT_EQ(gaps, 2);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[1].instruction, 66u);
  EXPECT_EQ(got[2].instruction, 77u);  // an X count moves the clock by all of it
}

TEST(LackeyTrace, AMalformedLineIsAnErrorWithItsLine) {
  for (const char* bad : {"I  0401ab70\n", " X 1000,8\n", " L zz,8\n", " L 1000,0\n", "I\n", "X 0\n", "X 12a\n", "X\n", "G 0\n", "G -3\n"}) {
    std::istringstream in(std::string("I  0401ab70,3\n") + bad);
    try {
      read_lackey(in, "t.txt", [](const MemoryAccess&) {});
      ADD_FAILURE() << "accepted " << bad;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("t.txt:2:"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace dlab::predictors
