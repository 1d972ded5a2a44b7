// Computed-goto dispatch, the stack pointer a local of the one function (sp).
#define DLW_MODE goto
#define DLW_PLACE_SP 1
#include "dispatch_goto.inc"
