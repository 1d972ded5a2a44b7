// The register IR (runtime.h's Ir, src/lower/register_ir.cc): what it writes (the counting
// engine, where an op word is the op's number), that a pending local.get reads the value from
// before a later local.set of that local, and which placements refuse it. Every engine's results
// under it are checked by lowering_test.cc's agreement test and the spec suite (ctest's
// spec_<engine>_register).
#include <bit>
#include <cmath>
#include <deque>
#include <limits>

#include <gtest/gtest.h>

#include "dispatchlab/interpreter/runtime.h"
#include "engines/ops.h"
#include "wat.h"

namespace dlab::wasm {
namespace {

using test_support::assemble;

constexpr uint64_t W(Op op) { return static_cast<uint64_t>(op); }

Lowering register_ir(Lowering l = {}) {
  l.ir = Ir::kRegister;
  return l;
}

std::vector<uint64_t> words_of(const std::string& wat, Lowering l = register_ir()) {
  static std::deque<Runtime> runtimes;  // instances live as long as their runtime
  // The counting engine: its op words are op numbers, and it has the register forms in every build
  // (a default build leaves them out of the switch engines).
  Runtime& rt = runtimes.emplace_back(EngineConfig{Dispatch::kSwitch});
  rt.set_lazy_lowering(false);  // the code is read after instantiation
  rt.enable_profile();
  rt.set_lowering(l);
  return rt.instantiate(assemble(wat)).exports.at("f").func->code;
}

TEST(RegisterIrTest, OperandsComeFromTheirSlotsAndTheResultGoesStraightIntoTheLocal) {
  // (param 0 1) (local 2): local 2 = local 0 + local 1; return local 2 * 3
  const char* wat = R"((module (func (export "f") (param i32 i32) (result i32) (local i32)
    (local.set 2 (i32.add (local.get 0) (local.get 1)))
    (i32.mul (local.get 2) (i32.const 3)))))";
  Lowering no_acc = register_ir();
  no_acc.acc = false;
  EXPECT_EQ(words_of(wat, no_acc), (std::vector<uint64_t>{W(Op::i32_add_r), 0, 1, 2, W(Op::i32_mul_k), 2, 3, 3, W(Op::return_r1), 3}));
  // acc: the local the add just wrote is also in the accumulator, where the multiply reads it.
  EXPECT_EQ(words_of(wat), (std::vector<uint64_t>{W(Op::i32_add_r), 0, 1, 2, W(Op::i32_mul_xk), 3, 3, W(Op::return_r1), 3}));
}

TEST(RegisterIrTest, EachTechniqueIsHonouredPlainFoldsAndFusesNothing) {
  const char* add = R"((module (func (export "f") (param i32 i32) (result i32) (local i32)
    (local.set 2 (i32.add (local.get 0) (local.get 1)))
    (i32.mul (local.get 2) (i32.const 3)))))";
  // plain: every value copied to its own slot (3, 4, then 3 again), every local.set a copy.
  EXPECT_EQ(words_of(add, register_ir(Lowering::none())),
            (std::vector<uint64_t>{W(Op::copy_r), 3, 0, W(Op::copy_r), 4, 1, W(Op::i32_add_r), 3, 4, 3, W(Op::copy_r), 2, 3,
                                   W(Op::copy_r), 3, 2, W(Op::const_r), 4, 3, W(Op::i32_mul_r), 3, 4, 3, W(Op::return_r1), 3}));
  const char* loop = R"((module (func (export "f") (param i32) (result i32) (local i32)
    (loop $l (br_if $l (i32.lt_u (local.get 1) (local.get 0)))) (local.get 1))))";
  Lowering fold = Lowering::none();
  fold.fold = true;
  auto fold_only = words_of(loop, register_ir(fold));
  // fold without fuse: the compare writes its slot, br_if_r tests it.
  EXPECT_EQ(fold_only, (std::vector<uint64_t>{W(Op::i32_lt_u_r), 1, 0, 2, W(Op::br_if_r), 2, static_cast<uint64_t>(-4),
                                              W(Op::return_r1), 1}));
  Lowering fuse = fold;
  fuse.fuse = true;
  EXPECT_EQ(words_of(loop, register_ir(fuse))[0], W(Op::i32_lt_u_rr_br_if));
}

