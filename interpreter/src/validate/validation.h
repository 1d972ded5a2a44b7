// The validator's module context and its questions about types (private to validate/): what
// both halves of validation share, function_validator.cc (the spec appendix's algorithm over one
// function body or constant expression) and validator.cc (the module's rules, validate_module).
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "dispatchlab/interpreter/linker.h"
#include "dispatchlab/interpreter/module.h"
#include "dispatchlab/interpreter/types.h"
#include "dispatchlab/interpreter/validator.h"

namespace dlab::wasm::validate_impl {

using VT = ValType;
// A value type on the validator's stacks: ValType's code, or kUnknown, which stands for any type
// below an unreachable point.
using T = uint32_t;
inline constexpr T kUnknown = 0;

struct Ctx {
  const Module& m;
  std::vector<uint32_t> func_types;  // type index of every function (imports first)
  std::vector<TableType> tables;
  uint32_t memories = 0;
  std::vector<bool> memory64;  // per memory: indexed by i64 (its addresses and offsets are i64)
  std::vector<GlobalType> globals;
  uint32_t imported_globals = 0;
  std::vector<uint32_t> tags;  // type index of every tag (imports first)
  std::vector<bool> refs;  // per function: whether ref.func may name it
  // The module's types canonicalised (types.h): type equality and subtyping compare these ids.
  TypeStore store;
  std::vector<uint32_t> ids;
  explicit Ctx(const Module& mod) : m(mod) {}
};

[[noreturn]] inline void invalid(const std::string& what) { throw ValidationError(what); }

inline bool is_num(T t) {
  for (ValType v : {ValType::kI32, ValType::kI64, ValType::kF32, ValType::kF64})
    if (t == static_cast<T>(v)) return true;
  return false;
}
inline bool is_vec(T t) { return t == static_cast<T>(ValType::kV128); }
inline bool is_ref_t(T t) { return t != kUnknown && is_ref(static_cast<VT>(t)); }

inline const DefType& type_at(const Ctx& c, uint32_t idx) {
  if (idx >= c.m.types.size()) invalid("unknown type");
  return c.m.types[idx];
}
// A type index where a function type must be (functions, tags, calls, block types).
inline const DefType& func_type_at(const Ctx& c, uint32_t idx) {
  const DefType& t = type_at(c, idx);
  if (t.kind != TypeKind::kFunc) invalid("type mismatch: not a function type");
  return t;
}
inline const DefType& struct_at(const Ctx& c, uint32_t idx) {
  const DefType& t = type_at(c, idx);
  if (t.kind != TypeKind::kStruct) invalid("type mismatch: not a struct type");
  return t;
}
inline const DefType& array_at(const Ctx& c, uint32_t idx) {
  const DefType& t = type_at(c, idx);
  if (t.kind != TypeKind::kArray) invalid("type mismatch: not an array type");
  return t;
}

// ---- subtyping: through the module's canonical types (iso-recursive equality, declared supertypes)
inline ValType canon(const Ctx& c, VT t) { return canonical_valtype(t, c.ids); }
// Whether a value of type `sub` may stand where `super` is expected (unknown matches both ways).
inline bool matches(const Ctx& c, T sub, T super) {
  if (sub == super || sub == kUnknown || super == kUnknown) return true;
  if (!is_ref_t(sub) || !is_ref_t(super)) return false;
  return c.store.val_sub(canon(c, static_cast<VT>(sub)), canon(c, static_cast<VT>(super)));
}
inline bool matches(const Ctx& c, VT sub, VT super) { return matches(c, static_cast<T>(sub), static_cast<T>(super)); }
// The top of a heap type's hierarchy: func, extern, exn or any.
inline HeapType top_of(const Ctx& c, HeapType h) {
  int64_t idx = heap_type_index(h);
  if (idx < 0) return heap_top(h);
  return type_at(c, static_cast<uint32_t>(idx)).kind == TypeKind::kFunc ? kHeapFunc : kHeapAny;
}
// A type a module names must name a type it defines: below `bound` (a type section entry may
// name the types of its recursive group and those before it).
inline void check_valtype(VT t, size_t bound) {
  if (!is_ref(t)) return;
  int64_t i = heap_type_index(ref_heap(t));
  if (i >= 0 && static_cast<uint64_t>(i) >= bound) invalid("unknown type");
}
inline void check_valtypes(const std::vector<VT>& ts, size_t bound) {
  for (VT t : ts) check_valtype(t, bound);
}
inline ValType unpacked(const FieldType& f) { return f.packed == Packed::kNone ? f.type : ValType::kI32; }

// Validates a module's function bodies and constant expressions one after another with one set of
// stacks (function_validator.cc): a large module has hundreds of thousands of each (esbuild's
// element segment alone 110,000 ref.func expressions), and a validator of their own apiece
// allocated its stacks every time.
class FunctionValidator;
class BodyValidator {
 public:
  explicit BodyValidator(const Ctx& c);
  ~BodyValidator();
  // A function body against its type; `locals`: run-length (count, type), parameters first.
  void function(const FuncType& ft, const std::vector<std::pair<uint32_t, ValType>>& locals, const Expr& body);
  // A constant expression whose result is a `t`.
  void const_expr(const Expr& e, ValType t);

 private:
  std::unique_ptr<FunctionValidator> v_;
};

}  // namespace dlab::wasm::validate_impl
