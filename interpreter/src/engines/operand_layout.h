// The words of every form the lowering writes in place of a declared instruction, as typed
// fields declared once (wasmi's for_each_op idea): the register forms' handlers read their
// operands at these places (handlers.def's DLW_REGISTER_BODY), the lowering writes them at the
// same places (lower/register_ir.cc's register_table_op), and ops.h's kDeclaredWords gives the
// counting engine each form's length, which it checks at every dispatch. A form's layout is not
// arithmetic written twice, once in the handler and once in the lowering.
//
// Dense code (issue 35, item 5): a register form's frame slots (its operands' and its result's)
// are 16-bit fields packed into one word after its 64-bit words (the op word, a memarg's offset,
// a constant, an address's constant), and the compare-and-branch forms made from them keep their
// branch offset as a 32-bit field in the same word, where the compare had its result. A function
// whose frame passes 65,535 slots cannot be written so: the lowering writes it in the stack IR
// (lowering.cc's lower_function). x86-64 and AArch64 load a 16-bit field with one instruction
// (movzwl, ldrh), as they load a word: the handler's loads stay as many, the code is shorter.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <stdexcept>

namespace dlab::wasm {

// What a word after the op word holds.
enum class Field : uint8_t {
  kNone,
  kImmediate,  // a declared immediate (a memarg's static offset)
  kSlot,       // an operand's frame slot (a local's own, or an operand-stack value's)
  kConstant,   // an operand's value itself (a constant folded in)
  kAddend,     // the constant an address adds (an i32.add folded into a memory access)
  kResult,     // the frame slot the result is written to
  kLabel,      // a branch offset, in words from the op word
  kSlots,      // a word of 16-bit slot fields (lanes 0 and 1: the operands', 2: the result's),
               // or of two with a 32-bit branch offset in lanes 2-3 (the compare-and-branch forms)
};

// Where a field lies: its word (from the op word) and, packed, its 16-bit lane in that word and
// its width (16: a slot; 32: a branch offset, lanes 2-3); a whole word has lane -1 and 64 bits.
struct Place {
  int8_t word = -1;  // -1: no such field
  int8_t lane = -1;
  uint8_t bits = 64;
  constexpr bool none() const { return word < 0; }
  constexpr bool packed() const { return lane >= 0; }
  friend constexpr bool operator==(const Place&, const Place&) = default;
};
inline constexpr int kSlotLanes = 4;
inline constexpr uint64_t kMaxPackedSlot = 0xFFFF;  // a 16-bit slot field's largest slot
static_assert(std::endian::native == std::endian::little, "a packed field's lane is its bytes' position in the word");

// A field's value, read as the handlers read it: a word, or a zero-extended slot, or a
// sign-extended branch offset (in words) as a word. Every place is a constant where this is used,
// so each read compiles to one load (mov, movzwl, movslq; ldr, ldrh, ldrsw).
template <Place P>
inline uint64_t read_field(const uint64_t* ip) {
  static_assert(!P.none(), "no such field (interpreter bug)");
  if constexpr (!P.packed()) {
    return ip[P.word];
  } else if constexpr (P.bits == 16) {
    uint16_t v;
    std::memcpy(&v, reinterpret_cast<const unsigned char*>(ip + P.word) + 2 * P.lane, sizeof v);
    return v;
  } else {
    static_assert(P.bits == 32 && P.lane == 2, "a 32-bit field is a word's upper half");
    int32_t v;
    std::memcpy(&v, reinterpret_cast<const unsigned char*>(ip + P.word) + 2 * P.lane, sizeof v);
    return static_cast<uint64_t>(static_cast<int64_t>(v));
  }
}
// The same, for the lowering: a field's value in word `w`, and word `w` with it set to v (which the
// caller has checked fits).
constexpr uint64_t field_of(uint64_t w, Place p) {
  if (!p.packed()) return w;
  if (p.bits == 16) return (w >> (16 * p.lane)) & 0xFFFF;
  return static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(w >> 32)));
}
constexpr uint64_t with_field(uint64_t w, Place p, uint64_t v) {
  if (!p.packed()) return v;
  if (p.bits == 16) return (w & ~(uint64_t{0xFFFF} << (16 * p.lane))) | ((v & 0xFFFF) << (16 * p.lane));
  return (w & 0xFFFFFFFFu) | (v << 32);
}

