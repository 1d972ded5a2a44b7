// Computed-goto dispatch, the stack pointer stored to and loaded from the machine around every
// dispatch (vec).
#define DLW_MODE goto_vec
#define DLW_PLACE_VEC 1
#include "dispatch_goto.inc"
