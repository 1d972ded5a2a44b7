// The budgeted engines (engines.def's BUDGET rows, budget.h): fuel charges every branch and call,
// the same count in every engine and lowering, so fuel N suspends every one of them at the same
// instruction; a suspended invocation resumes to the unbudgeted result; a nested invocation that
// runs out becomes its caller's trap; a deadline stops a loop that never ends, never before it is
// due. No timing is asserted beyond "not before the deadline".
#include <chrono>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "dispatchlab/interpreter/runtime.h"
#include "wat.h"

namespace dlab::wasm {
namespace {

using test_support::assemble;

// A loop that calls a function, branches inside it, and counts its iterations in a global: the
// global's value says where an invocation stopped.
constexpr const char* kLoopWat = R"((module
  (global $iterations (export "iterations") (mut i32) (i32.const 0))
  (func $step (param i32) (result i32)
    (if (result i32) (i32.and (local.get 0) (i32.const 1))
      (then (i32.mul (local.get 0) (i32.const 3)))
      (else (i32.shr_u (local.get 0) (i32.const 1)))))
  (func (export "run") (param i32) (result i32) (local i32)
    (local.set 1 (i32.const 7))
    (block $done
      (loop $l
        (br_if $done (i32.eqz (local.get 0)))
        (global.set $iterations (i32.add (global.get $iterations) (i32.const 1)))
        (local.set 1 (i32.add (call $step (local.get 1)) (local.get 0)))
        (local.set 0 (i32.sub (local.get 0) (i32.const 1)))
        (br $l)))
    (local.get 1)))
)";

std::vector<EngineConfig> budgeted(bool fuel) {
  std::vector<EngineConfig> out;
  for (const auto& e : engine_configs()) {
    if ((fuel ? budget_counts_fuel(e.budget) : budget_needs_timer(e.budget)) && engine_unavailable(e.dispatch, e.placement, e.budget).empty())
      out.push_back(e);
  }
  return out;
}

uint32_t iterations(const Instance& inst) { return static_cast<uint32_t>(inst.exports.at("iterations").global->lo); }

// The accessors read each row's COUNTER column (engines.def): the budgets every engine is built
// with have the kinds their help describes, and each kind answers the questions code asks.
TEST(Budget, EachRowsCounterKindAnswersWhatCodeAsks) {
  EXPECT_EQ(budget_counter(Budget::kNone), BudgetCounter::kNone);
  EXPECT_EQ(budget_counter(Budget::kFuel), BudgetCounter::kArg);
  EXPECT_EQ(budget_counter(Budget::kFuelMachine), BudgetCounter::kMachine);
  EXPECT_EQ(budget_counter(Budget::kDeadline), BudgetCounter::kEpoch);
  int fuel = 0, timers = 0, unbounded = 0;
  for (Budget b : budgets()) {
    fuel += budget_counts_fuel(b);
    timers += budget_needs_timer(b);
    unbounded += !budget_bounded(b);
    EXPECT_FALSE(budget_counts_fuel(b) && budget_needs_timer(b)) << budget_name(b);
  }
  EXPECT_EQ(fuel, 2);
  EXPECT_EQ(timers, 1);
  EXPECT_EQ(unbounded, 1);
}

TEST(Budget, EveryEngineRowHasANameAndTheTailSignaturesAddTheCounter) {
  for (const auto& e : engine_configs()) {
    EXPECT_NE(e.engine_name(), "");
    EXPECT_EQ(parse_bounds(bounds_name(e.bounds)), e.bounds);
    EXPECT_EQ(parse_budget(budget_name(e.budget)), e.budget);
  }
  // sp: the register IR's accumulator after the machine, then the counter. The engines only the
  // measurements compare (engines.def's COMPARED rows) where this build has them: a stub's is "".
  auto expect_signature = [](Dispatch d, Placement p, Budget b, const char* want) {
    if (engine_unavailable(d, p, b).empty()) EXPECT_EQ(handler_signature(d, p, b), want) << dispatch_name(d) << " " << placement_name(p);
    else EXPECT_EQ(handler_signature(d, p, b), "");
  };
  EXPECT_EQ(handler_signature(Dispatch::kTail, Placement::kSp, Budget::kNone), "ptr,ptr,ptr,ptr,u64,f64,f32");
  EXPECT_EQ(handler_signature(Dispatch::kTail, Placement::kSp, Budget::kFuel), "ptr,ptr,ptr,ptr,u64,f64,f32,u64");
  expect_signature(Dispatch::kTail, Placement::kSp, Budget::kFuelMachine, "ptr,ptr,ptr,ptr,u64,f64,f32");
  expect_signature(Dispatch::kTail, Placement::kVec, Budget::kNone, "ptr,ptr,ptr");
  expect_signature(Dispatch::kTail, Placement::kSpWt, Budget::kNone, "ptr,ptr,ptr,ptr,u64");
  EXPECT_EQ(handler_signature(Dispatch::kSwitch, Placement::kSp, Budget::kFuel), "");
  EXPECT_NE(engine_unavailable(Dispatch::kGoto, Placement::kVec, Budget::kFuel), "");
  EXPECT_THROW(Runtime(EngineConfig{Dispatch::kGoto, Placement::kVec, Budget::kFuel}), std::invalid_argument);
}

