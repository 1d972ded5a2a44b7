// Operand-location macros: how a handler body's stack operations (DL_PUSH, DL_POP, DL_TOP, ...)
// expand for each stack-state placement and dispatch mode. A generated file defines the axes below
// and includes this header, then every handler body from models/spec/handlers.json is written
// once against these macros (the wasm3 approach: the signature and operand locations are defined
// in exactly one place).
//
// Axes (each generated file sets every one to 0 or 1):
//   DL_HEIGHT_MEM    height in DlExec::len (loaded and stored by every push and pop)
//   DL_HEIGHT_ARG    height `h` is a handler argument
//   DL_HEIGHT_SPILL  height is the 9th integer argument: on the stack on every target's C ABI
//   DL_TOP_MEM       the top value lives in its stack slot
//   DL_TOP_WT        top in an argument, written through to its slot (slots are always current)
//   DL_TOP_WB        top in an argument, written to its slot only when a push covers it
//   DL_TOP_FLAG      top in an argument when `valid` is set (a branch on every push and pop)
//   DL_NR            stack-emptying pops (DL_POP_LAST) skip reloading the new top
//   DL_PN            handlers use the preserve_none calling convention
//   DL_NI            no instruction argument: each handler reloads its instruction from ip
//   DL_SL            the stack base is an argument instead of a load from the executor
//   DL_DISPATCH_TAIL / DL_DISPATCH_GOTO / DL_DISPATCH_SWITCH
#pragma once

#include "dispatchlab/models/model_abi.h"

typedef dl_u64 uint64_t;
typedef dl_u32 uint32_t;

static inline uint64_t dl_load_inst(const struct DlInst* p) {
  uint64_t v;
  __builtin_memcpy(&v, p, sizeof v);  // op in the low half, imm in the high half (little-endian)
  return v;
}

// ---- where the height, the stack base and the top live ----
#if DL_HEIGHT_MEM
#define DL_H (ex->len)
#else
#define DL_H h
#endif

#if DL_SL
#define DL_STK base
#else
#define DL_STK (ex->base)
#endif

#if DL_NI
#define DL_IMM (ip->imm)
#else
#define DL_IMM ((uint32_t)(inst >> 32))
#endif

#define DL_LOCAL(i) (ex->locals[(i)])
#define DL_HEAP(a) (ex->heap[(a)])
#define DL_OWN(i) (ex->own[(i)])

#if DL_TOP_MEM
#define DL_PUSH(v) do { uint64_t v_ = (v); DL_STK[DL_H] = v_; DL_H = DL_H + 1; } while (0)
#define DL_POP() ({ DL_H = DL_H - 1; DL_STK[DL_H]; })
#define DL_TOP() (DL_STK[DL_H - 1])
#define DL_SET_TOP(v) do { DL_STK[DL_H - 1] = (v); } while (0)
#elif DL_TOP_WT
#define DL_PUSH(v) do { uint64_t v_ = (v); DL_STK[DL_H] = v_; top = v_; DL_H = DL_H + 1; } while (0)
#define DL_POP() ({ uint64_t v_ = top; DL_H = DL_H - 1; top = DL_STK[DL_H - 1]; v_; })
#define DL_TOP() (top)
#define DL_SET_TOP(v) do { top = (v); DL_STK[DL_H - 1] = top; } while (0)
#elif DL_TOP_WB
// The slot of the top is stale; the value below the top is in memory. A push stores the old top
// (base[-1] is a scratch slot, so pushing onto an empty stack needs no branch).
#define DL_PUSH(v) do { uint64_t v_ = (v); DL_STK[DL_H - 1] = top; top = v_; DL_H = DL_H + 1; } while (0)
#define DL_POP() ({ uint64_t v_ = top; DL_H = DL_H - 1; top = DL_STK[DL_H - 1]; v_; })
#define DL_TOP() (top)
#define DL_SET_TOP(v) do { top = (v); } while (0)
#elif DL_TOP_FLAG
#define DL_PUSH(v) do { uint64_t v_ = (v); if (valid) DL_STK[DL_H - 1] = top; top = v_; valid = 1; DL_H = DL_H + 1; } while (0)
#define DL_POP() ({ uint64_t v_; if (valid) { v_ = top; valid = 0; } else { v_ = DL_STK[DL_H - 1]; } DL_H = DL_H - 1; v_; })
#define DL_TOP() (valid ? top : DL_STK[DL_H - 1])
#define DL_SET_TOP(v) do { top = (v); valid = 1; } while (0)
#else
#error "placement_macros.h: no DL_TOP_* axis set"
#endif

