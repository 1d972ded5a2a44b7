// The collector in every engine (engines.def's rows) with the plain lowering and with every
// technique: what it must free (garbage, cycles) and what it must keep (what only an operand-stack
// slot, the cached top, a table, a global or an exception payload still reaches).
#include <gtest/gtest.h>

#include "dispatchlab/interpreter/runtime.h"
#include "wat.h"

namespace dlab::wasm {
namespace {

using test_support::assemble_3_0;

// Every test program in one module. $box is a 32-byte object (header and one i64 field); $junk
// allocations fill the heap so that collections happen while a $box is held only where a test
// says.
const char* kGcModule = R"((module
  (type $box (struct (field i64)))
  (type $node (struct (field (mut (ref null $node))) (field (mut (ref null $node)))))
  (type $bytes (array (mut i8)))
  (type $pad (struct (field i64) (field i64) (field i64) (field i64) (field i64) (field i64) (field i64) (field i64)
                     (field i64) (field i64) (field i64) (field i64) (field i64) (field i64) (field i64) (field i64)))
  (tag $carry (param (ref $box)))
  (global $held (mut (ref null $box)) (ref.null $box))
  (global $held_exn (mut exnref) (ref.null exn))
  (table $tab 1 anyref)

  ;; garbage: n byte arrays of 200 bytes
  (func $churn (param $n i32)
    (loop $l
      (drop (array.new_default $bytes (i32.const 200)))
      (local.set $n (i32.sub (local.get $n) (i32.const 1)))
      (br_if $l (i32.gt_s (local.get $n) (i32.const 0)))))

  ;; binary trees: a tree of depth d (2^(d+1) - 1 nodes), its node count
  (func $make (param $d i32) (result (ref $node))
    (if (result (ref $node)) (i32.eqz (local.get $d))
      (then (struct.new $node (ref.null $node) (ref.null $node)))
      (else (struct.new $node (call $make (i32.sub (local.get $d) (i32.const 1)))
                              (call $make (i32.sub (local.get $d) (i32.const 1)))))))
  (func $count (param $t (ref null $node)) (result i32)
    (if (result i32) (ref.is_null (local.get $t))
      (then (i32.const 0))
      (else (i32.add (i32.const 1)
              (i32.add (call $count (struct.get $node 0 (local.get $t)))
                       (call $count (struct.get $node 1 (local.get $t))))))))
  (func (export "trees") (param $iterations i32) (param $depth i32) (result i32)
    (local $sum i32)
    (loop $l
      (local.set $sum (i32.add (local.get $sum) (call $count (call $make (local.get $depth)))))
      (local.set $iterations (i32.sub (local.get $iterations) (i32.const 1)))
      (br_if $l (i32.gt_s (local.get $iterations) (i32.const 0))))
    (local.get $sum))

