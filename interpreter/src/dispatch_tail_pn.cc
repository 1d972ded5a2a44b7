// Tail-call handlers in clang's preserve_none convention (dispatch_tail_pn.inc), stack pointer as an
// argument (sp).
#define DLW_MODE tail_pn
#define DLW_PLACE_SP 1
#include "dispatch_tail_pn.inc"