#if DL_NR && (DL_TOP_WT || DL_TOP_WB)
#define DL_POP_LAST() ({ uint64_t v_ = top; DL_H = DL_H - 1; v_; })
#else
#define DL_POP_LAST() DL_POP()
#endif

#define DL_EXIT_VALUE (DL_H == 0 ? (uint64_t)0 : (uint64_t)DL_TOP())

// ---- handler signature, defined once ----
#if DL_NI
#define DL_P_INST
#define DL_A_INST
#else
#define DL_P_INST , uint64_t inst
#define DL_A_INST , ninst_
#endif
#if DL_HEIGHT_ARG
#define DL_P_H , uint64_t h
#define DL_A_H , h
#elif DL_HEIGHT_SPILL
#define DL_P_H , uint64_t pad0, uint64_t pad1, uint64_t pad2, uint64_t pad3, uint64_t pad4, uint64_t h
#define DL_A_H , pad0, pad1, pad2, pad3, pad4, h
#else
#define DL_P_H
#define DL_A_H
#endif
#if DL_TOP_WT || DL_TOP_WB
#define DL_P_TOP , uint64_t top
#define DL_A_TOP , top
#elif DL_TOP_FLAG
#define DL_P_TOP , uint64_t top, uint64_t valid
#define DL_A_TOP , top, valid
#else
#define DL_P_TOP
#define DL_A_TOP
#endif
#if DL_SL
#define DL_P_SL , uint64_t* base
#define DL_A_SL , base
#else
#define DL_P_SL
#define DL_A_SL
#endif

#if defined(DL_CC_OVERRIDE)
// The probes' state-placement report recompiles the handlers under other conventions.
#define DL_CC DL_CC_OVERRIDE
#elif DL_PN
#define DL_CC __attribute__((preserve_none))
#else
#define DL_CC
#endif

#define DL_PARAMS struct DlExec* ex, const struct DlInst* ip DL_P_INST DL_P_H DL_P_TOP DL_P_SL

#if DL_DISPATCH_TAIL
typedef DL_CC uint64_t (*dl_handler)(DL_PARAMS);
#define DL_HANDLER(name) static DL_CC uint64_t name(DL_PARAMS)
#if DL_NI
#define DL_NEXT()                                          \
  do {                                                     \
    const struct DlInst* nip_ = ip + 1;                    \
    [[clang::musttail]] return dl_table[nip_->op](ex, nip_ DL_A_H DL_A_TOP DL_A_SL); \
  } while (0)
#else
#define DL_NEXT()                                          \
  do {                                                     \
    const struct DlInst* nip_ = ip + 1;                    \
    uint64_t ninst_ = dl_load_inst(nip_);                  \
    [[clang::musttail]] return dl_table[(uint32_t)ninst_](ex, nip_ DL_A_INST DL_A_H DL_A_TOP DL_A_SL); \
  } while (0)
#endif
// The entry calls the first handler with the initial state (a plain call: it is not a handler).
#if DL_NI
#define DL_FIRST_CALL dl_table[program->op](ex, program DL_A_H DL_A_TOP DL_A_SL)
#else
#define DL_FIRST_CALL dl_table[(uint32_t)ninst_](ex, program DL_A_INST DL_A_H DL_A_TOP DL_A_SL)
#endif
#else  // goto and switch: the state is local variables of one function
#define DL_NEXT_LOCAL() do { ip = ip + 1; inst = dl_load_inst(ip); } while (0)
#endif
