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
#include <string>

namespace dlab::wasm {

Module decode_valid_module(const uint8_t* data, size_t size) {
  std::string first;
  try {
    Module m = decode_module(data, size, BodyReading::kDeferred);
    validate_module(m);
    return m;
  } catch (const DecodeError& e) {
    first = e.what();
  } catch (const ValidationError& e) {
    first = e.what();
  }
  Module m = decode_module(data, size, BodyReading::kRead);
  validate_module(m);
  // Both passed the second time: the one reading rejected a module the two-pass way accepts.
  // Either the bytes changed between the two (a module file rewritten while it was read) or the
  // two readings disagree, a bug of this file's.
  throw std::logic_error("the module was rejected (" + first + ") and then accepted when read again: was its file changed "
                         "while it was read? If not, an interpreter bug (decode_valid_module): please report it");
}

Module decode_valid_module(const std::vector<uint8_t>& bytes) { return decode_valid_module(bytes.data(), bytes.size()); }

}  // namespace dlab::wasm
