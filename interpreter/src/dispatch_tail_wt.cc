// Tail-call handlers in the default calling convention with the top of stack as a fifth argument,
// written through to its slot (sp_wt).
#define DLW_CC
#define DLW_MODE tail_wt
#define DLW_PLACE_WT 1
#include "dispatch_tail.inc"