TEST(RegisterIrTest, ACompareBeforeABranchBecomesOneInstruction) {
  auto words = words_of(R"((module (func (export "f") (param i32) (result i32) (local i32)
    (loop $l
      (local.set 1 (i32.add (local.get 1) (i32.const 1)))
      (br_if $l (i32.lt_u (local.get 1) (local.get 0))))
    (local.get 1))))");
  // i32.add_k 1 1 -> 1; i32.lt_u_rr_br_if 1 0 (back to the add); return_r1 1
  ASSERT_EQ(words.size(), 10u);
  EXPECT_EQ(words[0], W(Op::i32_add_k));
  EXPECT_EQ(words[3], 1u);  // the result slot: local 1 itself
  EXPECT_EQ(words[4], W(Op::i32_lt_u_rr_br_if));
  EXPECT_EQ(static_cast<int64_t>(words[7]), -4);
  EXPECT_EQ(words[8], W(Op::return_r1));
}

// `cmp; i32.eqz; br_if` loses the eqz, the branch's sense flipped, and the compare fuses with the
// branch: `if (!(x & 4))` is `i32.and 4; i32.eqz; if`. A float compare is not fused (fusing it
// measured nothing on mandel or biquad once float results stay in their accumulator, and cost
// 220 KB of handlers): with a NaN operand every float compare is false, so `f` and `g` answer
// differently, in every engine with the register IR and in the stack IR.
TEST(RegisterIrTest, AnEqzBetweenACompareAndItsBranchGoesAndTheBranchFlips) {
  auto flag = words_of(R"((module (func (export "f") (param i32) (result i32)
      (if (i32.eqz (i32.and (local.get 0) (i32.const 4))) (then (return (i32.const 1))))
      (i32.const 0))))");
  EXPECT_EQ(flag[0], W(Op::i32_and_k_br_if));  // no i32_eqz_r: branch over the then when the bit is set
  const char* wat = R"((module
    (func (export "f") (param f64) (result i32)
      (if (f64.lt (local.get 0) (f64.const 4)) (then (return (i32.const 1))))
      (i32.const 0))
    (func (export "g") (param f64) (result i32)
      (if (i32.eqz (f64.lt (local.get 0) (f64.const 4))) (then (return (i32.const 1))))
      (i32.const 0))))";
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (Ir ir : irs())
    for (Dispatch d : dispatch_modes()) {
      if (!ir_unavailable(ir, d, Placement::kSp).empty() || !engine_unavailable(d, Placement::kSp).empty()) continue;
      SCOPED_TRACE(std::string(dispatch_name(d)) + " " + ir_name(ir));
      Runtime rt(EngineConfig{d});
      Lowering l;
      l.ir = ir;
      rt.set_lowering(l);
      Instance& inst = rt.instantiate(assemble(wat));
      for (auto [x, lt] : {std::pair{1.0, 1u}, {5.0, 0u}, {nan, 0u}}) {
        EXPECT_EQ(rt.invoke(inst.exports.at("f").func, {Value{ValType::kF64, std::bit_cast<uint64_t>(x), 0}})[0].lo, lt) << x;
        EXPECT_EQ(rt.invoke(inst.exports.at("g").func, {Value{ValType::kF64, std::bit_cast<uint64_t>(x), 0}})[0].lo, 1u - lt) << x;
      }
    }
}

// Float results go to the accumulator of their type (placement.h: acc_f64, acc_f32), an integer's
// to acc: a chain that converts between all three (demote, promote, reinterpret) reads each
// operand from the right one, in every engine with the register IR, with and without acc, and
// answers what C++ computes.
TEST(RegisterIrTest, FloatResultsGoToTheAccumulatorOfTheirType) {
  const char* wat = R"((module (func (export "f") (param f64 f32 i64) (result f64)
    (f64.add
      (f64.promote_f32 (f32.mul (f32.demote_f64 (f64.mul (local.get 0) (local.get 0))) (local.get 1)))
      (f64.reinterpret_i64 (i64.add (i64.reinterpret_f64 (f64.sqrt (local.get 0))) (local.get 2)))))))";
  auto words = words_of(wat);
  // f64_mul_rn [op, a, b]: its result in acc_f64 only; the demote reads it there and leaves an f32
  // in acc_f32 only, for the multiply after it
  EXPECT_EQ(words[0], W(Op::f64_mul_rn));
  EXPECT_EQ(words[3], W(Op::f32_demote_f64_xn));
  EXPECT_EQ(words[4], W(Op::f32_mul_xn));
  const double x = 1.7;
  const float y = 2.5f;
  const int64_t z = 3;
  const double want = static_cast<double>(static_cast<float>(x * x) * y) +
                      std::bit_cast<double>(std::bit_cast<int64_t>(std::sqrt(x)) + z);
  Lowering no_acc = register_ir();
  no_acc.acc = false;
  for (Lowering l : {register_ir(), no_acc})
    for (Dispatch d : dispatch_modes()) {
      if (!ir_unavailable(Ir::kRegister, d, Placement::kSp).empty()) continue;
      SCOPED_TRACE(std::string(dispatch_name(d)) + (l.acc ? " acc" : " no acc"));
      Runtime rt(EngineConfig{d});
      rt.set_lowering(l);
      Instance& inst = rt.instantiate(assemble(wat));
      const std::vector<Value> args = {Value{ValType::kF64, std::bit_cast<uint64_t>(x), 0},
                                       Value{ValType::kF32, std::bit_cast<uint32_t>(y), 0}, Value::i64(static_cast<uint64_t>(z))};
      EXPECT_EQ(rt.invoke(inst.exports.at("f").func, args)[0].lo, std::bit_cast<uint64_t>(want));
    }
}

