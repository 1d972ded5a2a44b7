// The lowering's peephole stage: what each speed technique writes (switch dispatch, where an op
// word is the op's number), that it never rewrites across a label, and that every engine computes
// the same results with every set of techniques (the spec suite runs them all too, in ctest).
#include <algorithm>
#include <bit>
#include <deque>

#include <gtest/gtest.h>

#include "dispatchlab/interpreter/runtime.h"
#include "dispatchlab/interpreter/validator.h"
#include "engines/ops.h"
#include "wat.h"

namespace dlab::wasm {
namespace {

using test_support::assemble;

// fold, fuse, super, acc (lowerings.def's order; acc changes the register IR only).
constexpr Lowering kPlain{false, false, false, false, false}, kFold{true, false, false, false, false},
    kFuse{false, true, false, false, false}, kFoldFuse{true, true, false, false, false}, kAll{true, true, true, true, true};

// The op numbers of a function's lowered code (switch words are op numbers), read at the starts
// of its instructions as the lowering recorded them: an immediate that happens to equal an op
// number (a constant 4, a slot, an offset) is never taken for an op.
std::vector<Op> ops_of(Lowering l, const std::string& wat, const std::string& name, std::vector<uint64_t>* words = nullptr) {
  static std::deque<Runtime> runtimes;  // instances live as long as their runtime
  Runtime& rt = runtimes.emplace_back(EngineConfig{Dispatch::kSwitch});
  rt.set_lowering(l);
  rt.record_instruction_starts(true);
  Instance& inst = rt.instantiate(assemble(wat));
  const FuncInst& f = *inst.exports.at(name).func;
  if (words) *words = f.code;
  std::vector<Op> out;
  for (uint32_t at : f.instruction_starts) {
    EXPECT_LT(f.code.at(at), static_cast<uint64_t>(Op::kCount)) << "word " << at << " starts an instruction but is no op";
    out.push_back(static_cast<Op>(f.code.at(at)));
  }
  return out;
}

TEST(LoweringTest, OpsAreReadAtInstructionStartsNotFromImmediates) {
  // i32.const 4 / 7 are immediates equal to op numbers: only the instructions' own ops are listed.
  std::vector<uint64_t> words;
  auto ops = ops_of(Lowering::none(), R"((module (func (export "f") (result i32) i32.const 4 i32.const 7 i32.add)))", "f", &words);
  EXPECT_EQ(ops, (std::vector<Op>{Op::const_, Op::const_, Op::i32_add, Op::return_}));
}
// The lowered words of a function, with W(op) for an op word.
std::vector<uint64_t> words_of(Lowering l, const std::string& wat) {
  std::vector<uint64_t> words;
  ops_of(l, wat, "f", &words);
  return words;
}
constexpr uint64_t W(Op op) { return static_cast<uint64_t>(op); }
bool has(const std::vector<Op>& ops, Op op) { return std::find(ops.begin(), ops.end(), op) != ops.end(); }

const char* const kAddLocals = R"((module (func (export "f") (param i32 i32) (result i32) local.get 0 local.get 1 i32.add)))";

TEST(LoweringTest, FoldWritesTheLocalOperandsIntoTheBinop) {
  std::vector<uint64_t> words;
  ops_of(kFold, kAddLocals, "f", &words);
  // i32.add_ll 0 1; return 1
  ASSERT_EQ(words.size(), 5u);
  EXPECT_EQ(words[0], static_cast<uint64_t>(Op::i32_add_ll));
  EXPECT_EQ(words[1], 0u);
  EXPECT_EQ(words[2], 1u);
  EXPECT_EQ(words[3], static_cast<uint64_t>(Op::return_));
  EXPECT_EQ(words_of(kFold, R"((module (func (export "f") (param i32 i32) (result i32) local.get 0 local.get 0 i32.mul local.get 1 i32.add)))"),
            (std::vector<uint64_t>{W(Op::i32_mul_ll), 0, 0, W(Op::i32_add_rl), 1, W(Op::return_), 1}));
  ops_of(kPlain, kAddLocals, "f", &words);
  EXPECT_EQ(words.size(), 7u);  // plain: local.get, local.get, i32.add, return
}

TEST(LoweringTest, FoldWritesTheConstantIntoTheBinop) {
  std::vector<uint64_t> words;
  auto ops = ops_of(kFold, R"((module (func (export "f") (param i64) (result i64) local.get 0 i64.const -5 i64.shr_u)))", "f", &words);
  EXPECT_EQ(words, (std::vector<uint64_t>{W(Op::i64_shr_u_li), 0, static_cast<uint64_t>(-5), W(Op::return_), 1}));
  EXPECT_EQ(words_of(kFold, R"((module (func (export "f") (param i64) (result i64) local.get 0 local.get 0 i64.mul i64.const 3 i64.add)))"),
            (std::vector<uint64_t>{W(Op::i64_mul_ll), 0, 0, W(Op::i64_add_ri), 3, W(Op::return_), 1}));
}

TEST(LoweringTest, FoldWritesLocalAddressesAndFrequentPairs) {
  EXPECT_EQ(words_of(kFold, R"((module (memory 1) (func (export "f") (param i32) (result i32) (local i32)
      (local.set 1 (i32.load offset=8 (local.get 0))) (local.get 1) (local.get 0) (i32.store) (local.get 1))))"),
            (std::vector<uint64_t>{W(Op::i32_load_l), 0, 8, W(Op::local_set_get), 1, 1, W(Op::local_get), 0, W(Op::i32_store), 0,
                                   W(Op::local_get), 1, W(Op::return_), 1}));
  EXPECT_EQ(words_of(kFold, R"((module (func (export "f") (param i32 i32) (result i32) (local.get 0) (local.get 1) (drop))))"),
            (std::vector<uint64_t>{W(Op::local_get_get), 0, 1, W(Op::drop), W(Op::return_), 1}));
}

