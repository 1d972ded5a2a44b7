// Switch dispatch with the top of stack cached in a local of the run function, written through to
// its slot (sp_wt).
#define DLW_MODE switch_wt
#define DLW_PLACE_WT 1
#include "dispatch_switch.inc"
