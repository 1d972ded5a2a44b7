// One pass through both tables' predictors, and what the binary's tools say: objdump's branches
// by kind (prefixes skipped, the load offset added) and a function's code range from nm.
#include "dispatchlab/predictors/trace_simulation.h"

#include <gtest/gtest.h>

#include <sstream>

#include "dispatchlab/predictors/binary_code.h"

namespace dlab::predictors {
namespace {

// Two store-load pairs to one slot, in a code range [0x1000, 0x1008); a jump at 0x1008 alternating
// between two targets (not in the memory range). Every number below is worked out by hand.
const char* kTrace =
    "==1== header\n"
    "I  00001000,4\n S 00008000,8\nI  00001004,4\n L 00008000,8\n"
    "I  00001008,2\nI  00002000,2\n"
    "I  00001000,4\n S 00008000,8\nI  00001004,4\n L 00008000,8\n"
    "I  00001008,2\nI  00003000,2\n"
    "I  00005000,4\n L 00008000,8\n";  // outside the range: not simulated

TEST(TraceSimulation, MemoryAndBranchRowsSeeOnePass) {
  PredictorSelection rows = select_any_predictors("always_speculate,store_sets,btb_512x1");
  ASSERT_EQ(rows.memory.size(), 2u);
  ASSERT_EQ(rows.branch.size(), 1u);
  TraceSimulation sim(rows, {64}, {{0x1008, BranchKind::kIndirectJump}}, 0x1000, 0x1008);
  std::istringstream in(kTrace);
  LackeyTotals t = sim.run(in, "trace");
  EXPECT_EQ(t.instructions, 9u);
  auto counts = sim.counts();
  ASSERT_EQ(counts.size(), 3u);
  EXPECT_EQ(counts[0].predictor, "always_speculate");
  EXPECT_EQ(counts[0].quantity, "memory_order_flushes");
  EXPECT_EQ(counts[0].window, 64u);
  EXPECT_EQ(counts[0].count, 2u);  // both pairs; the load at 0x5000 is outside the range
  EXPECT_EQ(counts[1].predictor, "store_sets");
  EXPECT_EQ(counts[1].count, 1u);  // learnt after the first
  EXPECT_EQ(counts[2].predictor, "btb_512x1");
  EXPECT_EQ(counts[2].quantity, "indirect_mispredicts");
  EXPECT_EQ(counts[2].count, 2u);  // a cold entry, then the other target
  EXPECT_EQ(sim.branch_counts()[static_cast<size_t>(BranchKind::kIndirectJump)], 2u);
}

// With a warm-up of one jump, everything before the second jump is left out (both pairs' flushes,
// the first jump's cold miss): the second jump's miss is what is counted. A warm-up that leaves no
// jump to count is an error.
TEST(TraceSimulation, AWarmUpLeavesOutWhatCameBeforeItsLastJump) {
  PredictorSelection rows = select_any_predictors("always_speculate,btb_512x1");
  TraceSimulation sim(rows, {64}, {{0x1008, BranchKind::kIndirectJump}}, 0x1000, 0x1008);
  sim.set_warmup(1);
  std::istringstream in(kTrace);
  sim.run(in, "trace");
  auto counts = sim.counts();
  EXPECT_EQ(counts[0].count, 0u);  // always_speculate: 2 in the whole trace, both pairs before the second jump
  EXPECT_EQ(counts[1].count, 1u);  // btb: 2 in the whole trace (a cold miss, then the other target)
  EXPECT_EQ(sim.branch_counts()[static_cast<size_t>(BranchKind::kIndirectJump)], 2u);  // whole

  TraceSimulation longer(rows, {64}, {{0x1008, BranchKind::kIndirectJump}}, 0x1000, 0x1008);
  longer.set_warmup(2);  // the trace's two jumps: none left to count
  std::istringstream again(kTrace);
  EXPECT_THROW(longer.run(again, "trace"), std::runtime_error);
}

// Asked for, the instructions of the range counted by address (the ideal bound's path through a
// function); not asked for, none.
TEST(TraceSimulation, CountsEachInstructionOfTheRangeWhenAsked) {
  TraceSimulation sim(select_any_predictors("store_sets"), {64}, {}, 0x1000, 0x1008);
  sim.count_executions();
  std::istringstream in(kTrace);
  sim.run(in, "trace");
  EXPECT_EQ(sim.executions(), (std::unordered_map<uint64_t, uint64_t>{{0x1000, 2}, {0x1004, 2}}));
  TraceSimulation quiet(select_any_predictors("store_sets"), {64}, {}, 0x1000, 0x1008);
  std::istringstream again(kTrace);
  quiet.run(again, "trace");
  EXPECT_TRUE(quiet.executions().empty());
}

// The branch rows once per code shift (the binary at other load addresses), each with its own
// history; the memory rows once. A last-target table indexed by the address's low bits is the same
// at any shift that keeps them (a page's), so its counts repeat; an empty shift list is refused.
TEST(TraceSimulation, BranchRowsRunOncePerCodeShift) {
  PredictorSelection rows = select_any_predictors("store_sets,btb_512x1,ittage_zen4");
  TraceSimulation sim(rows, {64}, {{0x1008, BranchKind::kIndirectJump}}, 0x1000, 0x1008, {0, 0x7000});
  std::istringstream in(kTrace);
  sim.run(in, "trace");
  ASSERT_EQ(sim.layouts(), 2u);
  auto at0 = sim.counts(0), at1 = sim.counts(1);
  ASSERT_EQ(at0.size(), 3u);
  ASSERT_EQ(at1.size(), 3u);
  EXPECT_EQ(at0[0].count, at1[0].count);  // store_sets: one simulation for every shift
  EXPECT_EQ(at0[1].predictor, "btb_512x1");
  EXPECT_EQ(at0[1].count, 2u);
  EXPECT_EQ(at1[1].count, 2u);
  EXPECT_EQ(sim.counts()[2].count, at0[2].count);
  EXPECT_EQ(sim.branch_counts()[static_cast<size_t>(BranchKind::kIndirectJump)], 2u);  // branches counted once
  EXPECT_THROW(TraceSimulation(rows, {64}, {{0x1008, BranchKind::kIndirectJump}}, 0x1000, 0x1008, {}), std::invalid_argument);
}

TEST(TraceSimulation, AllIsEveryRowOfBothTables) {
  PredictorSelection rows = select_any_predictors("all");
  EXPECT_EQ(rows.memory.size(), memory_dependence_predictors().size());
  EXPECT_EQ(rows.branch.size(), branch_predictors().size());
}

TEST(TraceSimulation, AnUnknownNameListsBothTables) {
  try {
    select_any_predictors("store_sets,nope");
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("unknown predictor 'nope' (memory dependence: always_speculate,"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("branch: btb_512x1,"), std::string::npos) << e.what();
  }
}

TEST(TraceSimulation, BranchRowsNeedSites) {
  EXPECT_THROW(TraceSimulation(select_any_predictors("btb_512x1"), {}, {}), std::invalid_argument);
}

TEST(TraceSimulation, ARangeThatMissesTheCodeIsAnError) {
  TraceSimulation sim(select_any_predictors("store_sets"), {64}, {}, 0x9000, 0xa000);
  std::istringstream in(kTrace);
  EXPECT_THROW(sim.run(in, "trace"), std::runtime_error);
}

TEST(BinaryCode, ObjdumpBranchesByKindMovedByTheOffset) {
  std::istringstream in(
      "0000000000001000 <f>:\n"
      "    1000:\tjmp    *%rax\n"
      "    1002:\tnotrack jmp *%rdx\n"
      "    1004:\tcall   *0x10(%rip)        # 2000 <g>\n"
      "    100a:\tcall   1100 <h>\n"
      "    100f:\tjne    1000 <f>\n"
      "    1011:\tbnd jmp 1100 <h>\n"
      "    1014:\tcs nopw 0x0(%rax,%rax,1)\n"
      "    101e:\tretq\n"
      "    101f:\tmov    %rax,%rbx\n"
      "    1022:\tloop   1000 <f>\n");
  BranchSites sites = read_objdump_branch_sites(in, 0x108000);
  ASSERT_EQ(sites.size(), 8u);
  EXPECT_EQ(sites.at(0x109000), BranchKind::kIndirectJump);
  EXPECT_EQ(sites.at(0x109002), BranchKind::kIndirectJump);
  EXPECT_EQ(sites.at(0x109004), BranchKind::kIndirectCall);
  EXPECT_EQ(sites.at(0x10900a), BranchKind::kDirect);
  EXPECT_EQ(sites.at(0x10900f), BranchKind::kConditional);
  EXPECT_EQ(sites.at(0x109011), BranchKind::kDirect);
  EXPECT_EQ(sites.at(0x10901e), BranchKind::kReturn);
  EXPECT_EQ(sites.at(0x109022), BranchKind::kConditional);
  EXPECT_FALSE(sites.contains(0x109014));  // a cs-prefixed nop is no branch
}

TEST(BinaryCode, AFunctionRunsToTheNextGlobalTextSymbol) {
  const char* nm =
      "0000000000001000 T dl_run_a\n"
      "0000000000001040 t local_helper\n"
      "0000000000001080 W dl_run_b\n"
      "0000000000002000 D data\n";
  std::istringstream in(nm);
  CodeRange r = symbol_code_range(in, "dl_run_a", "nm");
  EXPECT_EQ(r.lo, 0x1000u);
  EXPECT_EQ(r.hi, 0x1080u);  // past the local symbol, to the next global one
  std::istringstream again(nm);
  EXPECT_THROW(symbol_code_range(again, "dl_run_c", "nm"), std::runtime_error);
  std::istringstream last(nm);
  EXPECT_THROW(symbol_code_range(last, "dl_run_b", "nm"), std::runtime_error);  // no end
}

// readelf -sW of a binary with two engines' files: an engine is its file's local functions with its
// global entry, wherever the linker put the entry; .dynsym (no FILE entries) is not read; code of
// another file inside the range, or a missing file or entry, is an error naming what.
const char* kReadelf =
    "Symbol table '.dynsym' contains 2 entries:\n"
    "   Num:    Value          Size Type    Bind   Vis      Ndx Name\n"
    "     1: 0000000000009000    16 FUNC    GLOBAL DEFAULT   14 run_tail\n"
    "\n"
    "Symbol table '.symtab' contains 9 entries:\n"
    "   Num:    Value          Size Type    Bind   Vis      Ndx Name\n"
    "     1: 0000000000000000     0 FILE    LOCAL  DEFAULT  ABS dispatch_switch.cc\n"
    "     2: 0000000000002000   100 FUNC    LOCAL  DEFAULT   14 helper\n"
    "     3: 0000000000000000     0 FILE    LOCAL  DEFAULT  ABS dispatch_tail.cc\n"
    "     4: 0000000000003010    32 FUNC    LOCAL  DEFAULT   14 h_add\n"
    "     5: 0000000000003030 0x186a0 FUNC   LOCAL  DEFAULT   14 h_big\n"
    "     6: 0000000000003040     8 OBJECT  LOCAL  DEFAULT   16 table\n"
    "     7: 0000000000001000  4096 FUNC    GLOBAL DEFAULT   14 run_switch\n"
    "     8: 0000000000003000    16 FUNC    GLOBAL DEFAULT   14 run_tail\n"
    "     9: 0000000000003020    16 FUNC    GLOBAL DEFAULT   14 inside_tail\n";

TEST(BinaryCode, AnEnginesCodeIsItsFilesFunctionsWithItsEntry) {
  std::istringstream in(kReadelf);
  CodeRange r = elf_file_code_range(in, "dispatch_switch.cc", "run_switch", "readelf");
  std::istringstream mangled("Symbol table '.symtab' contains 2 entries:\n"
                             "     1: 0000000000000000     0 FILE    LOCAL  DEFAULT  ABS dispatch_tail.cc\n"
                             "     2: 0000000000003000    16 FUNC    GLOBAL DEFAULT   14 _ZN4dlab4wasm8run_tailEPKm\n");
  EXPECT_EQ(elf_file_code_range(mangled, "dispatch_tail.cc", "_ZN4dlab4wasm8run_tailE", "readelf").lo, 0x3000u);  // a mangled name's start
  EXPECT_EQ(r.lo, 0x1000u);  // the entry, before its file's helper
  EXPECT_EQ(r.hi, 0x2064u);
}

TEST(BinaryCode, AnEnginesCodeMustBeOnePiece) {
  std::istringstream in(kReadelf);
  try {
    elf_file_code_range(in, "dispatch_tail.cc", "run_tail", "readelf");
    ADD_FAILURE() << "a range with another function inside was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("inside_tail lies inside it"), std::string::npos) << e.what();
  }
  std::istringstream no_file(kReadelf);
  EXPECT_THROW(elf_file_code_range(no_file, "dispatch_goto.cc", "run_switch", "readelf"), std::runtime_error);
  std::istringstream no_entry(kReadelf);
  EXPECT_THROW(elf_file_code_range(no_entry, "dispatch_switch.cc", "run_goto", "readelf"), std::runtime_error);
}

}  // namespace
}  // namespace dlab::predictors
