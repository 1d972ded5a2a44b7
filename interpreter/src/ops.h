// The op numbers of the lowered instruction stream and the table the lowering uses for numeric
// and memory instructions: both expanded from handlers.def, so they cannot drift from the handlers
// (an expander that defines only OP gets every entry through handlers.def's kind fallbacks).
#pragma once

#include <cstdint>

namespace dlab::wasm {

enum class Op : uint16_t {
#define OP(name, ...) name,
#include "handlers.def"
#undef OP
  kCount
};

// The immediates an instruction carries after its op word.
enum class Imm : uint8_t {
  NONE,     // none
  MEM,      // memarg: word 1 = static offset (the alignment hint is dropped)
  LANE,     // word 1 = lane index
  MEMLANE,  // word 1 = offset, word 2 = lane index
  SHUF,     // words 1-2 = 16 lane indices
};

// An instruction lowered by table: its wasm opcode (0xFC00 + sub-opcode for the 0xFC prefix,
// 0xFD000 + sub-opcode for SIMD), stack effect ("ii:i": pops two i32, pushes one i32; v = v128)
// and immediates.
struct SimpleOp {
  uint32_t opcode;
  Op op;
  const char* signature;
  Imm imm;
};

inline constexpr SimpleOp kSimpleOps[] = {
#define OP(name, ...)
#define NUM(name, opcode, sig, ...) {opcode, Op::name, sig, Imm::NONE},
#define MEM(name, opcode, sig, ...) {opcode, Op::name, sig, Imm::MEM},
#define VEC(name, sub, imm, sig, ...) {0xFD000 + sub, Op::name, sig, Imm::imm},
#include "handlers.def"
#undef OP
#undef NUM
#undef MEM
#undef VEC
};

// The forms the lowering's speed techniques write in place of a plain op, from handlers.def's
// BINOP and CMPOP entries (Op::kCount where an op has no such form).
struct Forms {
  Op ri = Op::kCount, rl = Op::kCount, li = Op::kCount, ll = Op::kCount;  // fold: operands from the instruction
  Op br_if = Op::kCount, br_unless = Op::kCount, ri_br_if = Op::kCount, ri_br_unless = Op::kCount;  // fuse
  Op local_address = Op::kCount;  // fold: a load's address from a local
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
    .br_unless = Op::name##_br_unless, .ri_br_if = Op::name##_ri_br_if, .ri_br_unless = Op::name##_ri_br_unless}},
#define LOADOP(name, opcode, sig, M, T) {Op::name, {.local_address = Op::name##_l}},
#include "handlers.def"
#undef OP
#undef BINOP
#undef CMPOP
#undef LOADOP
};

// The superinstructions (superinstructions.def, generated from measured pair frequencies): the
// lowering's `super` technique writes `op` over `first` where `second` follows it.
struct SuperOf {
  Op first, second, op;
};
inline constexpr SuperOf kSupers[] = {
#define OP(name, ...)
#define SUPER(name, first, second, ...) {Op::first, Op::second, Op::name},
#include "handlers.def"
#undef OP
#undef SUPER
};

inline constexpr const char* kOpNames[] = {
#define OP(name, ...) #name,
#include "handlers.def"
#undef OP
};

}  // namespace dlab::wasm
