// Where the operand-stack pointer and the top of stack live between handlers: the placement axes
// of the engines (engines.def's PLACEMENT rows). A dispatch file (generated per ENGINE row by
// interpreter/CMakeLists.txt) sets one DLW_SP_HOME_* (ARG, MACHINE, SPILL) and one DLW_TOP_* (NONE,
// WT, WB) to 1 and includes this header; handler bodies (handlers.def) are written against `sp` and
// the top-of-stack vocabulary below, and do not change: only how `sp` (and a cached top) arrive
// and leave does.
//
//   DLW_P_PARAMS / DLW_P_ARGS  a tail-call handler's parameters and the arguments it passes on
//                              (with the budget's counter last, when it is an argument: budget.h)
//   DLW_SP_IN                  at a handler's entry (vec: load the stack pointer from the machine)
//   DLW_SP_OUT                 before dispatching on, trapping or returning (vec: store it back)
//   DLW_RUN_FIRST(Handler)     how the entry (canonical signature ip, sp, fp, m) starts the first handler
//
// In one-function modes (goto, switch) the compiler would keep a machine field in a register, so
// the vec placement there goes through volatile accesses: one real store and one real load per
// instruction, as the tail-call handlers do across their function boundary.
#pragma once

#include "engines/machine.h"
#include "engines/budget.h"
#include "runtime/guard_pages.h"

// How a 32-bit memory's loads and stores stay in bounds (engines.def's BOUNDS; the generated
// dispatch file defines DLW_BOUNDS_CHECK or DLW_BOUNDS_GUARD): kGuardPages drops handlers.def's
// compare, guard_pages.h makes the access past the size fault instead.
#ifdef DLW_BOUNDS_GUARD
#define DLW_GUARD_PAGES true
#else
#define DLW_GUARD_PAGES false
#endif
namespace dlab::wasm {
namespace {
constexpr bool kGuardPages = DLW_GUARD_PAGES;
}
}  // namespace dlab::wasm

#if DLW_SP_HOME_ARG + DLW_SP_HOME_MACHINE + DLW_SP_HOME_SPILL != 1 || DLW_TOP_NONE + DLW_TOP_WT + DLW_TOP_WB != 1
#error "placement.h: set one of DLW_SP_HOME_ARG, _MACHINE, _SPILL and one of DLW_TOP_NONE, _WT, _WB to 1"
#endif
// A cached top travels beside the stack pointer as a handler argument: with the stack pointer in
// the machine or past the register budget there is no such pair (engines.def has no such row).
#if !DLW_SP_HOME_ARG && !DLW_TOP_NONE
#error "placement.h: a cached top of stack (DLW_TOP_WT/WB) needs the stack pointer in an argument (DLW_SP_HOME_ARG)"
#endif

// The cached top of stack (sp_wt, sp_wb): `top` is a handler argument (a local of the run function
// in switch/goto). Bodies read it with TOP_VALUE, replace it with SET_TOP and push with PUSH_VALUE.
//   sp_wt  written through: every slot is always current, SET_TOP and PUSH_VALUE also store it;
//   sp_wb  written back: the top's slot is stale while the top is cached; PUSH_VALUE stores the
//          old top into its slot (the push covers it), SET_TOP stores nothing.
// The entry kinds of handlers.def say which bodies keep to that vocabulary: NUM, MEM and TOS
// bodies touch the top only through it and slots below it through S(k >= 2), and dispatch with
// NEXT_KEEP when they leave the cache right; OP and VEC bodies work on the slots, so in sp_wb they
// begin with the top's slot made current (DLW_TOP_FLUSH). Every NEXT/GOTO reloads the cache from
// the slot below sp (DLW_TOP_RELOAD; the runtime keeps a slot below the stack base for an empty
// stack, and with an empty operand stack sp[-1] is a local or frame word the cache only mirrors).
#if DLW_TOP_WT || DLW_TOP_WB
#define DLW_TOP_RELOAD top = sp[-1];
#define TOP_VALUE (top)
#else
#define DLW_TOP_RELOAD
#define TOP_VALUE (sp[-1])
#endif
#if DLW_TOP_WT
#define DLW_TOP_FLUSH
#define SET_TOP(v)      \
  {                     \
    uint64_t v_ = (v);  \
    sp[-1] = v_;        \
    top = v_;           \
  }