// The register forms of a declared instruction, listed once: suffix, then whether the last
// operand is the constant itself (K), whether the address is a slot plus a constant (A, memory
// instructions only), which operand comes from the accumulator instead of a slot (X: 0 none, 1 the
// first, 2 the second) and whether the result is stored to a slot (S; without it the result is
// left in the accumulator only: the `elide` technique's _n forms). F is called as
// F(suffix, K, A, X, S, extra...) for every form; handlers.def generates the handlers from this
// list and ops.h each instruction's table of forms.
#define DLW_REGISTER_FORM_LIST(F, ...) \
  F(r, 0, 0, 0, 1, __VA_ARGS__)        \
  F(k, 1, 0, 0, 1, __VA_ARGS__)        \
  F(x, 0, 0, 1, 1, __VA_ARGS__)        \
  F(xk, 1, 0, 1, 1, __VA_ARGS__)       \
  F(y, 0, 0, 2, 1, __VA_ARGS__)        \
  F(rn, 0, 0, 0, 0, __VA_ARGS__)       \
  F(kn, 1, 0, 0, 0, __VA_ARGS__)       \
  F(xn, 0, 0, 1, 0, __VA_ARGS__)       \
  F(xkn, 1, 0, 1, 0, __VA_ARGS__)      \
  F(yn, 0, 0, 2, 0, __VA_ARGS__)
// The forms only a memory instruction has: its address a slot (or the accumulator) plus a constant.
#define DLW_ADDRESS_FORM_LIST(F, ...) \
  F(a, 0, 1, 0, 1, __VA_ARGS__)       \
  F(ax, 0, 1, 1, 1, __VA_ARGS__)      \
  F(an, 0, 1, 0, 0, __VA_ARGS__)      \
  F(axn, 0, 1, 1, 0, __VA_ARGS__)

enum class RegisterForm : uint8_t {
#define DLW_FORM_ENUMERATOR(form, ...) form,
  DLW_REGISTER_FORM_LIST(DLW_FORM_ENUMERATOR, ) DLW_ADDRESS_FORM_LIST(DLW_FORM_ENUMERATOR, )
#undef DLW_FORM_ENUMERATOR
};
#define DLW_FORM_ONE(...) +1
inline constexpr int kRegisterForms = 0 DLW_REGISTER_FORM_LIST(DLW_FORM_ONE, ) DLW_ADDRESS_FORM_LIST(DLW_FORM_ONE, );
#undef DLW_FORM_ONE

struct RegisterFormShape {
  bool constant = false;  // K
  bool address = false;   // A
  uint8_t from_acc = 0;   // X
  bool stored = true;     // S
  friend constexpr bool operator==(const RegisterFormShape&, const RegisterFormShape&) = default;
};
inline constexpr RegisterFormShape kRegisterFormShapes[kRegisterForms] = {
#define DLW_FORM_SHAPE(form, K, A, X, S, ...) {K != 0, A != 0, X, S != 0},
    DLW_REGISTER_FORM_LIST(DLW_FORM_SHAPE, ) DLW_ADDRESS_FORM_LIST(DLW_FORM_SHAPE, )
#undef DLW_FORM_SHAPE
};
constexpr RegisterFormShape shape_of(RegisterForm f) { return kRegisterFormShapes[static_cast<int>(f)]; }
// The form of that shape (a shape the lists do not have is an interpreter bug: at compile time an
// error, at run time the lowering's logic_error).
constexpr RegisterForm form_of(RegisterFormShape s) {
  for (int i = 0; i < kRegisterForms; ++i)
    if (kRegisterFormShapes[i] == s) return static_cast<RegisterForm>(i);
  throw std::logic_error("no register form has this shape (interpreter bug)");
}

// The words of one form: which field each word holds, and where the handler finds each part.
struct OperandLayout {
  static constexpr int kMaxWords = 8;
  uint8_t words = 1;  // with the op word: the handler's length
  Field field[kMaxWords] = {};
  // Operand i's place (a slot, or the constant itself: a whole word), none where it comes from the
  // accumulator (or there is no such operand).
  Place operand[2] = {};
  bool constant[2] = {false, false};
  int8_t addend = -1;  // the address's constant's word (A forms), or -1
  Place result = {};   // the result slot's place, none (no result, or not stored)
  Place label = {};    // a branch offset's place, or none
  int8_t immediate = -1;  // the first declared immediate's word, or -1
  // false: a form the lowering never writes (an accumulator form of an operand the instruction
  // does not have, an unstored form of an instruction without a result): a stub that traps.
  bool written = true;
  constexpr int8_t add(Field f) {
    field[words] = f;
    return static_cast<int8_t>(words++);
  }
};

