#include "decode/binary_reader.h"

namespace dlab::wasm {

DecodeError::DecodeError(size_t offset, const std::string& what) : std::runtime_error(what), offset_(offset) {}

// One LEB128 reader for both signednesses: at most ceil(bits/7) bytes, and in the last byte the
// bits beyond the type's width must be zero (unsigned) or copies of the sign bit (signed).
uint64_t BinaryReader::leb(int bits, bool is_signed) {
  uint64_t result = 0;
  int shift = 0;
  const int max_bytes = (bits + 6) / 7;
  for (int i = 0;; ++i) {
    if (p_ == end_) fail("unexpected end");
    uint8_t b = *p_++;
    bool last = i == max_bytes - 1;
    if (last) {
      if (b & 0x80) fail("integer representation too long");
      int used = bits - shift;  // value bits that fit in this byte
      if (used < 7) {
        uint8_t rest = static_cast<uint8_t>(b >> used) & static_cast<uint8_t>(0x7F >> used);
        bool negative = is_signed && ((b >> (used - 1)) & 1);
        if (rest != (negative ? static_cast<uint8_t>(0x7F >> used) : 0)) fail("integer too large");
      }
    }
    result |= static_cast<uint64_t>(b & 0x7F) << shift;
    shift += 7;
    if (last || !(b & 0x80)) {
      if (is_signed && shift < 64 && (b & 0x40)) result |= ~0ull << shift;  // sign-extend
      return result;
    }
  }
}

std::string BinaryReader::name() {
  uint32_t n = u32();
  const uint8_t* b = bytes(n);
  // UTF-8 validation: no overlongs, no surrogates, nothing above U+10FFFF.
  for (uint32_t i = 0; i < n;) {
    uint8_t c = b[i];
    int len = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
    if (len == 0 || i + len > n) fail("malformed UTF-8 encoding");
    uint32_t cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
    for (int k = 1; k < len; ++k) {
      if ((b[i + k] & 0xC0) != 0x80) fail("malformed UTF-8 encoding");
      cp = (cp << 6) | (b[i + k] & 0x3F);
    }
    bool overlong = (len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000);
    if (overlong || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) fail("malformed UTF-8 encoding");
    i += len;
  }
  return std::string(reinterpret_cast<const char*>(b), n);
}

}  // namespace dlab::wasm