#define PUSH_VALUE(v)   \
  {                     \
    uint64_t v_ = (v);  \
    *sp++ = v_;         \
    top = v_;           \
  }
#elif DLW_TOP_WB
#define DLW_TOP_FLUSH sp[-1] = top;
#define SET_TOP(v) \
  { top = (v); }
#define PUSH_VALUE(v)   \
  {                     \
    uint64_t v_ = (v);  \
    sp[-1] = top;       \
    ++sp;               \
    top = v_;           \
  }
#else
#define DLW_TOP_FLUSH
#define SET_TOP(v) \
  { sp[-1] = (v); }
#define PUSH_VALUE(v) \
  { *sp++ = (v); }
#endif

#if DLW_SP_HOME_MACHINE
#define DLW_P_PARAMS0 const uint64_t *ip, uint64_t *fp, ::dlab::wasm::Machine *m
#define DLW_P_ARGS0 ip, fp, m
#define DLW_SP_IN                                           \
  uint64_t* sp = *static_cast<uint64_t* volatile*>(&m->vsp); \
  (void)sp;  /* halt and unreachable stop without it */
#define DLW_SP_OUT *static_cast<uint64_t* volatile*>(&m->vsp) = sp;
#define DLW_RUN_FIRST(Handler)   \
  m->vsp = sp;                   \
  reinterpret_cast<Handler>(ip[0])(ip, fp, m DLW_B_FIRST);
// One-function modes: `sp` stays the entry's parameter, written to and read back from the machine
// around every dispatch.
#define DLW_LOCAL_SP_OUT *static_cast<uint64_t* volatile*>(&m->vsp) = sp;
#define DLW_LOCAL_SP_IN sp = *static_cast<uint64_t* volatile*>(&m->vsp);
#define DLW_LOCAL_TOP
#elif DLW_SP_HOME_SPILL
// Five unused integer arguments push `sp` to ninth place: past x86-64 System V's six and arm64's
// eight integer argument registers, so every handler receives it on the stack and passes it on.
#define DLW_P_PARAMS0                                                                                \
  const uint64_t *ip, uint64_t *fp, ::dlab::wasm::Machine *m, uint64_t pad0, uint64_t pad1, uint64_t pad2, \
      uint64_t pad3, uint64_t pad4, uint64_t *sp
#define DLW_P_ARGS0 ip, fp, m, pad0, pad1, pad2, pad3, pad4, sp
#define DLW_SP_IN
#define DLW_SP_OUT
#define DLW_RUN_FIRST(Handler) reinterpret_cast<Handler>(ip[0])(ip, fp, m, 0, 0, 0, 0, 0, sp DLW_B_FIRST);
#define DLW_LOCAL_TOP
#elif DLW_TOP_WT || DLW_TOP_WB
#define DLW_P_PARAMS0 const uint64_t *ip, uint64_t *sp, uint64_t *fp, ::dlab::wasm::Machine *m, uint64_t top
#define DLW_P_ARGS0 ip, sp, fp, m, top
#define DLW_SP_IN
#define DLW_SP_OUT
#define DLW_RUN_FIRST(Handler) reinterpret_cast<Handler>(ip[0])(ip, sp, fp, m, sp[-1] DLW_B_FIRST);
// One-function modes: `top` is a local of the run function, loaded once at entry.
#define DLW_LOCAL_SP_OUT
#define DLW_LOCAL_SP_IN
#define DLW_LOCAL_TOP uint64_t top = sp[-1];
#else
#define DLW_P_PARAMS0 DLW_HANDLER_PARAMS
#define DLW_P_ARGS0 DLW_HANDLER_ARGS
#define DLW_SP_IN
#define DLW_SP_OUT
#define DLW_RUN_FIRST(Handler) reinterpret_cast<Handler>(ip[0])(DLW_HANDLER_ARGS DLW_ACC_FIRST DLW_B_FIRST DLW_MEM_FIRST);
#define DLW_LOCAL_SP_OUT
#define DLW_LOCAL_SP_IN
#define DLW_LOCAL_TOP
#endif
// The register IR (lower/register_ir.cc; handlers.def's DLW_REGISTER_FORMS) is built where the stack pointer is
// an argument and no top is cached: its instructions name frame slots and never move `sp`, so the
// other placements would differ from `sp` only in the stack-form instructions between them.
// A one-function engine of a default build is compiled without them (DLW_NO_REGISTER_IR: CMake,
// DLAB_ALL_ENGINES=OFF), since they multiply that function's compile time.
#ifndef DLW_NO_REGISTER_IR
#define DLW_NO_REGISTER_IR 0
#endif
#define DLW_REGISTER_IR (DLW_SP_HOME_ARG && DLW_TOP_NONE && !DLW_NO_REGISTER_IR)
// The same, as a C++ value (<engine>_register_ir: machine.h).
#if DLW_REGISTER_IR
#define DLW_REGISTER_IR_BUILT true
#else
#define DLW_REGISTER_IR_BUILT false
#endif
// Inside a register form, a declared body's NEXT / NEXT_KEEP jump to the form's epilogue instead of
// dispatching: every mode's NEXT and NEXT_KEEP begin with DLW_REGISTER_EXIT, and every handler
// (tail modes) or run function (switch, goto) ends with DLW_REGISTER_LABEL, which only the discarded
// branch names (a form declares its own local label of that name).
namespace dlab::wasm {
inline constexpr bool dlw_in_register_form = false;
}
#define DLW_REGISTER_EXIT \
  if constexpr (dlw_in_register_form) goto dlw_register_done; \
  else
