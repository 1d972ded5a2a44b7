// The counting engine of `dlab wasm profile`: switch dispatch that counts every op and every pair
// of consecutive ops. Not in engines.def: it is never timed.
#define DLW_MODE switch_profile
#define DLW_PLACE_SP 1
#define DLW_PROFILE 1
#include "dispatch_switch.inc"
