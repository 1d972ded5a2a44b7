// Constant expressions run in the engine (runtime/const_expr.h): the direct reading of a single
// instruction agrees with lowering and running the same expression, in every engine's dispatch
// mode and IR, and longer expressions (extended const, ref.i31) get the engine's values.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dispatchlab/interpreter/runtime.h"
#include "runtime/const_expr.h"
#include "wat.h"

namespace dlab::wasm {
namespace {

using test_support::assemble_3_0;

const char* kModule = R"(
  (module
    (func $f (result i32) (i32.const 7))
    (func $g)
    (table 4 funcref)
    (elem (table 0) (i32.const 1) funcref (ref.func $g) (ref.null func) (ref.func $f))
    (global $a i32 (i32.const -5))
    (global $b i64 (i64.const 0x123456789abcdef0))
    (global $c f32 (f32.const 1.5))
    (global $d f64 (f64.const -2.25))
    (global $e funcref (ref.func $f))
    (global $n externref (ref.null extern))
    (global $h i32 (global.get $a))
    (global $x i32 (i32.add (global.get $a) (i32.mul (i32.const 3) (i32.const 4))))
    (global $y i64 (i64.sub (i64.const 1) (global.get $b)))
    (global $i (ref i31) (ref.i31 (i32.const 9)))
    (export "a" (global $a)) (export "b" (global $b)) (export "c" (global $c)) (export "d" (global $d))
    (export "e" (global $e)) (export "n" (global $n)) (export "h" (global $h)) (export "x" (global $x))
    (export "y" (global $y)) (export "i" (global $i)) (export "t" (table 0)) (export "f" (func $f)) (export "g" (func $g)))
)";

// Each export's value, references as the index of the function they name (-1: null), so that two
// instances compare.
std::vector<int64_t> values(const Instance& inst) {
  auto func_index = [&](uint64_t ref) -> int64_t {
    for (size_t i = 0; i < inst.funcs.size(); ++i)
      if (reinterpret_cast<uint64_t>(inst.funcs[i]) == ref) return static_cast<int64_t>(i);
    return ref == 0 ? -1 : -2;
  };
  std::vector<int64_t> out;
  for (const char* g : {"a", "b", "c", "d", "h", "x", "y", "i"}) out.push_back(static_cast<int64_t>(inst.exports.at(g).global->lo));
  for (const char* g : {"e", "n"}) out.push_back(func_index(inst.exports.at(g).global->lo));
  for (uint64_t e : inst.exports.at("t").table->elements) out.push_back(func_index(e));
  return out;
}

TEST(ConstExpr, DirectReadingAgreesWithTheEngine) {
  const Module m = assemble_3_0(kModule);
  for (Ir ir : {Ir::kStack, Ir::kRegister}) {
    for (Dispatch d : {Dispatch::kTail, Dispatch::kSwitch}) {
      if (!ir_unavailable(ir, d, Placement::kSp).empty()) continue;  // the switch engine's register forms: DLAB_ALL_ENGINES
      Runtime fast(EngineConfig{d, Placement::kSp}), engine(EngineConfig{d, Placement::kSp});
      Lowering l;
      l.ir = ir;
      fast.set_lowering(l);
      engine.set_lowering(l);
      std::vector<int64_t> direct = values(fast.instantiate(m));
      runtime_impl::g_const_fast_path = false;
      std::vector<int64_t> lowered;
      try {
        lowered = values(engine.instantiate(m));
      } catch (...) {
        runtime_impl::g_const_fast_path = true;
        throw;
      }
      runtime_impl::g_const_fast_path = true;
      EXPECT_EQ(direct, lowered);
      const std::vector<int64_t> want = {
          0xFFFFFFFB, 0x123456789abcdef0, 0x3FC00000, static_cast<int64_t>(0xC002000000000000ull), 0xFFFFFFFB,
          7,  // -5 + 3 * 4
          static_cast<int64_t>(1 - 0x123456789abcdef0ull),
          9 << 1 | 1,         // ref.i31 9
          0, -1,              // $f is function 0; null
          -1, 1, -1, 0};      // the table: null, $g, null, $f
      EXPECT_EQ(lowered, want);
    }
  }
}

}  // namespace
}  // namespace dlab::wasm
