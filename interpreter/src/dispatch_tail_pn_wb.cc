// Tail-call handlers in clang's preserve_none convention (dispatch_tail_pn.inc) with the top of
// stack as a fifth argument, written back to its slot only when a push covers it (sp_wb).
#define DLW_MODE tail_pn_wb
#define DLW_PLACE_WB 1
#include "dispatch_tail_pn.inc"
