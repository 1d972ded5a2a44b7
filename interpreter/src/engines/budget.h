// The budget axis of the engines (engines.def's BUDGET rows): how a handler charges a bounded
// invocation. A dispatch file (generated per ENGINE row by interpreter/CMakeLists.txt) sets one
// DLW_BUDGET_* (NONE, ARG, MACHINE, EPOCH) to 1; placement.h includes this header and appends
// DLW_B_PARAM / DLW_B_ARG to the handler signature.
//
// Where a budget is charged: at every branch (br, br_if, br_table, the fused compare-and-branch
// forms, the branch an `if` lowers to, br_on_*, throw and throw_ref: a catch may land on a loop)
// and every call, taken or not. Not at every
// instruction: a charge is a decrement and a never-taken branch, so charging per instruction would
// put it into every handler (about one in five to ten is a branch or call), and a loop or a
// recursion cannot run without passing a branch or call, so every program that does not end runs
// out. And the count does not depend on the lowering: fold, fuse and super merge instructions but
// never two branches, so fuel N stops an invocation at the same instruction in every engine and
// every lowering (interpreter/tests/budget_test.cc checks it), as the research's budgeted runs
// suspend at the same points.
//
//   DLW_CHARGE()        at a charging instruction, before it changes anything: suspends when the
//                       budget is spent (the instruction then runs first on resumption)
//   DLW_B_PARAM/ARG     ", uint64_t fuel" in a tail handler's signature (ARG), else nothing
//   DLW_B_FIRST         the first handler's fuel argument (the machine's counter)
//   DLW_B_LOCAL         switch/goto: the counter as a local of the one function
//   DLW_B_OUT / DLW_B_IN  the counter to / from Machine::fuel, around what may read it there (a
//                       host function's nested invocation, halt, a trap)
//
// Suspending stores where the invocation stands (ip of the charging instruction, sp, fp; the cached
// top flushed to its slot) in the machine and stops it with its trap message; Runtime::resume
// restarts it there. The fuzzing build (DLAB_FUEL) charges Machine::fuel in every engine.
#pragma once

#if DLW_BUDGET_NONE + DLW_BUDGET_ARG + DLW_BUDGET_MACHINE + DLW_BUDGET_EPOCH != 1
#error "budget.h: set one of DLW_BUDGET_NONE, _ARG, _MACHINE, _EPOCH to 1"
#endif


#define DLW_SUSPEND(msg)  \
  {                       \
    DLW_TOP_FLUSH         \
    m->resume_ip = ip;    \
    m->resume_sp = sp;    \
    m->resume_fp = fp;    \
    m->suspended = true;  \
    TRAP(msg);            \
  }

#if DLW_BUDGET_ARG
#define DLW_B_PARAM , uint64_t fuel
#define DLW_B_ARG , fuel
#define DLW_B_FIRST , m->fuel
#define DLW_B_LOCAL uint64_t fuel = m->fuel;
#define DLW_B_OUT m->fuel = fuel;
#define DLW_B_IN fuel = m->fuel;
#define DLW_CHARGE()                            \
  {                                             \
    if (fuel == 0) DLW_SUSPEND("fuel exhausted"); \
    --fuel;                                     \
  }
#else
#define DLW_B_PARAM
#define DLW_B_ARG
#define DLW_B_FIRST
#define DLW_B_LOCAL
#define DLW_B_OUT
#define DLW_B_IN
#if DLW_BUDGET_MACHINE || defined(DLAB_FUEL)
#define DLW_CHARGE()                               \
  {                                                \
    if (m->fuel == 0) DLW_SUSPEND("fuel exhausted"); \
    --m->fuel;                                     \
  }
#elif DLW_BUDGET_EPOCH
#define DLW_CHARGE()                                                                                        \
  {                                                                                                         \
    if (::dlab::wasm::g_epoch.load(std::memory_order_relaxed) >= m->deadline_epoch) DLW_SUSPEND("deadline reached"); \
  }
#else
#define DLW_CHARGE()
#endif
#endif
