// The state a running handler sees, and the handler signature: defined here once for every
// dispatch mode.
//
// Stack placement (engines.def's PLACEMENT rows, the axes the models vary): in the `sp` placement
// the operand-stack pointer `sp` and the frame pointer `fp` travel as handler arguments, so with
// tail-call dispatch they stay in registers from handler to handler; memory base and size are
// read through `m`. The other placements (placement.h) change only how `sp` and a cached top of
// stack arrive at and leave a handler: `vec` keeps `sp` in Machine::vsp, `sp_spill` passes it past
// the register budget, `sp_wt` / `sp_wb` add the top as an argument; the bodies in handlers.def
// reach the top through placement.h's vocabulary, so they are the same in every placement.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <type_traits>

#include "dispatchlab/interpreter/runtime.h"

namespace dlab::wasm {

// The process's epoch (budget.h): a host timer thread (runtime/invocation.cc) adds one every
// Runtime::kEpochTickNs while a deadline is pending; a deadline engine compares it with
// Machine::deadline_epoch. One relaxed load of a line that changes once a millisecond: no fence
// and no system call on the handlers' path.
extern std::atomic<uint64_t> g_epoch;

struct CallFrame {
  const uint64_t* return_ip;
  uint64_t* fp;
  Instance* instance;
};

struct Machine {
  // Cached from the current memory (memory 0 of the current instance, or the one memory_use
  // chose for the next instruction); refreshed when the instance changes and after memory.grow,
  // so loads and stores pay one indirection (m->mem_base), not three.
  uint8_t* mem_base = nullptr;
  uint64_t mem_bytes = 0;
  MemoryInst* memory = nullptr;
  Instance* instance = nullptr;
  CallFrame* frame_top = nullptr;
  CallFrame* frames_end = nullptr;
  uint64_t* stack_end = nullptr;
  // Set by a handler that stops the machine: a trap message, or an exit request.
  const char* trap = nullptr;
  bool exited = false;
  int exit_code = 0;
  bool running = false;          // an invocation is running (a host function's invoke is a nested one)
  uint64_t* host_sp = nullptr;   // the operand-stack top of the handler that called a host function
  uint64_t* vsp = nullptr;       // the operand-stack pointer of the `vec` placement, between handlers
  // The counting engine's tables (dispatch_tail_profile.cc): per op, and per (previous, op) pair.
  uint64_t* op_counts = nullptr;
  uint64_t* pair_counts = nullptr;
  // The op dispatched before this one in the current invocation; kNoPreviousOp at its start, so
  // an invocation's first op pairs with nothing (not with op 0, `unreachable`, which never ran).
  static constexpr uint64_t kNoPreviousOp = ~0ull;
  uint64_t last_op = kNoPreviousOp;
  // The budget (budget.h): fuel left (the fuel engines, and every engine of the fuzzing build), the
  // epoch at which a deadline engine suspends, and where a suspended invocation stands.
  uint64_t fuel = ~0ull;
  uint64_t deadline_epoch = ~0ull;
  bool suspended = false;
  const uint64_t* resume_ip = nullptr;
  uint64_t* resume_sp = nullptr;
  uint64_t* resume_fp = nullptr;
  std::string host_error;        // the message of a host function's exception (the trap's text)
  // Exception handling: where the current invocation's frames begin (unwinding stops there), the
  // exception that left it uncaught, and its functions with catch ranges by the address of their
  // code. The GC heap (objects and exceptions) and the canonical types casts compare.
  CallFrame* invoke_frames = nullptr;
  ExnInst* exception = nullptr;
  GcHeap* heap = nullptr;
  const TypeStore* types = nullptr;
  const std::map<const uint64_t*, const FuncInst*>* catch_code = nullptr;

  std::unique_ptr<uint64_t[]> stack;
  std::unique_ptr<CallFrame[]> frames;

