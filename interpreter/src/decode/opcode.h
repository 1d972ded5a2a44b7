// Every WebAssembly instruction's opcode, by name: expanded from the two declaration tables
// (decode/instructions.def's rows, handlers.def's NUM, MEM and VEC rows), so that a switch on an
// instruction says `case Opcode::array_len:` and a name cannot be given a second number. The
// values are the tables' (0xFB00 + sub-opcode for GC, 0xFC00 + sub for 0xFC, 0xFD000 + sub for
// SIMD); a name declared in both tables stops the build (an enumerator defined twice).
#pragma once

#include <cstdint>

#include "engines/operand_layout.h"  // handlers.def needs it first

namespace dlab::wasm {

enum class Opcode : uint32_t {
#define INSTR(name, opcode, ...) name = opcode,
#define LEGACY(name, opcode) name = opcode,
#include "decode/instructions.def"
#undef INSTR
#undef LEGACY
#define OP(name, ...)
#define NUM(name, opcode, ...) name = opcode,
#define MEM(name, opcode, ...) name = opcode,
#define VEC(name, sub, ...) name = 0xFD000 + sub,
#include "engines/handlers.def"
#undef OP
#undef NUM
#undef MEM
#undef VEC
};

constexpr uint32_t opcode_value(Opcode o) { return static_cast<uint32_t>(o); }

// The prefix byte an opcode is encoded behind (the tables' value ranges above).
enum class OpcodePrefix : uint8_t { kNone = 0, kGc = 0xFB, kMisc = 0xFC, kSimd = 0xFD };
constexpr OpcodePrefix prefix_of(Opcode o) {
  const uint32_t v = opcode_value(o);
  return v < 0x100 ? OpcodePrefix::kNone : v < 0xFC00 ? OpcodePrefix::kGc : v < 0xFD000 ? OpcodePrefix::kMisc : OpcodePrefix::kSimd;
}
constexpr bool is_prefix_byte(uint8_t b) {
  return b == static_cast<uint8_t>(OpcodePrefix::kGc) || b == static_cast<uint8_t>(OpcodePrefix::kMisc) ||
         b == static_cast<uint8_t>(OpcodePrefix::kSimd);
}

}  // namespace dlab::wasm
