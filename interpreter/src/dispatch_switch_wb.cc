// Switch dispatch with the top of stack cached in a local of the run function, written back to its
// slot only when a push covers it (sp_wb).
#define DLW_MODE switch_wb
#define DLW_PLACE_WB 1
#include "dispatch_switch.inc"
