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

inline constexpr const char* kOpNames[] = {
#define OP(name, ...) #name,
#include "handlers.def"
#undef OP
};

}  // namespace dlab::wasm
