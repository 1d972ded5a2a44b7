// The op numbers of the lowered instruction stream and the table the lowering uses for numeric
// and memory instructions: both expanded from handlers.def, so they cannot drift from the handlers
// (an expander that defines only OP gets every entry through handlers.def's kind fallbacks).
#pragma once

#include <cstddef>
#include <cstdint>

namespace dlab::wasm {

enum class Op : uint16_t {
#define OP(name, ...) name,
#include "engines/handlers.def"
#undef OP
  kCount
};

// The immediates an instruction carries after its op word (handlers.def's typed notation).
enum class Imm : uint8_t {
  NONE,     // none
  MEM,      // memarg: word 1 = static offset (the alignment is checked, then dropped)
  LANE,     // word 1 = lane index
  MEMLANE,  // word 1 = offset, word 2 = lane index
  SHUF,     // words 1-2 = 16 lane indices
};
// Words an instruction's immediates take after its op word: with the op word, its handler's length.
constexpr int imm_words(Imm i) { return i == Imm::NONE ? 0 : (i == Imm::MEM || i == Imm::LANE) ? 1 : 2; }

constexpr uint8_t log2_of(unsigned long n) { return n <= 1 ? 0 : static_cast<uint8_t>(1 + log2_of(n / 2)); }

// An instruction declared by table: its wasm opcode (0xFC00 + sub-opcode for the 0xFC prefix,
// 0xFD000 + sub-opcode for SIMD), stack effect ("ii:i": pops two i32, pushes one i32; v = v128,
// a = the address operand), immediates, and for those the natural alignment (log2, the largest a
// memarg may give) and the lane count (a lane index must be below it).
struct SimpleOp {
  uint32_t opcode;
  Op op;
  const char* signature;
  Imm imm;
  uint8_t align;
  uint8_t lanes;
  // The register IR's forms (handlers.def's DLW_REGISTER_FORMS): operands from frame slots
  // (reg), or the last operand an immediate (reg_k); Op::kCount for SIMD.
  Op reg = Op::kCount, reg_k = Op::kCount;
  Op reg_a = Op::kCount;  // a memory instruction's address slot + constant form
  // The accumulator forms (handlers.def): the first operand from it (reg_x; reg_xk with the
  // second an immediate), or the second (reg_y).
  Op reg_x = Op::kCount, reg_xk = Op::kCount, reg_y = Op::kCount;
  Op reg_ax = Op::kCount;  // reg_a with the slot's value from the accumulator
  // The same seven forms without the result slot (handlers.def's _n forms: the result left in the
  // accumulator only; the `elide` technique), in the order reg, reg_k, reg_a, reg_x, reg_xk,
  // reg_y, reg_ax.
  Op reg_n = Op::kCount, reg_kn = Op::kCount, reg_an = Op::kCount, reg_xn = Op::kCount, reg_xkn = Op::kCount,
     reg_yn = Op::kCount, reg_axn = Op::kCount;
};

// A signature's operand counts ("ii:i": 2 pops, 1 push), for the register forms' bodies.
constexpr int sig_pops(const char* s) {
  int n = 0;
  while (s[n] != ':') ++n;
  return n;
}
constexpr int sig_pushes(const char* s) {
  int n = sig_pops(s) + 1, k = 0;
  while (s[n + k] != 0) ++k;
  return k;
}

#define DLW_LOG2(n) ::dlab::wasm::log2_of(n)
#define DLW_NONE Imm::NONE, 0, 0
#define DLW_MEMARG(align) Imm::MEM, align, 0
#define DLW_LANE(lanes) Imm::LANE, 0, lanes
#define DLW_MEMLANE(align, lanes) Imm::MEMLANE, align, lanes
#define DLW_SHUF Imm::SHUF, 0, 32
inline constexpr SimpleOp kSimpleOps[] = {
#define OP(name, ...)
#define NUM(name, opcode, sig, ...)                                                                                       \
  {opcode,       Op::name,         sig,         DLW_NONE,    Op::name##_r,  Op::name##_k,  Op::kCount,   Op::name##_x,          \
   Op::name##_xk, Op::name##_y,    Op::kCount,  Op::name##_rn, Op::name##_kn, Op::kCount,  Op::name##_xn, Op::name##_xkn,       \
   Op::name##_yn, Op::kCount},
#define MEM(name, opcode, sig, imm, ...)                                                                                  \
  {opcode,        Op::name,         sig,           DLW_##imm,     Op::name##_r,   Op::name##_k,  Op::name##_a, Op::name##_x, \
   Op::name##_xk, Op::name##_y,     Op::name##_ax, Op::name##_rn, Op::name##_kn,  Op::name##_an, Op::name##_xn,              \
   Op::name##_xkn, Op::name##_yn,   Op::name##_axn},
#define VEC(name, sub, imm, sig, ...) {0xFD000 + sub, Op::name, sig, DLW_##imm},
#include "engines/handlers.def"
#undef OP
#undef NUM
#undef MEM
#undef VEC
};
#undef DLW_NONE
#undef DLW_MEMARG
#undef DLW_LANE
#undef DLW_MEMLANE
#undef DLW_SHUF

// The accumulator forms an instruction's operands leave without meaning (a one-operand
// instruction's xk and y forms, with or without their result slot) and the _n forms of an
// instruction without a result: stubs that trap, which the lowering never writes (handlers.def).
constexpr bool unwritten_register_form(Op op) {
  for (const SimpleOp& s : kSimpleOps) {
    if (s.reg_x == Op::kCount) continue;
    if (sig_pops(s.signature) < 2 && (op == s.reg_xk || op == s.reg_y || op == s.reg_xkn || op == s.reg_yn)) return true;
    if (sig_pushes(s.signature) == 0 && op != Op::kCount &&
        (op == s.reg_n || op == s.reg_kn || op == s.reg_an || op == s.reg_xn || op == s.reg_xkn || op == s.reg_yn || op == s.reg_axn))
      return true;
  }
  return false;
}

// A memory instruction's body checks 64-bit addresses only in its memory64 form, which declares
// its own kAddr64 = true (handlers.def's MEM and VMEM).
inline constexpr bool kAddr64 = false;

// The declaration of the table instruction with this opcode (as in SimpleOp), or null.
const SimpleOp* find_simple_op(uint32_t opcode);


// The forms the lowering's speed techniques write in place of a plain op, from handlers.def's
// BINOP and CMPOP entries (Op::kCount where an op has no such form).
struct Forms {
  Op ri = Op::kCount, rl = Op::kCount, li = Op::kCount, ll = Op::kCount;  // fold: operands from the instruction
  Op br_if = Op::kCount, br_unless = Op::kCount, ri_br_if = Op::kCount, ri_br_unless = Op::kCount;  // fuse
  Op local_address = Op::kCount;  // fold: a load's address from a local
  Op a64 = Op::kCount;            // the memory64 form of a memory instruction
  // The register IR's compare and branch (a and b from slots, or b the immediate: rk).
  Op rr_br_if = Op::kCount, rr_br_unless = Op::kCount, rk_br_if = Op::kCount, rk_br_unless = Op::kCount;
};
struct FormsOf {
  Op op;
  Forms forms;
};
inline constexpr FormsOf kForms[] = {
#define OP(name, ...)
#define BINOP(name, opcode, sig, T, R, expr) {Op::name, {.ri = Op::name##_ri, .rl = Op::name##_rl, .li = Op::name##_li, .ll = Op::name##_ll}},
#define CMPOP(name, opcode, sig, T, expr)                                                                                   \
  {Op::name,                                                                                                                \
   {.ri = Op::name##_ri, .rl = Op::name##_rl, .li = Op::name##_li, .ll = Op::name##_ll, .br_if = Op::name##_br_if,        \
    .br_unless = Op::name##_br_unless, .ri_br_if = Op::name##_ri_br_if, .ri_br_unless = Op::name##_ri_br_unless,   \
    .rr_br_if = Op::name##_rr_br_if, .rr_br_unless = Op::name##_rr_br_unless, .rk_br_if = Op::name##_rk_br_if,     \
    .rk_br_unless = Op::name##_rk_br_unless}},
#define LOADOP(name, opcode, sig, M, T) {Op::name, {.local_address = Op::name##_l, .a64 = Op::name##_a64}},
#define MEM(name, opcode, sig, imm, ...) {Op::name, {.a64 = Op::name##_a64}},
#define VMEM(name, sub, imm, sig, ...) {Op::name, {.a64 = Op::name##_a64}},
#include "engines/handlers.def"
#undef OP
#undef BINOP
#undef CMPOP
#undef LOADOP
#undef MEM
#undef VMEM
};

// Per op, the words its declaration gives it (op word + immediates; 0: not a table instruction):
// the length its handler must consume, which the counting engine checks at every NEXT.
struct DeclaredWords {
  uint8_t of[static_cast<size_t>(Op::kCount)] = {};
  constexpr DeclaredWords() {
    for (const SimpleOp& s : kSimpleOps) of[static_cast<size_t>(s.op)] = static_cast<uint8_t>(1 + imm_words(s.imm));
    for (const FormsOf& f : kForms)  // a memory64 form has its instruction's words
      if (f.forms.a64 != Op::kCount) of[static_cast<size_t>(f.forms.a64)] = of[static_cast<size_t>(f.op)];
  }
};
inline constexpr DeclaredWords kDeclaredWords;

// The superinstructions (superinstructions.def, generated from measured pair frequencies): the
// lowering's `super` technique writes `op` over `first` where `second` follows it.
struct SuperOf {
  Op first, second, op;
  bool register_ir = false;  // a SUPER_R: built only where the register IR is, a trapping stub elsewhere
};
inline constexpr SuperOf kSupers[] = {
#define OP(name, ...)
#define SUPER(name, first, second, ...) {Op::first, Op::second, Op::name},
#define SUPER_R(name, first, second, ...) {Op::first, Op::second, Op::name, true},
#include "engines/handlers.def"
#undef OP
#undef SUPER
#undef SUPER_R
};

inline constexpr const char* kOpNames[] = {
#define OP(name, ...) #name,
#include "engines/handlers.def"
#undef OP
};

// Each op's family: the handlers/ file its entry is in (control, stack_locals_globals, ..., the
// superinstructions), from handlers.def's FAMILY markers. In this enum the markers are numbered
// among the ops, so the k-th family's first op is its marker's number minus k.
namespace family_marker {
enum Numbered : uint16_t {
#define OP(name, ...) op_##name,
#define FAMILY(name) family_##name,
#include "engines/handlers.def"
#undef OP
#undef FAMILY
};
}  // namespace family_marker
inline constexpr const char* kFamilyNames[] = {
#define OP(name, ...)
#define FAMILY(name) #name,
#include "engines/handlers.def"
#undef OP
#undef FAMILY
};
inline constexpr uint16_t kFamilyMarkers[] = {
#define OP(name, ...)
#define FAMILY(name) family_marker::family_##name,
#include "engines/handlers.def"
#undef OP
#undef FAMILY
};
inline constexpr size_t kFamilyCount = sizeof(kFamilyNames) / sizeof(kFamilyNames[0]);
constexpr const char* op_family(size_t op) {
  size_t f = 0;
  for (size_t k = 0; k < kFamilyCount; ++k)
    if (kFamilyMarkers[k] - k <= op) f = k;
  return kFamilyNames[f];
}

}  // namespace dlab::wasm
