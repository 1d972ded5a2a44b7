#include "engines/ops.h"

#include <array>
#include <cstddef>

namespace dlab::wasm {

namespace {

// wasm opcode -> index into kSimpleOps (or -1): one-byte opcodes, 0xFC sub-opcodes, 0xFD ones.
struct SimpleOpIndex {
  std::array<int16_t, 256> byte{};
  std::array<int16_t, 32> fc{};
  std::array<int16_t, 512> fd{};
  constexpr SimpleOpIndex() {
    byte.fill(-1);
    fc.fill(-1);
    fd.fill(-1);
    for (std::size_t i = 0; i < sizeof(kSimpleOps) / sizeof(kSimpleOps[0]); ++i) {
      uint32_t op = kSimpleOps[i].opcode;
      if (op < 256) byte[op] = static_cast<int16_t>(i);
      else if (op < 0xFD000) fc[op - 0xFC00] = static_cast<int16_t>(i);
      else fd[op - 0xFD000] = static_cast<int16_t>(i);
    }
  }
};
constexpr SimpleOpIndex kIndex;

}  // namespace

const SimpleOp* find_simple_op(uint32_t opcode) {
  int16_t i = -1;
  if (opcode < 256) i = kIndex.byte[opcode];
  else if (opcode >= 0xFC00 && opcode < 0xFC00 + kIndex.fc.size()) i = kIndex.fc[opcode - 0xFC00];
  else if (opcode >= 0xFD000 && opcode < 0xFD000 + kIndex.fd.size()) i = kIndex.fd[opcode - 0xFD000];
  return i < 0 ? nullptr : &kSimpleOps[i];
}

}  // namespace dlab::wasm
