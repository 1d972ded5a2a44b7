// Tail-call handlers in clang's preserve_none convention (dispatch_tail_pn.inc) with the top of
// stack as a fifth argument, written through to its slot (sp_wt).
#define DLW_MODE tail_pn_wt
#define DLW_PLACE_WT 1
#include "dispatch_tail_pn.inc"
