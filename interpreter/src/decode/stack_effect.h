// A declared stack effect, "pops:pushes" (instructions.def's and handlers.def's notation, one
// letter an operand; that file lists the letters): read here once for the validator and the
// lowering, which each resolve the letters that depend on the instruction's immediates (a memory's
// or a table's address type, a table's element type) in their own type domain.
#pragma once

#include <optional>
#include <string_view>

#include "dispatchlab/interpreter/module.h"

namespace dlab::wasm {

struct StackEffect {
  std::string_view pops, pushes;  // in stack order: the last letter is the top
  bool by_rule = false;           // "*": the instruction's own rule says (validate/, lower/)
};

// A plain loop (no string_view::find): evaluated at compile time for every handler's signature,
// where the library's search costs far more constant-evaluation steps.
constexpr StackEffect stack_effect(const char* declared) {
  if (declared[0] == '*' && declared[1] == 0) return {{}, {}, true};
  size_t colon = 0;
  while (declared[colon] != ':') ++colon;
  size_t end = colon + 1;
  while (declared[end] != 0) ++end;
  return {std::string_view(declared, colon), std::string_view(declared + colon + 1, end - colon - 1)};
}

// The letters whose type the letter alone says (numbers, the vector, the fixed reference types).
constexpr std::optional<ValType> fixed_letter_type(char letter) {
  switch (letter) {
    case 'i': return ValType::kI32;
    case 'l': return ValType::kI64;
    case 'f': return ValType::kF32;
    case 'd': return ValType::kF64;
    case 'v': return ValType::kV128;
    case 'q': return ref_type(true, kHeapEq);
    case 'y': return ref_type(true, kHeapArray);
    case 'n': return ref_type(true, kHeapI31);
    case 'N': return ref_type(false, kHeapI31);
    default: return std::nullopt;
  }
}
// The letters resolved from the instruction's immediates: a memory's address type, a table's
// address and element types; and any reference, which is only popped.
enum class ContextLetter : char { kMemoryAddress = 'a', kTableAddress = 't', kTableElement = 'e', kAnyRef = 'r' };
constexpr bool is_context_letter(char c) { return c == 'a' || c == 't' || c == 'e' || c == 'r'; }

// Whether a declaration is well formed: "*", or one ':' between known letters, 'r' only popped.
constexpr bool valid_stack_effect(std::string_view declared) {
  if (declared == "*") return true;
  const size_t colon = declared.find(':');
  if (colon == std::string_view::npos || declared.find(':', colon + 1) != std::string_view::npos) return false;
  for (size_t i = 0; i < declared.size(); ++i) {
    const char c = declared[i];
    if (c == ':') continue;
    if (c == 'r' && i > colon) return false;
    if (!fixed_letter_type(c) && !is_context_letter(c)) return false;
  }
  return true;
}

}  // namespace dlab::wasm