TEST(RegisterIrTest, APendingLocalGetReadsTheValueBeforeALaterSet) {
  // local.get 0 is pending when local.set 0 runs: it must still subtract the old value.
  const char* wat = R"((module (func (export "f") (param i32 i32) (result i32)
    (local.get 0) (local.set 0 (local.get 1)) (local.get 0) (i32.sub))))";
  for (Dispatch d : dispatch_modes()) {
    if (!ir_unavailable(Ir::kRegister, d, Placement::kSp).empty()) continue;  // not compiled into this build's engine
    SCOPED_TRACE(dispatch_name(d));
    Runtime rt(EngineConfig{d});
    rt.set_lazy_lowering(false);  // the code is read after instantiation
    rt.set_lowering(register_ir());
    Instance& inst = rt.instantiate(assemble(wat));
    EXPECT_EQ(rt.invoke(inst.exports.at("f").func, {Value::i32(5), Value::i32(3)})[0].lo, 2u);
  }
}

TEST(RegisterIrTest, StackFormInstructionsGetTheStackPointerWhereTheyExpectIt) {
  // A call after register instructions: the arguments in their slots, the stack pointer put above
  // them by the call itself (call_at).
  const char* wat = R"((module
    (func $g (param i32 i32) (result i32) (i32.sub (local.get 0) (local.get 1)))
    (func (export "f") (param i32) (result i32) (local i32)
      (local.set 1 (i32.mul (local.get 0) (i32.const 2)))
      (call $g (local.get 1) (i32.const 1)))))";
  Runtime rt(EngineConfig{Dispatch::kTail});
  rt.set_lazy_lowering(false);  // the code is read after instantiation
  rt.set_lowering(register_ir());
  Instance& inst = rt.instantiate(assemble(wat));
  EXPECT_EQ(rt.invoke(inst.exports.at("f").func, {Value::i32(21)})[0].lo, 41u);
  bool synced = false;
  for (uint64_t w : words_of(wat)) synced |= w == W(Op::call_at);
  EXPECT_TRUE(synced);
}

TEST(RegisterIrTest, SuperPairsRegisterFormsAndTheSecondsWordsStayInPlace) {
  // Two loads into locals: i32_load_r, i32_load_r, a SUPER_R of superinstructions.def (chosen
  // from sqlite's register-IR profile), written over the first load's op word with `super` only.
  const char* wat = R"((module (memory 1) (data (i32.const 0) "\05\00\00\00\07\00\00\00")
    (func (export "f") (param i32) (result i32) (local i32 i32)
      (local.set 1 (i32.load (local.get 0)))
      (local.set 2 (i32.load offset=4 (local.get 0)))
      (i32.sub (local.get 2) (local.get 1)))))";
  Lowering no_super = register_ir();
  no_super.super = false;
  auto unpaired = words_of(wat, no_super), paired = words_of(wat);
  ASSERT_EQ(unpaired.size(), paired.size());
  ASSERT_EQ(unpaired[0], W(Op::i32_load_r));
  EXPECT_EQ(paired[0], W(Op::i32_load_r__i32_load_r));
  EXPECT_EQ(std::vector<uint64_t>(paired.begin() + 1, paired.end()), std::vector<uint64_t>(unpaired.begin() + 1, unpaired.end()));
  // And it runs: the first load's result stored, the second's words read, in every engine with the
  // register forms.
  for (Dispatch d : dispatch_modes()) {
    if (!ir_unavailable(Ir::kRegister, d, Placement::kSp).empty()) continue;
    SCOPED_TRACE(dispatch_name(d));
    Runtime rt(EngineConfig{d});
    rt.set_lazy_lowering(false);  // the code is read after instantiation
    rt.set_lowering(register_ir());
    Instance& inst = rt.instantiate(assemble(wat));
    EXPECT_EQ(rt.invoke(inst.exports.at("f").func, {Value::i32(0)})[0].lo, 2u);
  }
}

