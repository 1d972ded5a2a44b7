// The vec placement (stack pointer in the machine) of tail-call handlers in clang's preserve_none convention: callee-saved registers become argument
// registers, so the handler state stays in registers without spills around every dispatch.
#if defined(__clang__) && (defined(__x86_64__) || defined(__aarch64__)) && __has_attribute(preserve_none)
#define DLW_CC __attribute__((preserve_none))
#define DLW_MODE tail_pn_vec
#define DLW_PLACE_VEC 1
#include "dispatch_tail.inc"
#else
#include "machine.h"
namespace dlab::wasm {
const uint64_t* tail_pn_vec_op_words() { return nullptr; }
void run_tail_pn_vec(DLW_HANDLER_PARAMS) { m->trap = "preserve_none dispatch is not available in this build"; }
}  // namespace dlab::wasm
#endif
