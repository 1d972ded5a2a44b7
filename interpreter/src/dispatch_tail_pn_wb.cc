// Tail-call handlers in clang's preserve_none convention with the top of stack as a fifth argument,
// written back to its slot only when a push covers it (sp_wb).
#if defined(__clang__) && (defined(__x86_64__) || defined(__aarch64__)) && __has_attribute(preserve_none)
#define DLW_CC __attribute__((preserve_none))
#define DLW_MODE tail_pn_wb
#define DLW_PLACE_WB 1
#include "dispatch_tail.inc"
#else
#include "machine.h"
namespace dlab::wasm {
const uint64_t* tail_pn_wb_op_words() { return nullptr; }
void run_tail_pn_wb(DLW_HANDLER_PARAMS) { m->trap = "preserve_none dispatch is not available in this build"; }
}  // namespace dlab::wasm
#endif