// Fuel is the same count everywhere, and suspending and resuming changes no result.
TEST(Budget, FuelStopsEveryEngineAndLoweringAtTheSameInstructionAndResumes) {
  Module m = assemble(kLoopWat);
  uint32_t expected = 0;
  {
    Runtime plain;
    Instance& inst = plain.instantiate(m);
    expected = static_cast<uint32_t>(plain.invoke(inst.exports.at("run").func, {Value::i32(500)}).at(0).lo);
  }
  std::optional<uint64_t> spent;
  std::optional<uint32_t> stopped_at;
  ASSERT_FALSE(budgeted(true).empty());
  for (const auto& e : budgeted(true))
    for (const Lowering& l : lowerings()) {
      SCOPED_TRACE(fmt::format("{} {}", e.engine_name(), lowering_name(l)));
      Runtime rt(EngineConfig{e.dispatch, e.placement, e.budget});
      rt.set_lowering(l);
      Instance& inst = rt.instantiate(m);
      FuncInst* run = inst.exports.at("run").func;
      // Unbounded: what a whole call charges.
      constexpr uint64_t kLots = uint64_t{1} << 40;
      rt.set_fuel(kLots);
      EXPECT_EQ(rt.invoke(run, {Value::i32(500)}).at(0).lo, expected);
      uint64_t used = kLots - rt.fuel_left();
      if (!spent) spent = used;
      EXPECT_EQ(used, *spent);
      // A third of that at a time: suspended, then resumed with as much again, until it is done.
      const uint64_t third = *spent / 3;
      inst.exports.at("iterations").global->lo = 0;
      rt.set_fuel(third);
      int suspensions = 0;
      std::vector<Value> result;
      try {
        result = rt.invoke(run, {Value::i32(500)});
      } catch (const Suspended& s) {
        EXPECT_STREQ(s.what(), "fuel exhausted");
        EXPECT_TRUE(rt.suspended());
        EXPECT_EQ(rt.fuel_left(), 0u);
        ++suspensions;
        if (!stopped_at) stopped_at = iterations(inst);
        EXPECT_EQ(iterations(inst), *stopped_at);  // the same point in every engine and lowering
        for (;;) {
          rt.set_fuel(third);
          try {
            result = rt.resume();
            break;
          } catch (const Suspended&) {
            ++suspensions;
          }
        }
      }
      EXPECT_FALSE(rt.suspended());
      // Each run gets `third` units, so the call needs ceil(spent / third) runs.
      EXPECT_EQ(static_cast<uint64_t>(suspensions), (*spent + third - 1) / third - 1);
      ASSERT_EQ(result.size(), 1u);
      EXPECT_EQ(result[0].lo, expected);
      EXPECT_EQ(iterations(inst), 500u);
    }
  EXPECT_GT(*spent, 1000u);  // every iteration branches and calls
}

TEST(Budget, ANewInvocationAbandonsASuspendedOneAndResumeWithoutOneIsRefused) {
  Module m = assemble(kLoopWat);
  for (const auto& e : budgeted(true)) {
    SCOPED_TRACE(e.engine_name());
    Runtime rt(EngineConfig{e.dispatch, e.placement, e.budget});
    Instance& inst = rt.instantiate(m);
    FuncInst* run = inst.exports.at("run").func;
    EXPECT_THROW(rt.resume(), std::logic_error);
    rt.set_fuel(10);
    EXPECT_THROW(rt.invoke(run, {Value::i32(100)}), Suspended);
    EXPECT_TRUE(rt.suspended());
    rt.set_fuel(uint64_t{1} << 40);
    EXPECT_EQ(rt.invoke(run, {Value::i32(0)}).at(0).lo, 7u);
    EXPECT_FALSE(rt.suspended());
    EXPECT_THROW(rt.resume(), std::logic_error);
  }
}

