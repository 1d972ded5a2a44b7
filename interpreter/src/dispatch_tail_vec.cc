// Tail-call handlers in the default calling convention, the stack pointer in the machine (vec).
#define DLW_CC
#define DLW_MODE tail_vec
#define DLW_PLACE_VEC 1
#include "dispatch_tail.inc"
