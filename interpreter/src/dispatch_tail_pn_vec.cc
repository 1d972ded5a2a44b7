// Tail-call handlers in clang's preserve_none convention (dispatch_tail_pn.inc), the stack pointer
// in the machine (vec).
#define DLW_MODE tail_pn_vec
#define DLW_PLACE_VEC 1
#include "dispatch_tail_pn.inc"
