// The lowering's one class, Lowerer, shared by its parts (private to lower/): lowering.cc drives
// it over a function body and keeps the control structure, stack_ir.cc writes the stack IR's
// instructions, peephole.cc rewrites them (the fold, fuse and super techniques), register_ir.cc
// writes the register IR, and gc_and_misc.cc the GC (0xFB) and 0xFC instructions. lowering.h says
// what the stream is.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <utility>
#include <vector>

#include "decode/instruction_reader.h"
#include "engines/ops.h"
#include "gc/gc_ops.h"
#include "lower/lowering.h"

namespace dlab::wasm::lowering_impl {

// Per op, what the peephole stage may turn it into (handlers.def's BINOP and CMPOP forms):
// `folded` when a const / local.get was just written before it, and `fused` when a branch follows
// it (the comparison itself, or its `_ri` form, which is one word longer).
struct Rewrites {
  Op ri = Op::kCount, rl = Op::kCount, li = Op::kCount, ll = Op::kCount, local_address = Op::kCount, a64 = Op::kCount;
  Op br_if = Op::kCount, br_unless = Op::kCount;
  uint8_t words = 0;  // the op's length, when it can be fused
};
struct RewriteTable {
  std::array<Rewrites, static_cast<size_t>(Op::kCount)> of{};
  constexpr RewriteTable() {
    for (const FormsOf& e : kForms) {
      Rewrites& plain = of[static_cast<size_t>(e.op)];
      plain.ri = e.forms.ri;
      plain.rl = e.forms.rl;
      plain.li = e.forms.li;
      plain.ll = e.forms.ll;
      plain.local_address = e.forms.local_address;
      plain.a64 = e.forms.a64;
      if (e.forms.br_if == Op::kCount) continue;
      plain.br_if = e.forms.br_if;
      plain.br_unless = e.forms.br_unless;
      plain.words = kDeclaredWords.of[static_cast<size_t>(e.op)];
      Rewrites& ri = of[static_cast<size_t>(e.forms.ri)];
      ri.br_if = e.forms.ri_br_if;
      ri.br_unless = e.forms.ri_br_unless;
      ri.words = layout::kRi.words;
    }
  }
  const Rewrites& operator[](Op op) const { return of[static_cast<size_t>(op)]; }
};
inline constexpr RewriteTable kRewrites;

inline ValType type_letter(char c) {
  if (c == static_cast<char>(ContextLetter::kMemoryAddress)) return ValType::kI32;  // a 32-bit memory's
  return *fixed_letter_type(c);
}

inline uint32_t slots_of(const std::vector<ValType>& ts) {
  uint32_t n = 0;
  for (auto t : ts) n += slots_of(t);
  return n;
}

// What opened a control frame: the function, a block (try_table's too), a loop or an if (an else
// turns it into kElse).
enum class CtlKind : uint8_t { kFunction, kBlock, kLoop, kIf, kElse };

struct Ctl {
  CtlKind kind = CtlKind::kFunction;
  std::vector<ValType> params, results;
  size_t type_base = 0;     // operand types below the parameters
  uint32_t height_base = 0;  // slots (from fp) below the parameters
  size_t loop_pc = 0;
  std::vector<std::pair<size_t, size_t>> fixups;  // (instruction start, word holding its offset)
  std::optional<std::pair<size_t, size_t>> else_fixup;
  std::vector<std::pair<size_t, size_t>> catch_fixups;  // (catch range, clause) whose target is this label's end
  size_t try_range = SIZE_MAX;  // try_table: its catch range in FuncInst::catches
  bool live_at_start = true;
  bool dead = false;  // the code from here to the next else/end cannot run
  // Register IR, a loop: its code begins with a copy_r [to, from] at loop_pc, which a branch back
  // to it may make itself and land after (register_jump).
  bool head_copy = false;
  const std::vector<ValType>& label_types() const { return kind == CtlKind::kLoop ? params : results; }
};

class Lowerer {
  struct Written {
    Op op;
    size_t at;  // its op word's index in code_
    // Register IR, an accumulator form (handlers.def's x / y forms): the slot its accumulator
    // operand was also stored to, so that it can become its slot-reading form again (unaccumulate).
    uint32_t acc_slot = UINT32_MAX;
  };
  // Register IR: where an operand-stack value is (see the register IR section below).
  struct Loc {
    enum Kind : uint8_t { kHome, kLocal, kConst } kind = kHome;
    uint32_t home = 0;   // its own slot: the operand stack's, at its static height
    uint64_t value = 0;  // kLocal: the local's slot; kConst: the constant's bits
  };

