#include "lower/lowering.h"

#include <array>
#include <cstring>
#include <optional>

#include <fmt/format.h>

#include "decode/binary_reader.h"
#include "gc/gc_ops.h"
#include "engines/ops.h"

namespace dlab::wasm {

namespace {


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
      plain.words = 1;
      Rewrites& ri = of[static_cast<size_t>(e.forms.ri)];
      ri.br_if = e.forms.ri_br_if;
      ri.br_unless = e.forms.ri_br_unless;
      ri.words = 2;
    }
  }
  const Rewrites& operator[](Op op) const { return of[static_cast<size_t>(op)]; }
};
constexpr RewriteTable kRewrites;

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
          of[static_cast<size_t>(s.reg)] = {e.forms.rr_br_if, e.forms.rr_br_unless};
          of[static_cast<size_t>(s.reg_k)] = {e.forms.rk_br_if, e.forms.rk_br_unless};
        }
    }
    of[static_cast<size_t>(Op::i32_eqz_r)] = {Op::br_unless_r, Op::br_if_r};
    of[static_cast<size_t>(Op::i32_and_k)] = {Op::i32_and_k_br_if, Op::i32_and_k_br_unless};
  }
  const Pair& operator[](Op op) const { return of[static_cast<size_t>(op)]; }
};
constexpr RegisterBranches kRegisterBranches;

// A signature all of whose operands and results take one slot (no v128): the register forms'.
constexpr bool one_slot_signature(const char* sig) {
  for (const char* p = sig; *p; ++p)
    if (*p == 'v') return false;
  return true;
}

ValType type_letter(char c) {
  switch (c) {
    case 'i': return ValType::kI32;
    case 'l': return ValType::kI64;
    case 'f': return ValType::kF32;
    case 'v': return ValType::kV128;
    case 'a': return ValType::kI32;  // the address operand: a 32-bit memory's
    default: return ValType::kF64;
  }
}

uint32_t slots_of(const std::vector<ValType>& ts) {
  uint32_t n = 0;
  for (auto t : ts) n += slots_of(t);
  return n;
}

struct Ctl {
  uint8_t kind = 0;  // 0 function, 0x02 block, 0x03 loop, 0x04 if, 0x05 else
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
  const std::vector<ValType>& label_types() const { return kind == 0x03 ? params : results; }
};

class Lowerer {
  struct Written {
    Op op;
    size_t at;  // its op word's index in code_
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

  void run() {
    uint64_t declared = f_.type.params.size();
    for (const auto& [n, t] : body_.locals) declared += n;
    if (declared > Runtime::kMaxLocals)
      throw ImplementationLimit(fmt::format("a function declares {} locals; this interpreter's limit is {}", declared, Runtime::kMaxLocals));
    for (auto t : f_.type.params) add_local(t);
    f_.param_slots = height_;
    for (const auto& [n, t] : body_.locals)
      for (uint32_t i = 0; i < n; ++i) add_local(t);
    f_.local_slots = height_ - f_.param_slots;
    f_.result_slots = slots_of(f_.type.results);
    max_height_ = height_;
    sp_at_ = height_;  // a call leaves the stack pointer above the callee's locals
    Ctl fn;
    fn.results = f_.type.results;
    fn.height_base = height_;
    ctls_.push_back(std::move(fn));
    BinaryReader r(body_.code.bytes.data(), body_.code.bytes.size());
    while (!ctls_.empty()) instruction(r);
    label();
    f_.max_slots = max_height_;
    f_.code = std::move(code_);
  }

