// Execution in every dispatch mode: lowering's instruction words, values through blocks and
// branches, memory, host functions, and traps (each a Trap with the spec's message, after which
// the runtime keeps working). Modules are written in the text format and assembled by wabt's
// wat2wasm at test time.
#include <algorithm>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "dispatchlab/interpreter/runtime.h"
#include "dispatchlab/interpreter/validator.h"
#include "engines/machine.h"
#include "engines/ops.h"
#include "invoke.h"
#include "wat.h"

namespace dlab::wasm {
namespace {

using test_support::assemble;

class RuntimeTest : public ::testing::TestWithParam<Dispatch> {
 protected:
  Runtime rt{EngineConfig{GetParam()}};
  Instance& load(const std::string& wat) { return rt.instantiate(assemble(wat)); }
  Instance& load_binary(const std::vector<uint8_t>& bytes) {
    Module m = decode_module(bytes);
    validate_module(m);
    return rt.instantiate(std::move(m));
  }
  std::vector<Value> call(Instance& inst, const std::string& name, std::vector<Value> args = {}) {
    return test_support::call_export(rt, inst, name, std::move(args));
  }
  std::string trap(Instance& inst, const std::string& name, std::vector<Value> args = {}) {
    return test_support::trap_of(rt, inst, name, std::move(args));
  }
};

// Lazy lowering (the default): a function is one lower_on_call instruction until its first call,
// which lowers it to the code eager lowering writes; a function never called is never lowered.
TEST_P(RuntimeTest, AFunctionIsLoweredOnItsFirstCall) {
  rt.set_lowering(Lowering::none());
  auto& inst = load(R"((module (func (export "add") (param i32 i32) (result i32) local.get 0 local.get 1 i32.add)
                              (func (export "unused") (result i32) i32.const 7)))");
  FuncInst* add = inst.exports.at("add").func;
  const FuncInst* unused = inst.exports.at("unused").func;
  ASSERT_EQ(add->code.size(), 2u);
  EXPECT_NE(add->body, nullptr);
  EXPECT_EQ(add->code[1], reinterpret_cast<uint64_t>(add));
  EXPECT_EQ(rt.invoke(add, {Value::i32(2), Value::i32(3)}).at(0).lo, 5u);
  EXPECT_EQ(add->body, nullptr);
  EXPECT_EQ(add->code.size(), 7u);  // as LoweredWordsAreTheModesOpWords: the same code as eager
  EXPECT_EQ(rt.invoke(add, {Value::i32(4), Value::i32(5)}).at(0).lo, 9u);  // straight into the lowered code
  EXPECT_EQ(unused->code.size(), 2u);
  EXPECT_NE(unused->body, nullptr);
}

TEST_P(RuntimeTest, LoweredWordsAreTheModesOpWords) {
  rt.set_lazy_lowering(false);  // the code is read after instantiation
  rt.set_lowering(Lowering::none());  // plain: one instruction per wasm instruction (lowering_test.cc has the rest)
  auto& inst = load(R"((module (func (export "add") (param i32 i32) (result i32) local.get 0 local.get 1 i32.add)))");
  const FuncInst* f = inst.exports.at("add").func;
  // local.get 0, local.get 1, i32.add, return 1: blocks and `end` lower to nothing else.
  ASSERT_EQ(f->code.size(), 7u);
  const uint64_t* words = GetParam() == Dispatch::kSwitch ? switch_op_words()
                          : GetParam() == Dispatch::kTail ? tail_op_words()
                          : GetParam() == Dispatch::kGoto ? goto_op_words()
                                                          : tail_pn_op_words();
  EXPECT_EQ(f->code[0], words[static_cast<size_t>(Op::local_get)]);
  EXPECT_EQ(f->code[1], 0u);
  EXPECT_EQ(f->code[3], 1u);
  EXPECT_EQ(f->code[4], words[static_cast<size_t>(Op::i32_add)]);
  EXPECT_EQ(f->code[5], words[static_cast<size_t>(Op::return_)]);
  if (GetParam() == Dispatch::kSwitch) EXPECT_EQ(f->code[4], static_cast<uint64_t>(Op::i32_add));
  else EXPECT_GT(f->code[4], static_cast<uint64_t>(Op::kCount));  // a handler or label address
  EXPECT_EQ(f->param_slots, 2u);
  EXPECT_EQ(f->max_slots, 4u);  // two locals and two operands
  EXPECT_EQ(call(inst, "add", {Value::i32(40), Value::i32(2)})[0].lo, 42u);
}

TEST_P(RuntimeTest, RecursionAndLoops) {
  auto& inst = load(R"((module
    (func $fac (export "fac") (param i64) (result i64)
      (if (result i64) (i64.eqz (local.get 0)) (then (i64.const 1))
        (else (i64.mul (local.get 0) (call $fac (i64.sub (local.get 0) (i64.const 1)))))))
    (func (export "sum") (param i32) (result i32) (local i32)
      (loop $l (local.set 1 (i32.add (local.get 1) (local.get 0)))
        (br_if $l (local.tee 0 (i32.sub (local.get 0) (i32.const 1)))))
      (local.get 1))))");
  EXPECT_EQ(call(inst, "fac", {Value::i64(20)})[0].lo, 2432902008176640000ull);
  EXPECT_EQ(call(inst, "sum", {Value::i32(1000)})[0].lo, 500500u);
}

