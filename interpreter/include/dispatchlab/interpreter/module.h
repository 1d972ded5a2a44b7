// A decoded WebAssembly 3.0 module (with exception handling, without what GC adds): the binary format
// turned into plain data. Decoding checks that the bytes are well-formed (the spec's "malformed"
// errors); validation (types, indices) is a separate step (validator.h).
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace dlab::wasm {

// A value type. Numbers, v128 and the two 2.0 reference types are their binary codes; the other
// reference types of typed function references, (ref null? ht), are made by ref_type() below, so
// (ref null func) is always kFuncRef and (ref null extern) always kExternRef.
enum class ValType : uint32_t { kI32 = 0x7F, kI64 = 0x7E, kF32 = 0x7D, kF64 = 0x7C, kV128 = 0x7B, kFuncRef = 0x70, kExternRef = 0x6F };

// A heap type: an abstract one is its binary code (func 0x70, extern 0x6F, and their bottoms
// nofunc 0x73, noextern 0x72, exn 0x69 and its bottom noexn 0x74); a defined function type is kHeapTypeIndex + its index in the
// module, or, after instantiation has canonicalised it (Runtime::canonical), kHeapCanonical + its
// runtime-wide type id, so that equal types of two modules compare equal.
using HeapType = uint32_t;
constexpr HeapType kHeapFunc = 0x70, kHeapExtern = 0x6F, kHeapNoFunc = 0x73, kHeapNoExtern = 0x72, kHeapExn = 0x69, kHeapNoExn = 0x74;
constexpr HeapType kHeapTypeIndex = 0x100;
constexpr HeapType kHeapCanonical = 1u << 29;
constexpr uint32_t kRefTypeBit = 1u << 31, kNullableBit = 1u << 30, kHeapMask = kNullableBit - 1;
constexpr ValType ref_type(bool nullable, HeapType h) {
  if (nullable && h == kHeapFunc) return ValType::kFuncRef;
  if (nullable && h == kHeapExtern) return ValType::kExternRef;
  return static_cast<ValType>(kRefTypeBit | (nullable ? kNullableBit : 0) | h);
}
constexpr bool is_ref(ValType t) {
  return t == ValType::kFuncRef || t == ValType::kExternRef || (static_cast<uint32_t>(t) & kRefTypeBit);
}
constexpr bool ref_nullable(ValType t) {
  return t == ValType::kFuncRef || t == ValType::kExternRef || (static_cast<uint32_t>(t) & kNullableBit);
}
constexpr HeapType ref_heap(ValType t) {
  if (t == ValType::kFuncRef) return kHeapFunc;
  if (t == ValType::kExternRef) return kHeapExtern;
  return static_cast<uint32_t>(t) & kHeapMask;
}
// A concrete heap type's module type index (kHeapTypeIndex form), or -1.
constexpr int64_t heap_type_index(HeapType h) {
  return h >= kHeapTypeIndex && h < kHeapCanonical ? static_cast<int64_t>(h - kHeapTypeIndex) : -1;
}
// Heap-type subtyping of the function and extern hierarchies (typed function references):
// whether `sub` <: `super`. nofunc is below every defined type, every defined type below func,
// noextern below extern, noexn below exn. Two defined types (module indices, or canonical ids) match when
// `same_defined(sub, super)` says they are the same type: the validator compares two indices of
// one module, the linker types of two modules (linker.cc). One rule for both.
template <class SameDefined>
bool heap_subtype(HeapType sub, HeapType super, SameDefined&& same_defined) {
  const bool sub_defined = sub >= kHeapTypeIndex, super_defined = super >= kHeapTypeIndex;
  if (sub == super && !sub_defined) return true;
  if (super == kHeapFunc) return sub_defined || sub == kHeapNoFunc;
  if (super == kHeapExtern) return sub == kHeapNoExtern;
  if (super == kHeapExn) return sub == kHeapNoExn;
  if (sub == kHeapNoFunc) return super_defined;
  return sub_defined && super_defined && same_defined(sub, super);
}
// Whether values of this type have a default (zero / null): not a non-nullable reference.
constexpr bool defaultable(ValType t) { return !is_ref(t) || ref_nullable(t); }
// The text format's name: i32, funcref, (ref null 3), (ref func), ...
std::string valtype_name(ValType t);

struct FuncType {
  std::vector<ValType> params, results;
};

// Sizes are read as u64 (WebAssembly 3.0's binary format), so a size past what a 32-bit memory or
// table may have decodes and is then invalid, not malformed. `address64`: limits flag bit 2, a
// memory or table indexed by i64 (memory64).
struct Limits {
  uint64_t min = 0;
  std::optional<uint64_t> max;
  bool address64 = false;
};

struct TableType {
  ValType element = ValType::kFuncRef;
  Limits limits;
};

struct GlobalType {
  ValType type = ValType::kI32;
  bool mutable_ = false;
};

enum class ExternKind : uint8_t { kFunc = 0, kTable = 1, kMemory = 2, kGlobal = 3, kTag = 4 };

struct Import {
  std::string module, name;
  ExternKind kind = ExternKind::kFunc;
  uint32_t func_type = 0;  // kFunc; kTag: the tag's type
  TableType table;         // kTable
  Limits memory;           // kMemory
  GlobalType global;       // kGlobal
};

// A constant or body expression, kept as its bytes (from the first instruction through `end`).
struct Expr {
  std::vector<uint8_t> bytes;
};

struct Global {
  GlobalType type;
  Expr init;
};

struct Export {
  std::string name;
  ExternKind kind = ExternKind::kFunc;
  uint32_t index = 0;
};

struct ElemSegment {
  enum Mode { kActive, kPassive, kDeclarative } mode = kActive;
  uint32_t table = 0;
  Expr offset;
  ValType type = ValType::kFuncRef;
  std::vector<Expr> init;  // one expression per element (function indices become ref.func)
};

struct DataSegment {
  enum Mode { kActive, kPassive } mode = kActive;
  uint32_t memory = 0;
  Expr offset;
  std::vector<uint8_t> bytes;
};

// A defined table: its type and, with typed function references, the expression every element
// starts as (without one, null; a table of a non-nullable type must have one).
struct Table : TableType {
  std::optional<Expr> init;
};

struct FunctionBody {
  std::vector<std::pair<uint32_t, ValType>> locals;  // run-length: count, type
  Expr code;
};

struct Module {
  std::vector<FuncType> types;
  std::vector<Import> imports;
  std::vector<uint32_t> functions;  // type index of each defined function
  std::vector<Table> tables;
  std::vector<Limits> memories;
  std::vector<uint32_t> tags;  // type index of each defined tag (exception handling)
  std::vector<Global> globals;
  std::vector<Export> exports;
  std::optional<uint32_t> start;
  std::vector<ElemSegment> elements;
  std::optional<uint32_t> data_count;
  std::vector<FunctionBody> code;
  std::vector<DataSegment> data;
  std::vector<std::string> custom_sections;  // names
};

// A malformed module: the spec's wording where it has one ("unexpected end", "integer too large").
class DecodeError : public std::runtime_error {
 public:
  DecodeError(size_t offset, const std::string& what);
  size_t offset() const { return offset_; }

 private:
  size_t offset_;
};

Module decode_module(const uint8_t* data, size_t size);
Module decode_module(const std::vector<uint8_t>& bytes);

}  // namespace dlab::wasm