// A host function's nested invocation spends the same fuel; running out there is not a
// suspension (the nested stack lies inside the caller's): the host sees a Trap, and so does the
// outer invocation when the host lets it go.
TEST(Budget, ANestedInvocationThatRunsOutIsItsCallersTrap) {
  for (const auto& e : budgeted(true)) {
    SCOPED_TRACE(e.engine_name());
    Runtime rt(EngineConfig{e.dispatch, e.placement, e.budget});
    Runtime* runtime = &rt;
    FuncInst* inner = nullptr;
    ExternVal again;
    again.kind = ExternKind::kFunc;
    again.func = rt.host_function({{ValType::kI32}, {ValType::kI32}}, [&](HostCall& hc) {
      hc.slots[0] = runtime->invoke(inner, {Value::i32(static_cast<uint32_t>(hc.slots[0]))})[0].lo;
    });
    rt.register_module("host", {{"again", again}});
    Instance& inst = rt.instantiate(assemble(R"((module
      (import "host" "again" (func $again (param i32) (result i32)))
      (func (export "inner") (param i32) (result i32) (local i32)
        (loop $l (local.set 1 (i32.add (local.get 1) (i32.const 1)))
          (br_if $l (local.tee 0 (i32.sub (local.get 0) (i32.const 1)))))
        (local.get 1))
      (func (export "outer") (param i32) (result i32) (i32.add (i32.const 1) (call $again (local.get 0))))))"));
    inner = inst.exports.at("inner").func;
    FuncInst* outer = inst.exports.at("outer").func;
    rt.set_fuel(1000);
    EXPECT_EQ(rt.invoke(outer, {Value::i32(100)}).at(0).lo, 101u);
    uint64_t left = rt.fuel_left();
    EXPECT_LT(left, 1000u - 100u);  // the nested loop's branches were charged too
    rt.set_fuel(50);
    try {
      rt.invoke(outer, {Value::i32(100)});
      ADD_FAILURE() << "no trap";
    } catch (const Suspended&) {
      ADD_FAILURE() << "a nested invocation's exhaustion was taken as resumable";
    } catch (const Trap& t) {
      EXPECT_STREQ(t.what(), "fuel exhausted");
    }
    EXPECT_FALSE(rt.suspended());
  }
}

TEST(Budget, ADeadlineStopsALoopThatNeverEndsNotBeforeItIsDue) {
  Module forever = assemble(R"((module (func (export "spin") (loop $l (br $l)))
                                        (func (export "add") (param i32 i32) (result i32) (i32.add (local.get 0) (local.get 1)))))");
  ASSERT_FALSE(budgeted(false).empty());
  for (const auto& e : budgeted(false)) {
    SCOPED_TRACE(e.engine_name());
    Runtime rt(EngineConfig{e.dispatch, e.placement, e.budget});
    Instance& inst = rt.instantiate(forever);
    EXPECT_EQ(rt.invoke(inst.exports.at("add").func, {Value::i32(2), Value::i32(3)}).at(0).lo, 5u);  // no deadline set
    auto t0 = std::chrono::steady_clock::now();
    rt.set_deadline(std::chrono::milliseconds(20));
    try {
      rt.invoke(inst.exports.at("spin").func, {});
      ADD_FAILURE() << "no trap";
    } catch (const Suspended& s) {
      EXPECT_STREQ(s.what(), "deadline reached");
    }
    EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(20));
    EXPECT_TRUE(rt.suspended());
    rt.set_deadline(std::chrono::milliseconds(5));
    EXPECT_THROW(rt.resume(), Suspended);
    rt.clear_deadline();
    EXPECT_EQ(rt.invoke(inst.exports.at("add").func, {Value::i32(40), Value::i32(2)}).at(0).lo, 42u);
  }
}

// The unbudgeted engines count nothing (outside the fuzzing build).
TEST(Budget, UnbudgetedEnginesIgnoreFuel) {
#if !defined(DLAB_FUEL)
  Runtime rt;
  Instance& inst = rt.instantiate(assemble(kLoopWat));
  rt.set_fuel(3);
  EXPECT_NO_THROW(rt.invoke(inst.exports.at("run").func, {Value::i32(100)}));
  EXPECT_EQ(rt.fuel_left(), 3u);
#endif
}

}  // namespace
}  // namespace dlab::wasm
