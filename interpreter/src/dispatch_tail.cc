// Tail-call handlers in the default calling convention.
#define DLW_CC
#define DLW_MODE tail
#include "dispatch_tail.inc"
