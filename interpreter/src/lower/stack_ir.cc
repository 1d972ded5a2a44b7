// The stack IR's instructions: each wasm instruction (but the control structure, lowering.cc, and
// the GC and 0xFC ones, gc_and_misc.cc) as its handler's op word and immediates, its operands on
// the operand stack; the table's numeric, memory and SIMD instructions by their declarations.
#include <cstring>

#include <fmt/format.h>

#include "lower/lowerer.h"

namespace dlab::wasm::lowering_impl {

// multi-memory: an instruction on a memory other than memory 0 runs between two memory_use
// instructions (that memory, then memory 0 again), so memory 0's instructions stay one handler.
void Lowerer::use_memory(uint32_t idx) {
  emit(Op::memory_use);
  word(reinterpret_cast<uint64_t>(memory(idx)));
}

// An instruction from the table, with its immediates emitted by kind.
void Lowerer::table_op(const Instruction& in, const SimpleOp& s) {
  uint64_t imm[2] = {0, 0};
  const uint32_t mem = in.mem.memory;
  switch (s.imm) {
    case Imm::NONE: break;
    case Imm::MEM: imm[0] = in.mem.offset; break;
    case Imm::LANE: imm[0] = in.lane; break;
    case Imm::MEMLANE: imm[0] = in.mem.offset; imm[1] = in.lane; break;
    case Imm::SHUF: imm[0] = in.bits[0]; imm[1] = in.bits[1]; break;
  }
  pop_push(s);
  // A memory64 memory's instructions are their _a64 forms (64-bit address arithmetic), and an
  // instruction on another memory than memory 0 is bracketed by memory_use: both written as
  // they are, never folded or paired.
  bool on_memory_op = s.imm == Imm::MEM || s.imm == Imm::MEMLANE;
  if (on_memory_op && (memory64(mem) || mem != 0)) {
    on_memory(mem, [&] {
      emit(memory64(mem) ? kRewrites[s.op].a64 : s.op);
      for (int i = 0; i < imm_words(s.imm); ++i) word(imm[i]);
    });
    return;
  }
  if (s.imm == Imm::MEM && fold_load(s.op, imm[0])) return;
  if (!fold(s.op)) emit(s.op);
  for (int i = 0; i < imm_words(s.imm); ++i) word(imm[i]);
}

// The operand types' effect of a table instruction's signature (its 'a' the memory's address type).
void Lowerer::pop_push(const SimpleOp& s) {
  const StackEffect& e = effect_of(s);
  pop(e.pops.size());
  for (char letter : e.pushes) push(type_letter(letter));
}

void Lowerer::call(const FuncInst* callee, bool tail) {
  pop(callee->type.params.size());
  emit(tail ? Op::return_call : Op::call);
  word(reinterpret_cast<uint64_t>(callee));
  if (tail) mark_dead();
  else push(callee->type.results);
}

void Lowerer::call_indirect(uint32_t type_idx, uint32_t table, bool tail) {
  pop();
  const FuncType& ft = inst_.module.types.at(type_idx);
  pop(ft.params.size());
  index64(table, {1});
  emit(tail ? Op::return_call_indirect : Op::call_indirect);
  word(reinterpret_cast<uint64_t>(inst_.tables.at(table)));
  word(inst_.type_ids.at(type_idx));
  if (tail) mark_dead();
  else push(ft.results);
}

void Lowerer::call_ref(uint32_t type_idx, bool tail) {
  pop();
  const FuncType& ft = inst_.module.types.at(type_idx);
  pop(ft.params.size());
  emit(tail ? Op::return_call_ref : Op::call_ref);
  if (tail) mark_dead();
  else push(ft.results);
}

// br_on_null / br_on_non_null l: [offset, keep, drop] for the label, the reference counted as
// its handler does (dropped before the branch by br_on_null, carried by br_on_non_null).
void Lowerer::branch_on_null(uint32_t depth, bool on_null) {
  if (dead()) return;
  if (on_null) {
    ValType t = pop();
    auto [keep, drop] = keep_drop(depth);
    push(t);
    size_t at = emit(Op::br_on_null);
    word(0); word(keep); word(drop);
    target(depth, at, at + 1);
    return;
  }
  auto [keep, drop] = keep_drop(depth);
  size_t at = emit(Op::br_on_non_null);
  word(0); word(keep); word(drop);
  target(depth, at, at + 1);
  pop();
}

// table64: the i64 operands of an instruction on a 64-bit table (slots from the top) saturated
// to 32 bits first (handlers.def's table_index64).
void Lowerer::index64(uint32_t table, std::initializer_list<uint64_t> slots) {
  if (!inst_.tables.at(table)->type.limits.address64) return;
  for (uint64_t k : slots) {
    emit(Op::table_index64);
    word(k);
  }
}

// The branches, calls and throws declare their effects (the validator types them from the row)
// but keep a lowering rule here: their words (targets, how many slots a branch keeps and drops, a
// callee's frame) come from the control stack and the callee, and a row's effect alone cannot
// write them. The other declared rows go to declared_op.
void Lowerer::stack_body(const Instruction& in) {
  const bool live = !dead();
  if (in.simple) return table_op(in, *in.simple);
  const Opcode op = in.opcode;
  const bool by_rule = effect_of(*in.decl).effect.by_rule;
  if (by_rule && prefix_of(op) == OpcodePrefix::kGc) return gc(in);
  if (by_rule && prefix_of(op) == OpcodePrefix::kMisc) return misc(in);
  switch (op) {
    case Opcode::br: {
      const uint32_t depth = in.x;
      if (!live) return;
      auto [keep, drop] = keep_drop(depth);
      size_t at = emit(drop ? Op::br_drop : Op::br);
      word(0);
      if (drop) { word(keep); word(drop); }
      target(depth, at, at + 1);
      mark_dead();
      return;
    }
    case Opcode::br_if: {
      const uint32_t depth = in.x;
      pop();
      if (!live) return;
      auto [keep, drop] = keep_drop(depth);
      if (!drop) {
        auto [at, w] = branch_on_top(true);
        target(depth, at, w);
        return;
      }
      size_t at = emit(Op::br_if_drop);
      word(0);
      word(keep);
      word(drop);
      target(depth, at, at + 1);
      return;
    }
    case Opcode::br_table: {
      pop();
      if (!live) return;
      size_t at = emit(Op::br_table);
      word(in.count);
      auto entry = [&](uint32_t d) {
        auto [keep, drop] = keep_drop(d);
        size_t w = code_.size();
        word(0);
        word(keep);
        word(drop);
        target(d, at, w);
      };
      for_each_label(in, entry);
      entry(in.x);  // the default
      mark_dead();
      return;
    }
    case Opcode::return_: emit(Op::return_); word(f_.result_slots); mark_dead(); return;
    case Opcode::throw_: {  // throw: the payload is the tag's parameters on top
      const TagInst* tag = inst_.tags.at(in.x);
      pop(tag->type.params.size());
      emit(Op::throw_);
      word(reinterpret_cast<uint64_t>(tag));
      mark_dead();
      return;
    }
    case Opcode::call: call(inst_.funcs.at(in.x), false); return;
    case Opcode::return_call: call(inst_.funcs.at(in.x), true); return;
    case Opcode::call_indirect: case Opcode::return_call_indirect: call_indirect(in.x, in.y, op == Opcode::return_call_indirect); return;
    case Opcode::call_ref: case Opcode::return_call_ref: call_ref(in.x, op == Opcode::return_call_ref); return;
    case Opcode::drop: emit(slots_of(pop()) == 2 ? Op::drop2 : Op::drop); return;
    case Opcode::select: case Opcode::select_t: {
      pop();
      ValType t = pop();
      pop();
      push(t);
      emit(slots_of(t) == 2 ? Op::select2 : Op::select);
      return;
    }
    case Opcode::local_get: case Opcode::local_set: case Opcode::local_tee: {
      const uint32_t i = in.x;
      ValType t = local_type_.at(i);
      bool wide = slots_of(t) == 2;
      if (op == Opcode::local_get) {
        push(t);
        if (!wide && fold_local_get(local_slot_[i])) return;
        emit(wide ? Op::local_get2 : Op::local_get);
      } else if (op == Opcode::local_set) {
        pop();
        emit(wide ? Op::local_set2 : Op::local_set);
      } else {
        emit(wide ? Op::local_tee2 : Op::local_tee);
      }
      word(local_slot_[i]);
      return;
    }
    case Opcode::global_get: case Opcode::global_set: {
      GlobalInst* g = inst_.globals.at(in.x);
      bool wide = slots_of(g->type.type) == 2;
      if (op == Opcode::global_get) {
        push(g->type.type);
        emit(wide ? Op::global_get2 : Op::global_get);
      } else {
        pop();
        emit(wide ? Op::global_set2 : Op::global_set);
      }
      word(reinterpret_cast<uint64_t>(g));
      return;
    }
    case Opcode::ref_null: push(ref_type(true, in.heap)); emit(Op::const_); word(0); return;
    case Opcode::br_on_null: case Opcode::br_on_non_null: branch_on_null(in.x, op == Opcode::br_on_null); return;
    case Opcode::ref_func: push(ValType::kFuncRef); emit(Op::const_); word(reinterpret_cast<uint64_t>(inst_.funcs.at(in.x))); return;
    default: break;
  }
  if (!by_rule) return declared_op(in);
  throw Unsupported(fmt::format("opcode {:#x} has no handler (module not validated?)", opcode_value(op)));
}

}  // namespace dlab::wasm::lowering_impl
