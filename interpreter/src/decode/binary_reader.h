// Reading the WebAssembly binary format: LEB128 integers with the spec's over-long and
// out-of-range checks, names (UTF-8 validated), and bounds that turn into "unexpected end".
#pragma once

#include <cstdint>
#include <string>

#include "dispatchlab/interpreter/module.h"

namespace dlab::wasm {

class BinaryReader {
 public:
  BinaryReader(const uint8_t* data, size_t size, size_t base = 0) : p_(data), end_(data + size), begin_(data), base_(base) {}

  bool at_end() const { return p_ == end_; }
  size_t offset() const { return base_ + static_cast<size_t>(p_ - begin_); }
  size_t remaining() const { return static_cast<size_t>(end_ - p_); }
  const uint8_t* position() const { return p_; }

  [[noreturn]] void fail(const std::string& what) const { throw DecodeError(offset(), what); }

  uint8_t peek() const {
    if (p_ == end_) fail("unexpected end");
    return *p_;
  }
  uint8_t u8() {
    if (p_ == end_) fail("unexpected end");
    return *p_++;
  }
  const uint8_t* bytes(size_t n) {
    if (remaining() < n) fail("unexpected end");
    const uint8_t* b = p_;
    p_ += n;
    return b;
  }
  // One byte without a continuation bit is always in range: read inline (most indices and
  // constants are that short); anything longer through leb's checks.
  uint32_t u32() { return short_leb() ? *p_++ : static_cast<uint32_t>(leb(32, false)); }
  uint64_t u64() { return short_leb() ? *p_++ : leb(64, false); }
  int32_t s32() { return short_leb() ? short_signed() : static_cast<int32_t>(leb(32, true)); }
  int64_t s64() { return short_leb() ? short_signed() : static_cast<int64_t>(leb(64, true)); }
  int64_t s33() { return static_cast<int64_t>(leb(33, true)); }
  std::string name();
  // A sub-reader over the next n bytes (a section or a function body).
  BinaryReader sub(size_t n) {
    size_t off = offset();
    const uint8_t* b = bytes(n);
    return BinaryReader(b, n, off);
  }

 private:
  uint64_t leb(int bits, bool is_signed);
  bool short_leb() const { return p_ != end_ && *p_ < 0x80; }
  int32_t short_signed() {
    int32_t v = *p_++;
    return v & 0x40 ? v - 0x80 : v;
  }

  const uint8_t* p_;
  const uint8_t* end_;
  const uint8_t* begin_;
  size_t base_;
};

// A value type and a heap type (module_decoder.cc, where the binary format's rules for them are):
// shared by the decoder, the validator and the lowering, which read the same immediates.
ValType read_valtype(BinaryReader& r);
HeapType read_heaptype(BinaryReader& r);

}  // namespace dlab::wasm
