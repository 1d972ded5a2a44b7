// Validation of a decoded module (WebAssembly 2.0 core including SIMD, plus tail calls): the
// spec's algorithm with an operand stack and a control stack per function body, and the
// module-level rules (indices, limits, constant expressions, unique exports, start function).
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "dispatchlab/interpreter/module.h"

namespace dlab::wasm {

class ValidationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws ValidationError, with the spec's wording where it has one. A body that goes on past its
// final `end`, or uses a data index without a data count section, is malformed, which the
// decoder's reading rejects first; a Module whose bodies it did not read (BodyReading::kDeferred)
// or built by hand gets a ValidationError for it here, and decode_valid_module then the
// decoder's DecodeError.
void validate_module(const Module& m);

// A module decoded and validated, each function body read once, by the validator (the decoder
// leaves them unread: BodyReading::kDeferred), where decode_module then validate_module read every
// body twice: a large module's start-up (docs/interpreter/programs.md). Throws what that pair
// throws, the same error: a failure of either is read again the two-pass way, so that a malformed
// body still outranks an invalid one and the message is the decoder's.
Module decode_valid_module(const uint8_t* data, size_t size);
Module decode_valid_module(const std::vector<uint8_t>& bytes);

}  // namespace dlab::wasm
