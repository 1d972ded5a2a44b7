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

// The counting engine checks a handler's length wherever kDeclaredWords has one: every register
// form the lowering can write, every fold and fuse form, and the first step of every
// superinstruction whose first op has a length.
TEST(OperandLayout, EveryWrittenFormHasItsLengthChecked) {
  size_t register_forms = 0;
  for (const SimpleOp& s : kSimpleOps)
    for (int f = 0; f < kRegisterForms; ++f) {
      const Op op = s.forms[f];
      if (op == Op::kCount) continue;
      const OperandLayout l = register_layout_of(s, static_cast<RegisterForm>(f));
      EXPECT_EQ(kDeclaredWords.of[static_cast<size_t>(op)], l.written ? l.words : 0) << kOpNames[static_cast<size_t>(op)];
      register_forms += l.written;
    }
  EXPECT_GT(register_forms, 1000u);
  size_t fold_fuse = 0;
  for (const FormsOf& e : kForms) {
    for (const FormLayout& l : kFormLayouts) {
      const Op op = e.forms.*l.form;
      if (op == Op::kCount) continue;
      EXPECT_EQ(kDeclaredWords.of[static_cast<size_t>(op)], l.layout->words) << kOpNames[static_cast<size_t>(op)];
      ++fold_fuse;
    }
    if (e.forms.a64 != Op::kCount) EXPECT_GT(kDeclaredWords.of[static_cast<size_t>(e.forms.a64)], 0);
  }
  EXPECT_GT(fold_fuse, 100u);
  size_t supers_checked = 0;
  for (const SuperOf& s : kSupers) {
    EXPECT_EQ(kDeclaredWords.of[static_cast<size_t>(s.op)], kDeclaredWords.of[static_cast<size_t>(s.first)]);
    supers_checked += kDeclaredWords.of[static_cast<size_t>(s.op)] != 0;
  }
  EXPECT_GT(supers_checked, 0u);
}

}  // namespace
}  // namespace dlab::wasm
