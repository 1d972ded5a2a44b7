// Tail-call handlers in the default calling convention, the stack pointer an argument.
#define DLW_CC
#define DLW_MODE tail
#define DLW_PLACE_SP 1
#include "dispatch_tail.inc"
