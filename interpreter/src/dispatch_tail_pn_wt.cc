// Tail-call handlers in clang's preserve_none convention with the top of stack as a fifth argument,
// written through to its slot (sp_wt).
#if defined(__clang__) && (defined(__x86_64__) || defined(__aarch64__)) && __has_attribute(preserve_none)
#define DLW_CC __attribute__((preserve_none))
#define DLW_MODE tail_pn_wt
#define DLW_PLACE_WT 1
#include "dispatch_tail.inc"
#else
#include "machine.h"
namespace dlab::wasm {
const uint64_t* tail_pn_wt_op_words() { return nullptr; }
void run_tail_pn_wt(DLW_HANDLER_PARAMS) { m->trap = "preserve_none dispatch is not available in this build"; }
}  // namespace dlab::wasm
#endif
