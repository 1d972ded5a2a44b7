// The GC instructions (the 0xFB prefix: handlers/gc.def's field and element accesses inline,
// allocation and the bulk array instructions out of line through gc_op, gc_ops.cc) and the 0xFC
// ones (the saturating truncations by their declarations; bulk memory and the table instructions).
#include <array>
#include <bit>

#include <fmt/format.h>

#include "lower/lowerer.h"

namespace dlab::wasm::lowering_impl {

// A heap type immediate, canonical (what ref_test compares with).
uint64_t Lowerer::canonical_heap(HeapType h) const {
  int64_t idx = heap_type_index(h);
  return idx < 0 ? h : TypeStore::canonical_heap(inst_.type_ids.at(static_cast<size_t>(idx)));
}

void Lowerer::gc_op(GcOpFn fn, uint64_t a, uint64_t b) {
  emit(Op::gc_op);
  word(reinterpret_cast<uint64_t>(fn));
  word(a);
  word(b);
}

// The access handler for a storage type's size (and sign, packed): get_ops[k] for size 1, 2, 4,
// 8, 16 (k = 0..4), the packed ones signed or not.
Op Lowerer::access(uint32_t bytes, bool is_signed, const std::array<Op, 7>& gets) {
  if (bytes <= 2) return gets[(bytes == 2 ? 2 : 0) + (is_signed ? 0 : 1)];  // the packed ones
  return gets[2 + std::countr_zero(bytes)];                                 // 4, 8, 16: 4, 5, 6
}

// The GC rows with a declared effect (apply_effect has moved their operands): the access handler
// for the storage's size and the field's offset, or the allocation.
void Lowerer::gc_access(const Instruction& in) {
  const Opcode op = in.opcode;
  static constexpr std::array<Op, 7> kStructGets = {Op::struct_get8_s, Op::struct_get8_u, Op::struct_get16_s, Op::struct_get16_u,
                                                    Op::struct_get32,   Op::struct_get64,  Op::struct_get128};
  static constexpr std::array<Op, 7> kArrayGets = {Op::array_get8_s, Op::array_get8_u, Op::array_get16_s, Op::array_get16_u,
                                                   Op::array_get32,   Op::array_get64,  Op::array_get128};
  static constexpr std::array<Op, 7> kStructSets = {Op::struct_set8, Op::struct_set8, Op::struct_set16, Op::struct_set16,
                                                    Op::struct_set32, Op::struct_set64, Op::struct_set128};
  static constexpr std::array<Op, 7> kArraySets = {Op::array_set8, Op::array_set8, Op::array_set16, Op::array_set16,
                                                   Op::array_set32, Op::array_set64, Op::array_set128};
  const Rtt* t = rtt(in.x);
  switch (op) {
    case Opcode::struct_get: case Opcode::struct_get_s: case Opcode::struct_get_u:
      emit(access(t->field_sizes.at(in.y), op == Opcode::struct_get_s, kStructGets));
      word(t->field_offsets.at(in.y));
      return;
    case Opcode::struct_set:
      emit(access(t->field_sizes.at(in.y), false, kStructSets));
      word(t->field_offsets.at(in.y));
      return;
    case Opcode::array_new: gc_op(&gc_array_new, reinterpret_cast<uint64_t>(t)); return;
    case Opcode::array_get: case Opcode::array_get_s: case Opcode::array_get_u:
      emit(access(t->elem_bytes, op == Opcode::array_get_s, kArrayGets));
      return;
    case Opcode::array_set: emit(access(t->elem_bytes, false, kArraySets)); return;
    case Opcode::array_fill: gc_op(&gc_array_fill, reinterpret_cast<uint64_t>(t)); return;
    default: throw Unsupported(fmt::format("{} has no GC access rule", in.decl->name));
  }
}

void Lowerer::gc(const Instruction& in) {
  const Opcode op = in.opcode;
  auto ref_of = [&](uint32_t x) { return ref_type(false, kHeapTypeIndex + x); };
  switch (op) {
    case Opcode::struct_new: case Opcode::struct_new_default: {  // struct.new(_default) x
      const uint32_t x = in.x;
      if (op == Opcode::struct_new) pop(def(x).fields.size());
      push(ref_of(x));
      gc_op(op == Opcode::struct_new ? &gc_struct_new : &gc_struct_new_default, reinterpret_cast<uint64_t>(rtt(x)));
      return;
    }
    case Opcode::array_new_default: {  // array.new_default x
      const uint32_t x = in.x;
      pop(1);
      push(ref_of(x));
      gc_op(&gc_array_new_default, reinterpret_cast<uint64_t>(rtt(x)));
      return;
    }
    case Opcode::array_new_fixed: {  // array.new_fixed x n
      const uint32_t x = in.x, n = in.y;
      pop(n);
      push(ref_of(x));
      gc_op(&gc_array_new_fixed, reinterpret_cast<uint64_t>(rtt(x)), n);
      return;
    }
    case Opcode::array_new_data: case Opcode::array_new_elem: {  // array.new_data x d, array.new_elem x e
      const uint32_t x = in.x, seg = in.y;
      pop(2);
      push(ref_of(x));
      if (op == Opcode::array_new_data) gc_op(&gc_array_new_data, reinterpret_cast<uint64_t>(rtt(x)), reinterpret_cast<uint64_t>(&inst_.datas.at(seg)));
      else gc_op(&gc_array_new_elem, reinterpret_cast<uint64_t>(rtt(x)), reinterpret_cast<uint64_t>(&inst_.elems.at(seg)));
      return;
    }
    case Opcode::array_copy: {  // array.copy x y
      const uint32_t x = in.x, y = in.y;
      pop(5);
      gc_op(&gc_array_copy, reinterpret_cast<uint64_t>(rtt(x)), reinterpret_cast<uint64_t>(rtt(y)));
      return;
    }
    case Opcode::array_init_data: case Opcode::array_init_elem: {  // array.init_data x d, array.init_elem x e
      const uint32_t x = in.x, seg = in.y;
      pop(4);
      if (op == Opcode::array_init_data) gc_op(&gc_array_init_data, reinterpret_cast<uint64_t>(rtt(x)), reinterpret_cast<uint64_t>(&inst_.datas.at(seg)));
      else gc_op(&gc_array_init_elem, reinterpret_cast<uint64_t>(rtt(x)), reinterpret_cast<uint64_t>(&inst_.elems.at(seg)));
      return;
    }
    case Opcode::ref_test: case Opcode::ref_test_null: case Opcode::ref_cast: case Opcode::ref_cast_null: {  // ref.test (ref null? ht), ref.cast (ref null? ht)
      const HeapType h = in.heap;
      bool nullable = op == Opcode::ref_test_null || op == Opcode::ref_cast_null;
      pop();
      push(op == Opcode::ref_test || op == Opcode::ref_test_null ? ValType::kI32 : ref_type(nullable, h));
      emit(op == Opcode::ref_test || op == Opcode::ref_test_null ? Op::ref_test : Op::ref_cast);
      word(canonical_heap(h));
      word(nullable ? 1 : 0);
      return;
    }
    case Opcode::br_on_cast: case Opcode::br_on_cast_fail: {  // br_on_cast(_fail) flags l ht1 ht2: the reference stays on top either way
      const uint8_t flags = in.cast_flags;
      const uint32_t depth = in.x;
      const HeapType h2 = in.heap2;
      if (dead()) return;
      auto [keep, drop] = keep_drop(depth);
      size_t at = emit(op == Opcode::br_on_cast ? Op::br_on_cast : Op::br_on_cast_fail);
      word(0);
      word(keep);
      word(drop);
      word(canonical_heap(h2));
      word(flags & 2 ? 1 : 0);
      target(depth, at, at + 1);
      return;
    }
    case Opcode::any_convert_extern: case Opcode::extern_convert_any: {  // any.convert_extern, extern.convert_any: the same slot (runtime.h's ref)
      bool nullable = ref_nullable(pop());
      push(ref_type(nullable, op == Opcode::any_convert_extern ? kHeapAny : kHeapExtern));
      return;
    }
    default: throw Unsupported(fmt::format("GC instruction {:#x} has no handler (module not validated?)", opcode_value(op)));
  }
}

// The saturating truncations are handlers.def's (stack_body writes them by their declarations).
void Lowerer::misc(const Instruction& in) {
  const Opcode op = in.opcode;
  switch (op) {
    case Opcode::memory_copy: {
      const uint32_t dst = in.x, src = in.y;
      pop(3);
      if (dst == 0 && src == 0) {
        emit(memory64() ? Op::memory_copy_a64 : Op::memory_copy);
        return;
      }
      // Between two memories (or within one other than memory 0): one handler that reads both.
      emit(Op::memory_copy_between);
      word(reinterpret_cast<uint64_t>(memory(dst)));
      word(reinterpret_cast<uint64_t>(memory(src)));
      return;
    }
    case Opcode::table_init: {
      const uint32_t seg = in.x, table = in.y;
      pop(3);
      index64(table, {3});
      emit(Op::table_init);
      word(reinterpret_cast<uint64_t>(inst_.tables.at(table)));
      word(reinterpret_cast<uint64_t>(&inst_.elems.at(seg)));
      return;
    }
    case Opcode::table_copy: {
      const uint32_t dst = in.x, src = in.y;
      pop(3);
      if (table64(dst)) index64(dst, {3});
      if (table64(src)) index64(src, {2});
      if (table64(dst) && table64(src)) index64(dst, {1});
      emit(Op::table_copy);
      word(reinterpret_cast<uint64_t>(inst_.tables.at(dst)));
      word(reinterpret_cast<uint64_t>(inst_.tables.at(src)));
      return;
    }
    default: throw Unsupported(fmt::format("{:#x} has no handler", opcode_value(op)));
  }
}

}  // namespace dlab::wasm::lowering_impl
