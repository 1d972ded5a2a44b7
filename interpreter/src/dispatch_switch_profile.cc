// The counting engine of `dlab wasm profile`: switch dispatch that counts every op and every pair
// of consecutive ops. Not in engines.def: it is never timed.
#define DLW_MODE switch_profile
#define DLW_SP_HOME_ARG 1
#define DLW_TOP_NONE 1
#define DLW_BUDGET_NONE 1
#define DLW_PROFILE 1
#include "dispatch_switch.inc"