// A register form's words: [op, immediates, the address's constant (A forms), the constant (K
// forms: the last operand is the constant itself), slots]: the slot word holds each operand's
// slot in its lane (0: the first, 1: the second; an operand from the accumulator or a constant
// leaves its lane 0) and the result's in lane 2; a form with no slot to name has no slot word.
// The lanes are fixed by role, so a form and its accumulator form (x, y) or its unstored form (n)
// differ in lanes, not in where anything else is: the lowering turns one into the other in place.
constexpr OperandLayout register_layout(int immediates, int pops, int pushes, RegisterForm form) {
  const RegisterFormShape s = shape_of(form);
  OperandLayout l;
  l.written = !((s.from_acc != 0 && pops == 0) || (s.from_acc == 2 && pops < 2) || (s.from_acc == 1 && s.constant && pops < 2) ||
                (!s.stored && pushes == 0));
  for (int i = 0; i < immediates; ++i) {
    const int8_t w = l.add(Field::kImmediate);
    if (i == 0) l.immediate = w;
  }
  if (s.address) l.addend = l.add(Field::kAddend);
  bool slot[2] = {false, false};
  for (int i = 0; i < pops && i < 2; ++i) {
    if (s.from_acc == i + 1) continue;
    l.constant[i] = s.constant && i == pops - 1;
    if (l.constant[i]) l.operand[i] = {l.add(Field::kConstant), -1, 64};
    else slot[i] = true;
  }
  const bool result = pushes == 1 && s.stored;
  if (slot[0] || slot[1] || result) {
    const int8_t w = l.add(Field::kSlots);
    for (int i = 0; i < 2; ++i)
      if (slot[i]) l.operand[i] = {w, static_cast<int8_t>(i), 16};
    if (result) l.result = {w, 2, 16};
  }
  return l;
}
// A compare's register form (cmp_r, cmp_k; i32.eqz_r; i32.and_k) as the compare-and-branch form
// a branch on its result makes of it in place: the branch offset a 32-bit field where the result's
// slot was (lanes 2-3 of the slot word; lane 3 is always 0 in the compare).
constexpr OperandLayout fused_branch(OperandLayout compare) {
  compare.label = {compare.result.word, 2, 32};
  compare.result = {};
  return compare;
}

// The other forms' words, fixed (handlers.def's BINOP, CMPOP and LOADOP entries): the handler
// macros read their operands at these positions and consume `words`; the lowering's peephole
// rewrites a stream into them word for word.
constexpr OperandLayout fixed_layout(std::initializer_list<Field> fields) {
  OperandLayout l;
  int slots = 0;
  for (Field f : fields) {
    const int8_t w = l.add(f);
    if (f == Field::kSlot || f == Field::kConstant) {
      if (slots < 2) {
        l.operand[slots] = {w, -1, 64};
        l.constant[slots] = f == Field::kConstant;
      }
      ++slots;
    }
    if (f == Field::kLabel) l.label = {w, -1, 64};
    if (f == Field::kImmediate && l.immediate < 0) l.immediate = w;
    if (f == Field::kResult) l.result = {w, -1, 64};
  }
  return l;
}
namespace layout {
// fold: `a op const` / `a op local` on the top of stack, and both operands from the instruction
inline constexpr OperandLayout kRi = fixed_layout({Field::kConstant});
inline constexpr OperandLayout kRl = fixed_layout({Field::kSlot});
inline constexpr OperandLayout kLi = fixed_layout({Field::kSlot, Field::kConstant});
inline constexpr OperandLayout kLl = fixed_layout({Field::kSlot, Field::kSlot});
// fold: a load whose address is a local: [op, local, offset]
inline constexpr OperandLayout kLocalAddress = fixed_layout({Field::kSlot, Field::kImmediate});
// fuse: compare and branch on the top of stack, its second operand a constant
inline constexpr OperandLayout kBr = fixed_layout({Field::kLabel});
inline constexpr OperandLayout kRiBr = fixed_layout({Field::kConstant, Field::kLabel});
// the register IR's, made in place of its compares (rr, rk; i32.and of a constant and a branch,
// i32_and_k_br_if, is an rk), and its branch on a slot (br_if_r, br_unless_r: i32.eqz_r's)
inline constexpr OperandLayout kRrBr = fused_branch(register_layout(0, 2, 1, RegisterForm::r));
inline constexpr OperandLayout kRkBr = fused_branch(register_layout(0, 2, 1, RegisterForm::k));
inline constexpr OperandLayout kBrR = fused_branch(register_layout(0, 1, 1, RegisterForm::r));
// the register IR's branches that carry one value to their label's slot (the result), and a
// br_table_r target's landing that does (br_copy_r, land_copy_r; br_if_copy_r on a condition slot)
inline constexpr OperandLayout kBrCopy = fixed_layout({Field::kLabel, Field::kResult, Field::kSlot});
inline constexpr OperandLayout kBrIfCopy = fixed_layout({Field::kSlot, Field::kLabel, Field::kResult, Field::kSlot});
}  // namespace layout

}  // namespace dlab::wasm