  void use_memory(MemoryInst* mem) {
    memory = mem;
    mem_base = mem ? mem->data : nullptr;
    mem_bytes = mem ? mem->bytes : 0;
  }
  void load_memory() { use_memory(instance && !instance->memories.empty() ? instance->memories[0] : nullptr); }
};

// Exception handling's two steps, out of line (runtime/invocation.cc): an exception of `tag`
// whose payload ends at `sp` (null when it cannot be allocated), and where a thrown exception
// lands: the catch clause's code, stack and frame, the frames above it popped; ip null when
// nothing in this invocation catches it (then Machine::exception holds it).
struct Landing {
  const uint64_t* ip;
  uint64_t* sp;
  uint64_t* fp;
};
ExnInst* make_exception(Machine* m, const TagInst* tag, const uint64_t* sp) noexcept;
Landing unwind(Machine* m, ExnInst* exn, const uint64_t* at, uint64_t* fp) noexcept;
// A call of host function `f` whose arguments end at `sp` (handlers.def's CALL_HOST; out of line so
// that the handlers that may make one keep their wasm-call path free of a stack frame): null when
// it returned, else the trap's message (an exit request, Machine::exited set, is the trap "exit").
// No exception leaves it. `guard_pages`: the engine's memory is guarded (a fault while the host
// runs is not this invocation's trap).
const char* call_host(Machine* m, const FuncInst* f, uint64_t* sp, bool guard_pages) noexcept;
// Lowers a function on its first call (lazy lowering, lower/lowering.cc): null, or why it could not.
const char* lower_on_first_call(FuncInst* f) noexcept;

// GC instructions that allocate, or copy or fill many elements, run out of line (gc_ops.cc): the
// gc_op handler's word 1 is one of these, words 2 and 3 its immediates. Each returns the new stack
// top, or null with m->trap set. `sp` is also the collector's view of the stack.
using GcOpFn = uint64_t* (*)(Machine* m, const uint64_t* ip, uint64_t* sp) noexcept;
// ref.test's question (ref.cast, br_on_cast): whether reference `v` is in heap type `heap`
// (canonical), null included when `nullable`.
bool ref_test(const Machine* m, uint64_t v, uint64_t heap, uint64_t nullable) noexcept;
// call_indirect past its fast path (the same id): whether function type `sub` is `super` or below it.
bool func_subtype(const Machine* m, uint64_t sub, uint64_t super) noexcept;

#define DLW_HANDLER_PARAMS const uint64_t *ip, uint64_t *sp, uint64_t *fp, ::dlab::wasm::Machine *m
#define DLW_HANDLER_ARGS ip, sp, fp, m

// Per engine of engines.def: run_<name> runs from `ip` until `halt` or a trap (the same entry
// signature for every placement), and <name>_op_words gives the word the engine expects at the
// head of an instruction, indexed by op number: the op number itself (switch), the handler's
// address (tail modes) or the label's address (goto), which lowering writes directly. The
// preserve_none engines' words are null when this build has no preserve_none. <name>_register_ir
// says whether the engine was compiled with the register IR's forms (placement.h's DLW_REGISTER_IR).
// <name>_handler_signature is its tail-call handlers' parameters, from the handler type itself
// ("ptr,ptr,ptr,ptr,u64": the form `dlab probes fit` reads), "" for one-function engines.
#define ENGINE(name, dispatch, placement, budget, bounds, build) \
  void run_##name(DLW_HANDLER_PARAMS);            \
  const uint64_t* name##_op_words();              \
  bool name##_built();                            \
  bool name##_register_ir();                      \
  std::string name##_handler_signature();
#define NOT_GENERATED(dispatch, placement, why)
#include "dispatchlab/interpreter/engines.def"
#undef ENGINE
#undef NOT_GENERATED
// A handler's parameter types as the probes name them: "ptr" for a pointer, "u64" for the 64-bit
// values (a cached top, spilled slots, fuel, the accumulator), "f64" and "f32" for the float ones.
template <class T>
constexpr const char* handler_parameter_kind() {
  if constexpr (std::is_pointer_v<T>) {
    return "ptr";
  } else if constexpr (std::is_same_v<T, double>) {
    return "f64";
  } else if constexpr (std::is_same_v<T, float>) {
    return "f32";
  } else {
    static_assert(std::is_same_v<T, uint64_t>, "a handler parameter is a pointer, a uint64_t, a double or a float");
    return "u64";
  }
}
template <class... A>
std::string handler_parameter_kinds(void (*)(A...)) {
  std::string s;
  ((s += s.empty() ? "" : ",", s += handler_parameter_kind<A>()), ...);
  return s;
}

// The counting engine (never timed, so not in engines.def).
void run_tail_profile(DLW_HANDLER_PARAMS);
const uint64_t* tail_profile_op_words();

}  // namespace dlab::wasm
