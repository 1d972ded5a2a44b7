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
// address and element types; any reference, which is only popped, and that reference made
// non-null, only pushed. And the GC letters, resolved from the type index immediate x (and a
// field index y): the reference to x, nullable (popped) or not (pushed); the storage x and y
// name (struct x's field y, or array x's element) read or written: its unpacked type ('F': a
// plain get pushes it, which needs an unpacked storage; array.new pops it), a packed storage read
// sign- or zero-extended to i32 ('P', pushed), a value written into a mutable storage ('W', popped).
enum class ContextLetter : char {
  kMemoryAddress = 'a', kTableAddress = 't', kTableElement = 'e', kAnyRef = 'r', kNonNullRef = 'R',
  kTypeRef = 'x', kTypeRefNonNull = 'X', kStorage = 'F', kPackedRead = 'P', kStorageWrite = 'W',
};
constexpr bool is_context_letter(char c) {
  for (char k : {'a', 't', 'e', 'r', 'R', 'x', 'X', 'F', 'P', 'W'})
    if (c == k) return true;
  return false;
}
// The letters resolved from a type index immediate (instruction_reader.h checks the row has one).
constexpr bool is_type_letter(char c) { return c == 'x' || c == 'X' || c == 'F' || c == 'P' || c == 'W'; }

// Whether a declaration is well formed: "*", or one ':' between known letters; 'r', 'x' and 'W'
// only popped, 'R', 'X' and 'P' only pushed, 'R' only where an 'r' is popped.
constexpr bool valid_stack_effect(std::string_view declared) {
  if (declared == "*") return true;
  const size_t colon = declared.find(':');
  if (colon == std::string_view::npos || declared.find(':', colon + 1) != std::string_view::npos) return false;
  for (size_t i = 0; i < declared.size(); ++i) {
    const char c = declared[i];
    if (c == ':') continue;
    const bool popped = i < colon;
    if ((c == 'r' || c == 'x' || c == 'W') && !popped) return false;
    if ((c == 'R' || c == 'X' || c == 'P') && popped) return false;
    if (c == 'R' && declared.substr(0, colon).find('r') == std::string_view::npos) return false;
    if (!fixed_letter_type(c) && !is_context_letter(c)) return false;
  }
  return true;
}

}  // namespace dlab::wasm
