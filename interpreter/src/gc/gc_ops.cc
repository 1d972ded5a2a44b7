// The GC instructions that run out of line (machine.h's GcOpFn, the gc_op handler's word 1), and
// ref.test's question. Immediates: word 2 the type's Rtt, word 3 the second immediate (a count, a
// segment, or the source array's Rtt). Each allocates through the heap with the handler's `sp`, so
// the operands still on the stack are roots while it may collect.
#include "gc/gc_ops.h"

#include <cstring>

#include "gc/gc_heap.h"

namespace dlab::wasm {

namespace {

const Rtt* rtt_at(const uint64_t* ip, int k) { return reinterpret_cast<const Rtt*>(ip[k]); }
uint8_t* payload(GcObject* o) { return reinterpret_cast<uint8_t*>(o) + sizeof(GcObject); }

uint64_t* fail(Machine* m, const char* why) {
  m->trap = why;
  return nullptr;
}

// A value's slots (one, or two for v128, low half first) as `bytes` bytes of storage.
// (little-endian: a packed or 32-bit value is its slot's low bytes; v128 its two slots in order)
void store_value(uint8_t* at, const uint64_t* slots, uint32_t bytes) { std::memcpy(at, slots, bytes); }
uint32_t value_slots(uint32_t bytes) { return bytes == 16 ? 2 : 1; }

GcObject* new_array(Machine* m, const Rtt* t, uint64_t n, const uint64_t* sp) {
  // Past 2^32 - 1 elements, or a payload past what the heap hands out, is out of memory.
  if (n > 0xFFFFFFFFull) return nullptr;
  return m->heap->allocate(t, sizeof(GcObject) + n * t->elem_bytes, static_cast<uint32_t>(n), sp);
}

}  // namespace

// struct.new [rtt]: [field*] -> [ref]
uint64_t* gc_struct_new(Machine* m, const uint64_t* ip, uint64_t* sp) noexcept {
  const Rtt* t = rtt_at(ip, 2);
  GcObject* o = m->heap->allocate(t, sizeof(GcObject) + t->payload_bytes, 0, sp);
  if (!o) return fail(m, "out of memory");
  uint32_t slots = 0;
  for (uint32_t size : t->field_sizes) slots += value_slots(size);
  uint64_t* at = sp - slots;
  for (size_t k = 0; k < t->field_sizes.size(); ++k) {
    store_value(reinterpret_cast<uint8_t*>(o) + t->field_offsets[k], at, t->field_sizes[k]);
    at += value_slots(t->field_sizes[k]);
  }
  sp -= slots;
  *sp++ = reinterpret_cast<uint64_t>(o);
  return sp;
}

// struct.new_default [rtt]: [] -> [ref] (the allocation zeroes: 0, +0.0 and null)
uint64_t* gc_struct_new_default(Machine* m, const uint64_t* ip, uint64_t* sp) noexcept {
  const Rtt* t = rtt_at(ip, 2);
  GcObject* o = m->heap->allocate(t, sizeof(GcObject) + t->payload_bytes, 0, sp);
  if (!o) return fail(m, "out of memory");
  *sp++ = reinterpret_cast<uint64_t>(o);
  return sp;
}

// array.new [rtt]: [value i32] -> [ref]
uint64_t* gc_array_new(Machine* m, const uint64_t* ip, uint64_t* sp) noexcept {
  const Rtt* t = rtt_at(ip, 2);
  uint32_t n = static_cast<uint32_t>(sp[-1]), vs = value_slots(t->elem_bytes);
  GcObject* o = new_array(m, t, n, sp);
  if (!o) return fail(m, "out of memory");
  const uint64_t* v = sp - 1 - vs;
  for (uint32_t i = 0; i < n; ++i) store_value(payload(o) + static_cast<uint64_t>(i) * t->elem_bytes, v, t->elem_bytes);
  sp -= 1 + vs;
  *sp++ = reinterpret_cast<uint64_t>(o);
  return sp;
}

// array.new_default [rtt]: [i32] -> [ref]
uint64_t* gc_array_new_default(Machine* m, const uint64_t* ip, uint64_t* sp) noexcept {
  GcObject* o = new_array(m, rtt_at(ip, 2), static_cast<uint32_t>(sp[-1]), sp);
  if (!o) return fail(m, "out of memory");
  sp[-1] = reinterpret_cast<uint64_t>(o);
  return sp;
}

// array.new_fixed [rtt, n]: [value^n] -> [ref]
uint64_t* gc_array_new_fixed(Machine* m, const uint64_t* ip, uint64_t* sp) noexcept {
  const Rtt* t = rtt_at(ip, 2);
  uint32_t n = static_cast<uint32_t>(ip[3]), vs = value_slots(t->elem_bytes);
  GcObject* o = new_array(m, t, n, sp);
  if (!o) return fail(m, "out of memory");
  const uint64_t* v = sp - static_cast<uint64_t>(n) * vs;
  for (uint32_t i = 0; i < n; ++i, v += vs) store_value(payload(o) + static_cast<uint64_t>(i) * t->elem_bytes, v, t->elem_bytes);
  sp -= static_cast<uint64_t>(n) * vs;
  *sp++ = reinterpret_cast<uint64_t>(o);
  return sp;
}

// array.new_data [rtt, segment]: [offset n] -> [ref], the elements read from the data segment's
// bytes (little-endian).
uint64_t* gc_array_new_data(Machine* m, const uint64_t* ip, uint64_t* sp) noexcept {
  const Rtt* t = rtt_at(ip, 2);
  const auto* seg = reinterpret_cast<const std::vector<uint8_t>*>(ip[3]);
  uint64_t s = static_cast<uint32_t>(sp[-2]), n = static_cast<uint32_t>(sp[-1]);
  uint64_t bytes = n * t->elem_bytes;
  if (s > seg->size() || bytes > seg->size() - s) return fail(m, "out of bounds memory access");
  GcObject* o = new_array(m, t, n, sp);
  if (!o) return fail(m, "out of memory");
  if (bytes) std::memcpy(payload(o), seg->data() + s, bytes);
  sp -= 2;
  *sp++ = reinterpret_cast<uint64_t>(o);
  return sp;
}

// array.new_elem [rtt, segment]: [offset n] -> [ref]
uint64_t* gc_array_new_elem(Machine* m, const uint64_t* ip, uint64_t* sp) noexcept {
  const Rtt* t = rtt_at(ip, 2);
  const auto* seg = reinterpret_cast<const std::vector<uint64_t>*>(ip[3]);
  uint64_t s = static_cast<uint32_t>(sp[-2]), n = static_cast<uint32_t>(sp[-1]);
  if (s > seg->size() || n > seg->size() - s) return fail(m, "out of bounds table access");
  GcObject* o = new_array(m, t, n, sp);
  if (!o) return fail(m, "out of memory");
  if (n) std::memcpy(payload(o), seg->data() + s, n * 8);
  sp -= 2;
  *sp++ = reinterpret_cast<uint64_t>(o);
  return sp;
}

// array.fill [rtt]: [ref d value n] -> []
uint64_t* gc_array_fill(Machine* m, const uint64_t* ip, uint64_t* sp) noexcept {
  const Rtt* t = rtt_at(ip, 2);
  uint32_t vs = value_slots(t->elem_bytes);
  uint64_t n = static_cast<uint32_t>(sp[-1]);
  const uint64_t* v = sp - 1 - vs;
  uint64_t d = static_cast<uint32_t>(v[-1]);
  auto* o = reinterpret_cast<GcObject*>(v[-2]);
  if (!o) return fail(m, "null array reference");
  if (d > o->length || n > o->length - d) return fail(m, "out of bounds array access");
  for (uint64_t i = 0; i < n; ++i) store_value(payload(o) + (d + i) * t->elem_bytes, v, t->elem_bytes);
  return sp - 3 - vs;
}

// array.copy [dst rtt, src rtt]: [dst d src s n] -> [] (overlapping ranges as memmove)
uint64_t* gc_array_copy(Machine* m, const uint64_t* ip, uint64_t* sp) noexcept {
  const Rtt* t = rtt_at(ip, 2);
  auto* dst = reinterpret_cast<GcObject*>(sp[-5]);
  auto* src = reinterpret_cast<GcObject*>(sp[-3]);
  uint64_t d = static_cast<uint32_t>(sp[-4]), s = static_cast<uint32_t>(sp[-2]), n = static_cast<uint32_t>(sp[-1]);
  if (!dst || !src) return fail(m, "null array reference");
  if (d > dst->length || n > dst->length - d || s > src->length || n > src->length - s) return fail(m, "out of bounds array access");
  if (n) std::memmove(payload(dst) + d * t->elem_bytes, payload(src) + s * t->elem_bytes, n * t->elem_bytes);
  return sp - 5;
}

// array.init_data [rtt, segment]: [ref d s n] -> []
uint64_t* gc_array_init_data(Machine* m, const uint64_t* ip, uint64_t* sp) noexcept {
  const Rtt* t = rtt_at(ip, 2);
  const auto* seg = reinterpret_cast<const std::vector<uint8_t>*>(ip[3]);
  auto* o = reinterpret_cast<GcObject*>(sp[-4]);
  uint64_t d = static_cast<uint32_t>(sp[-3]), s = static_cast<uint32_t>(sp[-2]), n = static_cast<uint32_t>(sp[-1]);
  if (!o) return fail(m, "null array reference");
  if (d > o->length || n > o->length - d) return fail(m, "out of bounds array access");
  uint64_t bytes = n * t->elem_bytes;
  if (s > seg->size() || bytes > seg->size() - s) return fail(m, "out of bounds memory access");
  if (bytes) std::memcpy(payload(o) + d * t->elem_bytes, seg->data() + s, bytes);
  return sp - 4;
}

// array.init_elem [rtt, segment]: [ref d s n] -> []
uint64_t* gc_array_init_elem(Machine* m, const uint64_t* ip, uint64_t* sp) noexcept {
  const auto* seg = reinterpret_cast<const std::vector<uint64_t>*>(ip[3]);
  auto* o = reinterpret_cast<GcObject*>(sp[-4]);
  uint64_t d = static_cast<uint32_t>(sp[-3]), s = static_cast<uint32_t>(sp[-2]), n = static_cast<uint32_t>(sp[-1]);
  if (!o) return fail(m, "null array reference");
  if (d > o->length || n > o->length - d) return fail(m, "out of bounds array access");
  if (s > seg->size() || n > seg->size() - s) return fail(m, "out of bounds table access");
  if (n) std::memcpy(payload(o) + d * 8, seg->data() + s, n * 8);
  return sp - 4;
}

bool ref_test(const Machine* m, uint64_t v, uint64_t heap, uint64_t nullable) noexcept {
  if (v == 0) return nullable != 0;
  const HeapType h = static_cast<HeapType>(heap);
  if (h >= kHeapCanonical) {
    const uint32_t want = TypeStore::id_of(h);
    const DefType& t = m->types->type(want);
    if (t.kind == TypeKind::kFunc) return func_subtype(m, reinterpret_cast<const FuncInst*>(v)->type_id, want);
    if (!ref::is_object(v)) return false;
    const Rtt& have = *ref::object(v)->rtt;
    const Rtt& target = m->types->rtt(want);
    return have.depth >= target.depth && have.supers[target.depth] == want;
  }
  switch (h) {
    case kHeapAny: case kHeapFunc: case kHeapExtern: case kHeapExn: return true;
    case kHeapEq: return ref::is_i31(v) || ref::is_object(v);
    case kHeapI31: return ref::is_i31(v);
    case kHeapStruct: return ref::is_object(v) && ref::object(v)->rtt->kind == TypeKind::kStruct;
    case kHeapArray: return ref::is_object(v) && ref::object(v)->rtt->kind == TypeKind::kArray;
    default: return false;  // the bottoms hold only null
  }
}

bool func_subtype(const Machine* m, uint64_t sub, uint64_t super) noexcept {
  return m->types->is_sub(static_cast<uint32_t>(sub), static_cast<uint32_t>(super));
}

}  // namespace dlab::wasm
