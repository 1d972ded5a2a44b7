// Computed-goto dispatch with the top of stack cached in a local, written through to its slot
// (sp_wt).
#define DLW_MODE goto_wt
#define DLW_PLACE_WT 1
#include "dispatch_goto.inc"