// The accumulator's programs (the acc and elide tests): ((p0 + p1) ^ 7) - (p1 - (p0 + 1)), the
// xor's a and both subs' b in the accumulator (slots 0, 1 the parameters; 2 the xor's result, 3 the
// pending local.get 1, 4 the inner add's result); and a loop whose compare fuses with its branch,
// then an address add folded into a load.
constexpr const char* kAccExpression = R"((module (func (export "f") (param i32 i32) (result i32)
    (i32.sub (i32.xor (i32.add (local.get 0) (local.get 1)) (i32.const 7))
             (i32.sub (local.get 1) (i32.add (local.get 0) (i32.const 1)))))))";
constexpr const char* kAccLoop = R"((module (memory 1) (data (i32.const 16) "\2a")
    (func (export "f") (param i32) (result i32) (local i32)
      (loop $l
        (local.set 1 (i32.add (local.get 1) (i32.const 1)))
        (br_if $l (i32.lt_u (i32.mul (local.get 1) (i32.const 2)) (local.get 0))))
      (i32.load8_u (i32.add (i32.mul (local.get 0) (i32.const 0)) (i32.const 16))))))";

// Both programs give their results under each lowering, in every engine with the register forms.
void expect_accumulator_programs_agree(std::initializer_list<Lowering> lowerings) {
  for (Dispatch d : dispatch_modes()) {
    if (!ir_unavailable(Ir::kRegister, d, Placement::kSp).empty()) continue;
    SCOPED_TRACE(dispatch_name(d));
    for (Lowering l : lowerings) {
      Runtime rt(EngineConfig{d});
      rt.set_lazy_lowering(false);  // the code is read after instantiation
      rt.set_lowering(l);
      Instance& inst = rt.instantiate(assemble(kAccExpression));
      EXPECT_EQ(rt.invoke(inst.exports.at("f").func, {Value::i32(5), Value::i32(9)})[0].lo, static_cast<uint32_t>(((5 + 9) ^ 7) - (9 - 6)));
      Instance& looped = rt.instantiate(assemble(kAccLoop));
      EXPECT_EQ(rt.invoke(looped.exports.at("f").func, {Value::i32(10)})[0].lo, 0x2au);
    }
  }
}

// acc: an operand the instruction just before computed comes from the accumulator (the x / y
// forms: the first operand, with the second from a slot or the immediate; or the second); its
// producer still stores it, so a form that has to read slots is turned back into its slot form.
TEST(RegisterIrTest, AnOperandJustComputedComesFromTheAccumulator) {
  const char* wat = kAccExpression;
  Lowering no_elide = register_ir();
  no_elide.elide = false;
  no_elide.super = false;  // the words as written, before a pair of them becomes a superinstruction
  EXPECT_EQ(words_of(wat, no_elide), (std::vector<uint64_t>{W(Op::i32_add_r), 0, 1, 2, W(Op::i32_xor_xk), 7, 2, W(Op::i32_add_k), 0, 1, 4,
                                                            W(Op::i32_sub_y), 1, 3, W(Op::i32_sub_y), 2, 2, W(Op::return_r1), 2}));
  Lowering no_acc = register_ir();
  no_acc.acc = false;
  no_acc.super = false;
  EXPECT_EQ(words_of(wat, no_acc), (std::vector<uint64_t>{W(Op::i32_add_r), 0, 1, 2, W(Op::i32_xor_k), 2, 7, 2, W(Op::i32_add_k), 0, 1, 4,
                                                          W(Op::i32_sub_r), 1, 4, 3, W(Op::i32_sub_r), 2, 3, 2, W(Op::return_r1), 2}));
  // A compare before a branch reads its operand from the slot again (the fused form reads slots),
  // and an address add that took its operand from the accumulator still folds into the load, which
  // takes it from there (_ax: [op, offset, constant, result]).
  auto words = words_of(kAccLoop, no_elide);
  // (the multiply reads local 1 from the accumulator too: the add before it wrote it there)
  EXPECT_EQ(std::vector<uint64_t>(words.begin() + 4, words.begin() + 11),
            (std::vector<uint64_t>{W(Op::i32_mul_xk), 2, 2, W(Op::i32_lt_u_rr_br_if), 2, 0, static_cast<uint64_t>(-7)}));
  EXPECT_EQ(std::vector<uint64_t>(words.begin() + 11, words.end()),
            (std::vector<uint64_t>{W(Op::i32_mul_k), 0, 0, 2, W(Op::i32_load8_u_ax), 0, 16, 2, W(Op::return_r1), 2}));
  // And the results agree with and without it, in every engine with the register forms.
  expect_accumulator_programs_agree({register_ir(), no_elide, no_acc});
}