TEST(LoweringTest, FuseWritesCompareAndBranchAsOneInstruction) {
  const char* wat = R"((module (func (export "f") (param i32) (result i32)
      (block (br_if 0 (i32.lt_s (i32.add (local.get 0) (local.get 0)) (i32.const 10))) (return (i32.const 1)))
      (block (br_if 0 (i32.ne (local.get 0) (local.get 0))) (return (i32.const 2)))
      (if (i32.eqz (local.get 0)) (then (return (i32.const 3))))
      (i32.const 4))))";
  auto all = ops_of(kFoldFuse, wat, "f");
  EXPECT_TRUE(has(all, Op::i32_lt_s_ri_br_if));  // folded, then fused
  EXPECT_TRUE(has(all, Op::i32_ne_ll));          // local operands folded: no plain compare left to fuse
  EXPECT_FALSE(has(all, Op::i32_eqz));           // `eqz; if` is a br_if over the then-arm
  auto fuse = ops_of(kFuse, wat, "f");
  EXPECT_TRUE(has(fuse, Op::i32_lt_s_br_if));
  EXPECT_TRUE(has(fuse, Op::i32_ne_br_if));
  auto plain = ops_of(kPlain, wat, "f");
  EXPECT_TRUE(has(plain, Op::i32_lt_s));
  EXPECT_TRUE(has(plain, Op::i32_eqz));
  EXPECT_TRUE(has(plain, Op::br_unless));
}

// A block's end is a label: the const before it must stay a slot, because a branch to the end
// arrives with another value there.
const char* const kLabelBetween = R"((module (func (export "f") (param i32) (result i32)
    (i32.const 10)
    (block (result i32) (drop (br_if 0 (i32.const 3) (local.get 0))) (i32.const 4))
    i32.add)))";

TEST(LoweringTest, NeverRewritesAcrossALabel) {
  auto ops = ops_of(kFoldFuse, kLabelBetween, "f");
  EXPECT_FALSE(has(ops, Op::i32_add_ri));
  EXPECT_TRUE(has(ops, Op::i32_add));
}

// super: a pair with a superinstruction gets it over its first op word; the second's words stay.
TEST(LoweringTest, SuperWritesTheSuperinstructionOverThePairsFirstOp) {
  const SuperOf* pair = nullptr;
  for (const SuperOf& s : kSupers)
    if (s.first == Op::local_get && s.second == Op::local_set_get) pair = &s;
  if (pair == nullptr) GTEST_SKIP() << "superinstructions.def has no local_get__local_set_get (regenerated from other profiles)";
  const char* wat = R"((module (func (export "f") (param i32 i32) (result i32)
      (local.set 0 (local.get 1)) (local.get 0))))";
  EXPECT_EQ(words_of(kAll, wat), (std::vector<uint64_t>{W(pair->op), 1, W(Op::local_set_get), 0, 0, W(Op::return_), 1}));
  EXPECT_EQ(words_of(kFoldFuse, wat), (std::vector<uint64_t>{W(Op::local_get), 1, W(Op::local_set_get), 0, 0, W(Op::return_), 1}));
}