 private:
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
    window_.push_back({op, code_.size()});
    code_.push_back(words_[static_cast<size_t>(op)]);
    return code_.size() - 1;
  }
  // ---- the peephole stage: it rewrites the instructions written since the last label (a position
  // a branch may land on, where the window is emptied), so a rewrite never swallows a branch target.
  // The window's op words are final only when it is emptied: then `super` pairs them.
  void label() {
    if (lowering_.super) superinstructions();
    // The window holds every instruction written since the last label, with rewrites applied
    // (a folded instruction is gone from it): its starts are the code's.
    if (record_starts_)
      for (const Written& w : window_) f_.instruction_starts.push_back(static_cast<uint32_t>(w.at));
    window_.clear();
    // Branches may arrive here from anywhere: where the stack pointer is, is not known (register IR).
    sp_at_ = kUnknownHeight;
    last_result_ = SIZE_MAX;
  }
  // super: left to right, each pair of consecutive instructions with a superinstruction becomes it
  // (the first's op word rewritten; the second's words stay in place, skipped by the handler, so no
  // offset moves); an instruction takes part in one pair at most.
  void superinstructions() {
    for (size_t i = 0; i + 1 < window_.size(); ++i) {
      Op first = window_[i].op, second = window_[i + 1].op;
      for (const SuperOf& s : kSupers)
        if (s.first == first && s.second == second) {
          rewrite(window_[i], s.op);
          ++i;
          break;
        }
    }
  }
  // The window's last instruction, if it is `words` long and ends where the stream does.
  const Written* last(size_t words) const {
    if (window_.empty() || dead() || window_.back().at + words != code_.size()) return nullptr;
    return &window_.back();
  }
  void rewrite(Written& w, Op to) {
    w.op = to;
    code_[w.at] = words_[static_cast<size_t>(to)];
  }
  // fold, for a binop about to be written:
  //   `const c; binop` -> `binop_ri c`          `local.get x; binop` -> `binop_rl x`
  //   `local.get x; const c; binop` -> `binop_li x c`
  //   `local.get x; local.get y; binop` (already `local_get_get x y`) -> `binop_ll x y`
  bool fold(Op op) {
    const Rewrites& r = kRewrites[op];
    if (!lowering_.fold || r.ri == Op::kCount) return false;
    if (last(3) != nullptr && window_.back().op == Op::local_get_get) {
      rewrite(window_.back(), r.ll);
      return true;
    }
    const Written* w = last(2);
    if (w == nullptr) return false;
    if (w->op == Op::const_) {
      size_t n = window_.size();
      if (n >= 2 && window_[n - 2].op == Op::local_get && window_[n - 2].at + 2 == w->at) {
        code_[w->at] = code_[w->at + 1];  // [local_get x const c] -> [binop_li x c]
        code_.pop_back();
        window_.pop_back();
        rewrite(window_.back(), r.li);
        return true;
      }
      rewrite(window_.back(), r.ri);
      return true;
    }
    if (w->op == Op::local_get) {
      rewrite(window_.back(), r.rl);
      return true;
    }
    return false;
  }
  // fold, for a load about to be written: `local.get x; load off` -> `load_l x off`.
  bool fold_load(Op op, uint64_t offset) {
    Op to = kRewrites[op].local_address;
    const Written* w = last(2);
    if (!lowering_.fold || to == Op::kCount || w == nullptr || w->op != Op::local_get) return false;
    rewrite(window_.back(), to);
    word(offset);
    return true;
  }
  // fold, for a local.get about to be written (superinstructions from the most frequent pairs):
  // `local.get x; local.get y` -> `local_get_get x y`, `local.set x; local.get y` -> `local_set_get x y`.
  bool fold_local_get(uint32_t slot) {
    const Written* w = last(2);
    if (!lowering_.fold || w == nullptr || (w->op != Op::local_get && w->op != Op::local_set)) return false;
    rewrite(window_.back(), w->op == Op::local_get ? Op::local_get_get : Op::local_set_get);
    word(slot);
    return true;
  }
  // A conditional branch on the top of stack (br_if, or br_unless for `if`) with its offset word
  // still 0: (instruction start, offset word). fuse: `cmp; br` -> `cmp_br`, `cmp_ri c; br` ->
  // `cmp_ri_br c`, and `i32.eqz; br_if` -> `br_unless` (and the reverse), then perhaps fused.
  std::pair<size_t, size_t> branch_on_top(bool when_true) {
    if (reg_) return register_branch(popped_, when_true);
    if (lowering_.fuse) {
      if (last(1) != nullptr && window_.back().op == Op::i32_eqz) {
        window_.pop_back();
        code_.pop_back();
        when_true = !when_true;
      }
      for (size_t words : {1, 2}) {
        const Written* w = last(words);
        if (w == nullptr || kRewrites[w->op].words != words) continue;
        const Rewrites& r = kRewrites[w->op];
        rewrite(window_.back(), when_true ? r.br_if : r.br_unless);
        word(0);
        return {window_.back().at, code_.size() - 1};
      }
    }
    size_t at = emit(when_true ? Op::br_if : Op::br_unless);
    word(0);
    return {at, at + 1};
  }
  void word(uint64_t w) { code_.push_back(w); }
  void mark_dead() { ctls_.back().dead = true; }
  void patch(std::pair<size_t, size_t> fix, size_t target) {
    code_[fix.second] = static_cast<uint64_t>(static_cast<int64_t>(target) - static_cast<int64_t>(fix.first));
  }
  // The branch target word of instruction `at` (word `w`) for label `depth`.
  void target(uint32_t depth, size_t at, size_t w) {
    Ctl& l = ctls_[ctls_.size() - 1 - depth];
    if (l.kind == 0x03) patch({at, w}, l.loop_pc);
    else l.fixups.emplace_back(at, w);
  }
  std::pair<uint32_t, uint32_t> keep_drop(uint32_t depth) const {
    const Ctl& l = ctls_[ctls_.size() - 1 - depth];
    uint32_t keep = slots_of(l.label_types());
    return {keep, height_ - l.height_base - keep};
  }

  std::pair<std::vector<ValType>, std::vector<ValType>> block_type(BinaryReader& r) {
    uint8_t b = r.peek();
    if (b == 0x40) {
      r.u8();
      return {};
    }
    if ((b >= 0x69 && b <= 0x7F) || b == 0x63 || b == 0x64) return {{}, {read_valtype(r)}};
    const FuncType& ft = inst_.module.types.at(static_cast<uint32_t>(r.s33()));
    return {ft.params, ft.results};
  }

  void enter(uint8_t kind, BinaryReader& r) {
    auto [params, results] = block_type(r);
    enter(kind, std::move(params), std::move(results));
  }
  void enter(uint8_t kind, std::vector<ValType> params, std::vector<ValType> results) {
    if (kind == 0x04) pop();
    // Register IR: every value below the label (its parameters too) in its own slot first, so that
    // every path reaching the label finds them there; an `if`'s condition stays as it is.
    const Loc condition = popped_;
    if (reg_ && !dead()) materialize_all();
    Ctl c;
    c.kind = kind;
    c.live_at_start = !dead();
    c.dead = dead();
    if (c.live_at_start) {
      for (size_t i = 0; i < params.size(); ++i) pop();
      c.type_base = types_.size();
      c.height_base = height_;
    }
    c.params = std::move(params);
    c.results = std::move(results);
    c.loop_pc = code_.size();
    if (kind == 0x03) label();
    if (kind == 0x04 && c.live_at_start) {
      popped_ = condition;
      c.else_fixup = branch_on_top(false);
    }
    ctls_.push_back(std::move(c));
    push(ctls_.back().params);
  }

  void else_() {
    Ctl& c = ctls_.back();
    if (c.live_at_start) {
      if (reg_ && !c.dead) materialize_all();
      if (!c.dead) {
        size_t at = emit(Op::br);
        word(0);
        c.fixups.emplace_back(at, at + 1);
      }
      if (c.else_fixup) patch(*c.else_fixup, code_.size());
      c.else_fixup.reset();
      label();
      c.dead = false;
      types_.resize(c.type_base);
      locs_.resize(c.type_base);
      height_ = c.height_base;
    }
    c.kind = 0x05;
    push(c.params);
  }

