// The register IR (Lowering::ir; handlers.def's register forms): operands read from the frame
// slots an instruction names, and values kept pending (a local, a constant) until something needs
// them in their own slot. lowerer.h's register IR section says how; what has no register form is
// written in its stack form (stack_ir.cc) with its operands materialised first.
#include <cstring>
#include <optional>
#include <vector>
#include <stdexcept>

#include "lower/lowerer.h"

namespace dlab::wasm::lowering_impl {

namespace {

// The register IR's compare-and-branch for a register compare just written: per op, the fused
// forms its `_r` or `_k` form becomes when a branch on its result follows (i32.eqz's `_r` form
// becomes br_unless_r / br_if_r, the sense flipped).
struct RegisterBranches {
  struct Pair {
    Op when_true = Op::kCount, when_false = Op::kCount;
  };
  std::array<Pair, static_cast<size_t>(Op::kCount)> of{};
  constexpr RegisterBranches() {
    for (const FormsOf& e : kForms) {
      if (e.forms.rr_br_if == Op::kCount) continue;
      for (const SimpleOp& s : kSimpleOps)
        if (s.op == e.op) {
          of[static_cast<size_t>(s.form(RegisterForm::r))] = {e.forms.rr_br_if, e.forms.rr_br_unless};
          of[static_cast<size_t>(s.form(RegisterForm::k))] = {e.forms.rk_br_if, e.forms.rk_br_unless};
        }
    }
    of[static_cast<size_t>(Op::i32_eqz_r)] = {Op::br_unless_r, Op::br_if_r};
    of[static_cast<size_t>(Op::i32_and_k)] = {Op::i32_and_k_br_if, Op::i32_and_k_br_unless};
  }
  const Pair& operator[](Op op) const { return of[static_cast<size_t>(op)]; }
};
constexpr RegisterBranches kRegisterBranches;

// A register form a branch right after it would fuse with (a compare, i32.eqz, i32.and of a
// constant), which then reads its operands from their slots.
constexpr bool fuses_with_a_branch(Op op) { return op != Op::kCount && kRegisterBranches[op].when_true != Op::kCount; }

// The accumulator forms (handlers.def's x / y forms), per op: the form that reads the same operand
// from its slot instead, which operand (1: the first, 2: the second) comes from the accumulator,
// and the word that slot form has it in (operand_layout.h); whether an op leaves its result in the
// accumulator (every register form of an instruction with a result); and the form of the same op
// without its result slot (elide: the _n forms), where it has one. All from the forms' shapes.
struct AccumulatorForms {
  struct Form {
    Op slot_form = Op::kCount;
    uint8_t operand = 0;
    uint8_t slot_word = 0;
  };
  std::array<Form, static_cast<size_t>(Op::kCount)> of{};
  std::array<bool, static_cast<size_t>(Op::kCount)> sets{};
  std::array<Op, static_cast<size_t>(Op::kCount)> without_store{};
  constexpr AccumulatorForms() {
    for (Op& n : without_store) n = Op::kCount;
    for (const SimpleOp& s : kSimpleOps) {
      if (!s.has_register_forms()) continue;
      for (int i = 0; i < kRegisterForms; ++i) {
        const RegisterForm f = static_cast<RegisterForm>(i);
        const Op op = s.form(f);
        if (op == Op::kCount || !register_layout_of(s, f).written) continue;
        const RegisterFormShape shape = shape_of(f);
        if (shape.from_acc != 0 && shape.stored) {
          RegisterFormShape from_slot = shape;
          from_slot.from_acc = 0;
          const RegisterForm slot_form = form_of(from_slot);
          of[static_cast<size_t>(op)] = {s.form(slot_form), shape.from_acc,
                                         static_cast<uint8_t>(register_layout_of(s, slot_form).operand[shape.from_acc - 1])};
        }
        if (sig_pushes(s.signature) != 1) continue;
        sets[static_cast<size_t>(op)] = true;
        if (shape.stored) {
          RegisterFormShape bare = shape;
          bare.stored = false;
          without_store[static_cast<size_t>(op)] = s.form(form_of(bare));
        }
      }
    }
  }
  const Form& operator[](Op op) const { return of[static_cast<size_t>(op)]; }
};
constexpr AccumulatorForms kAccumulatorForms;

// i32.add's _k and _xk forms, whose words an access that folds the add in takes over (_a, _ax).
constexpr OperandLayout kAddK = register_layout(0, 2, 1, RegisterForm::k);
constexpr OperandLayout kAddXk = register_layout(0, 2, 1, RegisterForm::xk);

// A signature all of whose operands and results take one slot (no v128): the register forms'.
constexpr bool one_slot_signature(const char* sig) {
  for (const char* p = sig; *p; ++p)
    if (*p == 'v') return false;
  return true;
}

}  // namespace

void Lowerer::materialize(Loc& l) {
  if (l.kind == Loc::kHome) return;
  emit(l.kind == Loc::kLocal ? Op::copy_r : Op::const_r);
  word(l.home);
  word(l.value);
  l.kind = Loc::kHome;
}

// An operand's slot: a local's own, or its own slot (a constant is written there first).
uint32_t Lowerer::operand_slot(Loc& l) {
  if (l.kind == Loc::kConst) materialize(l);
  return slot_of(l);
}

void Lowerer::materialize_all() {
  for (Loc& l : locs_) materialize(l);
}

void Lowerer::sync_sp(uint32_t height) {
  if (sp_at_ == height) return;
  emit(Op::sp_at);
  word(height);
  sp_at_ = height;
}

// Before a stack-form instruction: its operands in their slots, the stack pointer above them.
void Lowerer::stack_form() {
  materialize_all();
  sync_sp(height_);
  last_result_ = SIZE_MAX;
}

// The result word of a register instruction just written, if the value `l` is what it wrote.
bool Lowerer::just_written(const Loc& l) const {
  return l.kind == Loc::kHome && last_result_ != SIZE_MAX && last_result_ + 1 == code_.size() && code_[last_result_] == l.home &&
         !window_.empty();
}

// Value `l` is in the accumulator: the instruction just written computed it and left it there.
// Or a pending local.get of the local that instruction wrote its result to (a local.set or
// local.tee folded into it): the local's slot and the accumulator hold the same value.
bool Lowerer::in_accumulator(const Loc& l) const {
  if (!lowering_.acc || window_.empty() || !kAccumulatorForms.sets[static_cast<size_t>(window_.back().op)]) return false;
  if (l.kind == Loc::kLocal) return acc_local_end_ == code_.size() && l.value == acc_local_;
  return just_written(l);
}

// An accumulator form, the stream's last instruction, turned back into the form that reads that
// operand from its slot (which its producer also wrote): the slot inserted where that form has it.
void Lowerer::unaccumulate(Written& w) {
  const AccumulatorForms::Form& f = kAccumulatorForms[w.op];
  if (f.slot_form == Op::kCount) return;
  const size_t at = w.at + f.slot_word;
  code_.insert(code_.begin() + static_cast<std::ptrdiff_t>(at), w.acc_slot);
  if (last_result_ != SIZE_MAX && last_result_ >= at) ++last_result_;
  rewrite(w, f.slot_form);
  w.acc_slot = UINT32_MAX;
}

// elide: the stream's last instruction, whose result (an operand-stack value, its result word the
// stream's last word) the instruction about to be written takes from the accumulator and nothing
// else reads, becomes its form without the result slot. The caller has checked that the reader
// cannot be turned back into its slot form (unaccumulate), which would read the slot.
void Lowerer::elide_store() {
  Written& producer = window_.back();
  const Op bare = kAccumulatorForms.without_store[static_cast<size_t>(producer.op)];
  if (bare == Op::kCount || last_result_ + 1 != code_.size()) return;
  code_.pop_back();
  rewrite(producer, bare);
  last_result_ = SIZE_MAX;
}

// `cmp; i32.eqz` before a branch on the eqz's result `c`: the eqz goes and the branch's sense
// flips, so that the compare fuses with the branch (a float compare has no inverse that keeps
// NaN's answer, so compilers write the eqz: mandel's `!(zr*zr + zi*zi < 4.0)`). Only where the eqz
// reads the compare's result from the compare's own operand-stack slot, which nothing else reads
// (it was popped); the compare may be any form that fuses with a branch (or its accumulator form).
static_assert(register_layout(0, 1, 1, RegisterForm::r).operand[0] == 1 && register_layout(0, 1, 1, RegisterForm::r).words == 3,
              "i32_eqz_r: [op, operand slot, result slot]");
bool Lowerer::drop_negation(const Loc& c) {
  if (window_.size() < 2 || window_.back().op != Op::i32_eqz_r) return false;
  const Written& eqz = window_.back();
  const Written& cmp = window_[window_.size() - 2];
  const Op cmp_slot_form = kAccumulatorForms[cmp.op].slot_form == Op::kCount ? cmp.op : kAccumulatorForms[cmp.op].slot_form;
  if (!fuses_with_a_branch(cmp_slot_form) || eqz.at + 3 != code_.size()) return false;
  // The compare's words end where the eqz begins (every word is written by emit or word after its
  // op: a path that wrote words otherwise would not be taken for the compare's).
  const uint8_t cmp_words = kDeclaredWords.of[static_cast<size_t>(cmp.op)];
  if (cmp_words == 0 || cmp.at + cmp_words != eqz.at) return false;
  // The compare's result word is its last (every form that fuses stores its result there).
  const uint64_t operand = code_[eqz.at + 1];
  if (operand != c.home || code_[eqz.at - 1] != operand) return false;
  code_.resize(eqz.at);
  window_.pop_back();
  last_result_ = code_.size() - 1;
  if (cmp_slot_form != window_.back().op) unaccumulate(window_.back());
  return true;
}

// A branch on condition `c` (popped): a compare (or i32.eqz) just written becomes the compare and
// branch, its result word the offset; otherwise br_if_r / br_unless_r on the condition's slot.
// The fused forms' layouts must have their offset where the compare has its result slot.
static_assert(register_layout(0, 2, 1, RegisterForm::r).result == layout::kRrBr.label &&
              register_layout(0, 2, 1, RegisterForm::r).words == layout::kRrBr.words, "cmp_r a b res -> cmp_rr_br a b offset");
static_assert(register_layout(0, 2, 1, RegisterForm::k).result == layout::kRkBr.label &&
              register_layout(0, 2, 1, RegisterForm::k).words == layout::kRkBr.words, "cmp_k a c res -> cmp_rk_br a c offset");
static_assert(register_layout(0, 1, 1, RegisterForm::r).result == layout::kBrR.label &&
              register_layout(0, 1, 1, RegisterForm::r).words == layout::kBrR.words, "i32_eqz_r a res -> br_unless_r a offset");
std::pair<size_t, size_t> Lowerer::register_branch(Loc c, bool when_true) {
  materialize_all();
  if (lowering_.fuse && just_written(c)) {
    // A compare that took an operand from the accumulator reads it from its slot again: the fused
    // compare-and-branch forms read slots (and charge the budget, so they must be restartable).
    const Op slot_form = kAccumulatorForms[window_.back().op].slot_form;
    if (fuses_with_a_branch(slot_form)) unaccumulate(window_.back());
    if (drop_negation(c)) when_true = !when_true;
    const RegisterBranches::Pair& fused = kRegisterBranches[window_.back().op];
    if (fused.when_true != Op::kCount) {
      rewrite(window_.back(), when_true ? fused.when_true : fused.when_false);
      code_.back() = 0;
      last_result_ = SIZE_MAX;
      return {window_.back().at, code_.size() - 1};
    }
  }
  uint32_t condition = operand_slot(c);
  size_t at = emit(when_true ? Op::br_if_r : Op::br_unless_r);
  word(condition);
  word(0);
  last_result_ = SIZE_MAX;
  return {at, at + 2};
}

// Where a branch to label `depth` takes the value it carries from, if the register IR can write
// it: the label's own slot when nothing moves (no value carried, whatever is dropped staying where
// it is: nothing reads it at the label; or the label's values already at its height once
// materialised), else the slot of the one value of one slot it carries (its local's for a pending
// local.get; a constant is written to its slot first). nullopt: more values to move (the stack form).
std::optional<uint32_t> Lowerer::carried_from(uint32_t depth) {
  const auto [keep, drop] = keep_drop(depth);
  const Ctl& label = label_at(depth);
  if (keep == 0 || drop == 0) return label.height_base;
  if (keep != 1 || label.label_types().size() != 1 || locs_.empty()) return std::nullopt;
  Loc& v = locs_.back();
  if (v.kind == Loc::kConst) materialize(v);
  return slot_of(v);
}

// A copy_r is about to be written: the loops whose code begins with it (every label that starts
// here: a block or loop entered with nothing written since) note it for their back edges.
void Lowerer::note_head_copy() {
  for (size_t i = ctls_.size(); i-- > 0 && ctls_[i].loop_pc == code_.size();)
    if (ctls_[i].kind == CtlKind::kLoop) ctls_[i].head_copy = true;
}

// br to label `depth`, carrying nothing that moves. fuse: the branch makes the copies beside it
// itself, up to two, in their order: the copy_r just written (the stream's last instruction, no
// label between: the moves a compiler puts before a jump for its phis, `local.get; local.set;
// br`), and on a loop's back edge the copy_r the loop begins with, the branch then landing after
// it (the loop's other entries still run it there). Each copy so made costs no dispatch of its own.
void Lowerer::register_jump(uint32_t depth) {
  // Values the label keeps go to its slots; values it drops are read by no one (the code after an
  // unconditional branch is dead), and every value below it was written to its slot on entry.
  if (keep_drop(depth).first != 0) materialize_all();
  Ctl& label = ctls_[ctls_.size() - 1 - depth];
  constexpr size_t kCopyWords = 3;  // copy_r [op, to, from], as materialize and register_local write it
  std::array<std::pair<uint64_t, uint64_t>, 2> copies;  // (to, from)
  size_t n = 0;
  const bool through_head = lowering_.fuse && label.kind == CtlKind::kLoop && label.head_copy;
  while (lowering_.fuse && n + (through_head ? 1 : 0) < copies.size() && !window_.empty() &&
         window_.back().op == Op::copy_r && window_.back().at + kCopyWords == code_.size()) {
    const size_t at = window_.back().at;
    // A loop that begins with this copy does no longer (its back edges must not take it again).
    for (Ctl& c : ctls_)
      if (c.loop_pc == at) c.head_copy = false;
    copies[n++] = {code_[at + 1], code_[at + 2]};
    code_.resize(at);
    window_.pop_back();
  }
  if (n == 2) std::swap(copies[0], copies[1]);  // taken from the end: the earlier copy first
  // (the head copy may have been the one taken: then the branch lands on itself, at the loop's start)
  const bool landing_after_head = through_head && label.head_copy;
  if (landing_after_head) copies[n++] = {code_[label.loop_pc + 1], code_[label.loop_pc + 2]};
  static_assert(layout::kBrCopy.label == 1 && layout::kBrCopy.result == 2 && layout::kBrCopy.operand[0] == 3, "[offset, to, from]");
  const size_t at = emit(n == 0 ? Op::br : n == 1 ? Op::br_copy_r : Op::br_copy2_r);
  word(0);
  for (size_t i = 0; i < n; ++i) {
    word(copies[i].first);
    word(copies[i].second);
  }
  if (landing_after_head) patch({at, at + 1}, label.loop_pc + kCopyWords);
  else target(depth, at, at + 1);
  last_result_ = SIZE_MAX;
}

// The words after a branch-and-copy's op word, in its layout's order (operand_layout.h: the
// condition slot, the offset left 0 for target(), the label's slot, the value's slot).
void Lowerer::write_branch_copy(const OperandLayout& l, uint32_t condition, uint32_t to, uint32_t from) {
  for (int w = 1; w < l.words; ++w) {
    switch (l.field[w]) {
      case Field::kLabel: word(0); break;
      case Field::kResult: word(to); break;
      case Field::kSlot: word(w < l.label ? condition : from); break;  // a slot before the offset: the condition
      default: throw std::logic_error("a branch-and-copy layout has a word the lowering cannot fill (interpreter bug)");
    }
  }
}

// return, or the function's end label (`at_label`: its values at the function's height `base`,
// where every path left them): no result, or one from any slot, without the stack pointer; more
// through the stack form.
void Lowerer::register_return(uint32_t base, bool at_label) {
  if (f_.result_slots == 0) {
    emit(Op::return_);
    word(0);
  } else if (!at_label && f_.result_slots >= 2 && f_.result_slots <= 8 && f_.type.results.size() == f_.result_slots &&
             locs_.size() >= f_.result_slots) {
    // Results of one slot each, from wherever they are (a constant written to its slot first).
    std::vector<uint32_t> from;
    for (size_t i = locs_.size() - f_.result_slots; i < locs_.size(); ++i) from.push_back(operand_slot(locs_[i]));
    emit(Op::return_rn);
    word(f_.result_slots);
    for (uint32_t s : from) word(s);
  } else if (f_.type.results.size() == 1 && f_.result_slots == 1) {
    uint32_t from = base;
    if (!at_label) {
      if (locs_.back().kind == Loc::kConst) materialize(locs_.back());
      from = slot_of(locs_.back());
    }
    emit(Op::return_r1);
    word(from);
  } else {
    if (!at_label) materialize_all();
    sync_sp(at_label ? base + f_.result_slots : height_);
    emit(Op::return_);
    word(f_.result_slots);
  }
  last_result_ = SIZE_MAX;
}

// The instructions the register IR writes in its own forms; false (nothing written) for the rest.
bool Lowerer::register_body(const Instruction& in) {
  const Opcode op = in.opcode;
  switch (op) {
    case Opcode::br: case Opcode::br_if: {  // br, br_if: no stack pointer; a carried value copied (carried_from)
      const uint32_t depth = in.x;
      ValType t = ValType::kI32;
      Loc c{};
      if (op == Opcode::br_if) {
        t = pop();
        c = popped_;
      }
      const std::optional<uint32_t> from = carried_from(depth);
      if (!from) {
        if (op == Opcode::br_if) {
          push(t);
          locs_.back() = c;
        }
        return false;
      }
      const uint32_t to = label_at(depth).height_base;
      if (*from == to) {  // the label's values already where it wants them, once materialised
        if (op == Opcode::br) {
          register_jump(depth);
          mark_dead();
        } else {
          auto [at, w] = register_branch(c, true);
          target(depth, at, w);
        }
        return true;
      }
      const OperandLayout& l = op == Opcode::br ? layout::kBrCopy : layout::kBrIfCopy;
      const uint32_t condition = op == Opcode::br_if ? operand_slot(c) : 0;
      size_t at = emit(op == Opcode::br ? Op::br_copy_r : Op::br_if_copy_r);
      write_branch_copy(l, condition, to, *from);
      target(depth, at, at + l.label);
      if (op == Opcode::br) mark_dead();
      last_result_ = SIZE_MAX;
      return true;
    }
    case Opcode::return_:
      register_return(ctls_.front().height_base, false);
      mark_dead();
      return true;
    case Opcode::drop: pop(); return true;  // drop: nothing to move
    case Opcode::select: case Opcode::select_t: {  // select [a, b, condition, to]
      if (types_.size() < 3 || slots_of(types_[types_.size() - 2]) != 1) return false;
      pop();
      Loc c = popped_;
      ValType t = pop();
      Loc b = popped_;
      pop();
      Loc a = popped_;
      uint32_t sa = operand_slot(a), sb = operand_slot(b), sc = operand_slot(c);
      uint32_t to = height_;
      push(t);
      emit(Op::select_r);
      word(sa);
      word(sb);
      word(sc);
      last_result_ = code_.size();
      word(to);
      return true;
    }
    case Opcode::call: case Opcode::call_indirect: {  // call, call_indirect: the arguments in their slots, sp put there in the call
      const uint32_t index = in.x, table = op == Opcode::call_indirect ? in.y : 0;
      if (op == Opcode::call_indirect && table64(table)) return false;
      materialize_all();
      const bool move_sp = sp_at_ != height_;
      const uint32_t at_height = height_;
      const FuncType* ft = nullptr;
      if (op == Opcode::call) ft = &inst_.funcs.at(index)->type;
      else {
        const FuncType& t = inst_.module.types.at(index);
        ft = &t;
        pop();
      }
      pop(ft->params.size());
      if (op == Opcode::call) {
        emit(move_sp ? Op::call_at : Op::call);
        word(reinterpret_cast<uint64_t>(inst_.funcs.at(index)));
      } else {
        emit(move_sp ? Op::call_indirect_at : Op::call_indirect);
        word(reinterpret_cast<uint64_t>(inst_.tables.at(table)));
        word(inst_.type_ids.at(index));
      }
      if (move_sp) word(at_height);
      push(ft->results);
      sp_at_ = height_;
      last_result_ = SIZE_MAX;
      return true;
    }
    case Opcode::br_table: {  // br_table: the index from its slot; targets that carry one value land on a copy
      ValType t = pop();
      Loc index = popped_;
      // Every target's carried value in place or one to copy (carried_from); else the stack form.
      bool register_form = carried_from(in.x).has_value();
      for_each_label(in, [&](uint32_t d) { register_form &= carried_from(d).has_value(); });
      if (!register_form) {
        push(t);
        locs_.back() = index;
        return false;
      }
      materialize_all();
      uint32_t slot = operand_slot(index);
      size_t at = emit(Op::br_table_r);
      word(slot);
      word(in.count);
      std::vector<std::pair<uint32_t, size_t>> entries;  // (label depth, its offset word)
      auto entry = [&](uint32_t d) {
        entries.emplace_back(d, code_.size());
        word(0);
      };
      for_each_label(in, entry);
      entry(in.x);  // the default
      for (const auto& [d, w] : entries) {
        const uint32_t to = label_at(d).height_base, from = *carried_from(d);
        if (from == to) {
          target(d, at, w);
          continue;
        }
        // a landing after the table: copy, then on to the label
        size_t land = emit(Op::land_copy_r);
        write_branch_copy(layout::kBrCopy, 0, to, from);
        target(d, land, land + layout::kBrCopy.label);
        code_[w] = static_cast<uint64_t>(static_cast<int64_t>(land) - static_cast<int64_t>(at));
      }
      mark_dead();
      return true;
    }
    case Opcode::local_get: case Opcode::local_set: case Opcode::local_tee: return register_local(in);
    case Opcode::global_get: case Opcode::global_set: {  // global.get [global, to], global.set [global, from]
      GlobalInst* g = inst_.globals.at(in.x);
      if (slots_of(g->type.type) != 1) return false;
      if (op == Opcode::global_get) {
        uint32_t to = height_;
        push(g->type.type);
        emit(Op::global_get_r);
        word(reinterpret_cast<uint64_t>(g));
        last_result_ = code_.size();
        word(to);
        return true;
      }
      pop();
      Loc v = popped_;
      uint32_t from = operand_slot(v);
      emit(Op::global_set_r);
      word(reinterpret_cast<uint64_t>(g));
      word(from);
      last_result_ = SIZE_MAX;
      return true;
    }
    case Opcode::i32_const: case Opcode::i64_const: case Opcode::f32_const: case Opcode::f64_const: {
      const uint64_t bits = in.bits[0];
      const ValType t = op == Opcode::i32_const ? ValType::kI32 : op == Opcode::i64_const ? ValType::kI64 : op == Opcode::f32_const ? ValType::kF32 : ValType::kF64;
      push(t);
      locs_.back().kind = Loc::kConst;
      locs_.back().value = bits;
      if (!lowering_.fold) materialize(locs_.back());  // plain: written to its own slot; no _k forms
      return true;
    }
    default: break;
  }
  if (prefix_of(op) != OpcodePrefix::kNone) return false;  // prefixed instructions: their stack forms
  const SimpleOp* s = in.simple;
  if (!s || !s->has_register_forms() || !one_slot_signature(s->signature)) return false;
  if (s->imm == Imm::MEM && (inst_.memories.empty() || memory64(0) || !in.mem.short_flags)) return false;
  return register_table_op(in, *s);
}

bool Lowerer::register_local(const Instruction& in) {
  const Opcode op = in.opcode;
  const uint32_t i = in.x;
  if (slots_of(local_type_.at(i)) != 1) return false;
  uint32_t x = local_slot_[i];
  if (op == Opcode::local_get) {
    push(local_type_[i]);
    locs_.back().kind = Loc::kLocal;
    locs_.back().value = x;
    if (!lowering_.fold) materialize(locs_.back());  // plain: copied to its own slot, as a stack machine would
    return true;
  }
  ValType t = pop();
  Loc v = popped_;
  bool aliased = false;
  for (const Loc& l : locs_) aliased |= l.kind == Loc::kLocal && l.value == x;
  if (lowering_.fold && just_written(v)) {
    // The result written straight into the local; values still reading the local's old value
    // are copied out first, before the instruction (the stream's last: nothing points into it).
    if (aliased) {
      const size_t at = window_.back().at;
      const Op producer = window_.back().op;
      const uint32_t acc_slot = window_.back().acc_slot;
      std::vector<uint64_t> words(code_.begin() + static_cast<std::ptrdiff_t>(at) + 1, code_.end());
      code_.resize(at);
      window_.pop_back();
      // The copies between leave the accumulator as it is (only register forms with a result set it).
      for (Loc& l : locs_)
        if (l.kind == Loc::kLocal && l.value == x) materialize(l);
      emit(producer);
      window_.back().acc_slot = acc_slot;
      for (uint64_t w : words) word(w);
      last_result_ = code_.size() - 1;
    }
    code_[last_result_] = x;
    acc_local_ = x;
    acc_local_end_ = code_.size();
  } else {
    for (Loc& l : locs_)
      if (l.kind == Loc::kLocal && l.value == x) materialize(l);  // they read the old value
    if (!(v.kind == Loc::kLocal && v.value == x)) {
      emit(v.kind == Loc::kConst ? Op::const_r : Op::copy_r);
      word(x);
      word(v.kind == Loc::kConst ? v.value : slot_of(v));
    }
  }
  last_result_ = SIZE_MAX;
  if (op == Opcode::local_tee) {  // local.tee: the value stays, now the local's
    push(t);
    locs_.back().kind = Loc::kLocal;
    locs_.back().value = x;
    if (!lowering_.fold) materialize(locs_.back());
  }
  return true;
}

// A declared numeric or memory instruction in its register form, its words written in the order
// the form's layout gives (operand_layout.h, which the handler reads them by).
bool Lowerer::register_table_op(const Instruction& in, const SimpleOp& s) {
  const int pops = sig_pops(s.signature), pushes = sig_pushes(s.signature);
  if (pops < 1 || pops > 2 || pushes > 1 || locs_.size() < static_cast<size_t>(pops)) return false;
  uint64_t offset = 0;
  if (s.imm == Imm::MEM) offset = in.mem.offset;
  Loc a = locs_[locs_.size() - pops], b = locs_.back();
  // The last operand a constant: the _k form (for one operand, only a load's address: a unop
  // on a constant is rare enough to take its constant from a slot).
  const bool k = pops == 2 ? b.kind == Loc::kConst : a.kind == Loc::kConst && s.imm == Imm::MEM;
  // An address just computed by `i32.add` of a constant: the add folded into the access (_a).
  std::optional<std::pair<uint64_t, uint64_t>> address;
  uint32_t address_acc_slot = UINT32_MAX;
  if (lowering_.fold && s.form(RegisterForm::a) != Op::kCount && !k && just_written(a) &&
      (window_.back().op == Op::i32_add_k || window_.back().op == Op::i32_add_xk)) {
    // i32_add_xk [op, constant, result] took its slot operand from the accumulator: with the add
    // gone, the access follows the instruction that set it, and takes it from there too (_ax).
    const Written& add = window_.back();
    const OperandLayout& add_k = kAddK, &add_xk = kAddXk;
    if (add.op == Op::i32_add_k) address = {{code_[add.at + add_k.operand[0]], code_[add.at + add_k.operand[1]]}};
    else {
      address = {{uint64_t{add.acc_slot}, code_[add.at + add_xk.operand[1]]}};
      address_acc_slot = add.acc_slot;
    }
    code_.resize(add.at);
    window_.pop_back();
    last_result_ = SIZE_MAX;
  }
  // acc: the operand the instruction just written computed, from the accumulator (the first; or
  // the second, when the first needs no constant written to its slot first).
  int from_acc = 0;
  if (!address && s.form(RegisterForm::x) != Op::kCount && !(pops == 1 && k)) {
    if (in_accumulator(a)) from_acc = 1;
    else if (pops == 2 && a.kind != Loc::kConst && in_accumulator(b)) from_acc = 2;
  }
  if (address_acc_slot != UINT32_MAX) from_acc = 1;
  const uint32_t acc_slot = address_acc_slot != UINT32_MAX ? address_acc_slot : from_acc == 1 ? slot_of(a) : from_acc == 2 ? slot_of(b) : UINT32_MAX;
  // The operands' words (an operand from the accumulator has none; a constant is the word itself),
  // in this order: materialising a constant into its slot writes an instruction first.
  uint64_t operand[2] = {0, 0};
  if (address) operand[0] = address->first;
  else if (from_acc != 1) operand[0] = pops == 1 && k ? a.value : operand_slot(a);
  if (pops == 2 && from_acc != 2) operand[1] = k ? b.value : operand_slot(b);
  for (int i = 0; i < pops; ++i) pop();
  uint32_t result = height_;
  for (char letter : effect_of(s).pushes) push(type_letter(letter));
  const RegisterForm kind = form_of({.constant = k, .address = address.has_value(), .from_acc = static_cast<uint8_t>(from_acc), .stored = true});
  const Op form = s.form(kind);
  // elide: an operand-stack value (not a local's, which is read again) taken from the accumulator
  // has this instruction as its only reader, so its producer need not store it; but a compare may
  // still be fused into a branch after it, which reads its operands from their slots.
  if (lowering_.elide && !address && from_acc != 0 && (from_acc == 1 ? a : b).kind == Loc::kHome) {
    if (!fuses_with_a_branch(kAccumulatorForms[form].slot_form)) elide_store();
  }
  emit(form);
  window_.back().acc_slot = acc_slot;
  last_result_ = SIZE_MAX;
  const OperandLayout layout = register_layout_of(s, kind);
  for (int w = 1; w < layout.words; ++w) {
    switch (layout.field[w]) {
      case Field::kImmediate: word(offset); break;
      case Field::kSlot:
      case Field::kConstant: word(operand[w == layout.operand[0] ? 0 : 1]); break;
      case Field::kAddend: word(address->second); break;
      case Field::kResult:
        last_result_ = code_.size();
        word(result);
        break;
      case Field::kNone:
      case Field::kLabel: throw std::logic_error("a register form's layout has a word the lowering cannot fill (interpreter bug)");
    }
  }
  return true;
}

}  // namespace dlab::wasm::lowering_impl