TEST_P(RuntimeTest, BranchesCarryValuesAndDropTheRest) {
  // br_table out of nested blocks with extra operands below the carried value: keep 1, drop 2.
  auto& inst = load(R"((module (func (export "pick") (param i32) (result i32)
    (block $a (result i32)
      (block $b (result i32)
        (i32.const 100) (i32.const 200)
        (br_table $a $b $a (i32.const 7) (local.get 0))
        (drop) (drop))
      (i32.add (i32.const 10)))
  )))");
  EXPECT_EQ(call(inst, "pick", {Value::i32(0)})[0].lo, 7u);
  EXPECT_EQ(call(inst, "pick", {Value::i32(1)})[0].lo, 17u);
  EXPECT_EQ(call(inst, "pick", {Value::i32(2)})[0].lo, 7u);
  EXPECT_EQ(call(inst, "pick", {Value::i32(99)})[0].lo, 7u);  // out of range: the default label
}

TEST_P(RuntimeTest, MemoryGrowsAndTrapsOutOfBounds) {
  auto& inst = load(R"((module (memory 1 3)
    (func (export "store") (param i32 i64) (i64.store offset=4 (local.get 0) (local.get 1)))
    (func (export "load") (param i32) (result i64) (i64.load offset=4 (local.get 0)))
    (func (export "grow") (param i32) (result i32) (memory.grow (local.get 0)))
    (func (export "size") (result i32) (memory.size))))");
  call(inst, "store", {Value::i32(65524), Value::i64(0x1122334455667788ull)});
  EXPECT_EQ(call(inst, "load", {Value::i32(65524)})[0].lo, 0x1122334455667788ull);
  EXPECT_EQ(trap(inst, "load", {Value::i32(65525)}), "out of bounds memory access");
  EXPECT_EQ(call(inst, "grow", {Value::i32(1)})[0].lo, 1u);
  EXPECT_EQ(call(inst, "size")[0].lo, 2u);
  EXPECT_EQ(call(inst, "load", {Value::i32(65525)})[0].lo, 0x0011223344556677ull);  // now in bounds
  EXPECT_EQ(static_cast<int32_t>(call(inst, "grow", {Value::i32(2)})[0].lo), -1);  // over the maximum
  EXPECT_EQ(trap(inst, "load", {Value::i32(0xFFFFFFFF)}), "out of bounds memory access");  // no 32-bit wrap
}

// A data segment that does not fit traps the instantiation after the element segments put its
// functions into an imported table; that segment and the active ones after it were never
// dropped (the spec drops each after its memory.init), so such a function may still copy from them.
TEST_P(RuntimeTest, AFailedInstantiationLeavesItsUnappliedDataSegments) {
  ExternVal t;
  t.kind = ExternKind::kTable;
  t.table = rt.table(TableType{ValType::kFuncRef, Limits{1, std::nullopt, false}});
  rt.register_module("env", {{"t", t}});
  EXPECT_THROW(load(R"((module
    (import "env" "t" (table 1 funcref))
    (memory 1)
    (elem (i32.const 0) $f)
    (func $f (result i32)
      (memory.init 1 (i32.const 8) (i32.const 0) (i32.const 1))
      (i32.load8_u (i32.const 8)))
    (data (i32.const 65536) "x")
    (data (i32.const 0) "\2a")))"), Trap);
  const auto* f = reinterpret_cast<FuncInst*>(t.table->elements.at(0));
  ASSERT_NE(f, nullptr);
  std::vector<Value> r = rt.invoke(const_cast<FuncInst*>(f), {});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].lo, 0x2Au);
}