// elide: a result that is an operand-stack value, read from the accumulator by the next
// instruction (its only reader), is not stored: its producer becomes its _n form, one word shorter.
// A local's value is stored (it is read again), and so is an operand of a compare, which a branch
// after it fuses into a form that reads slots.
TEST(RegisterIrTest, AResultOnlyTheNextInstructionReadsIsNotStored) {
  // The same expression as above: the first add's result is read by the xor alone, the inner
  // add's by the inner sub, the inner sub's by the outer sub; the xor's is read two instructions
  // later (from its slot, 2) and the outer sub's by the return. (Without super: a pair of these
  // may be a superinstruction, whose first op word is its own.)
  Lowering no_super = register_ir();
  no_super.super = false;
  EXPECT_EQ(words_of(kAccExpression, no_super), (std::vector<uint64_t>{W(Op::i32_add_rn), 0, 1, W(Op::i32_xor_xk), 7, 2, W(Op::i32_add_kn), 0, 1,
                                                  W(Op::i32_sub_yn), 1, W(Op::i32_sub_y), 2, 2, W(Op::return_r1), 2}));
  // A local written by the add is stored though the multiply reads it from the accumulator.
  const char* local = R"((module (func (export "f") (param i32 i32) (result i32) (local i32)
    (local.set 2 (i32.add (local.get 0) (local.get 1)))
    (i32.mul (local.get 2) (i32.const 3)))))";
  EXPECT_EQ(words_of(local), (std::vector<uint64_t>{W(Op::i32_add_r), 0, 1, 2, W(Op::i32_mul_xk), 3, 3, W(Op::return_r1), 3}));
  // The multiply's result is the compare's operand, and the compare fuses with the branch: stored.
  // After the loop, the multiply's result is read by the address add alone, which folds into the
  // load: the load takes it from the accumulator (_ax), and the multiply stores nothing.
  EXPECT_EQ(words_of(kAccLoop), (std::vector<uint64_t>{W(Op::i32_add_k), 1, 1, 1, W(Op::i32_mul_xk), 2, 2, W(Op::i32_lt_u_rr_br_if), 2, 0,
                                                   static_cast<uint64_t>(-7), W(Op::i32_mul_kn), 0, 0, W(Op::i32_load8_u_ax), 0, 16, 2,
                                                   W(Op::return_r1), 2}));
  // The add's result is read by a compare, which a branch after it could still fuse: stored. The
  // compare's, read by the and alone, is not.
  const char* compare = R"((module (func (export "f") (param i32 i32) (result i32)
    (i32.and (i32.lt_u (i32.add (local.get 0) (local.get 1)) (i32.const 9)) (local.get 1)))))";
  EXPECT_EQ(words_of(compare), (std::vector<uint64_t>{W(Op::i32_add_r), 0, 1, 2, W(Op::i32_lt_u_xkn), 9, W(Op::i32_and_x), 1, 2,
                                                      W(Op::return_r1), 2}));
  // The same results with and without it, in every engine with the register forms.
  Lowering no_elide = register_ir();
  no_elide.elide = false;
  expect_accumulator_programs_agree({register_ir(), no_elide});
  for (Dispatch d : dispatch_modes()) {
    if (!ir_unavailable(Ir::kRegister, d, Placement::kSp).empty()) continue;
    SCOPED_TRACE(dispatch_name(d));
    for (Lowering l : {register_ir(), no_elide}) {
      Runtime rt(EngineConfig{d});
      rt.set_lazy_lowering(false);  // the code is read after instantiation
      rt.set_lowering(l);
      Instance& compared = rt.instantiate(assemble(compare));
      EXPECT_EQ(rt.invoke(compared.exports.at("f").func, {Value::i32(2), Value::i32(3)})[0].lo, 1u);
      EXPECT_EQ(rt.invoke(compared.exports.at("f").func, {Value::i32(7), Value::i32(3)})[0].lo, 0u);
    }
  }
}

