#include "engines/ops.h"

#include "decode/instruction_reader.h"
#include "dispatchlab/interpreter/runtime.h"

namespace dlab::wasm {

// One opcode index for both tables: the reader's (instructions.def's and this one's together).
const SimpleOp* find_simple_op(uint32_t opcode) { return find_opcode(opcode).simple; }

std::string op_family_of(std::string_view op) {
  for (size_t i = 0; i < static_cast<size_t>(Op::kCount); ++i)
    if (op == kOpNames[i]) return op_family(i);
  return "";
}

}  // namespace dlab::wasm
