// libFuzzer target: decoding and validating arbitrary bytes ends in a module, a DecodeError or a
// ValidationError; anything else (a crash, a sanitizer report,
// another exception) is a bug. Instantiation joins this target when it lands.
#include <cstddef>
#include <cstdint>

#include "dispatchlab/interpreter/module.h"
#include "dispatchlab/interpreter/validator.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    dlab::wasm::validate_module(dlab::wasm::decode_module(data, size));
  } catch (const dlab::wasm::DecodeError&) {
  } catch (const dlab::wasm::ValidationError&) {
  }
  return 0;
}
