#include "engines/ops.h"

#include "decode/instruction_reader.h"

namespace dlab::wasm {

// One opcode index for both tables: the reader's (instructions.def's and this one's together).
const SimpleOp* find_simple_op(uint32_t opcode) { return find_opcode(opcode).simple; }

}  // namespace dlab::wasm
