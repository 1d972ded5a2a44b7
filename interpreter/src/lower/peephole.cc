// The lowering's peephole stage (runtime.h's Lowering techniques, lowerer.h's window): fold
// (an operand's const or local.get into the instruction that consumes it), fuse (a compare into
// the branch on its result), and super (a pair of consecutive instructions into one
// superinstruction, when the window is emptied at a label).
#include "lower/lowerer.h"

namespace dlab::wasm::lowering_impl {

// The fold and fuse rewrites below leave the words where the instructions they replace wrote them
// (a const's value, a local.get's slot) and add the rest after: the forms' layouts
// (operand_layout.h, by which their handlers read them and the counting engine checks their
// lengths) must put them there.
static_assert(layout::kRi.words == 2 && layout::kRi.operand[0] == 1 && layout::kRi.constant[0], "const c -> binop_ri c");
static_assert(layout::kRl.words == 2 && layout::kRl.operand[0] == 1 && !layout::kRl.constant[0], "local.get x -> binop_rl x");
static_assert(layout::kLi.words == 3 && layout::kLi.operand[0] == 1 && layout::kLi.operand[1] == 2 && layout::kLi.constant[1],
              "local.get x; const c -> binop_li x c");
static_assert(layout::kLl.words == 3 && layout::kLl.operand[0] == 1 && layout::kLl.operand[1] == 2, "local_get_get x y -> binop_ll x y");
static_assert(layout::kLocalAddress.words == 3 && layout::kLocalAddress.operand[0] == 1 && layout::kLocalAddress.immediate == 2,
              "local.get x; load off -> load_l x off");
static_assert(layout::kBr.words == 2 && layout::kBr.label == 1, "cmp; br -> cmp_br offset");
static_assert(layout::kRiBr.words == 3 && layout::kRiBr.operand[0] == 1 && layout::kRiBr.label == 2, "cmp_ri c; br -> cmp_ri_br c offset");

void Lowerer::label() {
  if (lowering_.super) superinstructions();
  // The window holds every instruction written since the last label, with rewrites applied
  // (a folded instruction is gone from it): its starts are the code's.
  if (record_starts_)
    for (const Written& w : window_) f_.instruction_starts.push_back(static_cast<uint32_t>(w.at));
  window_.clear();
  // Branches may arrive here from anywhere: where the stack pointer is, is not known (register IR).
  sp_at_ = kUnknownHeight;
  last_result_ = SIZE_MAX;
  acc_local_end_ = SIZE_MAX;
}

namespace {

// kSupers grouped by their first op, each group in kSupers' order (a stable counting sort, made at
// compile time): a pair is looked up among the few superinstructions its first op begins, not all
// of them, and finds the same one the list's order would. Lowering runs at a function's first call,
// so this is start-up: on a large program a scan of the whole list per pair was 3% of it.
struct SupersByFirst {
  static constexpr size_t kOps = static_cast<size_t>(Op::kCount);
  uint16_t begin[kOps + 1] = {};
  SuperOf sorted[std::size(kSupers)] = {};
  constexpr SupersByFirst() {
    for (const SuperOf& s : kSupers) ++begin[static_cast<size_t>(s.first) + 1];
    for (size_t op = 0; op < kOps; ++op) begin[op + 1] += begin[op];
    uint16_t next[kOps + 1] = {};
    for (size_t op = 0; op <= kOps; ++op) next[op] = begin[op];
    for (const SuperOf& s : kSupers) sorted[next[static_cast<size_t>(s.first)]++] = s;
  }
  // The superinstruction `first` then `second` make, or Op::kCount.
  constexpr Op of(Op first, Op second) const {
    const size_t f = static_cast<size_t>(first);
    for (uint16_t k = begin[f]; k < begin[f + 1]; ++k)
      if (sorted[k].second == second) return sorted[k].op;
    return Op::kCount;
  }
};
constexpr SupersByFirst kSupersByFirst;

// The index answers as the list does, pair for pair: no pair is listed twice (the generator names a
// superinstruction by its pair), so each pair's entry is the one the index finds. And a triple comes
// after the pair superinstruction it extends (ops.h's kDeclaredWords gives it that pair's length).
// Checked while compiling, in steps linear in the list and its groups: a scan of the whole list per
// entry hit clang's constexpr step limit near 1,000 superinstructions.
constexpr bool supers_index_agrees() {
  constexpr size_t kOps = static_cast<size_t>(Op::kCount);
  for (size_t f = 0; f < kOps; ++f)
    for (uint16_t a = kSupersByFirst.begin[f]; a < kSupersByFirst.begin[f + 1]; ++a)
      for (uint16_t b = a + 1; b < kSupersByFirst.begin[f + 1]; ++b)
        if (kSupersByFirst.sorted[a].second == kSupersByFirst.sorted[b].second) return false;
  for (const SuperOf& s : kSupers)
    if (kSupersByFirst.of(s.first, s.second) != s.op) return false;
  std::array<bool, kOps> is_super{}, listed{};
  for (const SuperOf& s : kSupers) is_super[static_cast<size_t>(s.op)] = true;
  for (const SuperOf& s : kSupers) {
    if (is_super[static_cast<size_t>(s.first)] && !listed[static_cast<size_t>(s.first)]) return false;
    listed[static_cast<size_t>(s.op)] = true;
  }
  return true;
}
static_assert(supers_index_agrees());

}  // namespace

// super: left to right, each pair of consecutive instructions with a superinstruction becomes it
// (the first's op word rewritten; the second's words stay in place, skipped by the handler, so no
// offset moves), and a pair with the instruction after it a triple where there is one (a SUPER_R
// whose first is the pair); an instruction takes part in one superinstruction at most.
void Lowerer::superinstructions() {
  for (size_t i = 0; i + 1 < window_.size(); ++i) {
    const Op super = kSupersByFirst.of(window_[i].op, window_[i + 1].op);
    if (super == Op::kCount) continue;
    const Op triple = i + 2 < window_.size() ? kSupersByFirst.of(super, window_[i + 2].op) : Op::kCount;
    rewrite(window_[i], triple == Op::kCount ? super : triple);
    i += triple == Op::kCount ? 1 : 2;
  }
}

// The window's last instruction, if it is `words` long and ends where the stream does.
const Lowerer::Written* Lowerer::last(size_t words) const {
  if (window_.empty() || dead() || window_.back().at + words != code_.size()) return nullptr;
  return &window_.back();
}

// fold, for a binop about to be written:
//   `const c; binop` -> `binop_ri c`          `local.get x; binop` -> `binop_rl x`
//   `local.get x; const c; binop` -> `binop_li x c`
//   `local.get x; local.get y; binop` (already `local_get_get x y`) -> `binop_ll x y`
bool Lowerer::fold(Op op) {
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
bool Lowerer::fold_load(Op op, uint64_t offset) {
  Op to = kRewrites[op].local_address;
  const Written* w = last(2);
  if (!lowering_.fold || to == Op::kCount || w == nullptr || w->op != Op::local_get) return false;
  rewrite(window_.back(), to);
  word(offset);
  return true;
}

// fold, for a local.get about to be written (superinstructions from the most frequent pairs):
// `local.get x; local.get y` -> `local_get_get x y`, `local.set x; local.get y` -> `local_set_get x y`.
bool Lowerer::fold_local_get(uint32_t slot) {
  const Written* w = last(2);
  if (!lowering_.fold || w == nullptr || (w->op != Op::local_get && w->op != Op::local_set)) return false;
  rewrite(window_.back(), w->op == Op::local_get ? Op::local_get_get : Op::local_set_get);
  word(slot);
  return true;
}

// A conditional branch on the top of stack (br_if, or br_unless for `if`) with its offset word
// still 0: (instruction start, offset word). fuse: `cmp; br` -> `cmp_br`, `cmp_ri c; br` ->
// `cmp_ri_br c`, and `i32.eqz; br_if` -> `br_unless` (and the reverse), then perhaps fused.
std::pair<size_t, size_t> Lowerer::branch_on_top(bool when_true) {
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

}  // namespace dlab::wasm::lowering_impl
