// Tail-call handlers in the default calling convention, the stack pointer passed as the 9th
// integer argument: on the stack on every target (sp_spill).
#define DLW_CC
#define DLW_MODE tail_spill
#define DLW_PLACE_SPILL 1
#include "dispatch_tail.inc"