TEST_P(RuntimeTest, TrapsAreTrapsAndTheRuntimeRecovers) {
  auto& inst = load(R"((module
    (type $v (func)) (type $i (func (result i32)))
    (table 3 funcref) (elem (i32.const 0) $ok $void)
    (func $ok (result i32) (i32.const 5))
    (func $void)
    (func (export "div") (param i32 i32) (result i32) (i32.div_s (local.get 0) (local.get 1)))
    (func (export "unreachable") unreachable)
    (func (export "indirect") (param i32) (result i32) (call_indirect (type $i) (local.get 0)))
    (func $deep (export "deep") (param i32) (result i32) (i32.add (call $deep (local.get 0)) (i32.const 1)))
    (func (export "trunc") (param f64) (result i32) (i32.trunc_f64_s (local.get 0)))))");
  EXPECT_EQ(trap(inst, "div", {Value::i32(1), Value::i32(0)}), "integer divide by zero");
  EXPECT_EQ(trap(inst, "div", {Value::i32(0x80000000u), Value::i32(0xFFFFFFFFu)}), "integer overflow");
  EXPECT_EQ(trap(inst, "unreachable"), "unreachable");
  EXPECT_EQ(call(inst, "indirect", {Value::i32(0)})[0].lo, 5u);
  EXPECT_EQ(trap(inst, "indirect", {Value::i32(1)}), "indirect call type mismatch");
  EXPECT_EQ(trap(inst, "indirect", {Value::i32(2)}), "uninitialized element");
  EXPECT_EQ(trap(inst, "indirect", {Value::i32(3)}), "undefined element");
  EXPECT_EQ(trap(inst, "deep", {Value::i32(0)}), "call stack exhausted");
  Value nan{ValType::kF64, 0x7FF8000000000000ull, 0};
  EXPECT_EQ(trap(inst, "trunc", {nan}), "invalid conversion to integer");
  EXPECT_EQ(call(inst, "div", {Value::i32(42), Value::i32(6)})[0].lo, 7u);  // still usable
}

TEST_P(RuntimeTest, HostFunctionsAndTailCalls) {
  int calls = 0;
  ExternMap env;
  ExternVal twice;
  twice.kind = ExternKind::kFunc;
  twice.func = rt.host_function({{ValType::kI32}, {ValType::kI32}}, [&calls](HostCall& hc) {
    ++calls;
    hc.slots[0] = static_cast<uint32_t>(hc.slots[0]) * 2;
  });
  ExternVal fail;
  fail.kind = ExternKind::kFunc;
  fail.func = rt.host_function({{}, {}}, [](HostCall& hc) { hc.trap = "host says no"; });
  env["twice"] = twice;
  env["fail"] = fail;
  rt.register_module("env", env);
  auto& inst = load(R"((module
    (import "env" "twice" (func $twice (param i32) (result i32)))
    (import "env" "fail" (func $fail))
    (func (export "quad") (param i32) (result i32) (call $twice (call $twice (local.get 0))))
    (func (export "fail") (call $fail))
    (func $count (export "count") (param i64 i64) (result i64)
      (if (result i64) (i64.eqz (local.get 0)) (then (local.get 1))
        (else (return_call $count (i64.sub (local.get 0) (i64.const 1)) (i64.add (local.get 1) (i64.const 1))))))))");
  EXPECT_EQ(call(inst, "quad", {Value::i32(5)})[0].lo, 20u);
  EXPECT_EQ(calls, 2);
  // Re-entry: a host function that invokes wasm again, from a frame with operands below the call.
  ExternVal reenter;
  reenter.kind = ExternKind::kFunc;
  Runtime* runtime = &rt;
  FuncInst* quad = inst.exports.at("quad").func;
  reenter.func = rt.host_function({{ValType::kI32}, {ValType::kI32}}, [runtime, quad](HostCall& hc) {
    uint32_t x = static_cast<uint32_t>(hc.slots[0]);
    hc.slots[0] = static_cast<uint32_t>(runtime->invoke(quad, {Value::i32(x)})[0].lo) + 1000;
  });
  rt.register_module("env2", {{"reenter", reenter}});
  auto& again = load(R"((module (import "env2" "reenter" (func $r (param i32) (result i32)))
    (func (export "go") (param i32) (result i32) (i32.add (i32.const 7) (call $r (local.get 0))))))");
  EXPECT_EQ(call(again, "go", {Value::i32(3)})[0].lo, 7u + 12u + 1000u);
  EXPECT_EQ(calls, 4);
  EXPECT_EQ(call(inst, "quad", {Value::i32(1)})[0].lo, 4u);  // the runtime is as it was
  EXPECT_EQ(calls, 6);
  EXPECT_EQ(trap(inst, "fail"), "host says no");
  // Far deeper than the call-depth limit: tail calls reuse the frame.
  EXPECT_EQ(call(inst, "count", {Value::i64(3 * Runtime::kMaxCallDepth), Value::i64(0)})[0].lo, 3 * Runtime::kMaxCallDepth);
}

