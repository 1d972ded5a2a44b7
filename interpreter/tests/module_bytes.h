// Writing a module's binary form by hand in tests: an unsigned LEB128 and a section (its id, its
// size, its bytes), for modules no assembler would write (malformed ones) or that a test wants
// byte for byte.
#pragma once

#include <cstdint>
#include <vector>

namespace dlab::wasm::test_support {

inline void uleb(std::vector<uint8_t>& out, uint64_t v) {
  do {
    uint8_t b = v & 0x7F;
    v >>= 7;
    out.push_back(static_cast<uint8_t>(b | (v ? 0x80 : 0)));
  } while (v);
}

inline void section(std::vector<uint8_t>& m, uint8_t id, const std::vector<uint8_t>& body) {
  m.push_back(id);
  uleb(m, body.size());
  m.insert(m.end(), body.begin(), body.end());
}

}  // namespace dlab::wasm::test_support
