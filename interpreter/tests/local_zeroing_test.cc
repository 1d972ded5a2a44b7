// Which locals a call zeroes (lower/local_zeroing.h): the analysis on bodies of each control
// shape, both ways (a local read on some path before its write is zeroed; one written first on
// every path is not), and in every dispatch mode and both IRs, a function called again over the
// frame its last call left: a local that path reads unwritten is 0, not the last call's value.
#include <gtest/gtest.h>

#include "dispatchlab/interpreter/runtime.h"
#include "invoke.h"
#include "lower/local_zeroing.h"
#include "wat.h"

namespace dlab::wasm {
namespace {

using test_support::assemble;

// locals_needing_zero for the module's first function, its parameters included (always false).
std::vector<bool> zeroed(const std::string& wat) {
  const Module m = assemble(wat);
  const FuncType& type = m.types.at(m.functions.at(0));
  return locals_needing_zero(m.code.at(0), type.params.size());
}

TEST(LocalZeroing, ALocalWrittenBeforeAnyReadIsNotZeroed) {
  EXPECT_EQ(zeroed(R"((module (func (param i32) (result i32) (local i32 i64)
                         local.get 0 local.set 1 i64.const 2 local.set 2 local.get 1)))"),
            (std::vector<bool>{false, false, false}));
}

TEST(LocalZeroing, ALocalReadBeforeItsWriteIsZeroed) {
  EXPECT_EQ(zeroed(R"((module (func (result i32) (local i32 i32)
                         local.get 0 local.set 1 i32.const 1 local.set 0 local.get 1)))"),
            (std::vector<bool>{true, false}));
}

TEST(LocalZeroing, AnIfWithoutElseWritesNothingForWhatFollows) {
  EXPECT_EQ(zeroed(R"((module (func (param i32) (result i32) (local i32)
                         (if (local.get 0) (then (local.set 1 (i32.const 5))))
                         local.get 1)))"),
            (std::vector<bool>{false, true}));
  // Written on both arms: written after the if.
  EXPECT_EQ(zeroed(R"((module (func (param i32) (result i32) (local i32)
                         (if (local.get 0) (then (local.set 1 (i32.const 5))) (else (local.set 1 (i32.const 6))))
                         local.get 1)))"),
            (std::vector<bool>{false, false}));
}

TEST(LocalZeroing, ABranchPastTheWriteReachesTheBlocksEndWithoutIt) {
  EXPECT_EQ(zeroed(R"((module (func (param i32) (result i32) (local i32)
                         (block (br_if 0 (local.get 0)) (local.set 1 (i32.const 5)))
                         local.get 1)))"),
            (std::vector<bool>{false, true}));
  EXPECT_EQ(zeroed(R"((module (func (param i32) (result i32) (local i32)
                         (block (block (br_table 0 1 (local.get 0))) (local.set 1 (i32.const 5)))
                         local.get 1)))"),
            (std::vector<bool>{false, true}));
  // A branch to a loop goes back to where the write is still ahead: the write before the exit counts.
  EXPECT_EQ(zeroed(R"((module (func (param i32) (result i32) (local i32)
                         (loop (local.set 1 (i32.const 5)) (br_if 0 (local.get 0)))
                         local.get 1)))"),
            (std::vector<bool>{false, false}));
}

TEST(LocalZeroing, UnreachableCodeReadsNothing) {
  EXPECT_EQ(zeroed(R"((module (func (result i32) (local i32)
                         (block (br 0) (drop (local.get 0)))
                         (local.set 0 (i32.const 1)) local.get 0)))"),
            (std::vector<bool>{false}));
}

TEST(LocalZeroing, ReferenceLocalsAreAlwaysZeroed) {
  EXPECT_EQ(zeroed(R"((module (func (result i32) (local funcref i32)
                         (local.set 0 (ref.null func)) (local.set 1 (i32.const 1)) local.get 1)))"),
            (std::vector<bool>{true, false}));
}

TEST(LocalZeroing, ACatchLandsWithWhatWasWrittenBeforeTheTry) {
  const Module m = test_support::assemble_3_0(R"((module (tag $e) (func $f (param i32) (result i32) (local i32)
      (block $caught (try_table (catch $e $caught) (if (local.get 0) (then (throw $e))) (local.set 1 (i32.const 5))))
      local.get 1)))");
  const FuncType& type = m.types.at(m.functions.at(0));
  EXPECT_EQ(locals_needing_zero(m.code.at(0), type.params.size()), (std::vector<bool>{false, true}));
}

TEST(LocalZeroing, PastTheLimitEveryLocalIsZeroed) {
  const Module m = assemble(R"((module (func (result i32) (local i32 i32) (local.set 0 (i32.const 1)) local.get 0)))");
  EXPECT_EQ(locals_needing_zero(m.code.at(0), 0, /*max_locals=*/1), (std::vector<bool>{true, true}));
  EXPECT_EQ(locals_needing_zero(m.code.at(0), 0), (std::vector<bool>{false, false}));
}

// Each export takes a flag: 1 writes 77 to the local and returns it, 0 takes the path that skips
// the write. Called with 1 then 0, the second call's frame is where the first one's was.
const char* const kSkippedWrites = R"((module (tag $e)
  (func (export "if") (param i32) (result i32) (local i32 i32 i32)
    (local.set 3 (i32.const 9))
    (if (local.get 0) (then (local.set 2 (i32.const 77))))
    (i32.add (local.get 2) (i32.sub (local.get 3) (i32.const 9))))
  (func (export "block") (param i32) (result i32) (local i64 i32)
    (local.set 1 (i64.const 3))
    (block (br_if 0 (i32.eqz (local.get 0))) (local.set 2 (i32.const 77)))
    (i32.add (local.get 2) (i32.wrap_i64 (i64.sub (local.get 1) (i64.const 3)))))
  (func (export "table") (param i32) (result i32) (local i32)
    (block (block (br_table 1 0 (local.get 0))) (local.set 1 (i32.const 77)))
    local.get 1)
  (func (export "catch") (param i32) (result i32) (local i32)
    (block $caught (try_table (catch $e $caught) (if (i32.eqz (local.get 0)) (then (throw $e))) (local.set 1 (i32.const 77))))
    local.get 1)))";

class LocalZeroingRun : public ::testing::TestWithParam<std::tuple<Dispatch, Ir>> {};

TEST_P(LocalZeroingRun, ALocalThePathDoesNotWriteIsZeroAfterACallThatWroteIt) {
  auto [dispatch, ir] = GetParam();
  EngineConfig config{dispatch};
  config.lowering.ir = ir;
  if (!config.unavailable().empty()) GTEST_SKIP() << config.unavailable();
  Runtime rt{config};
  Instance& inst = rt.instantiate(test_support::assemble_3_0(kSkippedWrites));
  for (const char* name : {"if", "block", "table", "catch"}) {
    EXPECT_EQ(test_support::call_export(rt, inst, name, {Value::i32(1)}).at(0).lo, 77u) << name;
    EXPECT_EQ(test_support::call_export(rt, inst, name, {Value::i32(0)}).at(0).lo, 0u) << name;
  }
}

INSTANTIATE_TEST_SUITE_P(EveryDispatch, LocalZeroingRun,
                         ::testing::Combine(::testing::ValuesIn(dispatch_modes()), ::testing::Values(Ir::kStack, Ir::kRegister)),
                         [](const auto& info) {
                           return std::string(dispatch_name(std::get<0>(info.param))) + (std::get<1>(info.param) == Ir::kRegister ? "_register" : "_stack");
                         });

}  // namespace
}  // namespace dlab::wasm
