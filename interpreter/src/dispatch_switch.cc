// Switch dispatch: one function, one loop, a case per handler of handlers.def. Every handler ends
// in a jump back to the single indirect branch of the switch (the shared-dispatch-site layout the
// models call `switch`).
#include <bit>
#include <cstring>
#include <limits>

#include "machine.h"
#include "numeric.h"
#include "simd.h"
#include "ops.h"

namespace dlab::wasm {

namespace {
constexpr auto make_words() {
  struct Words {
    uint64_t w[static_cast<size_t>(Op::kCount)];
  } words{};
  for (size_t i = 0; i < static_cast<size_t>(Op::kCount); ++i) words.w[i] = i;
  return words;
}
constexpr auto kWords = make_words();
}  // namespace

const uint64_t* switch_op_words() { return kWords.w; }

void run_switch(DLW_HANDLER_PARAMS) {
#define GOTO(p)  \
  {              \
    ip = (p);    \
    goto next;   \
  }
#define NEXT(n) GOTO(ip + (n))
#define TRAP(msg)    \
  {                  \
    m->trap = (msg); \
    return;          \
  }
next:
  switch (static_cast<Op>(ip[0])) {
#define OP(name, ...) \
  case Op::name: {    \
    __VA_ARGS__       \
  }
#define NUM(name, opcode, sig, ...) OP(name, __VA_ARGS__)
#define MEM(name, opcode, sig, ...) OP(name, __VA_ARGS__)
#define VEC(name, sub, imm, sig, ...) OP(name, __VA_ARGS__)
#include "handlers.def"
    case Op::kCount: break;
  }
  m->trap = "invalid op word (interpreter bug)";
}

}  // namespace dlab::wasm
