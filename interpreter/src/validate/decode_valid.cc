// decode_valid_module: decoding and validation with each function body read once. The decoder
// keeps the bodies unread (BodyReading::kDeferred) and the validator's reading, the same
// read_instruction with the same checks, is the only one; on a large module that reading is most
// of the start-up (the corpus module: about half of dlab-run's, the decoder's and the validator's
// alike). A module that fails either step is decoded and validated again the two-pass way, so the
// error is exactly decode_module's then validate_module's: a malformed body outranks an invalid
// one wherever each sits, and the message and offset are the decoder's.
#include "dispatchlab/interpreter/module.h"
#include "dispatchlab/interpreter/validator.h"

#include <stdexcept>

namespace dlab::wasm {

Module decode_valid_module(const uint8_t* data, size_t size) {
  try {
    Module m = decode_module(data, size, BodyReading::kDeferred);
    validate_module(m);
    return m;
  } catch (const DecodeError&) {
  } catch (const ValidationError&) {
  }
  Module m = decode_module(data, size, BodyReading::kRead);
  validate_module(m);
  // Both passed the second time: the single reading rejected a module the two-pass way accepts,
  // a disagreement between the two that is this file's bug, not the module's.
  throw std::logic_error("internal error: decode_valid_module's one reading rejected a module that decoding and validating apart accept");
}

Module decode_valid_module(const std::vector<uint8_t>& bytes) { return decode_valid_module(bytes.data(), bytes.size()); }

}  // namespace dlab::wasm
