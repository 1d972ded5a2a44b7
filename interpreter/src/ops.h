// The op numbers of the lowered instruction stream and the table the lowering uses for numeric
// and memory instructions: both expanded from handlers.def, so they cannot drift from the handlers.
#pragma once

#include <cstdint>

namespace dlab::wasm {

enum class Op : uint16_t {
#define OP(name, ...) name,
#define NUM(name, opcode, sig, ...) name,
#define MEM(name, opcode, sig, ...) name,
#include "handlers.def"
#undef OP
#undef NUM
#undef MEM
  kCount
};

// A numeric or memory instruction: its wasm opcode (0xFC00 + sub-opcode for the 0xFC prefix),
// stack effect ("ii:i": pops two i32, pushes one i32) and whether word 1 is a memory offset.
struct SimpleOp {
  uint32_t opcode;
  Op op;
  const char* signature;
  bool memory;
};

inline constexpr SimpleOp kSimpleOps[] = {
#define OP(name, ...)
#define NUM(name, opcode, sig, ...) {opcode, Op::name, sig, false},
#define MEM(name, opcode, sig, ...) {opcode, Op::name, sig, true},
#include "handlers.def"
#undef OP
#undef NUM
#undef MEM
};

inline constexpr const char* kOpNames[] = {
#define OP(name, ...) #name,
#define NUM(name, opcode, sig, ...) #name,
#define MEM(name, opcode, sig, ...) #name,
#include "handlers.def"
#undef OP
#undef NUM
#undef MEM
};

}  // namespace dlab::wasm