// Re-entry's failures: a trap in the nested invocation reaches the host function that made it
// as a Trap (it may catch it and go on), or, let go, becomes the outer invocation's trap with the
// same message; host -> wasm -> host ... nests many levels, each level's operands intact.
TEST_P(RuntimeTest, ReentrantInvokeTrapsAndDepth) {
  Runtime* runtime = &rt;
  FuncInst* inner = nullptr;  // the nested export, set once instantiated
  ExternVal catching, letting, down;
  catching.kind = letting.kind = down.kind = ExternKind::kFunc;
  catching.func = rt.host_function({{ValType::kI32}, {ValType::kI32}}, [&](HostCall& hc) {
    try {
      hc.slots[0] = runtime->invoke(inner, {Value::i32(static_cast<uint32_t>(hc.slots[0]))})[0].lo;
    } catch (const Trap& t) {
      hc.slots[0] = std::string(t.what()) == "integer divide by zero" ? 0xDEADu : 1u;
    }
  });
  letting.func = rt.host_function({{ValType::kI32}, {ValType::kI32}}, [&](HostCall& hc) {
    hc.slots[0] = runtime->invoke(inner, {Value::i32(static_cast<uint32_t>(hc.slots[0]))})[0].lo;
  });
  FuncInst* descend = nullptr;
  down.func = rt.host_function({{ValType::kI32}, {ValType::kI32}}, [&](HostCall& hc) {
    hc.slots[0] = runtime->invoke(descend, {Value::i32(static_cast<uint32_t>(hc.slots[0]))})[0].lo;
  });
  rt.register_module("host", {{"catching", catching}, {"letting", letting}, {"down", down}});
  auto& inst = load(R"((module
    (import "host" "catching" (func $catching (param i32) (result i32)))
    (import "host" "letting" (func $letting (param i32) (result i32)))
    (import "host" "down" (func $down (param i32) (result i32)))
    (func (export "inner") (param i32) (result i32) (i32.div_u (i32.const 100) (local.get 0)))
    (func (export "catching") (param i32) (result i32) (i32.add (i32.const 1) (call $catching (local.get 0))))
    (func (export "letting") (param i32) (result i32) (i32.add (i32.const 1) (call $letting (local.get 0))))
    ;; n levels of wasm -> host -> wasm, each adding its n on the way back
    (func (export "descend") (param i32) (result i32)
      (if (result i32) (i32.eqz (local.get 0)) (then (i32.const 0))
        (else (i32.add (local.get 0) (call $down (i32.sub (local.get 0) (i32.const 1)))))))))");
  inner = inst.exports.at("inner").func;
  descend = inst.exports.at("descend").func;
  EXPECT_EQ(call(inst, "catching", {Value::i32(4)})[0].lo, 26u);
  EXPECT_EQ(call(inst, "catching", {Value::i32(0)})[0].lo, 1u + 0xDEADu);  // caught, and the outer call went on
  EXPECT_EQ(trap(inst, "letting", {Value::i32(0)}), "integer divide by zero");  // let go: the outer traps
  EXPECT_EQ(call(inst, "letting", {Value::i32(5)})[0].lo, 21u);
  EXPECT_EQ(call(inst, "descend", {Value::i32(200)})[0].lo, 200u * 201u / 2u);
}

