// A declared stack effect, "pops:pushes" (instructions.def's and handlers.def's notation, one
// letter an operand; that file lists the letters): read here once for the validator and the
// lowering, which each resolve the letters that depend on the instruction's immediates (a memory's
// or a table's address type, a table's element type) in their own type domain.
#pragma once

#include <array>
#include <cstdint>
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
constexpr std::optional<ValType> fixed_letter_type_of(char letter) {
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
    case 'E': return ref_type(true, kHeapExn);
    default: return std::nullopt;
  }
}
// The same as a table: the validator and the lowering ask it for every operand of every
// declared instruction, where the switch (out of line) was 2.5% of a large module's validation.
inline constexpr auto kFixedLetterTypes = [] {
  std::array<std::optional<ValType>, 128> t{};
  for (int c = 0; c < 128; ++c) t[static_cast<size_t>(c)] = fixed_letter_type_of(static_cast<char>(c));
  return t;
}();
constexpr std::optional<ValType> fixed_letter_type(char letter) {
  const auto c = static_cast<unsigned char>(letter);
  return c < kFixedLetterTypes.size() ? kFixedLetterTypes[c] : std::nullopt;
}
// The letters resolved from the instruction's immediates: a memory's address type, a table's
// address and element types; any reference, which is only popped, and that reference made
// non-null, only pushed. And the GC letters, resolved from the type index immediate x (and a
// field index y): the reference to x, nullable (popped) or not (pushed); the storage x and y
// name (struct x's field y, or array x's element) read or written: its unpacked type ('F': a
// plain get pushes it, which needs an unpacked storage; array.new pops it), a packed storage read
// sign- or zero-extended to i32 ('P', pushed), a value written into a mutable storage ('W', popped).
//
// And the sequences, each letter any number of operands: the types of the label a LABEL
// immediate names ('L'; a loop's parameters, any other block's results), the parameters and the
// results of the function type a FUNC or TYPE immediate names ('A' popped, 'Z' pushed), this
// function's results ('O', popped by a return) and a tag's parameters ('T', popped by a throw).
enum class ContextLetter : char {
  kMemoryAddress = 'a', kTableAddress = 't', kTableElement = 'e', kAnyRef = 'r', kNonNullRef = 'R',
  kTypeRef = 'x', kTypeRefNonNull = 'X', kStorage = 'F', kPackedRead = 'P', kStorageWrite = 'W',
  kLabel = 'L', kCallArgs = 'A', kCallResults = 'Z', kFunctionResults = 'O', kTagParams = 'T',
};
constexpr bool is_context_letter(char c) {
  for (char k : {'a', 't', 'e', 'r', 'R', 'x', 'X', 'F', 'P', 'W', 'L', 'A', 'Z', 'O', 'T'})
    if (c == k) return true;
  return false;
}
constexpr bool is_sequence_letter(char c) { return c == 'L' || c == 'A' || c == 'Z' || c == 'O' || c == 'T'; }
// The letters resolved from a type index immediate (instruction_reader.h checks the row has one).
constexpr bool is_type_letter(char c) { return c == 'x' || c == 'X' || c == 'F' || c == 'P' || c == 'W'; }

// The letters a declaration uses, one bit each ('A'..'z'), for a walker that asks which of its
// immediates' resolutions an instruction needs without searching its text.
constexpr uint64_t letter_bit(char c) { return c >= 'A' && c <= 'z' ? uint64_t{1} << (c - 'A') : 0; }
constexpr uint64_t letters_used(std::string_view declared) {
  uint64_t bits = 0;
  for (char c : declared) bits |= letter_bit(c);
  return bits;
}

// Whether a declaration is well formed: "*", or one ':' between known letters; 'r', 'x', 'W', 'A',
// 'O' and 'T' only popped, 'R', 'X', 'P' and 'Z' only pushed, 'R' only where an 'r' is popped.
constexpr bool valid_stack_effect(std::string_view declared) {
  if (declared == "*") return true;
  const size_t colon = declared.find(':');
  if (colon == std::string_view::npos || declared.find(':', colon + 1) != std::string_view::npos) return false;
  for (size_t i = 0; i < declared.size(); ++i) {
    const char c = declared[i];
    if (c == ':') continue;
    const bool popped = i < colon;
    if ((c == 'r' || c == 'x' || c == 'W' || c == 'A' || c == 'O' || c == 'T') && !popped) return false;
    if ((c == 'R' || c == 'X' || c == 'P' || c == 'Z') && popped) return false;
    if (c == 'R' && declared.substr(0, colon).find('r') == std::string_view::npos) return false;
    if (!fixed_letter_type(c) && !is_context_letter(c)) return false;
  }
  return true;
}

}  // namespace dlab::wasm
