// Validation of a decoded module (WebAssembly 2.0 core including SIMD, plus tail calls): the
// spec's algorithm with an operand stack and a control stack per function body, and the
// module-level rules (indices, limits, constant expressions, unique exports, start function).
#pragma once

#include <stdexcept>
#include <string>

#include "dispatchlab/interpreter/module.h"

namespace dlab::wasm {

class ValidationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws ValidationError, with the spec's wording where it has one.
void validate_module(const Module& m);

}  // namespace dlab::wasm