 public:
  Lowerer(Instance& inst, FuncInst& f, const FunctionBody& body, const uint64_t* words, Lowering lowering, bool record_starts)
      : inst_(inst), f_(f), body_(body), words_(words), lowering_(lowering), reg_(lowering.ir == Ir::kRegister), record_starts_(record_starts) {}

  void run();

 private:
  // ---- the operand types and heights, and the stream (here, used by every part) ----
  void add_local(ValType t) {
    local_slot_.push_back(height_);
    local_type_.push_back(t);
    height_ += slots_of(t);
  }
  bool dead() const { return ctls_.back().dead; }
  void push(ValType t) {
    if (dead()) return;
    types_.push_back(t);
    locs_.push_back({Loc::kHome, height_, 0});
    height_ += slots_of(t);
    if (height_ > max_height_) max_height_ = height_;
  }
  void push(const std::vector<ValType>& ts) {
    for (auto t : ts) push(t);
  }
  ValType pop() {
    if (dead() || types_.empty()) return ValType::kI32;
    ValType t = types_.back();
    types_.pop_back();
    popped_ = locs_.back();
    locs_.pop_back();
    height_ -= slots_of(t);
    return t;
  }
  void pop(size_t n) {
    for (size_t i = 0; i < n; ++i) pop();
  }
  size_t emit(Op op) {
    if (op == Op::copy_r) note_head_copy();
    window_.push_back({op, code_.size()});
    code_.push_back(words_[static_cast<size_t>(op)]);
    return code_.size() - 1;
  }
  void word(uint64_t w) { code_.push_back(w); }
  void mark_dead() { ctls_.back().dead = true; }
  void rewrite(Written& w, Op to) {
    w.op = to;
    code_[w.at] = words_[static_cast<size_t>(to)];
  }
  void patch(std::pair<size_t, size_t> fix, size_t target) {
    code_[fix.second] = static_cast<uint64_t>(static_cast<int64_t>(target) - static_cast<int64_t>(fix.first));
  }
  // The branch target word of instruction `at` (word `w`) for label `depth`.
  void target(uint32_t depth, size_t at, size_t w) {
    Ctl& l = ctls_[ctls_.size() - 1 - depth];
    if (l.kind == CtlKind::kLoop) patch({at, w}, l.loop_pc);
    else l.fixups.emplace_back(at, w);
  }
  const Ctl& label_at(uint32_t depth) const { return ctls_[ctls_.size() - 1 - depth]; }
  std::pair<uint32_t, uint32_t> keep_drop(uint32_t depth) const {
    const Ctl& l = label_at(depth);
    uint32_t keep = slots_of(l.label_types());
    return {keep, height_ - l.height_base - keep};
  }

  // ---- control structure and one instruction's form (lowering.cc) ----
  std::pair<std::vector<ValType>, std::vector<ValType>> block_type(const BlockType& b);
  void enter(CtlKind kind, std::vector<ValType> params, std::vector<ValType> results);
  void else_();
  void try_table(const Instruction& in);
  void end();
  void instruction(BinaryReader& r);
  void body(const Instruction& in);

  // ---- the peephole stage (peephole.cc): it rewrites the instructions written since the last
  // label (a position a branch may land on, where the window is emptied), so a rewrite never
  // swallows a branch target. The window's op words are final only when it is emptied: then
  // `super` pairs them.
  void label();
  void superinstructions();
  const Written* last(size_t words) const;
  bool fold(Op op);
  bool fold_load(Op op, uint64_t offset);
  bool fold_local_get(uint32_t slot);
  std::pair<size_t, size_t> branch_on_top(bool when_true);

  // ---- the stack IR's instructions (stack_ir.cc) ----
  // A memarg's alignment is a hint only: what the lowering writes is its memory and offset.
  MemoryInst* memory(uint32_t idx) const { return inst_.memories.at(idx); }
  // Memory `idx` is indexed by i64 (memory64): its instructions are their _a64 forms.
  bool memory64(uint32_t idx = 0) const { return idx < inst_.memories.size() && inst_.memories[idx]->address64; }
  void use_memory(uint32_t idx);
  template <typename F>
  void on_memory(uint32_t idx, F write) {
    if (idx == 0) return write();
    use_memory(idx);
    write();
    use_memory(0);
  }
  void table_op(const Instruction& in, const SimpleOp& s);
  void pop_push(const SimpleOp& s);
  void call(const FuncInst* callee, bool tail);
  void call_indirect(uint32_t type_idx, uint32_t table, bool tail);
  void call_ref(uint32_t type_idx, bool tail);
  void branch_on_null(uint32_t depth, bool on_null);
  void index64(uint32_t table, std::initializer_list<uint64_t> slots);
  bool table64(uint32_t table) const { return inst_.tables.at(table)->type.limits.address64; }
  void stack_body(const Instruction& in);
  void apply_effect(const Instruction& in);  // declared_ops.cc
  void declared_op(const Instruction& in);

