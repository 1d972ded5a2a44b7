// libFuzzer target: decoding arbitrary bytes either yields a module or a DecodeError; anything
// else (a crash, a sanitizer report, another exception) is a bug. Validation and instantiation
// join this target as they land.
#include <cstddef>
#include <cstdint>

#include "dispatchlab/interpreter/module.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    dlab::wasm::decode_module(data, size);
  } catch (const dlab::wasm::DecodeError&) {
  }
  return 0;
}