  ;; a box held only by an operand-stack slot (below a call's frame) while $churn collects
  (func (export "stack_slot") (result i64)
    (struct.new $box (i64.const 41))
    (call $churn (i32.const 2000))
    (struct.get $box 0))

  ;; a box held only by the top of the operand stack (the cached top in sp_wt / sp_wb) at each
  ;; allocation that may collect (struct.new_default takes no operand: the box is the top)
  (func (export "stack_top") (param $n i32) (result i32)
    (local $i i32)
    (loop $l
      (struct.new $box (i64.extend_i32_u (local.get $i)))
      (drop (struct.new_default $pad))
      (if (i64.ne (struct.get $box 0) (i64.extend_i32_u (local.get $i))) (then (unreachable)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $l (i32.lt_u (local.get $i) (local.get $n))))
    (local.get $i))

  ;; cycles: n pairs of nodes pointing at each other, each pair garbage at once
  (func (export "cycles") (param $n i32) (result i32)
    (local $a (ref null $node)) (local $b (ref null $node))
    (loop $l
      (local.set $a (struct.new $node (ref.null $node) (ref.null $node)))
      (local.set $b (struct.new $node (local.get $a) (ref.null $node)))
      (struct.set $node 0 (local.get $a) (local.get $b))
      (local.set $n (i32.sub (local.get $n) (i32.const 1)))
      (br_if $l (i32.gt_s (local.get $n) (i32.const 0))))
    (i32.const 1))

  ;; boxes held by a global, a table and an exception payload (the exnref in a global), then
  ;; garbage; then each read back: 1000 * global + 100 * table + exception
  (func (export "held_store") (result i32)
    (global.set $held (struct.new $box (i64.const 7)))
    (table.set $tab (i32.const 0) (struct.new $box (i64.const 5)))
    (block $caught (result exnref)
      (try_table (catch_all_ref $caught)
        (throw $carry (struct.new $box (i64.const 3)))))
    (global.set $held_exn)
    (call $churn (i32.const 4000))
    (i32.const 0))
  (func (export "held_check") (result i32)
    (i32.mul (i32.const 1000) (i32.wrap_i64 (struct.get $box 0 (ref.as_non_null (global.get $held)))))
    (i32.mul (i32.const 100) (i32.wrap_i64 (struct.get $box 0 (ref.cast (ref $box) (table.get $tab (i32.const 0))))))
    (i32.add)
    (block $got (result (ref $box))
      (try_table (catch $carry $got) (throw_ref (global.get $held_exn)))
      (unreachable))
    (struct.get $box 0)
    (i32.wrap_i64)
    (i32.add))

  ;; more live data than any limit: a list that only grows
  (func (export "grow_forever") (result i32)
    (local $head (ref null $node))
    (loop $l
      (local.set $head (struct.new $node (local.get $head) (ref.null $node)))
      (br $l))
    (i32.const 0))
))";

// 64 KiB: the trees test allocates over 100 times this (32-byte nodes).
constexpr uint64_t kLimit = 64 * 1024;

struct Case {
  EngineConfig engine;
  Lowering lowering;
  std::string name;
};
std::vector<Case> cases() {
  std::vector<Case> out;
  for (const auto& e : engine_configs())
    if (engine_unavailable(e.dispatch, e.placement, e.budget, e.bounds).empty())
      for (Lowering l : {Lowering::none(), Lowering{}}) out.push_back({e, l, e.engine_name() + "/" + lowering_name(l)});
  return out;
}

class GcEveryEngine : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { module_ = new Module(assemble_3_0(kGcModule)); }
  static void TearDownTestSuite() {
    delete module_;
    module_ = nullptr;
  }
  // A runtime of the case with the module instantiated and the heap limited.
  static std::pair<std::unique_ptr<Runtime>, Instance*> start(const Case& c) {
    auto rt = std::make_unique<Runtime>(EngineConfig{c.engine.dispatch, c.engine.placement, c.engine.budget, c.engine.bounds});
    rt->set_lowering(c.lowering);
    rt->set_heap_limit(kLimit);
    Instance* inst = &rt->instantiate(*module_);
    return {std::move(rt), inst};
  }
  static uint64_t call(Runtime& rt, Instance* inst, const char* name, std::vector<Value> args = {}) {
    auto r = rt.invoke(inst->exports.at(name).func, args);
    return r.empty() ? 0 : r[0].lo;
  }
  static Module* module_;
};
Module* GcEveryEngine::module_ = nullptr;

TEST_F(GcEveryEngine, BinaryTreesAllocatingAHundredTimesTheLimitRunToCompletion) {
  for (const Case& c : cases()) {
    auto [rt, inst] = start(c);
    // 1000 trees of depth 7 (255 nodes of 32 bytes): 8.2 MB allocated, 8 KiB live at a time.
    EXPECT_EQ(call(*rt, inst, "trees", {Value::i32(1000), Value::i32(7)}), 1000u * 255) << c.name;
    GcStats s = rt->gc_stats();
    EXPECT_GE(s.bytes_allocated, 100 * kLimit) << c.name;
    EXPECT_LE(s.peak_live_bytes, kLimit) << c.name;
    EXPECT_GT(s.collections, 10u) << c.name;
  }
}

TEST_F(GcEveryEngine, AnObjectOnlyAnOperandStackSlotHoldsSurvives) {
  for (const Case& c : cases()) {
    auto [rt, inst] = start(c);
    EXPECT_EQ(call(*rt, inst, "stack_slot"), 41u) << c.name;
    EXPECT_GT(rt->gc_stats().collections, 0u) << c.name;
  }
}

TEST_F(GcEveryEngine, AnObjectOnlyTheTopOfTheStackHoldsSurvives) {
  for (const Case& c : cases()) {
    auto [rt, inst] = start(c);
    EXPECT_EQ(call(*rt, inst, "stack_top", {Value::i32(5000)}), 5000u) << c.name;
    EXPECT_GT(rt->gc_stats().collections, 0u) << c.name;
  }
}

TEST_F(GcEveryEngine, CyclesAreCollected) {
  for (const Case& c : cases()) {
    auto [rt, inst] = start(c);
    // 100,000 pairs of 32-byte nodes: 6.4 MB, 98 times the limit, only if cycles are freed.
    EXPECT_EQ(call(*rt, inst, "cycles", {Value::i32(100000)}), 1u) << c.name;
    GcStats s = rt->gc_stats();
    EXPECT_GT(s.objects_freed, 150000u) << c.name;
    EXPECT_LE(s.peak_live_bytes, kLimit) << c.name;
  }
}

TEST_F(GcEveryEngine, ReferencesInAGlobalATableAndAnExceptionPayloadSurvive) {
  for (const Case& c : cases()) {
    auto [rt, inst] = start(c);
    call(*rt, inst, "held_store");
    rt->collect();
    EXPECT_GT(rt->gc_stats().collections, 1u) << c.name;
    EXPECT_EQ(call(*rt, inst, "held_check"), 7u * 1000 + 5 * 100 + 3) << c.name;
  }
}

TEST_F(GcEveryEngine, MoreLiveDataThanTheLimitIsAnOutOfMemoryTrap) {
  for (const Case& c : cases()) {
    auto [rt, inst] = start(c);
    try {
      call(*rt, inst, "grow_forever");
      ADD_FAILURE() << c.name << ": no trap";
    } catch (const Trap& t) {
      EXPECT_STREQ(t.what(), "out of memory") << c.name;
    }
    EXPECT_LE(rt->gc_stats().live_bytes, kLimit) << c.name;
    // The runtime is usable afterwards: the list is garbage once the invocation is gone.
    rt->collect();
    EXPECT_EQ(call(*rt, inst, "stack_slot"), 41u) << c.name;
  }
}

}  // namespace
}  // namespace dlab::wasm

