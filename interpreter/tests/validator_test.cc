#include "dispatchlab/interpreter/validator.h"

#include <gtest/gtest.h>

namespace dlab::wasm {
namespace {

// A module with one function of type `params -> results` and body `code` (without the final end).
Module one_function(std::vector<ValType> params, std::vector<ValType> results, std::vector<uint8_t> code,
                    std::vector<std::pair<uint32_t, ValType>> locals = {}) {
  Module m;
  m.types.push_back(FuncType{std::move(params), std::move(results)});
  m.functions.push_back(0);
  code.push_back(0x0B);
  m.code.push_back({std::move(locals), Expr{std::move(code)}});
  return m;
}

std::string verdict(const Module& m) {
  try {
    validate_module(m);
    return "ok";
  } catch (const ValidationError& e) {
    return e.what();
  }
}

TEST(Validator, TypesStraightLineCode) {
  using V = ValType;
  EXPECT_EQ(verdict(one_function({V::kI32}, {V::kI32}, {0x20, 0x00, 0x41, 0x01, 0x6A})), "ok");  // local.get 0; i32.const 1; i32.add
  EXPECT_EQ(verdict(one_function({V::kI64}, {V::kI32}, {0x20, 0x00, 0x41, 0x01, 0x6A})), "type mismatch");
  EXPECT_EQ(verdict(one_function({}, {V::kI32}, {})), "type mismatch");            // nothing returned
  EXPECT_EQ(verdict(one_function({}, {}, {0x20, 0x00})), "unknown local");
  EXPECT_EQ(verdict(one_function({}, {}, {0x41, 0x00, 0x1A})), "ok");              // i32.const 0; drop
}

// A module of more than 256 KiB of code is validated by several threads (validator.cc's
// validate_bodies) where the machine has several cores; whatever the split, the error is the first
// invalid function's, as one thread would find it, and a valid module is valid.
TEST(Validator, ALargeModuleReportsItsFirstInvalidFunction) {
  using V = ValType;
  auto large = [](std::vector<std::pair<size_t, std::vector<uint8_t>>> invalid_bodies) {
    Module m;
    m.types.push_back(FuncType{{V::kI32}, {}});
    for (size_t i = 0; i < 4096; ++i) {
      std::vector<uint8_t> code;
      for (int k = 0; k < 100; ++k) code.insert(code.end(), {0x20, 0x00, 0x1A});  // local.get 0; drop: 300 bytes
      for (auto& [at, body] : invalid_bodies)
        if (at == i) code = body;
      code.push_back(0x0B);
      m.functions.push_back(0);
      m.code.push_back({{}, Expr{std::move(code)}});
    }
    return m;
  };
  const std::vector<uint8_t> unknown_local = {0x20, 0x05}, mismatch = {0x42, 0x00, 0x21, 0x00};  // local.set 0 of an i64
  EXPECT_EQ(verdict(large({})), "ok");
  EXPECT_EQ(verdict(large({{3900, mismatch}})), "type mismatch");
  EXPECT_EQ(verdict(large({{700, unknown_local}, {3900, mismatch}})), "unknown local");
  EXPECT_EQ(verdict(large({{700, mismatch}, {3900, unknown_local}})), "type mismatch");
  EXPECT_EQ(verdict(large({{3900, unknown_local}, {4095, mismatch}})), "unknown local");
}

// An `if` without `else` has an empty else of type [t1*] -> [t2*]: valid where each parameter is
// a subtype of its result, (ref $s) of (ref null $s) here, not only where they are equal.
TEST(Validator, AnIfWithoutElseNeedsItsParametersToMatchItsResults) {
  auto module_with_if = [](ValType param, ValType result) {
    Module m;
    DefType s;
    s.kind = TypeKind::kStruct;
    m.types.push_back(s);                                       // 0: struct {}
    m.types.push_back(FuncType{{param}, {result}});             // 1: the function's and the if's type
    m.functions.push_back(1);
    // local.get 0; i32.const 1; if (type 1) end; end
    m.code.push_back({{}, Expr{{0x20, 0x00, 0x41, 0x01, 0x04, 0x01, 0x0B, 0x0B}}});
    return m;
  };
  const ValType ref_s = ref_type(false, kHeapTypeIndex + 0), null_s = ref_type(true, kHeapTypeIndex + 0);
  EXPECT_EQ(verdict(module_with_if(ref_s, null_s)), "ok");
  EXPECT_EQ(verdict(module_with_if(null_s, ref_s)), "type mismatch");
  EXPECT_EQ(verdict(module_with_if(ValType::kI32, ValType::kI64)), "type mismatch");
  EXPECT_EQ(verdict(module_with_if(ValType::kI32, ValType::kI32)), "ok");
}

TEST(Validator, UnreachableCodeIsPolymorphic) {
  using V = ValType;
  // unreachable; i32.add -> the operands are of any type, the result is i32
  EXPECT_EQ(verdict(one_function({}, {V::kI32}, {0x00, 0x6A})), "ok");
  // block (result i32) br 0 with nothing on the stack: type mismatch
  EXPECT_EQ(verdict(one_function({}, {V::kI32}, {0x02, 0x7F, 0x0C, 0x00, 0x0B})), "type mismatch");
}

TEST(Validator, ModuleLevelRules) {
  Module m = one_function({}, {}, {});
  m.exports.push_back({"f", ExternKind::kFunc, 0});
  m.exports.push_back({"f", ExternKind::kFunc, 0});
  EXPECT_EQ(verdict(m), "duplicate export name");
  Module mem;
  mem.memories.push_back({2, 1});
  EXPECT_EQ(verdict(mem), "size minimum must not be greater than maximum");
  Module start = one_function({ValType::kI32}, {}, {});
  start.start = 0;
  EXPECT_EQ(verdict(start), "start function");
  // Locals are run-length: a huge declared count is fine.
  EXPECT_EQ(verdict(one_function({}, {}, {}, {{0xFFFFFFF0u, ValType::kI64}})), "ok");
}

TEST(Validator, Simd) {
  using V = ValType;
  // local.get 0; local.get 0; i32x4.add (0xFD 174 = 0xAE 0x01)
  EXPECT_EQ(verdict(one_function({V::kV128}, {V::kV128}, {0x20, 0x00, 0x20, 0x00, 0xFD, 0xAE, 0x01})), "ok");
  // i8x16.extract_lane_s with lane 16 is out of range
  EXPECT_EQ(verdict(one_function({V::kV128}, {V::kI32}, {0x20, 0x00, 0xFD, 0x15, 0x10})), "invalid lane index");
  // i32x4.add on an i32 operand
  EXPECT_EQ(verdict(one_function({V::kI32}, {V::kV128}, {0x20, 0x00, 0x20, 0x00, 0xFD, 0xAE, 0x01})), "type mismatch");
}

}  // namespace
}  // namespace dlab::wasm

