#include "engines/ops.h"

#include "dispatchlab/interpreter/code_density.h"
#include "dispatchlab/interpreter/runtime.h"

namespace dlab::wasm {

std::string op_family_of(std::string_view op) {
  for (size_t i = 0; i < static_cast<size_t>(Op::kCount); ++i)
    if (op == kOpNames[i]) return op_family(i);
  return "";
}

unsigned declared_words(size_t op) { return op < static_cast<size_t>(Op::kCount) ? kDeclaredWords.of[op] : 0; }

uint64_t lowered_code_words(const Runtime& rt) {
  uint64_t words = 0;
  for (const auto& inst : rt.instances())
    for (const FuncInst* f : inst->funcs)
      if (f->instance == inst.get() && !f->body) words += f->code.size();  // defined there, and lowered
  return words;
}

}  // namespace dlab::wasm
