// decode_valid_module (validate/decode_valid.cc) against decode_module then validate_module: the
// same module when valid, and the same error, kind, message and offset, when not, wherever the
// malformed and the invalid parts sit (one body, two bodies, a module big enough to validate in
// parallel).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "dispatchlab/interpreter/module.h"
#include "dispatchlab/interpreter/validator.h"

namespace dlab::wasm {
namespace {

using Bytes = std::vector<uint8_t>;

void leb(Bytes& out, uint64_t v) {
  do {
    uint8_t b = v & 0x7F;
    v >>= 7;
    out.push_back(v ? (b | 0x80) : b);
  } while (v);
}
void section(Bytes& out, uint8_t id, const Bytes& content) {
  out.push_back(id);
  leb(out, content.size());
  out.insert(out.end(), content.begin(), content.end());
}

// A module of functions of type [] -> [], each body given without its locals' count (none).
// With `data`: a memory, one active data segment and no data count section.
Bytes module_of(const std::vector<Bytes>& bodies, bool data = false) {
  Bytes m = {0x00, 0x61, 0x73, 0x6D, 0x01, 0x00, 0x00, 0x00};
  section(m, 1, {0x01, 0x60, 0x00, 0x00});
  Bytes funcs;
  leb(funcs, bodies.size());
  for (size_t i = 0; i < bodies.size(); ++i) funcs.push_back(0x00);
  section(m, 3, funcs);
  if (data) section(m, 5, {0x01, 0x00, 0x01});
  Bytes code;
  leb(code, bodies.size());
  for (const Bytes& b : bodies) {
    leb(code, b.size() + 1);
    code.push_back(0x00);  // no locals
    code.insert(code.end(), b.begin(), b.end());
  }
  section(m, 10, code);
  if (data) section(m, 11, {0x01, 0x00, 0x41, 0x00, 0x0B, 0x01, 0x2A});  // at i32.const 0: one byte
  return m;
}

// "ok", or the error's kind, message and offset.
template <typename F>
std::string outcome(F f) {
  try {
    f();
    return "ok";
  } catch (const DecodeError& e) {
    return "malformed at " + std::to_string(e.offset()) + ": " + e.what();
  } catch (const ValidationError& e) {
    return std::string("invalid: ") + e.what();
  }
}
std::string two_pass(const Bytes& b) {
  return outcome([&] { validate_module(decode_module(b)); });
}
std::string one_pass(const Bytes& b) {
  return outcome([&] { decode_valid_module(b); });
}

constexpr uint8_t kEnd = 0x0B, kNop = 0x01, kI32Add = 0x6A, kIllegal = 0xFF;

TEST(DecodeValidModule, ValidModuleIsTheTwoPassModule) {
  Bytes b = module_of({{kNop, kEnd}, {0x41, 0x05, 0x1A, kEnd}});  // nop; i32.const 5 drop
  Module one = decode_valid_module(b), two = decode_module(b);
  ASSERT_EQ(one.code.size(), two.code.size());
  for (size_t i = 0; i < one.code.size(); ++i) EXPECT_EQ(one.code[i].code.bytes, two.code[i].code.bytes) << i;
}

TEST(DecodeValidModule, MalformedOutranksInvalidInOneBody) {
  // i32.add on an empty stack (invalid), then an illegal opcode (malformed): the decoder's reading
  // meets the malformed byte, the validator's stops at the invalid add first.
  Bytes b = module_of({{kI32Add, kIllegal, kEnd}});
  ASSERT_EQ(two_pass(b).rfind("malformed at ", 0), 0u) << two_pass(b);
  EXPECT_EQ(one_pass(b), two_pass(b));
}

TEST(DecodeValidModule, MalformedLaterBodyOutranksInvalidEarlierOne) {
  Bytes b = module_of({{kI32Add, kEnd}, {kNop, kIllegal, kEnd}});
  ASSERT_EQ(two_pass(b).rfind("malformed at ", 0), 0u) << two_pass(b);
  EXPECT_EQ(one_pass(b), two_pass(b));
}

TEST(DecodeValidModule, BytesAfterTheFinalEndAreMalformed) {
  Bytes b = module_of({{kEnd, kNop}});
  EXPECT_EQ(two_pass(b).find("section size mismatch") != std::string::npos, true) << two_pass(b);
  EXPECT_EQ(one_pass(b), two_pass(b));
}

TEST(DecodeValidModule, DataIndexWithoutDataCountSectionIsMalformed) {
  Bytes b = module_of({{0xFC, 0x09, 0x00, kEnd}}, true);  // data.drop 0
  EXPECT_NE(two_pass(b).find("data count section required"), std::string::npos) << two_pass(b);
  EXPECT_EQ(one_pass(b), two_pass(b));
}

TEST(DecodeValidModule, InvalidOnlyIsTheValidatorsError) {
  Bytes b = module_of({{kNop, kEnd}, {kI32Add, kEnd}});
  ASSERT_EQ(two_pass(b).rfind("invalid: ", 0), 0u) << two_pass(b);
  EXPECT_EQ(one_pass(b), two_pass(b));
}

TEST(DecodeValidModule, ParallelValidationKeepsTheOrder) {
  // Over 256 KiB of code: validated in chunks on several threads (validator.cc). The first body
  // invalid, the last malformed: the malformed one is the module's error.
  std::vector<Bytes> bodies(400, Bytes(1024, kNop));
  for (Bytes& body : bodies) body.push_back(kEnd);
  bodies.front().insert(bodies.front().begin(), kI32Add);
  bodies.back().insert(bodies.back().begin() + 7, kIllegal);
  Bytes b = module_of(bodies);
  ASSERT_EQ(two_pass(b).rfind("malformed at ", 0), 0u) << two_pass(b);
  EXPECT_EQ(one_pass(b), two_pass(b));
  bodies.back().erase(bodies.back().begin() + 7);
  b = module_of(bodies);
  ASSERT_EQ(two_pass(b).rfind("invalid: ", 0), 0u) << two_pass(b);
  EXPECT_EQ(one_pass(b), two_pass(b));
}

}  // namespace
}  // namespace dlab::wasm