// Branches that carry one value to their label, over values they drop, and returns of several
// results, in register form: br_copy_r / br_if_copy_r copy the value from its slot (or its
// local's) to the label's slot instead of moving the stack top (sp_at, br_drop); return_rn reads
// every result before writing any (a result may come from a slot another goes to: a swap).
TEST(RegisterIrTest, BranchesCarryAValueAndReturnsOfAnyArity) {
  const char* wat = R"((module
    (func (export "pick") (param i32 i32) (result i32)
      (i32.add
        (i32.mul (i32.const 2) (block $b (result i32) (i32.add (i32.const 5) (br_if $b (local.get 1) (local.get 0)))))
        (block $c (result i32) (i32.add (i32.const 9) (br $c (i32.const 40))))))
    (func (export "count") (param i32) (result i32) (local i32)
      (i32.const 0)
      (loop $l (param i32) (result i32)
        (i32.const 3) (i32.add) (local.set 1)
        (i32.const 1000) (local.get 1)
        (local.tee 0 (i32.sub (local.get 0) (i32.const 1)))
        (br_if $l)
        (i32.add)))
    (func $swap (param i32 i32) (result i32 i32) (local.get 1) (local.get 0) (return))
    (func $three (result i32 i32 i32) (i32.const 1) (i32.const 2) (i32.const 3) (return))
    (func (export "swapped") (param i32 i32) (result i32) (i32.sub (call $swap (local.get 0) (local.get 1))))
    (func (export "three") (result i32) (call $three) (i32.sub) (i32.sub))
    (func (export "table") (param i32 i32) (result i32)
      (block $a (result i32)
        (i32.mul (block $b (result i32) (i32.add (i32.const 500) (br_table $a $b $a (local.get 1) (local.get 0))))
                 (i32.const 10))))
    (func (export "pair") (param i32 i32 i32) (result i32)
      (i32.sub (block $a (result i32 i32) (br_table $a $a (local.get 0) (local.get 1) (local.get 2)))))))";
  {
    Runtime rt(EngineConfig{Dispatch::kSwitch});
    rt.set_lazy_lowering(false);  // the code is read after instantiation
    rt.enable_profile();
    rt.set_lowering(register_ir());
    rt.record_instruction_starts(true);  // op words read at instructions' starts only, not operands
    Instance& inst = rt.instantiate(assemble(wat));
    auto has = [&](const char* name, Op op) {
      const FuncInst* f = inst.exports.at(name).func;
      for (uint32_t at : f->instruction_starts)
        if (f->code.at(at) == W(op)) return true;
      return false;
    };
    EXPECT_TRUE(has("pick", Op::br_if_copy_r));
    EXPECT_TRUE(has("pick", Op::br_copy_r));
    EXPECT_TRUE(has("count", Op::br_if_copy_r));
    EXPECT_TRUE(has("table", Op::br_table_r));
    EXPECT_TRUE(has("table", Op::land_copy_r));
    EXPECT_FALSE(has("table", Op::br_table));
    // two values carried, none dropped: already at the label's height once materialised
    EXPECT_TRUE(has("pair", Op::br_table_r));
    EXPECT_FALSE(has("pair", Op::br_table));
    EXPECT_FALSE(has("pick", Op::br_if_drop));
    EXPECT_FALSE(has("pick", Op::br_drop));
    EXPECT_FALSE(has("count", Op::br_if_drop));
    // the callees, through the caller's code: its call word names them
    const FuncInst* swap = inst.funcs.at(2);
    EXPECT_EQ(swap->code.front(), W(Op::return_rn));
    EXPECT_EQ(std::vector<uint64_t>(swap->code.begin(), swap->code.begin() + 4), (std::vector<uint64_t>{W(Op::return_rn), 2, 1, 0}));
  }
  // pick(1, 3): b carries 3, 2 * 3 + 40; pick(0, 3): 2 * (5 + 3) + 40; count(4): 3 four times,
  // then 1000 + 12; swap(10, 3) = (3, 10), 3 - 10; 1 - (2 - 3); the table's cases.
  for (Dispatch d : dispatch_modes()) {
    if (!ir_unavailable(Ir::kRegister, d, Placement::kSp).empty()) continue;
    SCOPED_TRACE(dispatch_name(d));
    for (Lowering l : {register_ir(), register_ir(Lowering::none()), Lowering{}}) {
      Runtime rt(EngineConfig{d});
      rt.set_lazy_lowering(false);  // the code is read after instantiation
      rt.set_lowering(l);
      Instance& inst = rt.instantiate(assemble(wat));
      auto call = [&](const char* name, std::vector<Value> args) { return rt.invoke(inst.exports.at(name).func, args)[0].lo; };
      EXPECT_EQ(call("pick", {Value::i32(1), Value::i32(3)}), 46u);
      EXPECT_EQ(call("pick", {Value::i32(0), Value::i32(3)}), 56u);
      EXPECT_EQ(call("count", {Value::i32(4)}), 1012u);
      EXPECT_EQ(call("swapped", {Value::i32(10), Value::i32(3)}), static_cast<uint32_t>(-7));
      EXPECT_EQ(call("three", {}), 2u);
      // br_table carries local 1 to $a (index 0, and the default) or to $b, whose result is multiplied
      EXPECT_EQ(call("table", {Value::i32(0), Value::i32(7)}), 7u);
      EXPECT_EQ(call("table", {Value::i32(1), Value::i32(7)}), 70u);
      EXPECT_EQ(call("table", {Value::i32(5), Value::i32(7)}), 7u);
      EXPECT_EQ(call("pair", {Value::i32(50), Value::i32(8), Value::i32(1)}), 42u);
    }
  }
}

