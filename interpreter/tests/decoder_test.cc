#include <gtest/gtest.h>

#include "decode/binary_reader.h"
#include "dispatchlab/interpreter/module.h"

namespace dlab::wasm {
namespace {

std::vector<uint8_t> header() { return {0x00, 0x61, 0x73, 0x6D, 0x01, 0x00, 0x00, 0x00}; }

std::string error_of(std::vector<uint8_t> bytes) {
  try {
    decode_module(bytes);
  } catch (const DecodeError& e) {
    return e.what();
  }
  return "";
}

TEST(BinaryReader, Leb128BoundsAndSigns) {
  const uint8_t max_u32[] = {0xFF, 0xFF, 0xFF, 0xFF, 0x0F};
  EXPECT_EQ(BinaryReader(max_u32, 5).u32(), 0xFFFFFFFFu);
  const uint8_t too_large[] = {0xFF, 0xFF, 0xFF, 0xFF, 0x1F};
  EXPECT_THROW(BinaryReader(too_large, 5).u32(), DecodeError);
  const uint8_t too_long[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x00};
  EXPECT_THROW(BinaryReader(too_long, 6).u32(), DecodeError);
  const uint8_t minus_one[] = {0x7F};
  EXPECT_EQ(BinaryReader(minus_one, 1).s32(), -1);
  const uint8_t min_s32[] = {0x80, 0x80, 0x80, 0x80, 0x78};
  EXPECT_EQ(BinaryReader(min_s32, 5).s32(), INT32_MIN);
  const uint8_t bad_sign[] = {0x80, 0x80, 0x80, 0x80, 0x70};  // unused bits disagree with the sign
  EXPECT_THROW(BinaryReader(bad_sign, 5).s32(), DecodeError);
  const uint8_t short_input[] = {0x80};
  EXPECT_THROW(BinaryReader(short_input, 1).u32(), DecodeError);
}

TEST(BinaryReader, NamesMustBeUtf8) {
  const uint8_t ok[] = {0x03, 'a', 0xC3, 0xA9};
  EXPECT_EQ(BinaryReader(ok, 4).name(), "a\xC3\xA9");
  const uint8_t overlong[] = {0x02, 0xC0, 0x80};
  EXPECT_THROW(BinaryReader(overlong, 3).name(), DecodeError);
  const uint8_t surrogate[] = {0x03, 0xED, 0xA0, 0x80};
  EXPECT_THROW(BinaryReader(surrogate, 4).name(), DecodeError);
}

TEST(Decoder, DecodesAFunctionModule) {
  // (module (type (func (param i32) (result i32))) (func (type 0) local.get 0 i32.const 1 i32.add) (export "inc" (func 0)))
  auto b = header();
  b.insert(b.end(), {0x01, 0x06, 0x01, 0x60, 0x01, 0x7F, 0x01, 0x7F,       // type
                     0x03, 0x02, 0x01, 0x00,                               // function
                     0x07, 0x07, 0x01, 0x03, 'i', 'n', 'c', 0x00, 0x00,   // export
                     0x0A, 0x09, 0x01, 0x07, 0x00, 0x20, 0x00, 0x41, 0x01, 0x6A, 0x0B});  // code
  auto m = decode_module(b);
  ASSERT_EQ(m.types.size(), 1u);
  EXPECT_EQ(m.types[0].params, std::vector<ValType>{ValType::kI32});
  ASSERT_EQ(m.code.size(), 1u);
  EXPECT_EQ(m.code[0].code.bytes.back(), 0x0B);
  EXPECT_EQ(m.exports[0].name, "inc");
}

TEST(Decoder, MalformedModulesSayWhy) {
  EXPECT_EQ(error_of({0x00, 0x61, 0x73}), "unexpected end");
  EXPECT_EQ(error_of({0x00, 0x61, 0x73, 0x6E, 1, 0, 0, 0}), "magic header not detected");
  EXPECT_EQ(error_of({0x00, 0x61, 0x73, 0x6D, 2, 0, 0, 0}), "unknown binary version");
  auto bad_id = header();
  bad_id.insert(bad_id.end(), {0x0E, 0x00});  // 13 is the tag section (exception handling)
  EXPECT_EQ(error_of(bad_id), "malformed section id");
  auto missing_end = header();  // a body without its end opcode
  missing_end.insert(missing_end.end(), {0x01, 0x04, 0x01, 0x60, 0x00, 0x00, 0x03, 0x02, 0x01, 0x00, 0x0A, 0x04, 0x01, 0x02, 0x00, 0x01});
  EXPECT_EQ(error_of(missing_end), "END opcode expected");
  auto bad_op = header();
  bad_op.insert(bad_op.end(), {0x01, 0x04, 0x01, 0x60, 0x00, 0x00, 0x03, 0x02, 0x01, 0x00, 0x0A, 0x05, 0x01, 0x03, 0x00, 0xFF, 0x0B});
  EXPECT_EQ(error_of(bad_op).rfind("illegal opcode", 0), 0u);
  auto order = header();  // type section after the function section
  order.insert(order.end(), {0x03, 0x01, 0x00, 0x01, 0x01, 0x00});
  EXPECT_EQ(error_of(order), "unexpected content after last section");
  auto counts = header();  // a function without a body
  counts.insert(counts.end(), {0x01, 0x04, 0x01, 0x60, 0x00, 0x00, 0x03, 0x02, 0x01, 0x00});
  EXPECT_EQ(error_of(counts), "function and code section have inconsistent lengths");
}

TEST(Decoder, FuzzerFindingsStayFixed) {
  // A block type read past the end of the input (found by `just fuzz` within seconds).
  std::vector<uint8_t> blocktype_at_end = {0x00, 0x61, 0x73, 0x6D, 0x01, 0x00, 0x00, 0x00, 0x05, 0x03, 0x01, 0x00, 0x00,
                                           0x0B, 0x08, 0x01, 0x82, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02};
  EXPECT_FALSE(error_of(blocktype_at_end).empty());
}

}  // namespace
}  // namespace dlab::wasm
