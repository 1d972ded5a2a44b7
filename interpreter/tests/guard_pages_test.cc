// The guard engines (engines.def's BOUNDS(guard), src/runtime/guard_pages.h): their loads and stores have
// no bounds compare, so each out-of-bounds access here faults on a guarded memory's inaccessible
// pages and must come back as the spec's trap, with nothing written and the runtime usable after.
// Every guard engine of the build, with both IRs where the engine has them.
#include <gtest/gtest.h>

#include "dispatchlab/interpreter/runtime.h"
#include "invoke.h"
#include "wat.h"

namespace dlab::wasm {
namespace {

using test_support::assemble;

struct GuardCase {
  EngineConfig engine;
  Ir ir;
};

std::vector<GuardCase> guard_cases() {
  std::vector<GuardCase> out;
  for (const auto& e : engine_configs())
    if (e.bounds == Bounds::kGuard && engine_unavailable(e.dispatch, e.placement, e.budget, e.bounds).empty())
      for (Ir ir : irs())
        if (ir_unavailable(ir, e.dispatch, e.placement, e.budget, e.bounds).empty()) out.push_back({e, ir});
  return out;
}

class GuardPages : public ::testing::TestWithParam<GuardCase> {
 protected:
  GuardPages() : rt(EngineConfig{GetParam().engine.dispatch, GetParam().engine.placement, GetParam().engine.budget, Bounds::kGuard}) {
    Lowering l;
    l.ir = GetParam().ir;
    rt.set_lowering(l);
  }
  Runtime rt;
  Instance& load(const std::string& wat) { return rt.instantiate(assemble(wat)); }
  std::vector<Value> call(Instance& inst, const std::string& name, std::vector<Value> args = {}) {
    return test_support::call_export(rt, inst, name, std::move(args));
  }
  std::string trap(Instance& inst, const std::string& name, std::vector<Value> args = {}) {
    return test_support::trap_of(rt, inst, name, std::move(args));
  }
};

constexpr const char* kMemoryWat = R"((module (memory 1 3)
  (func (export "store") (param i32 i64) (i64.store offset=4 (local.get 0) (local.get 1)))
  (func (export "store8") (param i32 i32) (i32.store8 (local.get 0) (local.get 1)))
  (func (export "load") (param i32) (result i64) (i64.load offset=4 (local.get 0)))
  (func (export "load_far") (param i32) (result i32) (i32.load offset=0xffffffff (local.get 0)))
  (func (export "load8") (param i32) (result i32) (i32.load8_u (local.get 0)))
  (func (export "grow") (param i32) (result i32) (memory.grow (local.get 0)))))";

TEST_P(GuardPages, OutOfBoundsAccessesTrapAndWriteNothing) {
  auto& inst = load(kMemoryWat);
  ASSERT_TRUE(inst.memories[0]->guarded);
  call(inst, "store", {Value::i32(65524), Value::i64(0x1122334455667788ull)});
  EXPECT_EQ(call(inst, "load", {Value::i32(65524)})[0].lo, 0x1122334455667788ull);
  EXPECT_EQ(trap(inst, "load", {Value::i32(65525)}), "out of bounds memory access");
  // An 8-byte store across the end: a fault, and none of its bytes land in bounds.
  EXPECT_EQ(trap(inst, "store", {Value::i32(65526), Value::i64(~0ull)}), "out of bounds memory access");
  EXPECT_EQ(call(inst, "load", {Value::i32(65524)})[0].lo, 0x1122334455667788ull);
  EXPECT_EQ(trap(inst, "store8", {Value::i32(65536), Value::i32(1)}), "out of bounds memory access");
  // The largest effective address a 32-bit memory can form (2^33 - 2) is still in the reservation.
  EXPECT_EQ(trap(inst, "load_far", {Value::i32(0xFFFFFFFF)}), "out of bounds memory access");
  EXPECT_EQ(trap(inst, "load8", {Value::i32(0x80000000u)}), "out of bounds memory access");
  // Grown in place: the page that faulted is now readable, and zero.
  EXPECT_EQ(call(inst, "grow", {Value::i32(1)})[0].lo, 1u);
  EXPECT_EQ(call(inst, "load8", {Value::i32(65536)})[0].lo, 0u);
  EXPECT_EQ(call(inst, "load", {Value::i32(65526)})[0].lo, 0x0000112233445566ull);
  EXPECT_EQ(static_cast<int32_t>(call(inst, "grow", {Value::i32(2)})[0].lo), -1);  // over the maximum
  EXPECT_EQ(trap(inst, "load8", {Value::i32(131072)}), "out of bounds memory access");
}