// WebAssembly 3.0 features in every dispatch mode, from hand-assembled binaries (this Debian's
// wat2wasm predates the 3.0 text syntax; the spec suite, run by ctest in every engine, covers
// each feature fully). The text each module stands for is beside it.
TEST_P(RuntimeTest, TypedFunctionReferences) {
  // (type $t (func (param i32) (result i32)))  (func $inc (type $t) local.get 0 i32.const 1 i32.add)
  // "call":     local.get 0 ref.func $inc call_ref $t
  // "null":     local.get 0 ref.null $t call_ref $t                        -> traps
  // "on_null":  block (result i32) local.get 0 ref.null $t br_on_null 0 drop drop i32.const 1 end
  // "non_null": local.get 0 block (result (ref $t)) ref.func $inc br_on_non_null 0 unreachable end call_ref $t
  const std::vector<uint8_t> bytes = {
      0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x06, 0x01, 0x60, 0x01, 0x7f, 0x01, 0x7f,
      0x03, 0x06, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07, 0x24, 0x04, 0x04, 0x63, 0x61, 0x6c, 0x6c,
      0x00, 0x01, 0x04, 0x6e, 0x75, 0x6c, 0x6c, 0x00, 0x02, 0x07, 0x6f, 0x6e, 0x5f, 0x6e, 0x75, 0x6c,
      0x6c, 0x00, 0x03, 0x08, 0x6e, 0x6f, 0x6e, 0x5f, 0x6e, 0x75, 0x6c, 0x6c, 0x00, 0x04, 0x09, 0x05,
      0x01, 0x03, 0x00, 0x01, 0x00, 0x0a, 0x3b, 0x05, 0x07, 0x00, 0x20, 0x00, 0x41, 0x01, 0x6a, 0x0b,
      0x08, 0x00, 0x20, 0x00, 0xd2, 0x00, 0x14, 0x00, 0x0b, 0x08, 0x00, 0x20, 0x00, 0xd0, 0x00, 0x14,
      0x00, 0x0b, 0x0f, 0x00, 0x02, 0x7f, 0x20, 0x00, 0xd0, 0x00, 0xd5, 0x00, 0x1a, 0x1a, 0x41, 0x01,
      0x0b, 0x0b, 0x0f, 0x00, 0x20, 0x00, 0x02, 0x64, 0x00, 0xd2, 0x00, 0xd6, 0x00, 0x00, 0x0b, 0x14,
      0x00, 0x0b};
  auto& inst = load_binary(bytes);
  EXPECT_EQ(call(inst, "call", {Value::i32(41)})[0].lo, 42u);
  EXPECT_EQ(trap(inst, "null", {Value::i32(1)}), "null function reference");
  EXPECT_EQ(call(inst, "on_null", {Value::i32(5)})[0].lo, 5u);  // the branch dropped the null, kept the i32
  EXPECT_EQ(call(inst, "non_null", {Value::i32(5)})[0].lo, 6u);  // the branch carried the reference
}

TEST_P(RuntimeTest, MultiMemory) {
  // (memory $m0 1) (memory $m1 2)
  // "load1": i32.store $m1 (i32.const 8) (i32.const 7)  i32.load $m1 (i32.const 8)
  // "load0": i32.load $m0 (i32.const 8)
  // "size1": memory.grow $m1 (i32.const 1) drop  memory.size $m1
  // "copy":  memory.copy $m0 $m1 (i32.const 16) (i32.const 8) (i32.const 4)  i32.load $m0 (i32.const 16)
  const std::vector<uint8_t> bytes = {
      0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7f, 0x03,
      0x05, 0x04, 0x00, 0x00, 0x00, 0x00, 0x05, 0x05, 0x02, 0x00, 0x01, 0x00, 0x02, 0x07, 0x20, 0x04,
      0x05, 0x6c, 0x6f, 0x61, 0x64, 0x31, 0x00, 0x00, 0x05, 0x6c, 0x6f, 0x61, 0x64, 0x30, 0x00, 0x01,
      0x05, 0x73, 0x69, 0x7a, 0x65, 0x31, 0x00, 0x02, 0x04, 0x63, 0x6f, 0x70, 0x79, 0x00, 0x03, 0x0a,
      0x36, 0x04, 0x10, 0x00, 0x41, 0x08, 0x41, 0x07, 0x36, 0x42, 0x01, 0x00, 0x41, 0x08, 0x28, 0x42,
      0x01, 0x00, 0x0b, 0x07, 0x00, 0x41, 0x08, 0x28, 0x02, 0x00, 0x0b, 0x09, 0x00, 0x41, 0x01, 0x40,
      0x01, 0x1a, 0x3f, 0x01, 0x0b, 0x11, 0x00, 0x41, 0x10, 0x41, 0x08, 0x41, 0x04, 0xfc, 0x0a, 0x00,
      0x01, 0x41, 0x10, 0x28, 0x02, 0x00, 0x0b};
  auto& inst = load_binary(bytes);
  EXPECT_EQ(call(inst, "load1")[0].lo, 7u);
  EXPECT_EQ(call(inst, "load0")[0].lo, 0u);  // memory 0 untouched: the store went to memory 1
  EXPECT_EQ(call(inst, "size1")[0].lo, 3u);
  EXPECT_EQ(call(inst, "copy")[0].lo, 7u);
  EXPECT_EQ(inst.memories.at(0)->pages(), 1u);
}

