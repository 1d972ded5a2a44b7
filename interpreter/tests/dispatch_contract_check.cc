// Compiled by ctest (interpreter.dispatch_contract_<MACRO>) with one macro of the dispatch mode's
// contract left out (-DDLW_LEAVE_OUT_<MACRO>): handlers.def must stop, naming it. Never linked.
#ifndef DLW_LEAVE_OUT_NEXT
#define NEXT(n)
#endif
#ifndef DLW_LEAVE_OUT_NEXT_KEEP
#define NEXT_KEEP(n)
#endif
#ifndef DLW_LEAVE_OUT_GOTO
#define GOTO(p)
#endif
#ifndef DLW_LEAVE_OUT_GOTO_KEEP
#define GOTO_KEEP(p)
#endif
#ifndef DLW_LEAVE_OUT_TRAP
#define TRAP(msg)
#endif
#ifndef DLW_LEAVE_OUT_OP
#define OP(name, ...)
#endif
#include "engines/operand_layout.h"
#include "engines/handlers.def"
