// Tail-call handlers in the default calling convention with the top of stack as a fifth argument,
// written back to its slot only when a push covers it (sp_wb).
#define DLW_CC
#define DLW_MODE tail_wb
#define DLW_PLACE_WB 1
#include "dispatch_tail.inc"
