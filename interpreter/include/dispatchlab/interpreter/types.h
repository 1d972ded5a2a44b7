// Canonical types (WebAssembly 3.0 GC): iso-recursive type equality, declared subtyping, and the
// runtime type information (Rtt) that casts and the collector read.
//
// A recursive group of a module is canonicalised whole: its types, with every reference to a type
// of an earlier group replaced by that type's canonical id and every reference into the group by
// its position in it, form a key; equal keys (of this module or any other) share their ids. So
// two modules' types are equal exactly when they have the same ids, and the validator (one
// module's store) and the runtime (one store for every instance) compare types by id.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <vector>

#include "dispatchlab/interpreter/module.h"

namespace dlab::wasm {

// What a cast or the collector needs of a canonical type. Objects (runtime.h's GcObject) point to
// theirs; `supers` is the display of declared supertypes (supers[d] is the supertype at depth d,
// supers[depth] the type itself), so a cast to a type at depth d is one comparison.
struct Rtt {
  uint32_t id = 0;
  TypeKind kind = TypeKind::kFunc;
  uint32_t depth = 0;
  std::vector<uint32_t> supers;
  // Structs: each field's byte offset from the object's start (the header included) and size;
  // the payload's bytes. Arrays: the element's size. Field and element sizes are the storage
  // type's natural size (i8 1, i16 2, i32/f32 4, i64/f64/references 8, v128 16).
  std::vector<uint32_t> field_offsets, field_sizes;
  uint32_t payload_bytes = 0;
  uint32_t elem_bytes = 0;
  std::vector<uint32_t> ref_offsets;  // struct fields holding references (what the collector traces)
  bool elem_ref = false;              // an array of references
};

class TypeStore {
 public:
  TypeStore() = default;
  TypeStore(const TypeStore&) = delete;
  TypeStore& operator=(const TypeStore&) = delete;

  // The canonical id of each of the module's type indices. The caller has checked that every
  // index a type names is below the end of its group and a supertype below the type itself
  // (the validator's first step); std::invalid_argument otherwise.
  std::vector<uint32_t> add(const std::vector<DefType>& types);
  // A function type alone in its group (host functions, tags of the host); its references are
  // already canonical or abstract.
  uint32_t add_func(const FuncType& t);

  size_t size() const { return types_.size(); }
  // A canonical type: its references are kHeapCanonical + id, its supertype an id.
  const DefType& type(uint32_t id) const { return types_.at(id); }
  const Rtt& rtt(uint32_t id) const { return rtts_.at(id); }
  // Declared subtyping between canonical ids (reflexive and transitive).
  bool is_sub(uint32_t sub, uint32_t super) const {
    const Rtt &a = rtts_[sub], &b = rtts_[super];
    return a.depth >= b.depth && a.supers[b.depth] == super;
  }
  // Subtyping of canonical heap and value types (module.h's rule with this store's types).
  bool heap_sub(HeapType sub, HeapType super) const;
  bool val_sub(ValType sub, ValType super) const;
  // Whether `sub`'s definition may declare `super` as its supertype: the same kind, and fields
  // (covariant when immutable, invariant when mutable) or parameters (contravariant) and results
  // (covariant) that match.
  bool composite_matches(uint32_t sub, uint32_t super) const;
  static HeapType canonical_heap(uint32_t id) { return kHeapCanonical + id; }
  static uint32_t id_of(HeapType h) { return h - kHeapCanonical; }

 private:
  std::map<std::vector<uint64_t>, uint32_t> groups_;  // a group's key -> its first id
  std::deque<DefType> types_;
  std::deque<Rtt> rtts_;
  void make_rtt(uint32_t id);
};

}  // namespace dlab::wasm
