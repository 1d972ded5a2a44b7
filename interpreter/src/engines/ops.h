// The op numbers of the lowered instruction stream and the table the lowering uses for numeric
// and memory instructions: both expanded from handlers.def, so they cannot drift from the handlers
// (an expander that defines only OP gets every entry through handlers.def's kind fallbacks).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "decode/stack_effect.h"
#include "engines/operand_layout.h"

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
  // The register IR's forms (operand_layout.h's lists; handlers.def's DLW_REGISTER_FORMS), by
  // RegisterForm: Op::kCount for SIMD, and for a numeric instruction's address forms.
  std::array<Op, kRegisterForms> forms = no_forms();
  constexpr Op form(RegisterForm f) const { return forms[static_cast<size_t>(f)]; }
  constexpr bool has_register_forms() const { return form(RegisterForm::r) != Op::kCount; }
  static constexpr std::array<Op, kRegisterForms> no_forms() {
    std::array<Op, kRegisterForms> none{};
    for (Op& o : none) o = Op::kCount;
    return none;
  }
};

// A signature's operand counts ("ii:i": 2 pops, 1 push), for the register forms' bodies.
constexpr int sig_pops(const char* s) { return static_cast<int>(stack_effect(s).pops.size()); }
constexpr int sig_pushes(const char* s) { return static_cast<int>(stack_effect(s).pushes.size()); }
// A signature's operand i (of its pops) and its result, as letters (0: none): the register IR's
// accumulator forms keep an f64 or f32 in an accumulator of its own type (placement.h).
constexpr char sig_operand_letter(const char* s, int i) { return i < sig_pops(s) ? stack_effect(s).pops[i] : 0; }
constexpr char sig_result_letter(const char* s) { return sig_pushes(s) == 1 ? stack_effect(s).pushes[0] : 0; }

#define DLW_LOG2(n) ::dlab::wasm::log2_of(n)
#define DLW_NONE Imm::NONE, 0, 0
#define DLW_MEMARG(align) Imm::MEM, align, 0
#define DLW_LANE(lanes) Imm::LANE, 0, lanes
#define DLW_MEMLANE(align, lanes) Imm::MEMLANE, align, lanes
#define DLW_SHUF Imm::SHUF, 0, 32
#define DLW_FORM_OP(form, K, A, X, S, name) Op::name##_##form,
#define DLW_NO_FORM(...) Op::kCount,
inline constexpr SimpleOp kSimpleOps[] = {
#define OP(name, ...)
#define NUM(name, opcode, sig, ...) \
  {opcode, Op::name, sig, DLW_NONE, {DLW_REGISTER_FORM_LIST(DLW_FORM_OP, name) DLW_ADDRESS_FORM_LIST(DLW_NO_FORM, )}},
#define MEM(name, opcode, sig, imm, ...) \
  {opcode, Op::name, sig, DLW_##imm, {DLW_REGISTER_FORM_LIST(DLW_FORM_OP, name) DLW_ADDRESS_FORM_LIST(DLW_FORM_OP, name)}},
#define VEC(name, sub, imm, sig, ...) {0xFD000 + sub, Op::name, sig, DLW_##imm},
#include "engines/handlers.def"
#undef OP
#undef NUM
#undef MEM
#undef VEC
};
#undef DLW_FORM_OP
#undef DLW_NO_FORM
#undef DLW_NONE
#undef DLW_MEMARG
#undef DLW_LANE
#undef DLW_MEMLANE
#undef DLW_SHUF

// The words of a declared instruction's register form (operand_layout.h).
constexpr OperandLayout register_layout_of(const SimpleOp& s, RegisterForm f) {
  return register_layout(imm_words(s.imm), sig_pops(s.signature), sig_pushes(s.signature), f);
}

// The register forms the lowering never writes (an accumulator form of an operand the instruction
// does not have, an unstored form of an instruction without a result): stubs that trap.
constexpr bool unwritten_register_form(Op op) {
  for (const SimpleOp& s : kSimpleOps)
    for (int f = 0; f < kRegisterForms; ++f)
      if (s.forms[f] == op && op != Op::kCount) return !register_layout_of(s, static_cast<RegisterForm>(f)).written;
  return false;
}

// A memory instruction's body checks 64-bit addresses only in its memory64 form, which declares
// its own kAddr64 = true (handlers.def's MEM and VMEM).
inline constexpr bool kAddr64 = false;



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

// The fold and fuse forms (Forms' members but a64, which has its instruction's words) and their
// layouts (operand_layout.h's layout::).
struct FormLayout {
  Op Forms::*form;
  const OperandLayout* layout;
};
inline constexpr FormLayout kFormLayouts[] = {
    {&Forms::ri, &layout::kRi},           {&Forms::rl, &layout::kRl},
    {&Forms::li, &layout::kLi},           {&Forms::ll, &layout::kLl},
    {&Forms::local_address, &layout::kLocalAddress},
    {&Forms::br_if, &layout::kBr},        {&Forms::br_unless, &layout::kBr},
    {&Forms::ri_br_if, &layout::kRiBr},   {&Forms::ri_br_unless, &layout::kRiBr},
    {&Forms::rr_br_if, &layout::kRrBr},   {&Forms::rr_br_unless, &layout::kRrBr},
    {&Forms::rk_br_if, &layout::kRkBr},   {&Forms::rk_br_unless, &layout::kRkBr},
};
static_assert(sizeof(Forms) == (std::size(kFormLayouts) + 1) * sizeof(Op), "every form of Forms but a64 has its layout here");

// Per op, the words its layout gives it (the op word with the rest; 0: an op lowered by hand,
// whose length nothing declares): the length its handler must consume, which the counting engine
// checks at every NEXT (dispatch_tail.inc). A declared instruction and its memory64 form (op word
// and immediates), every register form the lowering writes (operand_layout.h's register_layout),
// the fold and fuse forms and the register IR's branches (layout::), and a superinstruction whose
// first op has a length: that length, checked where its first body steps into the second.
struct DeclaredWords {
  uint8_t of[static_cast<size_t>(Op::kCount)] = {};
  constexpr void set(Op op, const OperandLayout& l) {
    if (op != Op::kCount) of[static_cast<size_t>(op)] = l.words;
  }
  constexpr DeclaredWords() {
    for (const SimpleOp& s : kSimpleOps) {
      of[static_cast<size_t>(s.op)] = static_cast<uint8_t>(1 + imm_words(s.imm));
      for (int f = 0; f < kRegisterForms; ++f) {
        const OperandLayout l = register_layout_of(s, static_cast<RegisterForm>(f));
        if (l.written) set(s.forms[f], l);
      }
    }
    for (const FormsOf& f : kForms) {
      if (f.forms.a64 != Op::kCount) of[static_cast<size_t>(f.forms.a64)] = of[static_cast<size_t>(f.op)];
      for (const FormLayout& l : kFormLayouts) set(f.forms.*l.form, *l.layout);
    }
    set(Op::br_if_r, layout::kBrR);
    set(Op::br_unless_r, layout::kBrR);
    set(Op::i32_and_k_br_if, layout::kRkBr);
    set(Op::i32_and_k_br_unless, layout::kRkBr);
    set(Op::br_copy_r, layout::kBrCopy);
    set(Op::br_copy2_r, layout::kBrCopy2);
    set(Op::br_if_copy_r, layout::kBrIfCopy);
    set(Op::land_copy_r, layout::kBrCopy);
    for (const SuperOf& s : kSupers) of[static_cast<size_t>(s.op)] = of[static_cast<size_t>(s.first)];
  }
};
inline constexpr DeclaredWords kDeclaredWords;

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