TEST_P(RuntimeTest, Table64) {
  // (table i64 2 funcref)
  // "size": table.size (i64)   "grow": table.grow (ref.null func) (i64.const 3)
  // "grow_fail": table.grow (ref.null func) (i64.const 2^40)   "get_far": table.get (i64.const 2^32) drop
  const std::vector<uint8_t> bytes = {
      0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x02, 0x60, 0x00, 0x01, 0x7e, 0x60,
      0x00, 0x00, 0x03, 0x05, 0x04, 0x00, 0x00, 0x00, 0x01, 0x04, 0x04, 0x01, 0x70, 0x04, 0x02, 0x07,
      0x25, 0x04, 0x04, 0x73, 0x69, 0x7a, 0x65, 0x00, 0x00, 0x04, 0x67, 0x72, 0x6f, 0x77, 0x00, 0x01,
      0x09, 0x67, 0x72, 0x6f, 0x77, 0x5f, 0x66, 0x61, 0x69, 0x6c, 0x00, 0x02, 0x07, 0x67, 0x65, 0x74,
      0x5f, 0x66, 0x61, 0x72, 0x00, 0x03, 0x0a, 0x2c, 0x04, 0x05, 0x00, 0xfc, 0x10, 0x00, 0x0b, 0x09,
      0x00, 0xd0, 0x70, 0x42, 0x03, 0xfc, 0x0f, 0x00, 0x0b, 0x0e, 0x00, 0xd0, 0x70, 0x42, 0x80, 0x80,
      0x80, 0x80, 0x80, 0x20, 0xfc, 0x0f, 0x00, 0x0b, 0x0b, 0x00, 0x42, 0x80, 0x80, 0x80, 0x80, 0x10,
      0x25, 0x00, 0x1a, 0x0b};
  auto& inst = load_binary(bytes);
  EXPECT_EQ(call(inst, "size")[0].lo, 2u);
  EXPECT_EQ(call(inst, "grow")[0].lo, 2u);
  EXPECT_EQ(call(inst, "grow_fail")[0].lo, ~0ull);  // i64 -1, not a 32-bit -1
  EXPECT_EQ(call(inst, "size")[0].lo, 5u);
  EXPECT_EQ(trap(inst, "get_far"), "out of bounds table access");  // 2^32 is not index 0
}

