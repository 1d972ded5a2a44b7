// The counting engine of `dlab wasm profile`: tail-call dispatch (the default calling convention)
// that counts every op and every pair of consecutive ops, and whose op words are the op numbers
// (dispatch_tail.inc's DLW_PROFILE). Not in engines.def: it is never timed.
#define DLW_MODE tail_profile
#define DLW_SP_HOME_ARG 1
#define DLW_TOP_NONE 1
#define DLW_BUDGET_NONE 1
#define DLW_BOUNDS_CHECK 1
#define DLW_PROFILE 1
#include "engines/dispatch_tail.inc"
