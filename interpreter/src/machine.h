// The state a running handler sees, and the handler signature: defined here once for every
// dispatch mode.
//
// Stack placement (the axis the models vary as sp / vec / tos): today the operand-stack pointer
// `sp` and the frame pointer `fp` travel as handler arguments, so with tail-call dispatch they
// stay in registers from handler to handler; memory base and size are read through `m`. Moving
// the height or the top of stack into memory, or another value into an argument, is a change of
// DLW_HANDLER_PARAMS / DLW_HANDLER_ARGS and of the stack macros in handlers.def, not of the
// handlers.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "dispatchlab/interpreter/runtime.h"

namespace dlab::wasm {

struct CallFrame {
  const uint64_t* return_ip;
  uint64_t* fp;
  Instance* instance;
};

struct Machine {
  // Cached from the current instance's memory 0; refreshed when the instance changes and after
  // memory.grow, so loads and stores pay one indirection (m->mem_base), not three.
  uint8_t* mem_base = nullptr;
  uint64_t mem_bytes = 0;
  Instance* instance = nullptr;
  CallFrame* frame_top = nullptr;
  CallFrame* frames_end = nullptr;
  uint64_t* stack_end = nullptr;
  // Set by a handler that stops the machine: a trap message, or an exit request.
  const char* trap = nullptr;
  bool exited = false;
  int exit_code = 0;
  bool running = false;          // one invocation at a time: a host function may not re-enter
  uint64_t fuel = ~0ull;         // spent by branches and calls in the fuzzing build only (DLAB_FUEL)
  std::string host_error;        // the message of a host function's exception (the trap's text)

  std::unique_ptr<uint64_t[]> stack;
  std::unique_ptr<CallFrame[]> frames;

  void load_memory() {
    MemoryInst* mem = instance && !instance->memories.empty() ? instance->memories[0] : nullptr;
    mem_base = mem ? mem->data : nullptr;
    mem_bytes = mem ? mem->bytes : 0;
  }
};

#define DLW_HANDLER_PARAMS const uint64_t *ip, uint64_t *sp, uint64_t *fp, ::dlab::wasm::Machine *m
#define DLW_HANDLER_ARGS ip, sp, fp, m

// Entry points of the dispatch modes: run from `ip` until `halt` or a trap.
void run_switch(DLW_HANDLER_PARAMS);
void run_goto(DLW_HANDLER_PARAMS);
void run_tail(DLW_HANDLER_PARAMS);
void run_tail_pn(DLW_HANDLER_PARAMS);

// The word each mode expects at the head of an instruction, indexed by op number: the op number
// itself (switch), the handler's address (tail modes) or the label's address (goto). Lowering
// writes these directly.
const uint64_t* switch_op_words();
const uint64_t* goto_op_words();
const uint64_t* tail_op_words();
const uint64_t* tail_pn_op_words();  // null when this build has no preserve_none

}  // namespace dlab::wasm