// fuse: an unconditional branch makes the copies beside it itself (register_ir.cc's
// register_jump): the copies written just before it, and on a loop's back edge the copy the loop
// begins with, landing after it; in their order (fib's two copies swapped would give the wrong sum).
TEST(RegisterIrTest, AJumpMakesTheCopiesBesideIt) {
  const char* wat = R"((module
    (func (export "sum") (param i32) (result i32) (local i32 i32 i32)
      (loop $l
        (local.set 3 (local.get 0))
        (local.set 2 (i32.add (local.get 2) (local.get 3)))
        (local.set 1 (i32.sub (local.get 0) (i32.const 1)))
        (if (local.get 3) (then (local.set 0 (local.get 1)) (br $l))))
      (local.get 2))
    (func (export "fib") (param i32) (result i32) (local i32 i32 i32)
      (local.set 2 (i32.const 1))
      (block $out
        (loop $l
          (br_if $out (i32.eqz (local.get 0)))
          (local.set 0 (i32.sub (local.get 0) (i32.const 1)))
          (local.set 3 (i32.add (local.get 1) (local.get 2)))
          (local.set 1 (local.get 2))
          (local.set 2 (local.get 3))
          (br $l)))
      (local.get 1))
    (func (export "nest") (param i32) (result i32) (local i32 i32)
      (loop $o
        (loop $i
          (local.set 1 (local.get 0))
          (local.set 2 (i32.add (local.get 2) (local.get 1)))
          (local.set 0 (i32.sub (local.get 0) (i32.const 1)))
          (br_if $i (i32.and (local.get 0) (i32.const 1)))
          (if (local.get 0) (then (br $o)))))
      (local.get 2))
    (func (export "clear") (param i32) (result i32) (local i32 i32)
      (loop $l
        (block $b
          (local.set 1 (local.get 0))
          (br $b))
        (local.set 2 (i32.add (local.get 2) (local.get 1)))
        (local.set 0 (i32.sub (local.get 0) (i32.const 1)))
        (if (local.get 0) (then (br $l))))
      (local.get 2))))";
  {
    Runtime rt(EngineConfig{Dispatch::kSwitch});
    rt.set_lazy_lowering(false);  // the code is read after instantiation
    rt.enable_profile();
    Lowering no_super = register_ir();
    no_super.super = false;  // the op words as written, before pairs of them become superinstructions
    rt.set_lowering(no_super);
    rt.record_instruction_starts(true);  // op words read at instructions' starts only, not operands
    Instance& inst = rt.instantiate(assemble(wat));
    // The words of the first instruction of `op` in `name` (from its op word on), or none.
    auto find = [&](const char* name, Op op) -> std::vector<uint64_t> {
      const FuncInst* f = inst.exports.at(name).func;
      for (uint32_t at : f->instruction_starts)
        if (f->code.at(at) == W(op)) {
          const size_t words = kDeclaredWords.of[static_cast<size_t>(op)];  // 0: not declared (br, copy_r)
          std::vector<uint64_t> w(f->code.begin() + at, f->code.begin() + at + std::max<size_t>(words, 1));
          if (op == Op::br_copy_r || op == Op::br_copy2_r) w[1] += at;  // the offset, made the target
          return w;
        }
      return {};
    };
    // sum: the copy to local 0, then the loop's first copy (local 3 from local 0), landing after it
    EXPECT_EQ(find("sum", Op::br_copy2_r), (std::vector<uint64_t>{W(Op::br_copy2_r), 3, 0, 1, 3, 0}));
    EXPECT_TRUE(find("sum", Op::br).empty());
    EXPECT_FALSE(find("sum", Op::copy_r).empty());  // the loop's first copy stays, for its entry
    // fib: two copies before the branch (the loop begins with a branch out), local 1 first
    std::vector<uint64_t> fib = find("fib", Op::br_copy2_r);
    ASSERT_EQ(fib.size(), 6u);
    EXPECT_EQ(std::vector<uint64_t>(fib.begin() + 2, fib.end()), (std::vector<uint64_t>{1, 2, 2, 3}));
    EXPECT_TRUE(find("fib", Op::copy_r).empty());
    // nest: both loops begin with the copy; the outer one's back edge makes it and lands after it
    EXPECT_EQ(find("nest", Op::br_copy_r), (std::vector<uint64_t>{W(Op::br_copy_r), 3, 1, 0}));
    // clear: the loop's first copy is the one the branch out of the block makes (br_copy_r at the
    // loop's start, landing after the block), so the back edge lands at the loop's start, a plain br.
    EXPECT_EQ(find("clear", Op::br_copy_r), (std::vector<uint64_t>{W(Op::br_copy_r), 4, 1, 0}));
    EXPECT_EQ(inst.exports.at("clear").func->code.at(0), W(Op::br_copy_r));
    std::vector<uint64_t> back = find("clear", Op::br);
    ASSERT_EQ(back.size(), 1u);
  }
  {
    // With super: the loop's first copy may begin a superinstruction, whose op word is at the loop's
    // start; the back edge still lands after the copy, on the second's own op word.
    Runtime rt(EngineConfig{Dispatch::kSwitch});
    rt.set_lazy_lowering(false);
    rt.enable_profile();
    rt.set_lowering(register_ir());
    Instance& inst = rt.instantiate(assemble(wat));
    const std::vector<uint64_t>& code = inst.exports.at("sum").func->code;
    bool begins_a_super = false;
    for (const SuperOf& s : kSupers) begins_a_super |= code.at(0) == W(s.op) && s.first == Op::copy_r;
    if (code.at(0) != W(Op::copy_r)) {
      EXPECT_TRUE(begins_a_super);
      EXPECT_EQ(code.at(3), W(Op::i32_add_r));  // the pair's second, where the back edge lands
    }
  }
  // sum(4) = 4 + 3 + 2 + 1 + 0, fib(10) = 55, nest(5) = clear(5) = 5 + 4 + 3 + 2 + 1, in every engine
  for (Dispatch d : dispatch_modes()) {
    if (!ir_unavailable(Ir::kRegister, d, Placement::kSp).empty()) continue;
    SCOPED_TRACE(dispatch_name(d));
    for (Lowering l : {register_ir(), register_ir(Lowering::none()), Lowering{}}) {
      Runtime rt(EngineConfig{d});
      rt.set_lazy_lowering(false);
      rt.set_lowering(l);
      Instance& inst = rt.instantiate(assemble(wat));
      auto call = [&](const char* name, uint32_t n) { return rt.invoke(inst.exports.at(name).func, {Value::i32(n)})[0].lo; };
      EXPECT_EQ(call("sum", 4), 10u);
      EXPECT_EQ(call("fib", 10), 55u);
      EXPECT_EQ(call("nest", 5), 15u);
      EXPECT_EQ(call("clear", 5), 15u);
    }
  }
}

TEST(RegisterIrTest, OnlyTheSpPlacementBuildsIt) {
  EXPECT_EQ(ir_unavailable(Ir::kRegister, Placement::kSp), "");
  EXPECT_EQ(ir_unavailable(Ir::kStack, Placement::kVec), "");
  EXPECT_NE(ir_unavailable(Ir::kRegister, Placement::kSpWt).find("sp placement only"), std::string::npos);
  if (std::string why = engine_unavailable(Dispatch::kTail, Placement::kVec); !why.empty()) GTEST_SKIP() << why;
  Runtime rt(EngineConfig{Dispatch::kTail, Placement::kVec});
  rt.set_lazy_lowering(false);  // the code is read after instantiation
  rt.set_lowering(register_ir());
  EXPECT_THROW(rt.instantiate(assemble(R"((module (func (export "f"))))")), Unsupported);
}

TEST(RegisterIrTest, NamesRoundTrip) {
  for (Ir ir : irs()) EXPECT_EQ(parse_ir(ir_name(ir)), ir);
  EXPECT_FALSE(parse_ir("registers"));
}

}  // namespace
}  // namespace dlab::wasm
