// A decoded WebAssembly 3.0 module: the binary format
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

// A heap type: an abstract one is its binary code (func 0x70, extern 0x6F, exn 0x69, any 0x6E,
// eq 0x6D, i31 0x6C, struct 0x6B, array 0x6A and the bottoms nofunc 0x73, noextern 0x72, noexn
// 0x74, none 0x71); a defined type is kHeapTypeIndex + its index in the module, or, after
// canonicalisation (TypeStore, types.h), kHeapCanonical + its store-wide id, so that equal types
// of two modules compare equal.
using HeapType = uint32_t;
constexpr HeapType kHeapFunc = 0x70, kHeapExtern = 0x6F, kHeapNoFunc = 0x73, kHeapNoExtern = 0x72, kHeapExn = 0x69, kHeapNoExn = 0x74;
constexpr HeapType kHeapAny = 0x6E, kHeapEq = 0x6D, kHeapI31 = 0x6C, kHeapStruct = 0x6B, kHeapArray = 0x6A, kHeapNone = 0x71;
constexpr HeapType kHeapTypeIndex = 0x100;
constexpr HeapType kHeapCanonical = 1u << 29;
constexpr uint32_t kRefTypeBit = 1u << 31, kNullableBit = 1u << 30, kHeapMask = kNullableBit - 1;
// Every code from 0x69 (exn) to 0x74 (noexn) is an abstract heap type.
constexpr bool is_abstract_heap(uint32_t b) { return b >= 0x69 && b <= 0x74; }
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

// Storage types (GC): a struct field or array element is a value type or a packed i8 / i16 (an
// i32 on the operand stack), mutable or not.
enum class Packed : uint8_t { kNone, kI8, kI16 };
struct FieldType {
  ValType type = ValType::kI32;  // kI32 for a packed field
  Packed packed = Packed::kNone;
  bool mutable_ = false;
  bool operator==(const FieldType&) const = default;
};

struct FuncType {
  std::vector<ValType> params, results;
  bool operator==(const FuncType&) const = default;
};

// A defined type (GC): a function, struct or array type, its declared supertype (at most one) and
// whether it is final, in its recursive group (the indices [rec_begin, rec_begin + rec_size) of
// the module's types). A 2.0 function type is a final function type alone in its group.
enum class TypeKind : uint8_t { kFunc, kStruct, kArray };
struct DefType : FuncType {
  TypeKind kind = TypeKind::kFunc;
  std::vector<FieldType> fields;  // struct: its fields; array: its one element type
  std::optional<uint32_t> super;  // a type index (module), or a canonical id (TypeStore)
  bool final = true;
  uint32_t rec_begin = 0, rec_size = 1;
  DefType() = default;
  DefType(FuncType f) : FuncType(std::move(f)) {}  // NOLINT: a function type is a defined type
};

// The abstract heap type at the top of a heap type's hierarchy, and the bottom of it, for
// abstract heap types (a defined type's are its kind's: types.h).
constexpr HeapType heap_top(HeapType h) {
  switch (h) {
    case kHeapFunc: case kHeapNoFunc: return kHeapFunc;
    case kHeapExtern: case kHeapNoExtern: return kHeapExtern;
    case kHeapExn: case kHeapNoExn: return kHeapExn;
    default: return kHeapAny;
  }
}
constexpr HeapType heap_bottom(HeapType top) {
  return top == kHeapFunc ? kHeapNoFunc : top == kHeapExtern ? kHeapNoExtern : top == kHeapExn ? kHeapNoExn : kHeapNone;
}
// Subtyping of two abstract heap types: none <: i31, struct, array <: eq <: any; each bottom below
// its hierarchy's types.
constexpr bool abstract_subtype(HeapType sub, HeapType super) {
  if (sub == super) return true;
  if (heap_top(sub) != heap_top(super)) return false;
  if (sub == heap_bottom(heap_top(sub))) return true;
  if (super == kHeapAny) return sub == kHeapEq || sub == kHeapI31 || sub == kHeapStruct || sub == kHeapArray;
  if (super == kHeapEq) return sub == kHeapI31 || sub == kHeapStruct || sub == kHeapArray;
  return false;
}
// Heap-type subtyping with defined types: `kind_of(h)` gives a defined heap type's kind and
// `defined_sub(a, b)` whether defined type a is b or below it (its declared supertypes). A defined
// type is below its kind's abstract type (func, struct, array) and so below eq and any; the
// bottoms (nofunc, none) are below every defined type of their hierarchy. The validator (module
// indices) and the runtime (canonical ids) give their own two functions; the rule is this one.
template <class KindOf, class DefinedSub>
bool heap_subtype(HeapType sub, HeapType super, KindOf&& kind_of, DefinedSub&& defined_sub) {
  const bool sub_defined = sub >= kHeapTypeIndex, super_defined = super >= kHeapTypeIndex;
  auto abstract_of = [&](HeapType h) {
    TypeKind k = kind_of(h);
    return k == TypeKind::kFunc ? kHeapFunc : k == TypeKind::kStruct ? kHeapStruct : kHeapArray;
  };
  if (!sub_defined && !super_defined) return abstract_subtype(sub, super);
  if (sub_defined && super_defined) return defined_sub(sub, super);
  if (sub_defined) return abstract_subtype(abstract_of(sub), super);
  return sub == heap_bottom(heap_top(abstract_of(super)));
}
// Whether values of this type have a default (zero / null): not a non-nullable reference.
constexpr bool defaultable(ValType t) { return !is_ref(t) || ref_nullable(t); }

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
  std::vector<DefType> types;
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

// How the decoder treats the function bodies. kRead: every instruction read and checked (a
// malformed body is a DecodeError here). kDeferred: each body kept as its bytes, unread, for the
// validator to read once (decode_valid_module, validator.h; alone it would pass a malformed body).
enum class BodyReading { kRead, kDeferred };

Module decode_module(const uint8_t* data, size_t size);  // kRead
Module decode_module(const uint8_t* data, size_t size, BodyReading bodies);
Module decode_module(const std::vector<uint8_t>& bytes);

}  // namespace dlab::wasm
