// Lowering a validated function body to the interpreter's instruction stream.
//
// The stream is 64-bit words. Each instruction is an op word (the op number for switch dispatch,
// the handler's address for tail-call dispatch: `op_words` says which) followed by immediates:
// local slot indices, branch offsets relative to the instruction, and pointers to the instance's
// functions, tables, globals and segments, resolved once here instead of at every execution.
// Blocks and `end` produce no instruction; branches that leave values move them with a
// keep/drop pair computed here from the static stack height, so handlers never look up labels.
// An op may consume any number of immediates: the folded and fused forms (handlers.def's BINOP and
// CMPOP) carry the operand or branch offset of the instruction they absorbed.
#pragma once

#include <cstdint>

#include "dispatchlab/interpreter/runtime.h"

namespace dlab::wasm {

// Lowers defined function `defined_index` of `inst` into inst.funcs[imports + defined_index].
// Throws Unsupported for an instruction this build has no handler for, ImplementationLimit past
// Runtime::kMaxLocals.
// `lowering` says which speed techniques its peephole stage applies (runtime.h).
// `record_starts`: fill FuncInst::instruction_starts (for tests).
void lower_function(Instance& inst, uint32_t defined_index, const uint64_t* op_words, Lowering lowering, bool record_starts = false);

// Prepares defined function `defined_index` to be lowered on its first call (Runtime's lazy
// lowering): its frame's parameter, local and result slots (ImplementationLimit past
// Runtime::kMaxLocals, as lowering it would), and code that lowers it when it runs (the op
// lower_on_call, handlers/control.def). Lowering it then is lower_on_first_call (machine.h).
void prepare_late_lowering(Instance& inst, uint32_t defined_index);

// Lowers `body` into `f`, a function of `inst` outside its index space (a constant expression
// run at instantiation: runtime/const_expr.h).
void lower_body(Instance& inst, FuncInst& f, const FunctionBody& body, const uint64_t* op_words, Lowering lowering);

// A module's lane count for a value type: v128 takes two 64-bit slots, everything else one.
inline uint32_t slots_of(ValType t) { return t == ValType::kV128 ? 2 : 1; }

}  // namespace dlab::wasm