// A superinstruction never spans a label: the loop head between the two stays a dispatch.
TEST(LoweringTest, SuperNeverPairsAcrossALabel) {
  const char* wat = R"((module (func (export "f") (param i32 i32) (result i32)
      (local.get 1) (loop (param i32) (result i32) (local.set 0) (local.get 0)))))";
  auto words = words_of(kAll, wat);
  ASSERT_GE(words.size(), 3u);
  EXPECT_EQ(words[0], W(Op::local_get));
}

TEST(LoweringTest, NamesRoundTrip) {
  for (Lowering l : lowerings()) EXPECT_EQ(parse_lowering(lowering_name(l)), l);
  EXPECT_EQ(lowering_name(kAll), "fold+fuse+super+acc+elide");
  EXPECT_EQ(lowering_name(kFoldFuse), "fold+fuse");
  EXPECT_EQ(lowering_name(kPlain), "plain");
  EXPECT_FALSE(parse_lowering("fuse+fold").has_value());
}

// Every engine, every set of techniques: the same results on programs whose every branch and
// operand kind the rewrites touch.
TEST(LoweringTest, EveryEngineAgreesUnderEveryLowering) {
  const char* wat = R"((module
    (func (export "label") (param i32) (result i32)
      (i32.const 10)
      (block (result i32) (drop (br_if 0 (i32.const 3) (local.get 0))) (i32.const 4))
      i32.add)
    (func (export "loop") (param i32) (result i32) (local i32 i32)
      (loop $l
        (local.set 1 (i32.xor (i32.add (local.get 1) (local.get 2)) (i32.shr_u (local.get 1) (i32.const 3))))
        (local.set 2 (i32.add (local.get 2) (i32.const 1)))
        (br_if $l (i32.lt_u (local.get 2) (local.get 0))))
      (if (i32.eqz (local.get 1)) (then (return (i32.const -1))))
      (if (i32.ge_s (local.get 1) (i32.const 1000)) (then (return (i32.sub (local.get 1) (i32.const 1000)))))
      (local.get 1))
    (func (export "f64") (param f64) (result f64)
      (f64.mul (f64.add (local.get 0) (f64.const 0.5)) (local.get 0)))
    (func (export "div") (param i32) (result i32)
      (i32.div_s (i32.const 100) (local.get 0)))))";
  for (Dispatch d : dispatch_modes())
    for (Placement p : placements()) {
      if (!engine_unavailable(d, p).empty()) continue;
      for (Ir ir : irs())
      for (Lowering l : lowerings()) {
        if (!ir_unavailable(ir, d, p).empty()) continue;
        l.ir = ir;
        SCOPED_TRACE(std::string(dispatch_name(d)) + "/" + placement_name(p) + "/" + lowering_name(l) + "/" + ir_name(ir));
        Runtime rt(EngineConfig{d, p});
        rt.set_lowering(l);
        Instance& inst = rt.instantiate(assemble(wat));
        auto call = [&](const char* name, Value v) { return rt.invoke(inst.exports.at(name).func, {v})[0].lo; };
        EXPECT_EQ(call("label", Value::i32(1)), 13u);
        EXPECT_EQ(call("label", Value::i32(0)), 14u);
        EXPECT_EQ(call("loop", Value::i32(50)), 908u);
        EXPECT_EQ(call("loop", Value::i32(80)), 594u);
        EXPECT_EQ(call("loop", Value::i32(0)), 0xFFFFFFFFu);
        double x = 3.0, got;
        uint64_t bits = call("f64", Value{ValType::kF64, std::bit_cast<uint64_t>(x), 0});
        got = std::bit_cast<double>(bits);
        EXPECT_EQ(got, (x + 0.5) * x);
        EXPECT_EQ(call("div", Value::i32(7)), 14u);
        EXPECT_THROW(call("div", Value::i32(0)), Trap);
      }
    }
}

}  // namespace
}  // namespace dlab::wasm