// Exception handling at the host boundary (the spec suite, in every engine, covers throw, throw_ref
// and try_table inside wasm): an exception no handler catches reaches the host as an Exception with
// its tag and payload, and the runtime goes on; one that leaves a nested invocation reaches the
// host function as an Exception and, let go, becomes the outer invocation's trap.
//   (module (type (func (param i32))) (type (func (param i32) (result i32)))
//     (tag $e (export "e") (type 0))
//     (func (export "throw_if") (type 1) (if (local.get 0) (then (throw $e (local.get 0)))) (i32.const 7)))
TEST_P(RuntimeTest, UncaughtExceptionsReachTheHostWithTheirTagAndPayload) {
  auto& inst = load_binary({0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
                            0x01, 0x0a, 0x02, 0x60, 0x01, 0x7f, 0x00, 0x60, 0x01, 0x7f, 0x01, 0x7f,  // types
                            0x03, 0x02, 0x01, 0x01,                                                  // functions
                            0x0d, 0x03, 0x01, 0x00, 0x00,                                            // tags
                            0x07, 0x10, 0x02, 0x01, 0x65, 0x04, 0x00,                                // export "e" tag 0
                            0x08, 0x74, 0x68, 0x72, 0x6f, 0x77, 0x5f, 0x69, 0x66, 0x00, 0x00,        // "throw_if" func 0
                            0x0a, 0x0f, 0x01, 0x0d, 0x00, 0x20, 0x00, 0x04, 0x40, 0x20, 0x00, 0x08, 0x00, 0x0b, 0x41, 0x07, 0x0b});
  EXPECT_EQ(call(inst, "throw_if", {Value::i32(0)})[0].lo, 7u);
  try {
    call(inst, "throw_if", {Value::i32(5)});
    ADD_FAILURE() << "no exception";
  } catch (const Exception& e) {
    EXPECT_STREQ(e.what(), "uncaught exception");
    EXPECT_EQ(e.exception()->tag, inst.exports.at("e").tag);
    EXPECT_EQ(e.exception()->payload, std::vector<uint64_t>{5});
  }
  EXPECT_EQ(call(inst, "throw_if", {Value::i32(0)})[0].lo, 7u);  // the runtime goes on

  Runtime* runtime = &rt;
  FuncInst* thrower = inst.exports.at("throw_if").func;
  ExternVal catching, letting;
  catching.kind = letting.kind = ExternKind::kFunc;
  catching.func = rt.host_function({{ValType::kI32}, {ValType::kI32}}, [&](HostCall& hc) {
    try {
      hc.slots[0] = runtime->invoke(thrower, {Value::i32(static_cast<uint32_t>(hc.slots[0]))})[0].lo;
    } catch (const Exception& e) {
      hc.slots[0] = 1000 + e.exception()->payload.at(0);
    }
  });
  letting.func = rt.host_function({{ValType::kI32}, {ValType::kI32}}, [&](HostCall& hc) {
    hc.slots[0] = runtime->invoke(thrower, {Value::i32(static_cast<uint32_t>(hc.slots[0]))})[0].lo;
  });
  rt.register_module("host", {{"catching", catching}, {"letting", letting}});
  auto& outer = load(R"((module
    (import "host" "catching" (func $catching (param i32) (result i32)))
    (import "host" "letting" (func $letting (param i32) (result i32)))
    (func (export "catching") (param i32) (result i32) (call $catching (local.get 0)))
    (func (export "letting") (param i32) (result i32) (call $letting (local.get 0)))))");
  EXPECT_EQ(call(outer, "catching", {Value::i32(3)})[0].lo, 1003u);
  try {
    call(outer, "letting", {Value::i32(3)});
    ADD_FAILURE() << "no trap";
  } catch (const Exception&) {
    ADD_FAILURE() << "an exception crossed a host function as a wasm exception";
  } catch (const Trap& t) {
    EXPECT_STREQ(t.what(), "uncaught exception");
  }
  EXPECT_EQ(call(outer, "letting", {Value::i32(0)})[0].lo, 7u);
}

INSTANTIATE_TEST_SUITE_P(EveryDispatch, RuntimeTest, ::testing::ValuesIn(dispatch_modes()),
                         [](const auto& info) { return std::string(dispatch_name(info.param)); });

TEST(Dispatch, NamesRoundTripAndPreserveNoneIsBuiltWithClang) {
  for (Dispatch d : every_dispatch_mode()) EXPECT_EQ(parse_dispatch(dispatch_name(d)), d);
  EXPECT_FALSE(parse_dispatch("threaded"));
  EXPECT_EQ(every_dispatch_mode().size(), 4u);
  auto built = dispatch_modes();
  for (Dispatch d : built) EXPECT_NE(std::find(every_dispatch_mode().begin(), every_dispatch_mode().end(), d), every_dispatch_mode().end());
  // goto is built only with the engines the measurements compare (-DDLAB_COMPARED_ENGINES=ON);
  // a mode this build lacks is refused saying how to build it.
  const bool has_goto = std::find(built.begin(), built.end(), Dispatch::kGoto) != built.end();
  if (!has_goto) EXPECT_NE(engine_unavailable(Dispatch::kGoto, Placement::kSp).find("-DDLAB_COMPARED_ENGINES=ON"), std::string::npos);
#if defined(__clang__) && (defined(__x86_64__) || defined(__aarch64__))
  EXPECT_EQ(built.size(), has_goto ? 4u : 3u);
#endif
}

}  // namespace
}  // namespace dlab::wasm
