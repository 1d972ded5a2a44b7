// Computed-goto dispatch ("direct threading"): one function, a label per handler of
// handlers.def, and every handler ends in its own `goto *` through the next op word, so each
// handler has its own indirect jump (the models' `goto` axis) without a call per instruction.
// The op words are the labels' addresses, which exist only inside the function: called with a
// null ip, run_goto publishes them instead of running.
#include <bit>
#include <cstring>
#include <limits>

#include "machine.h"
#include "numeric.h"
#include "ops.h"
#include "simd.h"

namespace dlab::wasm {

namespace {
uint64_t g_words[static_cast<size_t>(Op::kCount)];
}  // namespace

void run_goto(DLW_HANDLER_PARAMS) {
  static const void* const kLabels[] = {
#define OP(name, ...) &&L_##name,
#define NUM(name, opcode, sig, ...) OP(name)
#define MEM(name, opcode, sig, ...) OP(name)
#define VEC(name, sub, imm, sig, ...) OP(name)
#include "handlers.def"
#undef OP
#undef NUM
#undef MEM
#undef VEC
  };
  static_assert(sizeof(kLabels) / sizeof(kLabels[0]) == static_cast<size_t>(Op::kCount));
  if (ip == nullptr) {
    for (size_t i = 0; i < static_cast<size_t>(Op::kCount); ++i) g_words[i] = reinterpret_cast<uint64_t>(kLabels[i]);
    return;
  }
#define GOTO(p)                                    \
  {                                                \
    ip = (p);                                      \
    goto *reinterpret_cast<const void*>(ip[0]);    \
  }
#define NEXT(n) GOTO(ip + (n))
#define TRAP(msg)    \
  {                  \
    m->trap = (msg); \
    return;          \
  }
  GOTO(ip);
#define OP(name, ...) \
  L_##name : {        \
    __VA_ARGS__       \
  }
#define NUM(name, opcode, sig, ...) OP(name, __VA_ARGS__)
#define MEM(name, opcode, sig, ...) OP(name, __VA_ARGS__)
#define VEC(name, sub, imm, sig, ...) OP(name, __VA_ARGS__)
#include "handlers.def"
#undef OP
#undef NUM
#undef MEM
#undef VEC
}

const uint64_t* goto_op_words() {
  static const bool published = [] {
    run_goto(nullptr, nullptr, nullptr, nullptr);
    return true;
  }();
  (void)published;
  return g_words;
}

}  // namespace dlab::wasm
