// Iso-recursive canonicalisation (types.h): a group's key, its canonical types and their Rtts.
#include "dispatchlab/interpreter/types.h"

#include <stdexcept>

namespace dlab::wasm {

namespace {

uint32_t storage_bytes(const FieldType& f) {
  if (f.packed == Packed::kI8) return 1;
  if (f.packed == Packed::kI16) return 2;
  switch (f.type) {
    case ValType::kI32: case ValType::kF32: return 4;
    case ValType::kV128: return 16;
    default: return 8;  // i64, f64, references
  }
}

// The key's words for one value type of a group starting at type index `begin` of `size` types:
// a reference into the group by its position (so that equal groups of two modules give equal
// keys), any other defined type by its canonical id.
void key_valtype(std::vector<uint64_t>& key, ValType t, const std::vector<uint32_t>& ids, uint32_t begin, uint32_t size) {
  if (!is_ref(t)) {
    key.push_back(static_cast<uint32_t>(t));
    return;
  }
  int64_t idx = heap_type_index(ref_heap(t));
  uint64_t nullable = ref_nullable(t) ? 1 : 0;
  if (idx < 0) {
    key.push_back(1ull << 40 | nullable << 32 | ref_heap(t));
  } else if (idx >= begin && idx < begin + size) {
    key.push_back(2ull << 40 | nullable << 32 | static_cast<uint64_t>(idx - begin));
  } else {
    if (static_cast<uint64_t>(idx) >= ids.size()) throw std::invalid_argument("a type names a type after its group");
    key.push_back(3ull << 40 | nullable << 32 | ids[static_cast<size_t>(idx)]);
  }
}

ValType canonical_valtype(ValType t, const std::vector<uint32_t>& ids, uint32_t begin, uint32_t first_id) {
  if (!is_ref(t)) return t;
  int64_t idx = heap_type_index(ref_heap(t));
  if (idx < 0) return t;
  uint32_t id = idx >= begin ? first_id + static_cast<uint32_t>(idx - begin) : ids[static_cast<size_t>(idx)];
  return ref_type(ref_nullable(t), TypeStore::canonical_heap(id));
}

}  // namespace

std::vector<uint32_t> TypeStore::add(const std::vector<DefType>& types) {
  std::vector<uint32_t> ids;
  ids.reserve(types.size());
  size_t i = 0;
  while (i < types.size()) {
    const uint32_t begin = static_cast<uint32_t>(i), size = std::max<uint32_t>(1, types[i].rec_size);
    if (begin + size > types.size()) throw std::invalid_argument("a recursive group past the type section");
    std::vector<uint64_t> key;
    for (uint32_t k = 0; k < size; ++k) {
      const DefType& t = types[begin + k];
      key.push_back(static_cast<uint64_t>(t.kind) << 8 | (t.final ? 1 : 0));
      if (t.super) {
        if (*t.super >= begin + k) throw std::invalid_argument("a supertype after its subtype");
        key.push_back(*t.super >= begin ? 2ull << 40 | (*t.super - begin) : 3ull << 40 | ids[*t.super]);
      } else {
        key.push_back(0);
      }
      key.push_back(t.params.size());
      for (ValType v : t.params) key_valtype(key, v, ids, begin, size);
      key.push_back(t.results.size());
      for (ValType v : t.results) key_valtype(key, v, ids, begin, size);
      key.push_back(t.fields.size());
      for (const FieldType& f : t.fields) {
        key_valtype(key, f.type, ids, begin, size);
        key.push_back(static_cast<uint64_t>(f.packed) << 1 | (f.mutable_ ? 1 : 0));
      }
    }
    auto [it, inserted] = groups_.emplace(std::move(key), static_cast<uint32_t>(types_.size()));
    const uint32_t first = it->second;
    if (inserted) {
      for (uint32_t k = 0; k < size; ++k) {
        DefType c = types[begin + k];
        for (ValType& v : c.params) v = canonical_valtype(v, ids, begin, first);
        for (ValType& v : c.results) v = canonical_valtype(v, ids, begin, first);
        for (FieldType& f : c.fields) f.type = canonical_valtype(f.type, ids, begin, first);
        if (c.super) c.super = *c.super >= begin ? first + (*c.super - begin) : ids[*c.super];
        c.rec_begin = first;
        c.rec_size = size;
        types_.push_back(std::move(c));
      }
      for (uint32_t k = 0; k < size; ++k) make_rtt(first + k);
    }
    for (uint32_t k = 0; k < size; ++k) ids.push_back(first + k);
    i += size;
  }
  return ids;
}

uint32_t TypeStore::add_func(const FuncType& t) {
  // Its references are canonical already: as a one-type group they key by id (canonical ids are
  // outside any module's index range, so they take the "earlier type" form with themselves).
  std::vector<uint64_t> key = {static_cast<uint64_t>(TypeKind::kFunc) << 8 | 1, 0, t.params.size()};
  auto word = [&](ValType v) {
    if (!is_ref(v)) return uint64_t{static_cast<uint32_t>(v)};
    uint64_t nullable = ref_nullable(v) ? 1 : 0;
    HeapType h = ref_heap(v);
    if (h >= kHeapCanonical) return uint64_t{3} << 40 | nullable << 32 | id_of(h);
    return uint64_t{1} << 40 | nullable << 32 | h;
  };
  for (ValType v : t.params) key.push_back(word(v));
  key.push_back(t.results.size());
  for (ValType v : t.results) key.push_back(word(v));
  key.push_back(0);
  auto [it, inserted] = groups_.emplace(std::move(key), static_cast<uint32_t>(types_.size()));
  if (inserted) {
    DefType c(t);
    c.rec_begin = it->second;
    types_.push_back(std::move(c));
    make_rtt(it->second);
  }
  return it->second;
}

void TypeStore::make_rtt(uint32_t id) {
  const DefType& t = types_[id];
  Rtt r;
  r.id = id;
  r.kind = t.kind;
  if (t.super) r.supers = rtts_.at(*t.super).supers;
  r.supers.push_back(id);
  r.depth = static_cast<uint32_t>(r.supers.size() - 1);
  constexpr uint32_t kHeader = 16;  // runtime.h's GcObject header
  if (t.kind == TypeKind::kStruct) {
    uint32_t at = kHeader;
    for (const FieldType& f : t.fields) {
      uint32_t n = storage_bytes(f), align = n > 8 ? 8 : n;
      at = (at + align - 1) / align * align;
      r.field_offsets.push_back(at);
      r.field_sizes.push_back(n);
      if (is_ref(f.type)) r.ref_offsets.push_back(at);
      at += n;
    }
    r.payload_bytes = at - kHeader;
  } else if (t.kind == TypeKind::kArray && !t.fields.empty()) {
    r.elem_bytes = storage_bytes(t.fields[0]);
    r.elem_ref = is_ref(t.fields[0].type);
  }
  rtts_.push_back(std::move(r));
}

bool TypeStore::heap_sub(HeapType sub, HeapType super) const {
  return heap_subtype(
      sub, super, [&](HeapType h) { return types_.at(id_of(h)).kind; },
      [&](HeapType a, HeapType b) { return is_sub(id_of(a), id_of(b)); });
}

bool TypeStore::val_sub(ValType sub, ValType super) const {
  if (sub == super) return true;
  if (!is_ref(sub) || !is_ref(super)) return false;
  if (ref_nullable(sub) && !ref_nullable(super)) return false;
  return heap_sub(ref_heap(sub), ref_heap(super));
}

bool TypeStore::composite_matches(uint32_t sub, uint32_t super) const {
  const DefType &a = types_.at(sub), &b = types_.at(super);
  if (a.kind != b.kind) return false;
  if (a.kind == TypeKind::kFunc) {
    if (a.params.size() != b.params.size() || a.results.size() != b.results.size()) return false;
    for (size_t k = 0; k < a.params.size(); ++k)
      if (!val_sub(b.params[k], a.params[k])) return false;
    for (size_t k = 0; k < a.results.size(); ++k)
      if (!val_sub(a.results[k], b.results[k])) return false;
    return true;
  }
  // A struct may add fields after its supertype's; an array has one element type.
  if (a.fields.size() < b.fields.size() || (a.kind == TypeKind::kArray && a.fields.size() != b.fields.size())) return false;
  for (size_t k = 0; k < b.fields.size(); ++k) {
    const FieldType &x = a.fields[k], &y = b.fields[k];
    if (x.mutable_ != y.mutable_ || x.packed != y.packed) return false;
    if (x.mutable_ ? x.type != y.type : !val_sub(x.type, y.type)) return false;
  }
  return true;
}

}  // namespace dlab::wasm