  // try_table: a block whose instructions are a catch range of the function. Each clause names a
  // label outside the try_table; it lands there as a branch would, at the label's height.
  void try_table(BinaryReader& r) {
    auto [params, results] = block_type(r);
    struct Clause {
      uint8_t kind;
      uint32_t tag, depth;
    };
    std::vector<Clause> clauses;
    for (uint32_t n = r.u32(), i = 0; i < n; ++i) {
      uint8_t kind = r.u8();
      uint32_t tag = kind < 2 ? r.u32() : 0;
      clauses.push_back({kind, tag, r.u32()});
    }
    size_t range = SIZE_MAX;
    if (!dead()) {
      if (reg_) materialize_all();
      label();  // the range begins at an instruction boundary that no rewrite crosses
      range = f_.catches.size();
      CatchRange cr;
      for (size_t k = 0; k < clauses.size(); ++k) {
        Ctl& l = ctls_[ctls_.size() - 1 - clauses[k].depth];
        CatchClause c;
        c.tag = clauses[k].kind < 2 ? inst_.tags.at(clauses[k].tag) : nullptr;
        c.ref = clauses[k].kind & 1;
        c.height = l.height_base;
        if (l.kind == 0x03) c.target = l.loop_pc;
        else l.catch_fixups.emplace_back(range, k);
        cr.clauses.push_back(c);
      }
      f_.catches.push_back(std::move(cr));
    }
    enter(0x02, std::move(params), std::move(results));
    ctls_.back().try_range = range;
    if (range != SIZE_MAX) f_.catches[range].begin = code_.size();
  }

  void end() {
    // Register IR: the function's end with nothing branching to it returns from wherever its
    // result is (a pending local too); any other label needs its values in their slots on this path.
    const Ctl& ending = ctls_.back();
    if (reg_ && !dead() && ending.kind == 0 && ending.fixups.empty() && ending.catch_fixups.empty()) {
      register_return(ending.height_base, false);
      ctls_.pop_back();
      return;
    }
    if (reg_ && !dead()) materialize_all();
    Ctl c = std::move(ctls_.back());
    if (c.try_range != SIZE_MAX) f_.catches[c.try_range].end = code_.size();
    if (c.else_fixup) patch(*c.else_fixup, code_.size());
    for (const auto& fix : c.fixups) patch(fix, code_.size());
    for (const auto& [range, clause] : c.catch_fixups) f_.catches[range].clauses[clause].target = code_.size();
    label();
    if (c.kind == 0) {
      if (reg_) register_return(c.height_base, true);
      else {
        emit(Op::return_);
        word(f_.result_slots);
      }
      ctls_.pop_back();
      return;
    }
    ctls_.pop_back();
    if (c.live_at_start) {
      types_.resize(c.type_base);
      locs_.resize(c.type_base);
      height_ = c.height_base;
      push(c.results);
    }
  }

