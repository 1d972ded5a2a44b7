// Validation of a decoded module (WebAssembly 2.0 core without SIMD, plus tail calls): the
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

// SIMD (v128 types and 0xFD opcodes) is not validated yet: such modules raise this instead of
// being accepted or rejected, so a runner can count them as skipped.
class UnsupportedFeature : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws ValidationError (with the spec's wording where it has one) or UnsupportedFeature.
void validate_module(const Module& m);

}  // namespace dlab::wasm