// A fault in a nested invocation (wasm -> host -> wasm) is that invocation's trap: the host
// function catches it and the outer invocation goes on, or lets it go and the outer one traps.
TEST_P(GuardPages, NestedInvocationsCatchTheirOwnFaults) {
  Runtime* runtime = &rt;
  FuncInst* inner = nullptr;
  ExternVal catching, letting;
  catching.kind = letting.kind = ExternKind::kFunc;
  catching.func = rt.host_function({{ValType::kI32}, {ValType::kI32}}, [&](HostCall& hc) {
    try {
      hc.slots[0] = runtime->invoke(inner, {Value::i32(static_cast<uint32_t>(hc.slots[0]))})[0].lo;
    } catch (const Trap& t) {
      hc.slots[0] = std::string(t.what()) == "out of bounds memory access" ? 0xDEADu : 1u;
    }
  });
  letting.func = rt.host_function({{ValType::kI32}, {ValType::kI32}}, [&](HostCall& hc) {
    hc.slots[0] = runtime->invoke(inner, {Value::i32(static_cast<uint32_t>(hc.slots[0]))})[0].lo;
  });
  rt.register_module("host", {{"catching", catching}, {"letting", letting}});
  auto& inst = load(R"((module
    (import "host" "catching" (func $catching (param i32) (result i32)))
    (import "host" "letting" (func $letting (param i32) (result i32)))
    (memory 1)
    (func (export "inner") (param i32) (result i32) (i32.load (local.get 0)))
    (func (export "catching") (param i32) (result i32) (i32.add (i32.const 1) (call $catching (local.get 0))))
    (func (export "letting") (param i32) (result i32) (i32.add (i32.const 1) (call $letting (local.get 0))))))");
  inner = inst.exports.at("inner").func;
  EXPECT_EQ(call(inst, "catching", {Value::i32(0)})[0].lo, 1u);
  EXPECT_EQ(call(inst, "catching", {Value::i32(70000)})[0].lo, 1u + 0xDEADu);
  EXPECT_EQ(trap(inst, "letting", {Value::i32(70000)}), "out of bounds memory access");
  EXPECT_EQ(call(inst, "letting", {Value::i32(8)})[0].lo, 1u);
}

// Each instance's own memory is the one that faults: a second instance's accesses past its
// (smaller) memory trap though the first instance's memory is larger.
TEST_P(GuardPages, EveryInstanceHasItsOwnReservation) {
  auto& big = load(R"((module (memory 2) (func (export "load8") (param i32) (result i32) (i32.load8_u (local.get 0)))))");
  auto& small = load(R"((module (memory 1) (func (export "load8") (param i32) (result i32) (i32.load8_u (local.get 0)))))");
  EXPECT_EQ(call(big, "load8", {Value::i32(65536)})[0].lo, 0u);
  EXPECT_EQ(trap(small, "load8", {Value::i32(65536)}), "out of bounds memory access");
  EXPECT_EQ(call(big, "load8", {Value::i32(131071)})[0].lo, 0u);
}

INSTANTIATE_TEST_SUITE_P(Engines, GuardPages, ::testing::ValuesIn(guard_cases()),
                         [](const auto& info) { return info.param.engine.engine_name() + "_" + ir_name(info.param.ir); });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(GuardPages);

// A memory without guard pages (made by a runtime that checks) cannot be imported into one that
// does not: the guard engine would access it unchecked.
TEST(GuardPagesRefuse, AnUnguardedImportedMemory) {
  if (!engine_unavailable(Dispatch::kTail, Placement::kSp, Budget::kNone, Bounds::kGuard).empty()) GTEST_SKIP() << "no guard engine";
  Runtime checking;
  Runtime guarded(EngineConfig{Dispatch::kTail, Placement::kSp, Budget::kNone, Bounds::kGuard});
  ExternVal mem;
  mem.kind = ExternKind::kMemory;
  mem.memory = checking.memory(Limits{1, std::nullopt});
  EXPECT_FALSE(mem.memory->guarded);
  guarded.register_module("env", {{"mem", mem}});
  EXPECT_THROW(guarded.instantiate(assemble(R"((module (import "env" "mem" (memory 1))))")), Unsupported);
  // Its own memories are reservations.
  EXPECT_TRUE(guarded.memory(Limits{1, std::nullopt})->guarded);
}

TEST(GuardPagesRefuse, EnginesWithoutAGuardRowSaySo) {
  std::string why = engine_unavailable(Dispatch::kSwitch, Placement::kSp, Budget::kNone, Bounds::kGuard);
  EXPECT_NE(why, "");
  EXPECT_THROW(Runtime(EngineConfig{Dispatch::kSwitch, Placement::kSp, Budget::kNone, Bounds::kGuard}), std::invalid_argument);
  EXPECT_EQ(parse_bounds("guard"), Bounds::kGuard);
  EXPECT_EQ(parse_bounds("nope"), std::nullopt);
}

}  // namespace
}  // namespace dlab::wasm