#define DLW_REGISTER_LABEL \
  dlw_register_done: __attribute__((unused)); \
  __builtin_unreachable();

// The register IR's accumulator (handlers.def's x / y forms): the last register form's result,
// which the next instruction may take from here rather than from the slot it was also stored to.
// A tail handler's argument after the machine (it costs no instruction where a handler does not
// touch it: the register stays as the previous handler left it), a local of the run function in
// switch / goto; only where the register IR is built. The first handler gets 0: the lowering never
// writes a form that reads it except right after the instruction that set it. Three of them, by
// the result's type: `acc` for integers, `acc_f64` and `acc_f32` for floats (float arguments:
// vector registers in both conventions), so that a float result reaches the next float operation
// without a move to an integer register and back (several cycles each way, on the critical path
// of every float chain: mandel's, biquad's). One of each type: a value's bits between a double
// and a float lane of one register cost moves (clang routes them through an integer register).
#if DLW_REGISTER_IR
#define DLW_ACC_PARAM , uint64_t acc, double acc_f64, float acc_f32
#define DLW_ACC_ARG , acc, acc_f64, acc_f32
#define DLW_ACC_FIRST , uint64_t{0}, 0.0, 0.0f
#define DLW_LOCAL_ACC uint64_t acc = 0; double acc_f64 = 0; float acc_f32 = 0;
#else
#define DLW_ACC_PARAM
#define DLW_ACC_ARG
#define DLW_ACC_FIRST
#define DLW_LOCAL_ACC
#endif

// The current memory's base (Machine::mem_base) as a handler argument, where the register IR is
// built in the preserve_none tail-call engines (dispatch_tail_pn.inc defines DLW_MEM_ARGUMENT):
// a load or store then addresses `mem + ea` instead of loading m->mem_base first (wasm3 passes
// its memory the same way). Only there: the default convention's six integer argument registers
// (System V) hold ip, sp, fp, m, acc and the fuel counter already, and a seventh argument would
// travel on the stack. Every handler that changes the machine's memory (memory_use, memory.grow,
// a call or return into another instance, a host call, an exception's landing) reloads it with
// DLW_MEM_SYNC, so `mem == m->mem_base` whenever a handler starts.
#if DLW_REGISTER_IR && defined(DLW_MEM_ARGUMENT)
#define DLW_MEM_PARAM , uint8_t* mem
#define DLW_MEM_ARG , mem
#define DLW_MEM_FIRST , m->mem_base
#define DLW_MEM_BASE mem
#define DLW_MEM_SYNC mem = m->mem_base;
#else
#define DLW_MEM_PARAM
#define DLW_MEM_ARG
#define DLW_MEM_FIRST
#define DLW_MEM_BASE m->mem_base
#define DLW_MEM_SYNC
#endif

// The accumulator, then the budget's counter when it is an argument (budget.h), then the memory's
// base come last.
#define DLW_P_PARAMS DLW_P_PARAMS0 DLW_ACC_PARAM DLW_B_PARAM DLW_MEM_PARAM
#define DLW_P_ARGS DLW_P_ARGS0 DLW_ACC_ARG DLW_B_ARG DLW_MEM_ARG
