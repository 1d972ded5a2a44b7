// The words of every form the lowering writes in place of a declared instruction, as typed
// fields declared once (wasmi's for_each_op idea): the register forms' handlers read their
// operands at these positions (handlers.def's DLW_REGISTER_BODY), the lowering writes the words
// in this order (lower/register_ir.cc's write_register_form), and ops.h's kDeclaredWords gives
// the counting engine each form's length, which it checks at every dispatch. A form's layout is
// no longer arithmetic written twice, once in the handler and once in the lowering.
#pragma once

#include <cstdint>
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
};

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
  // Operand i's word (a slot, or the constant itself), or -1 where it comes from the accumulator
  // (or there is no such operand).
  int8_t operand[2] = {-1, -1};
  bool constant[2] = {false, false};
  int8_t addend = -1;  // the address's constant (A forms), or -1
  int8_t result = -1;  // the result slot's word, or -1 (no result, or not stored)
  int8_t label = -1;   // a branch offset's word, or -1
  int8_t immediate = -1;  // the first declared immediate's word, or -1
  // false: a form the lowering never writes (an accumulator form of an operand the instruction
  // does not have, an unstored form of an instruction without a result): a stub that traps.
  bool written = true;
  constexpr int8_t add(Field f) {
    field[words] = f;
    return static_cast<int8_t>(words++);
  }
};

// A register form's words: [op, immediates, operands (the address's constant right after the
// address), result]: an operand from the accumulator takes no word, the last operand of a K form
// is the constant itself.
constexpr OperandLayout register_layout(int immediates, int pops, int pushes, RegisterForm form) {
  const RegisterFormShape s = shape_of(form);
  OperandLayout l;
  l.written = !((s.from_acc != 0 && pops == 0) || (s.from_acc == 2 && pops < 2) || (s.from_acc == 1 && s.constant && pops < 2) ||
                (!s.stored && pushes == 0));
  for (int i = 0; i < immediates; ++i) {
    const int8_t w = l.add(Field::kImmediate);
    if (i == 0) l.immediate = w;
  }
  for (int i = 0; i < pops && i < 2; ++i) {
    if (s.from_acc != i + 1) {
      l.constant[i] = s.constant && i == pops - 1;
      l.operand[i] = l.add(l.constant[i] ? Field::kConstant : Field::kSlot);
    }
    if (i == 0 && s.address) l.addend = l.add(Field::kAddend);
  }
  if (pushes == 1 && s.stored) l.result = l.add(Field::kResult);
  return l;
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
        l.operand[slots] = w;
        l.constant[slots] = f == Field::kConstant;
      }
      ++slots;
    }
    if (f == Field::kLabel) l.label = w;
    if (f == Field::kImmediate && l.immediate < 0) l.immediate = w;
    if (f == Field::kResult) l.result = w;
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
// fuse: compare and branch on the top of stack, its second operand a constant, or both from slots
// (the register IR's: rr, rk; i32.and of a constant and a branch, i32_and_k_br_if, is an rk)
inline constexpr OperandLayout kBr = fixed_layout({Field::kLabel});
inline constexpr OperandLayout kRiBr = fixed_layout({Field::kConstant, Field::kLabel});
inline constexpr OperandLayout kRrBr = fixed_layout({Field::kSlot, Field::kSlot, Field::kLabel});
inline constexpr OperandLayout kRkBr = fixed_layout({Field::kSlot, Field::kConstant, Field::kLabel});
// the register IR's branch on a slot (br_if_r, br_unless_r)
inline constexpr OperandLayout kBrR = fixed_layout({Field::kSlot, Field::kLabel});
// the register IR's branches that carry one value to their label's slot (the result), and a
// br_table_r target's landing that does (br_copy_r, land_copy_r; br_if_copy_r on a condition slot)
inline constexpr OperandLayout kBrCopy = fixed_layout({Field::kLabel, Field::kResult, Field::kSlot});
inline constexpr OperandLayout kBrIfCopy = fixed_layout({Field::kSlot, Field::kLabel, Field::kResult, Field::kSlot});
// a branch that makes two copies on its way (br_copy2_r: [offset, to, from, to, from], in order;
// its result is the second copy's `to`, its operands the two `from`s; the handler reads the words)
inline constexpr OperandLayout kBrCopy2 = fixed_layout({Field::kLabel, Field::kResult, Field::kSlot, Field::kResult, Field::kSlot});
}  // namespace layout

}  // namespace dlab::wasm
