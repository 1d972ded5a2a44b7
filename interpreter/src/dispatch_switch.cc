// Switch dispatch, the stack pointer a local of the one function (sp).
#define DLW_MODE switch
#define DLW_PLACE_SP 1
#include "dispatch_switch.inc"
