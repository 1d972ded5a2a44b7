// Computed-goto dispatch with the top of stack cached in a local, written back to its slot only
// when a push covers it (sp_wb).
#define DLW_MODE goto_wb
#define DLW_PLACE_WB 1
#include "dispatch_goto.inc"