  // ---- the register IR (register_ir.cc; Lowering::ir; handlers.def's register forms) ----
  // An operand-stack value is in its own slot (kHome, at its static height), or pending: a local
  // (local.get wrote nothing) or a constant, read from there by the instruction that consumes it.
  // A pending value is written to its slot (materialised) where something needs it there: a label,
  // a stack-form instruction, a local.set of the local it reads.
  // The techniques apply here as in the stack IR (runtime.h's Lowering): `fold` is what lets a
  // value stay pending (an operand read from a local or a constant word, the _k and _a forms, a
  // result written straight into the local a local.set names); without it every value is written
  // to its own slot first and every local.set copies, as a stack machine would. `fuse` is the
  // compare-and-branch forms (register_branch). `super` pairs what the window holds (SUPER_R:
  // pairs of register forms too). `acc`: an operand the instruction just before computed is taken
  // from the accumulator, the register that instruction also left its result in (the x / y forms),
  // not loaded back from the slot it was stored to; a form that has to read it from its slot after
  // all (a compare fused into a branch, an address add folded into an access) is turned back.
  // `elide` (with acc): when that operand was an operand-stack value, the accumulator form is its
  // only reader, so the instruction that computed it drops its store (its _n form, elide_store),
  // unless the reader may still be turned back (a compare, which a branch after it would fuse).
  uint32_t slot_of(const Loc& l) const { return l.kind == Loc::kLocal ? static_cast<uint32_t>(l.value) : l.home; }
  void materialize(Loc& l);
  uint32_t operand_slot(Loc& l);
  void materialize_all();
  void sync_sp(uint32_t height);
  void stack_form();
  bool just_written(const Loc& l) const;
  bool in_accumulator(const Loc& l) const;
  void unaccumulate(Written& w);
  bool drop_negation(const Loc& c);  // register_ir.cc
  void elide_store();
  std::pair<size_t, size_t> register_branch(Loc c, bool when_true);
  void register_return(uint32_t base, bool at_label);
  bool register_body(const Instruction& in);
  bool register_local(const Instruction& in);
  std::optional<uint32_t> carried_from(uint32_t depth);
  void note_head_copy();
  void register_jump(uint32_t depth);
  void write_branch_copy(const OperandLayout& l, uint32_t condition, uint32_t to, uint32_t from);
  bool register_table_op(const Instruction& in, const SimpleOp& s);

  // ---- GC (gc_and_misc.cc; handlers/gc.def, gc_ops.cc), and the 0xFC instructions ----
  const DefType& def(uint32_t type_idx) const { return inst_.module.types.at(type_idx); }
  const Rtt* rtt(uint32_t type_idx) const { return &inst_.types->rtt(inst_.type_ids.at(type_idx)); }
  uint64_t canonical_heap(HeapType h) const;
  void gc_op(GcOpFn fn, uint64_t a, uint64_t b = 0);
  static ValType unpacked(const FieldType& f) { return f.packed == Packed::kNone ? f.type : ValType::kI32; }
  static Op access(uint32_t bytes, bool is_signed, const std::array<Op, 7>& gets);
  void gc(const Instruction& in);
  void gc_access(const Instruction& in);  // the declared GC rows' handlers and words (gc_and_misc.cc)
  void misc(const Instruction& in);

  Instance& inst_;
  FuncInst& f_;
  const FunctionBody& body_;
  const uint64_t* words_;
  Lowering lowering_;
  std::vector<Written> window_;  // the instructions written since the last label
  // Register IR: where each operand-stack value is (beside types_), the last one popped, the
  // height the stack pointer is at in the running code (kUnknownHeight after a label), and the
  // result word of the register instruction that ends the stream (SIZE_MAX: none).
  static constexpr uint32_t kUnknownHeight = UINT32_MAX;
  bool reg_ = false;
  bool record_starts_ = false;
  std::vector<Loc> locs_;
  Loc popped_;
  uint32_t sp_at_ = 0;
  size_t last_result_ = SIZE_MAX;
  // acc: the local the instruction ending at code_[acc_local_end_] wrote its result to (and left
  // in the accumulator), so that a local.get of it right after reads the accumulator.
  uint32_t acc_local_ = 0;
  size_t acc_local_end_ = SIZE_MAX;
  std::vector<uint64_t> code_;
  std::vector<ValType> types_;
  uint32_t height_ = 0, max_height_ = 0;
  std::vector<Ctl> ctls_;
  std::vector<uint32_t> local_slot_;
  std::vector<ValType> local_type_;
};

}  // namespace dlab::wasm::lowering_impl
