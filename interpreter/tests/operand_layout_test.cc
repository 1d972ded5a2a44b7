// The forms' layouts (engines/operand_layout.h): the words each register form is laid out in
// (golden), and that every form the lowering writes has its length declared, so the counting
// engine checks it at every dispatch (ops.h's kDeclaredWords; the ctests
// interpreter.spec_counting_stack / _register run the whole spec suite there).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engines/ops.h"

namespace dlab::wasm {
namespace {

// A layout as text: "op slot slot result", the fields in word order.
std::string words_of(const OperandLayout& l) {
  std::string out = "op";
  for (int w = 1; w < l.words; ++w) {
    switch (l.field[w]) {
      case Field::kImmediate: out += " imm"; break;
      case Field::kSlot: out += " slot"; break;
      case Field::kConstant: out += " const"; break;
      case Field::kAddend: out += " addend"; break;
      case Field::kResult: out += " result"; break;
      case Field::kLabel: out += " label"; break;
      case Field::kNone: out += " ?"; break;
    }
  }
  return out;
}

const SimpleOp& declared(Op op) {
  for (const SimpleOp& s : kSimpleOps)
    if (s.op == op) return s;
  throw std::logic_error("not a declared instruction");
}

TEST(OperandLayout, ABinopsFormsAreLaidOutAsDocumented) {
  const SimpleOp& add = declared(Op::i32_add);
  auto layout = [&](RegisterForm f) { return words_of(register_layout_of(add, f)); };
  EXPECT_EQ(layout(RegisterForm::r), "op slot slot result");
  EXPECT_EQ(layout(RegisterForm::k), "op slot const result");
  EXPECT_EQ(layout(RegisterForm::x), "op slot result");  // a from the accumulator
  EXPECT_EQ(layout(RegisterForm::xk), "op const result");
  EXPECT_EQ(layout(RegisterForm::y), "op slot result");  // b from the accumulator
  EXPECT_EQ(layout(RegisterForm::rn), "op slot slot");
  EXPECT_EQ(layout(RegisterForm::xkn), "op const");
  EXPECT_EQ(register_layout_of(add, RegisterForm::x).operand[0], -1);
  EXPECT_EQ(register_layout_of(add, RegisterForm::y).operand[1], -1);
  EXPECT_EQ(add.form(RegisterForm::a), Op::kCount);  // a binop has no address forms
}

TEST(OperandLayout, AMemoryInstructionsFormsCarryTheOffsetFirst) {
  const SimpleOp& load = declared(Op::i32_load);
  const SimpleOp& store = declared(Op::i32_store);
  EXPECT_EQ(words_of(register_layout_of(load, RegisterForm::r)), "op imm slot result");
  EXPECT_EQ(words_of(register_layout_of(load, RegisterForm::k)), "op imm const result");
  EXPECT_EQ(words_of(register_layout_of(load, RegisterForm::a)), "op imm slot addend result");
  EXPECT_EQ(words_of(register_layout_of(load, RegisterForm::ax)), "op imm addend result");
  EXPECT_EQ(words_of(register_layout_of(load, RegisterForm::axn)), "op imm addend");
  EXPECT_EQ(words_of(register_layout_of(store, RegisterForm::a)), "op imm slot addend slot");
  EXPECT_EQ(words_of(register_layout_of(store, RegisterForm::ax)), "op imm addend slot");
  EXPECT_EQ(words_of(register_layout_of(store, RegisterForm::y)), "op imm slot");
}

TEST(OperandLayout, FormsWithoutMeaningAreStubsTheLoweringNeverWrites) {
  EXPECT_FALSE(register_layout_of(declared(Op::i32_clz), RegisterForm::y).written);   // one operand
  EXPECT_FALSE(register_layout_of(declared(Op::i32_clz), RegisterForm::xk).written);
  EXPECT_FALSE(register_layout_of(declared(Op::i32_store), RegisterForm::rn).written);  // no result
  EXPECT_TRUE(unwritten_register_form(declared(Op::i32_store).form(RegisterForm::rn)));
  EXPECT_FALSE(unwritten_register_form(Op::i32_add_xk));
}

// The register IR's branches that carry a value: the offset, the label's slot, the value's slot.
TEST(OperandLayout, BranchesThatCarryAValueAreLaidOutAsDocumented) {
  EXPECT_EQ(words_of(layout::kBrCopy), "op label result slot");
  EXPECT_EQ(words_of(layout::kBrIfCopy), "op slot label result slot");
  EXPECT_EQ(kDeclaredWords.of[static_cast<size_t>(Op::br_if_copy_r)], 5);
}

// Each form's shape round-trips through the list (the lowering picks forms by shape).
TEST(OperandLayout, EveryFormIsFoundByItsShape) {
  for (int f = 0; f < kRegisterForms; ++f)
    EXPECT_EQ(static_cast<int>(form_of(shape_of(static_cast<RegisterForm>(f)))), f);
}

// Every form the lowering can write has a length the counting engine checks: none left at 0
// ("unchecked"), which a form added without its layout in ops.h's kDeclaredWords would be. (The
// lengths themselves: the golden layouts above and the hand-worked cases below.)
TEST(OperandLayout, EveryWrittenFormHasADeclaredLength) {
  size_t checked = 0;
  for (const SimpleOp& s : kSimpleOps)
    for (int f = 0; f < kRegisterForms; ++f) {
      const Op op = s.forms[f];
      if (op == Op::kCount || !register_layout_of(s, static_cast<RegisterForm>(f)).written) continue;
      EXPECT_GT(kDeclaredWords.of[static_cast<size_t>(op)], 0) << kOpNames[static_cast<size_t>(op)];
      ++checked;
    }
  for (const FormsOf& e : kForms)
    for (const FormLayout& l : kFormLayouts) {
      const Op op = e.forms.*l.form;
      if (op == Op::kCount) continue;
      EXPECT_GT(kDeclaredWords.of[static_cast<size_t>(op)], 0) << kOpNames[static_cast<size_t>(op)];
      ++checked;
    }
  EXPECT_GT(checked, 1000u);
}

// A register form's words worked out by hand from its definition ([op, immediates, operands, result];
// an operand from the accumulator takes no word, a K form's last operand is the constant itself, an
// A form's address is followed by its constant): the lengths the counting engine checks (through
// kDeclaredWords) and the handlers consume.
TEST(OperandLayout, RegisterFormLengthsAreTheirWordsWorkedOutByHand) {
  using F = RegisterForm;
  struct Case {
    const char* what;
    int immediates, pops, pushes;
    F form;
    int words;  // 0: a form the lowering never writes
  };
  const Case cases[] = {
      {"binop r: op, a, b, result", 0, 2, 1, F::r, 4},
      {"binop k: op, a, constant, result", 0, 2, 1, F::k, 4},
      {"binop x: op, b, result (a in the accumulator)", 0, 2, 1, F::x, 3},
      {"binop xk: op, constant, result", 0, 2, 1, F::xk, 3},
      {"binop y: op, a, result (b in the accumulator)", 0, 2, 1, F::y, 3},
      {"binop rn: op, a, b (result left in the accumulator)", 0, 2, 1, F::rn, 3},
      {"binop xn: op, b", 0, 2, 1, F::xn, 2},
      {"binop yn: op, a", 0, 2, 1, F::yn, 2},
      {"unop r: op, a, result", 0, 1, 1, F::r, 3},
      {"unop x: op, result", 0, 1, 1, F::x, 2},
      {"unop y: no second operand to take from the accumulator", 0, 1, 1, F::y, 0},
      {"load a: op, offset, address, its constant, result", 1, 1, 1, F::a, 5},
      {"load ax: op, offset, the address's constant, result", 1, 1, 1, F::ax, 4},
      {"load axn: op, offset, the address's constant", 1, 1, 1, F::axn, 3},
      {"store r: op, offset, address, value", 1, 2, 0, F::r, 4},
      {"store rn: nothing to leave unstored", 1, 2, 0, F::rn, 0},
  };
  for (const Case& c : cases) {
    const OperandLayout l = register_layout(c.immediates, c.pops, c.pushes, c.form);
    EXPECT_EQ(l.written, c.words != 0) << c.what;
    if (c.words) EXPECT_EQ(l.words, c.words) << c.what;
  }
  // Where each part is: the K form's constant is its last operand, after the immediates.
  const OperandLayout k = register_layout(1, 2, 1, F::k);
  EXPECT_EQ(k.immediate, 1);
  EXPECT_EQ(k.operand[0], 2);
  EXPECT_FALSE(k.constant[0]);
  EXPECT_EQ(k.operand[1], 3);
  EXPECT_TRUE(k.constant[1]);
  EXPECT_EQ(k.result, 4);
}

}  // namespace
}  // namespace dlab::wasm
