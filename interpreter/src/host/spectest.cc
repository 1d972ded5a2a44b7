// The spec tests' host module `spectest`, defined once: as runtime objects for execution, and
// as extern types (derived from those objects) for the type-level linker.
#include <bit>

#include "dispatchlab/interpreter/linker.h"
#include "dispatchlab/interpreter/runtime.h"
#include "dispatchlab/interpreter/spec_runner.h"

namespace dlab::wasm {

// The spectest host module: print functions that do nothing, globals of 666, a table of 10..20
// funcrefs and a memory of 1..2 pages.
ExternMap spectest_module(Runtime& rt) {
  using V = ValType;
  ExternMap e;
  auto fn = [&](const char* name, std::vector<V> params) {
    ExternVal v;
    v.kind = ExternKind::kFunc;
    v.func = rt.host_function({std::move(params), {}}, [](HostCall&) {});
    e[name] = v;
  };
  fn("print", {});
  fn("print_i32", {V::kI32});
  fn("print_i64", {V::kI64});
  fn("print_f32", {V::kF32});
  fn("print_f64", {V::kF64});
  fn("print_i32_f32", {V::kI32, V::kF32});
  fn("print_f64_f64", {V::kF64, V::kF64});
  auto global = [&](const char* name, V t, uint64_t bits) {
    ExternVal v;
    v.kind = ExternKind::kGlobal;
    v.global = rt.global({t, false}, bits);
    e[name] = v;
  };
  global("global_i32", V::kI32, 666);
  global("global_i64", V::kI64, 666);
  global("global_f32", V::kF32, std::bit_cast<uint32_t>(666.6f));
  global("global_f64", V::kF64, std::bit_cast<uint64_t>(666.6));
  ExternVal table;
  table.kind = ExternKind::kTable;
  table.table = rt.table({V::kFuncRef, {10, 20}});
  e["table"] = table;
  ExternVal table64 = table;  // table64: the same limits, indexed by i64
  table64.table = rt.table({V::kFuncRef, {10, 20, true}});
  e["table64"] = table64;
  ExternVal memory;
  memory.kind = ExternKind::kMemory;
  memory.memory = rt.memory({1, 2});
  e["memory"] = memory;
  return e;
}

Exports spectest_exports() {
  Runtime rt;
  Exports types;
  for (const auto& [name, v] : spectest_module(rt)) types[name] = v.type();
  return types;
}

}  // namespace dlab::wasm
