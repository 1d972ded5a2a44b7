#include "runtime/const_expr.h"

#include "decode/instruction_reader.h"
#include "lower/lowering.h"

namespace dlab::wasm::runtime_impl {

namespace {

// A single-instruction expression's value, read without lowering: instantiation time. An element
// segment of function indices is thousands of `ref.func x` expressions, and nearly every global
// and offset is one const; lowering and invoking each would cost far more than the read.
bool single_instruction(const Instance& inst, const Expr& e, std::pair<uint64_t, uint64_t>& value) {
  BinaryReader r(e.bytes.data(), e.bytes.size());
  const Instruction in = read_instruction(r);
  if (r.remaining() != 1 || r.peek() != opcode_value(Opcode::end)) return false;
  switch (in.opcode) {
    case Opcode::i32_const: case Opcode::i64_const: case Opcode::f32_const: case Opcode::f64_const: value = {in.bits[0], 0}; return true;  // an i32 zero-extended
    case Opcode::v128_const: value = {in.bits[0], in.bits[1]}; return true;
    case Opcode::ref_null: value = {0, 0}; return true;
    case Opcode::ref_func: value = {reinterpret_cast<uint64_t>(inst.funcs.at(in.x)), 0}; return true;
    case Opcode::global_get: {
      const GlobalInst* g = inst.globals.at(in.x);
      value = {g->lo, g->type.type == ValType::kV128 ? g->hi : 0};
      return true;
    }
    default: return false;
  }
}

}  // namespace

std::pair<uint64_t, uint64_t> eval_const(Runtime& rt, Machine& m, Instance& inst, const Expr& e, ValType t, const uint64_t* words,
                                         Lowering lowering) {
  std::pair<uint64_t, uint64_t> value;
  if (g_const_fast_path && single_instruction(inst, e, value)) return value;
  // A function of the instance outside its index space: what the expression's instructions name
  // (globals, functions, types) is the instance's, and it runs as any function does.
  FuncInst f;
  f.type.results = {t};
  f.instance = &inst;
  FunctionBody body;
  body.code = e;
  lower_body(inst, f, body, words, lowering);
  // The budget is the program's: a constant expression neither spends fuel nor meets a deadline
  // (its call is the only instruction that would charge, and instantiation cannot be suspended).
  struct KeepBudget {
    Machine& m;
    uint64_t fuel = m.fuel, deadline = m.deadline_epoch;
    ~KeepBudget() {
      m.fuel = fuel;
      m.deadline_epoch = deadline;
    }
  } keep{m};
  m.fuel = ~0ull;
  m.deadline_epoch = ~0ull;
  // As a start function does, it is an invocation: the counting engine counts its instructions,
  // and an invocation left suspended is abandoned by it.
  std::vector<Value> v = rt.invoke(&f, {});
  return {v.at(0).lo, v.at(0).hi};
}

}  // namespace dlab::wasm::runtime_impl