namespace dlab::wasm {
namespace {

// Iso-recursive type identity at the host boundary: a function type in a recursive group is not
// the same type as a lone function type of the same signature, so a host function made from the
// signature does not match the import, and one made of the module's canonical id does.
TEST(GcTypes, AnImportOfATypeInARecursiveGroupMatchesOnlyThatCanonicalType) {
  Module m = test_support::assemble_3_0(R"((module
    (rec (type $f (func (result i32))) (type $s (struct (field (ref null $s)))))
    (import "h" "f" (func $imp (type $f)))
    (func (export "g") (type $f) (call $imp))))");
  {
    Runtime rt;
    HostFunction seven = [](HostCall& c) { c.slots[0] = 7; };
    rt.register_module("h", {{"f", ExternVal{ExternKind::kFunc, rt.host_function(FuncType{{}, {ValType::kI32}}, seven)}}});
    EXPECT_THROW(rt.instantiate(m), LinkError);
  }
  Runtime rt;
  std::vector<uint32_t> ids = rt.canonical_ids(m);
  HostFunction seven = [](HostCall& c) { c.slots[0] = 7; };
  rt.register_module("h", {{"f", ExternVal{ExternKind::kFunc, rt.host_function(ids.at(0), seven)}}});
  Instance& inst = rt.instantiate(m);
  EXPECT_EQ(rt.invoke(inst.exports.at("g").func, {}).at(0).lo, 7u);
}

}  // namespace
}  // namespace dlab::wasm