  // A (validated) memarg: its memory (index) and static offset; the alignment is a hint only.
  struct MemArg {
    uint32_t memory = 0;
    uint64_t offset = 0;
  };
  static MemArg memarg(BinaryReader& r) {
    MemArg a;
    uint32_t flags = r.u32();
    if (flags & 64) a.memory = r.u32();
    a.offset = r.u64();
    return a;
  }
  MemoryInst* memory(uint32_t idx) const { return inst_.memories.at(idx); }
  // Memory `idx` is indexed by i64 (memory64): its instructions are their _a64 forms.
  bool memory64(uint32_t idx = 0) const { return idx < inst_.memories.size() && inst_.memories[idx]->address64; }
  // multi-memory: an instruction on a memory other than memory 0 runs between two memory_use
  // instructions (that memory, then memory 0 again), so memory 0's instructions stay one handler.
  void use_memory(uint32_t idx) {
    emit(Op::memory_use);
    word(reinterpret_cast<uint64_t>(memory(idx)));
  }
  template <typename F>
  void on_memory(uint32_t idx, F write) {
    if (idx == 0) return write();
    use_memory(idx);
    write();
    use_memory(0);
  }
  // An instruction from the table, with its immediates read and emitted by kind.
  void table_op(BinaryReader& r, const SimpleOp& s) {
    uint64_t imm[2] = {0, 0};
    uint32_t mem = 0;
    switch (s.imm) {
      case Imm::NONE: break;
      case Imm::MEM: { MemArg a = memarg(r); mem = a.memory; imm[0] = a.offset; break; }
      case Imm::LANE: imm[0] = r.u8(); break;
      case Imm::MEMLANE: { MemArg a = memarg(r); mem = a.memory; imm[0] = a.offset; imm[1] = r.u8(); break; }
      case Imm::SHUF: std::memcpy(imm, r.bytes(16), 16); break;
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
  // The operand types' effect of a table instruction's signature.
  void pop_push(const SimpleOp& s) {
    const char* sig = s.signature;
    const char* colon = sig;
    while (*colon != ':') ++colon;
    pop(static_cast<size_t>(colon - sig));
    for (const char* p = colon + 1; *p; ++p) push(type_letter(*p));
  }
  void simple(const SimpleOp& s) {
    pop_push(s);
    if (!fold(s.op)) emit(s.op);
  }
  void call(const FuncInst* callee, bool tail) {
    pop(callee->type.params.size());
    emit(tail ? Op::return_call : Op::call);
    word(reinterpret_cast<uint64_t>(callee));
    if (tail) mark_dead();
    else push(callee->type.results);
  }
  void call_indirect(uint32_t type_idx, uint32_t table, bool tail) {
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

  void call_ref(uint32_t type_idx, bool tail) {
    pop();
    const FuncType& ft = inst_.module.types.at(type_idx);
    pop(ft.params.size());
    emit(tail ? Op::return_call_ref : Op::call_ref);
    if (tail) mark_dead();
    else push(ft.results);
  }
  // br_on_null / br_on_non_null l: [offset, keep, drop] for the label, the reference counted as
  // its handler does (dropped before the branch by br_on_null, carried by br_on_non_null).
  void branch_on_null(uint32_t depth, bool on_null) {
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
  void index64(uint32_t table, std::initializer_list<uint64_t> slots) {
    if (!inst_.tables.at(table)->type.limits.address64) return;
    for (uint64_t k : slots) {
      emit(Op::table_index64);
      word(k);
    }
  }
  bool table64(uint32_t table) const { return inst_.tables.at(table)->type.limits.address64; }

  void instruction(BinaryReader& r) {
    uint8_t op = r.u8();
    // Control structure is tracked even in dead code; everything else emitted in dead code is
    // rolled back afterwards (its immediates still have to be read).
    switch (op) {
      case 0x02: case 0x03: case 0x04: enter(op, r); return;
      case 0x1F: try_table(r); return;
      case 0x05: else_(); return;
      case 0x0B: end(); return;
      default: break;
    }
    const size_t mark = code_.size();
    const bool was_dead = dead();
    body(op, r);
    if (was_dead) {
      code_.resize(mark);
      while (!window_.empty() && window_.back().at >= mark) window_.pop_back();
      label();
    }
  }

  // Register IR: an instruction with a register form is written in it; any other runs in its
  // stack form, with every pending value in its slot and the stack pointer at the height it
  // expects (sp_at when it is elsewhere), which it then leaves at its own.
  void body(uint8_t op, BinaryReader& r) {
    if (!reg_ || dead()) return stack_body(op, r);
    if (register_body(op, r)) return;
    stack_form();
    stack_body(op, r);
    sp_at_ = dead() ? kUnknownHeight : height_;
  }

  void stack_body(uint8_t op, BinaryReader& r) {
    const bool live = !dead();
    switch (op) {
      case 0x00: emit(Op::unreachable); mark_dead(); return;
      case 0x01: return;
      case 0x0C: {
        uint32_t depth = r.u32();
        if (!live) return;
        auto [keep, drop] = keep_drop(depth);
        size_t at = emit(drop ? Op::br_drop : Op::br);
        word(0);
        if (drop) { word(keep); word(drop); }
        target(depth, at, at + 1);
        mark_dead();
        return;
      }
      case 0x0D: {
        uint32_t depth = r.u32();
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
      case 0x0E: {
        uint32_t n = r.u32();
        std::vector<uint32_t> depths(n + 1);
        for (auto& d : depths) d = r.u32();
        pop();
        if (!live) return;
        size_t at = emit(Op::br_table);
        word(n);
        for (uint32_t d : depths) {
          auto [keep, drop] = keep_drop(d);
          size_t w = code_.size();
          word(0);
          word(keep);
          word(drop);
          target(d, at, w);
        }
        mark_dead();
        return;
      }
      case 0x0F: emit(Op::return_); word(f_.result_slots); mark_dead(); return;
      case 0x08: {  // throw: the payload is the tag's parameters on top
        const TagInst* tag = inst_.tags.at(r.u32());
        pop(tag->type.params.size());
        emit(Op::throw_);
        word(reinterpret_cast<uint64_t>(tag));
        mark_dead();
        return;
      }
      case 0x0A: pop(); emit(Op::throw_ref); mark_dead(); return;
      case 0x10: call(inst_.funcs.at(r.u32()), false); return;
      case 0x12: call(inst_.funcs.at(r.u32()), true); return;
      case 0x11: case 0x13: {
        uint32_t type_idx = r.u32(), table = r.u32();
        call_indirect(type_idx, table, op == 0x13);
        return;
      }
      case 0x14: case 0x15: call_ref(r.u32(), op == 0x15); return;
      case 0x1A: emit(slots_of(pop()) == 2 ? Op::drop2 : Op::drop); return;
      case 0x1B: case 0x1C: {
        if (op == 0x1C) {
          r.u32();
          read_valtype(r);
        }
        pop();
        ValType t = pop();
        pop();
        push(t);
        emit(slots_of(t) == 2 ? Op::select2 : Op::select);
        return;
      }
      case 0x20: case 0x21: case 0x22: {
        uint32_t i = r.u32();
        ValType t = local_type_.at(i);
        bool wide = slots_of(t) == 2;
        if (op == 0x20) {
          push(t);
          if (!wide && fold_local_get(local_slot_[i])) return;
          emit(wide ? Op::local_get2 : Op::local_get);
        } else if (op == 0x21) {
          pop();
          emit(wide ? Op::local_set2 : Op::local_set);
        } else {
          emit(wide ? Op::local_tee2 : Op::local_tee);
        }
        word(local_slot_[i]);
        return;
      }
      case 0x23: case 0x24: {
        GlobalInst* g = inst_.globals.at(r.u32());
        bool wide = slots_of(g->type.type) == 2;
        if (op == 0x23) {
          push(g->type.type);
          emit(wide ? Op::global_get2 : Op::global_get);
        } else {
          pop();
          emit(wide ? Op::global_set2 : Op::global_set);
        }
        word(reinterpret_cast<uint64_t>(g));
        return;
      }
      case 0x25: case 0x26: {
        uint32_t idx = r.u32();
        TableInst* t = inst_.tables.at(idx);
        if (op == 0x25) {
          pop();
          push(t->type.element);
          index64(idx, {1});
          emit(Op::table_get);
        } else {
          pop(2);
          index64(idx, {2});
          emit(Op::table_set);
        }
        word(reinterpret_cast<uint64_t>(t));
        return;
      }
      case 0x3F: {
        uint32_t mem = r.u32();
        push(memory64(mem) ? ValType::kI64 : ValType::kI32);
        on_memory(mem, [&] { emit(Op::memory_size); });
        return;
      }
      case 0x40: {
        uint32_t mem = r.u32();
        on_memory(mem, [&] { emit(memory64(mem) ? Op::memory_grow_a64 : Op::memory_grow); });
        return;
      }
      case 0x41: push(ValType::kI32); emit(Op::const_); word(static_cast<uint32_t>(r.s32())); return;
      case 0x42: push(ValType::kI64); emit(Op::const_); word(static_cast<uint64_t>(r.s64())); return;
      case 0x43: {
        uint32_t bits;
        std::memcpy(&bits, r.bytes(4), 4);
        push(ValType::kF32);
        emit(Op::const_);
        word(bits);
        return;
      }
      case 0x44: {
        uint64_t bits;
        std::memcpy(&bits, r.bytes(8), 8);
        push(ValType::kF64);
        emit(Op::const_);
        word(bits);
        return;
      }
      case 0xD0: push(ref_type(true, read_heaptype(r))); emit(Op::const_); word(0); return;
      case 0xD1: pop(); push(ValType::kI32); emit(Op::ref_is_null); return;
      case 0xD4: emit(Op::ref_as_non_null); return;
      case 0xD5: case 0xD6: branch_on_null(r.u32(), op == 0xD5); return;
      case 0xD2: push(ValType::kFuncRef); emit(Op::const_); word(reinterpret_cast<uint64_t>(inst_.funcs.at(r.u32()))); return;
      case 0xFC: misc(r); return;
      case 0xFB: gc(r); return;
      case 0xD3: pop(2); push(ValType::kI32); emit(Op::ref_eq); return;
      case 0xFD: {
        uint32_t sub = r.u32();
        if (sub == 12) {  // v128.const: two words, low half first
          uint64_t lo, hi;
          std::memcpy(&lo, r.bytes(8), 8);
          std::memcpy(&hi, r.bytes(8), 8);
          push(ValType::kV128);
          emit(Op::const2);
          word(lo);
          word(hi);
          return;
        }
        const SimpleOp* s = find_simple_op(0xFD000 + sub);
        if (!s) throw Unsupported(fmt::format("SIMD instruction 0xfd {} has no handler (module not validated?)", sub));
        return table_op(r, *s);
      }
      default: break;
    }
    const SimpleOp* s = find_simple_op(op);
    if (!s) throw Unsupported(fmt::format("opcode {:#04x} has no handler (module not validated?)", op));
    table_op(r, *s);
  }

  // ---- the register IR (Lowering::ir; handlers.def's register forms) ----
  // An operand-stack value is in its own slot (kHome, at its static height), or pending: a local
  // (local.get wrote nothing) or a constant, read from there by the instruction that consumes it.
  // A pending value is written to its slot (materialised) where something needs it there: a label,
  // a stack-form instruction, a local.set of the local it reads.
  // The techniques apply here as in the stack IR (runtime.h's Lowering): `fold` is what lets a
  // value stay pending (an operand read from a local or a constant word, the _k and _a forms, a
  // result written straight into the local a local.set names); without it every value is written
  // to its own slot first and every local.set copies, as a stack machine would. `fuse` is the
  // compare-and-branch forms (register_branch). `super` pairs what the window holds: only
  // stack-form instructions have superinstructions so far.
  uint32_t slot_of(const Loc& l) const { return l.kind == Loc::kLocal ? static_cast<uint32_t>(l.value) : l.home; }
  void materialize(Loc& l) {
    if (l.kind == Loc::kHome) return;
    emit(l.kind == Loc::kLocal ? Op::copy_r : Op::const_r);
    word(l.home);
    word(l.value);
    l.kind = Loc::kHome;
  }
  // An operand's slot: a local's own, or its own slot (a constant is written there first).
  uint32_t operand_slot(Loc& l) {
    if (l.kind == Loc::kConst) materialize(l);
    return slot_of(l);
  }
  void materialize_all() {
    for (Loc& l : locs_) materialize(l);
  }
  void sync_sp(uint32_t height) {
    if (sp_at_ == height) return;
    emit(Op::sp_at);
    word(height);
    sp_at_ = height;
  }
  // Before a stack-form instruction: its operands in their slots, the stack pointer above them.
  void stack_form() {
    materialize_all();
    sync_sp(height_);
    last_result_ = SIZE_MAX;
  }
  // The result word of a register instruction just written, if the value `l` is what it wrote.
  bool just_written(const Loc& l) const {
    return l.kind == Loc::kHome && last_result_ != SIZE_MAX && last_result_ + 1 == code_.size() && code_[last_result_] == l.home &&
           !window_.empty();
  }
  // A branch on condition `c` (popped): a compare (or i32.eqz) just written becomes the compare and
  // branch, its result word the offset; otherwise br_if_r / br_unless_r on the condition's slot.
  std::pair<size_t, size_t> register_branch(Loc c, bool when_true) {
    materialize_all();
    if (lowering_.fuse && just_written(c)) {
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
  // return, or the function's end label (`at_label`: its values at the function's height `base`,
  // where every path left them): no result, or one from any slot, without the stack pointer; more
  // through the stack form.
  void register_return(uint32_t base, bool at_label) {
    if (f_.result_slots == 0) {
      emit(Op::return_);
      word(0);
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
  // The instructions the register IR writes in its own forms; false (nothing read) for the rest.
  bool register_body(uint8_t op, BinaryReader& r) {
    switch (op) {
      case 0x0C: case 0x0D: {  // br, br_if: without values to move, no stack pointer either
        BinaryReader probe = r;
        uint32_t depth = probe.u32();
        if (op == 0x0C) {
          if (keep_drop(depth).second) return false;
          r = probe;
          materialize_all();
          size_t at = emit(Op::br);
          word(0);
          target(depth, at, at + 1);
          mark_dead();
          return true;
        }
        ValType t = pop();
        Loc c = popped_;
        if (keep_drop(depth).second) {
          push(t);
          locs_.back() = c;
          return false;
        }
        r = probe;
        auto [at, w] = register_branch(c, true);
        target(depth, at, w);
        return true;
      }
      case 0x0F:
        register_return(ctls_.front().height_base, false);
        mark_dead();
        return true;
      case 0x1A: pop(); return true;  // drop: nothing to move
      case 0x1B: case 0x1C: {  // select [a, b, condition, to]
        if (types_.size() < 3 || slots_of(types_[types_.size() - 2]) != 1) return false;
        if (op == 0x1C) {
          r.u32();
          read_valtype(r);
        }
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
      case 0x10: case 0x11: {  // call, call_indirect: the arguments in their slots, sp put there in the call
        BinaryReader probe = r;
        uint32_t index = probe.u32(), table = op == 0x11 ? probe.u32() : 0;
        if (op == 0x11 && table64(table)) return false;
        r = probe;
        materialize_all();
        const bool move_sp = sp_at_ != height_;
        const uint32_t at_height = height_;
        const FuncType* ft = nullptr;
        if (op == 0x10) ft = &inst_.funcs.at(index)->type;
        else {
          const FuncType& t = inst_.module.types.at(index);
          ft = &t;
          pop();
        }
        pop(ft->params.size());
        if (op == 0x10) {
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
      case 0x0E: {  // br_table whose targets take no values along: the index from its slot
        BinaryReader probe = r;
        std::vector<uint32_t> depths(probe.u32() + 1);
        for (auto& d : depths) d = probe.u32();
        ValType t = pop();
        Loc index = popped_;
        bool moves = false;
        for (uint32_t d : depths) moves |= keep_drop(d).second != 0;
        if (moves) {
          push(t);
          locs_.back() = index;
          return false;
        }
        r = probe;
        materialize_all();
        uint32_t slot = operand_slot(index);
        size_t at = emit(Op::br_table_r);
        word(slot);
        word(depths.size() - 1);
        for (uint32_t d : depths) {
          size_t w = code_.size();
          word(0);
          target(d, at, w);
        }
        mark_dead();
        return true;
      }
      case 0x20: case 0x21: case 0x22: return register_local(op, r);
      case 0x23: case 0x24: {  // global.get [global, to], global.set [global, from]
        BinaryReader probe = r;
        GlobalInst* g = inst_.globals.at(probe.u32());
        if (slots_of(g->type.type) != 1) return false;
        r = probe;
        if (op == 0x23) {
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
      case 0x41: case 0x42: case 0x43: case 0x44: {
        uint64_t bits;
        ValType t;
        if (op == 0x41) bits = static_cast<uint32_t>(r.s32()), t = ValType::kI32;
        else if (op == 0x42) bits = static_cast<uint64_t>(r.s64()), t = ValType::kI64;
        else if (op == 0x43) {
          uint32_t b32;
          std::memcpy(&b32, r.bytes(4), 4);
          bits = b32, t = ValType::kF32;
        } else {
          std::memcpy(&bits, r.bytes(8), 8);
          t = ValType::kF64;
        }
        push(t);
        locs_.back().kind = Loc::kConst;
        locs_.back().value = bits;
        if (!lowering_.fold) materialize(locs_.back());  // plain: written to its own slot; no _k forms
        return true;
      }
      default: break;
    }
    if (op >= 0xFB) return false;  // prefixed instructions: their stack forms
    const SimpleOp* s = find_simple_op(op);
    if (!s || s->reg == Op::kCount || !one_slot_signature(s->signature)) return false;
    if (s->imm == Imm::MEM && (inst_.memories.empty() || memory64(0) || (r.peek() & 0xC0) != 0)) return false;
    return register_table_op(r, *s);
  }
  bool register_local(uint8_t op, BinaryReader& r) {
    BinaryReader probe = r;
    uint32_t i = probe.u32();
    if (slots_of(local_type_.at(i)) != 1) return false;
    r = probe;
    uint32_t x = local_slot_[i];
    if (op == 0x20) {
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
        std::vector<uint64_t> words(code_.begin() + static_cast<std::ptrdiff_t>(at) + 1, code_.end());
        code_.resize(at);
        window_.pop_back();
        for (Loc& l : locs_)
          if (l.kind == Loc::kLocal && l.value == x) materialize(l);
        emit(producer);
        for (uint64_t w : words) word(w);
        last_result_ = code_.size() - 1;
      }
      code_[last_result_] = x;
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
    if (op == 0x22) {  // local.tee: the value stays, now the local's
      push(t);
      locs_.back().kind = Loc::kLocal;
      locs_.back().value = x;
      if (!lowering_.fold) materialize(locs_.back());
    }
    return true;
  }
  // A declared numeric or memory instruction in its register form: [op, immediates, operand
  // slots (the last one the constant itself in the _k form), result slot].
  bool register_table_op(BinaryReader& r, const SimpleOp& s) {
    const int pops = sig_pops(s.signature), pushes = sig_pushes(s.signature);
    if (pops < 1 || pops > 2 || pushes > 1 || locs_.size() < static_cast<size_t>(pops)) return false;
    uint64_t offset = 0;
    if (s.imm == Imm::MEM) offset = memarg(r).offset;
    Loc a = locs_[locs_.size() - pops], b = locs_.back();
    // The last operand a constant: the _k form (for one operand, only a load's address: a unop
    // on a constant is rare enough to take its constant from a slot).
    const bool k = pops == 2 ? b.kind == Loc::kConst : a.kind == Loc::kConst && s.imm == Imm::MEM;
    // An address just computed by `i32.add` of a constant: the add folded into the access (_a).
    std::optional<std::pair<uint64_t, uint64_t>> address;
    if (lowering_.fold && s.reg_a != Op::kCount && !k && just_written(a) && window_.back().op == Op::i32_add_k) {
      const size_t at = window_.back().at;
      address = {{code_[at + 1], code_[at + 2]}};
      code_.resize(at);
      window_.pop_back();
      last_result_ = SIZE_MAX;
    }
    uint64_t first = address ? 0 : pops == 1 && k ? a.value : operand_slot(a);
    uint64_t second = pops == 2 ? (k ? b.value : operand_slot(b)) : 0;
    for (int i = 0; i < pops; ++i) pop();
    uint32_t result = height_;
    for (const char* p = std::strchr(s.signature, ':') + 1; *p; ++p) push(type_letter(*p));
    emit(address ? s.reg_a : k ? s.reg_k : s.reg);
    if (s.imm == Imm::MEM) word(offset);
    if (address) {
      word(address->first);
      word(address->second);
    } else word(first);
    if (pops == 2) word(second);
    last_result_ = SIZE_MAX;
    if (pushes) {
      last_result_ = code_.size();
      word(result);
    }
    return true;
  }

  // ---- GC (handlers.def's GC section, gc_ops.cc) ----
  const DefType& def(uint32_t type_idx) const { return inst_.module.types.at(type_idx); }
  const Rtt* rtt(uint32_t type_idx) const { return &inst_.types->rtt(inst_.type_ids.at(type_idx)); }
  // A heap type immediate, canonical (what ref_test compares with).
  uint64_t canonical_heap(HeapType h) const {
    int64_t idx = heap_type_index(h);
    return idx < 0 ? h : TypeStore::canonical_heap(inst_.type_ids.at(static_cast<size_t>(idx)));
  }
  void gc_op(GcOpFn fn, uint64_t a, uint64_t b = 0) {
    emit(Op::gc_op);
    word(reinterpret_cast<uint64_t>(fn));
    word(a);
    word(b);
  }
  static ValType unpacked(const FieldType& f) { return f.packed == Packed::kNone ? f.type : ValType::kI32; }
  // The access handler for a storage type's size (and sign, packed): get_ops[k] for size 1, 2, 4,
  // 8, 16 (k = 0..4), the packed ones signed or not.
  static Op access(uint32_t bytes, bool is_signed, const std::array<Op, 7>& gets) {
    switch (bytes) {
      case 1: return is_signed ? gets[0] : gets[1];
      case 2: return is_signed ? gets[2] : gets[3];
      case 4: return gets[4];
      case 8: return gets[5];
      default: return gets[6];
    }
  }
  void gc(BinaryReader& r) {
    uint32_t sub = r.u32();
    static constexpr std::array<Op, 7> kStructGets = {Op::struct_get8_s, Op::struct_get8_u, Op::struct_get16_s, Op::struct_get16_u,
                                                      Op::struct_get32,   Op::struct_get64,  Op::struct_get128};
    static constexpr std::array<Op, 7> kArrayGets = {Op::array_get8_s, Op::array_get8_u, Op::array_get16_s, Op::array_get16_u,
                                                     Op::array_get32,   Op::array_get64,  Op::array_get128};
    static constexpr std::array<Op, 7> kStructSets = {Op::struct_set8, Op::struct_set8, Op::struct_set16, Op::struct_set16,
                                                      Op::struct_set32, Op::struct_set64, Op::struct_set128};
    static constexpr std::array<Op, 7> kArraySets = {Op::array_set8, Op::array_set8, Op::array_set16, Op::array_set16,
                                                     Op::array_set32, Op::array_set64, Op::array_set128};
    auto ref_of = [&](uint32_t x) { return ref_type(false, kHeapTypeIndex + x); };
    switch (sub) {
      case 0: case 1: {  // struct.new(_default) x
        uint32_t x = r.u32();
        if (sub == 0) pop(def(x).fields.size());
        push(ref_of(x));
        gc_op(sub == 0 ? &gc_struct_new : &gc_struct_new_default, reinterpret_cast<uint64_t>(rtt(x)));
        return;
      }
      case 2: case 3: case 4: case 5: {  // struct.get(_s|_u) x i, struct.set x i
        uint32_t x = r.u32(), i = r.u32();
        const FieldType& f = def(x).fields.at(i);
        const Rtt* t = rtt(x);
        if (sub == 5) {
          pop(2);
          emit(access(t->field_sizes.at(i), false, kStructSets));
        } else {
          pop();
          push(unpacked(f));
          emit(access(t->field_sizes.at(i), sub == 3, kStructGets));
        }
        word(t->field_offsets.at(i));
        return;
      }
      case 6: case 7: {  // array.new(_default) x
        uint32_t x = r.u32();
        pop(sub == 6 ? 2 : 1);
        push(ref_of(x));
        gc_op(sub == 6 ? &gc_array_new : &gc_array_new_default, reinterpret_cast<uint64_t>(rtt(x)));
        return;
      }
      case 8: {  // array.new_fixed x n
        uint32_t x = r.u32(), n = r.u32();
        pop(n);
        push(ref_of(x));
        gc_op(&gc_array_new_fixed, reinterpret_cast<uint64_t>(rtt(x)), n);
        return;
      }
      case 9: case 10: {  // array.new_data x d, array.new_elem x e
        uint32_t x = r.u32(), seg = r.u32();
        pop(2);
        push(ref_of(x));
        if (sub == 9) gc_op(&gc_array_new_data, reinterpret_cast<uint64_t>(rtt(x)), reinterpret_cast<uint64_t>(&inst_.datas.at(seg)));
        else gc_op(&gc_array_new_elem, reinterpret_cast<uint64_t>(rtt(x)), reinterpret_cast<uint64_t>(&inst_.elems.at(seg)));
        return;
      }
      case 11: case 12: case 13: case 14: {  // array.get(_s|_u) x, array.set x
        uint32_t x = r.u32();
        const FieldType& f = def(x).fields.at(0);
        uint32_t bytes = rtt(x)->elem_bytes;
        if (sub == 14) {
          pop(3);
          emit(access(bytes, false, kArraySets));
        } else {
          pop(2);
          push(unpacked(f));
          emit(access(bytes, sub == 12, kArrayGets));
        }
        return;
      }
      case 15: pop(); push(ValType::kI32); emit(Op::array_len); return;
      case 16: {  // array.fill x
        uint32_t x = r.u32();
        pop(4);
        gc_op(&gc_array_fill, reinterpret_cast<uint64_t>(rtt(x)));
        return;
      }
      case 17: {  // array.copy x y
        uint32_t x = r.u32(), y = r.u32();
        pop(5);
        gc_op(&gc_array_copy, reinterpret_cast<uint64_t>(rtt(x)), reinterpret_cast<uint64_t>(rtt(y)));
        return;
      }
      case 18: case 19: {  // array.init_data x d, array.init_elem x e
        uint32_t x = r.u32(), seg = r.u32();
        pop(4);
        if (sub == 18) gc_op(&gc_array_init_data, reinterpret_cast<uint64_t>(rtt(x)), reinterpret_cast<uint64_t>(&inst_.datas.at(seg)));
        else gc_op(&gc_array_init_elem, reinterpret_cast<uint64_t>(rtt(x)), reinterpret_cast<uint64_t>(&inst_.elems.at(seg)));
        return;
      }
      case 20: case 21: case 22: case 23: {  // ref.test (ref null? ht), ref.cast (ref null? ht)
        HeapType h = read_heaptype(r);
        bool nullable = sub == 21 || sub == 23;
        pop();
        push(sub < 22 ? ValType::kI32 : ref_type(nullable, h));
        emit(sub < 22 ? Op::ref_test : Op::ref_cast);
        word(canonical_heap(h));
        word(nullable ? 1 : 0);
        return;
      }
      case 24: case 25: {  // br_on_cast(_fail) flags l ht1 ht2: the reference stays on top either way
        uint8_t flags = r.u8();
        uint32_t depth = r.u32();
        read_heaptype(r);
        HeapType h2 = read_heaptype(r);
        if (dead()) return;
        auto [keep, drop] = keep_drop(depth);
        size_t at = emit(sub == 24 ? Op::br_on_cast : Op::br_on_cast_fail);
        word(0);
        word(keep);
        word(drop);
        word(canonical_heap(h2));
        word(flags & 2 ? 1 : 0);
        target(depth, at, at + 1);
        return;
      }
      case 26: case 27: {  // any.convert_extern, extern.convert_any: the same slot (runtime.h's ref)
        bool nullable = ref_nullable(pop());
        push(ref_type(nullable, sub == 26 ? kHeapAny : kHeapExtern));
        return;
      }
      case 28: pop(); push(ref_type(false, kHeapI31)); emit(Op::ref_i31); return;
      case 29: case 30: pop(); push(ValType::kI32); emit(sub == 29 ? Op::i31_get_s : Op::i31_get_u); return;
      default: throw Unsupported(fmt::format("GC instruction 0xfb {} has no handler (module not validated?)", sub));
    }
  }

  void misc(BinaryReader& r) {
    uint32_t sub = r.u32();
    if (const SimpleOp* s = find_simple_op(0xFC00 + sub)) return simple(*s);
    switch (sub) {
      case 8: {
        uint32_t seg = r.u32(), mem = r.u32();
        pop(3);
        on_memory(mem, [&] {
          emit(memory64(mem) ? Op::memory_init_a64 : Op::memory_init);
          word(reinterpret_cast<uint64_t>(&inst_.datas.at(seg)));
        });
        return;
      }
      case 9: emit(Op::data_drop); word(reinterpret_cast<uint64_t>(&inst_.datas.at(r.u32()))); return;
      case 10: {
        uint32_t dst = r.u32(), src = r.u32();
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
      case 11: {
        uint32_t mem = r.u32();
        pop(3);
        on_memory(mem, [&] { emit(memory64(mem) ? Op::memory_fill_a64 : Op::memory_fill); });
        return;
      }
      case 12: {
        uint32_t seg = r.u32(), table = r.u32();
        pop(3);
        index64(table, {3});
        emit(Op::table_init);
        word(reinterpret_cast<uint64_t>(inst_.tables.at(table)));
        word(reinterpret_cast<uint64_t>(&inst_.elems.at(seg)));
        return;
      }
      case 13: emit(Op::elem_drop); word(reinterpret_cast<uint64_t>(&inst_.elems.at(r.u32()))); return;
      case 14: {
        uint32_t dst = r.u32(), src = r.u32();
        pop(3);
        if (table64(dst)) index64(dst, {3});
        if (table64(src)) index64(src, {2});
        if (table64(dst) && table64(src)) index64(dst, {1});
        emit(Op::table_copy);
        word(reinterpret_cast<uint64_t>(inst_.tables.at(dst)));
        word(reinterpret_cast<uint64_t>(inst_.tables.at(src)));
        return;
      }
      case 15: {
        uint32_t idx = r.u32();
        pop(2);
        push(table64(idx) ? ValType::kI64 : ValType::kI32);
        index64(idx, {1});
        emit(Op::table_grow);
        word(reinterpret_cast<uint64_t>(inst_.tables.at(idx)));
        // A table64's "cannot grow" is i64 -1: the handler's 32-bit -1 sign-extended (a size it
        // returns is below 2^31, Runtime::kMaxTableElements).
        if (table64(idx)) emit(Op::i64_extend_i32_s);
        return;
      }
      case 16: {
        uint32_t idx = r.u32();
        push(table64(idx) ? ValType::kI64 : ValType::kI32);
        emit(Op::table_size);
        word(reinterpret_cast<uint64_t>(inst_.tables.at(idx)));
        return;
      }
      case 17: {
        uint32_t idx = r.u32();
        pop(3);
        index64(idx, {3, 1});
        emit(Op::table_fill);
        word(reinterpret_cast<uint64_t>(inst_.tables.at(idx)));
        return;
      }
      default: throw Unsupported(fmt::format("0xfc {} has no handler", sub));
    }
  }

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
  std::vector<uint64_t> code_;
  std::vector<ValType> types_;
  uint32_t height_ = 0, max_height_ = 0;
  std::vector<Ctl> ctls_;
  std::vector<uint32_t> local_slot_;
  std::vector<ValType> local_type_;
};

}  // namespace

void lower_function(Instance& inst, uint32_t defined_index, const uint64_t* op_words, Lowering lowering, bool record_starts) {
  size_t imported = inst.funcs.size() - inst.module.code.size();
  Lowerer(inst, *inst.funcs.at(imported + defined_index), inst.module.code.at(defined_index), op_words, lowering, record_starts).run();
}

}  // namespace dlab::wasm
