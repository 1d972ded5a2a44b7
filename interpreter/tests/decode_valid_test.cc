// decode_valid_module (validate/decode_valid.cc) against decode_module then validate_module: the
// same module when valid, and the same error, kind, message and offset, when not, wherever the
// malformed and the invalid parts sit (one body, two bodies, a module big enough to validate in
// parallel); and the decoder's deferred bodies really left unread.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "dispatchlab/interpreter/module.h"
#include "dispatchlab/interpreter/validator.h"
#include "module_bytes.h"

namespace dlab::wasm {
namespace {

using Bytes = std::vector<uint8_t>;
using test_support::section;
using test_support::uleb;

// A body: its locals (count, type code) and its code.
struct Body {
  Bytes code;
  std::vector<std::pair<uint32_t, uint8_t>> locals = {};
};

// A module of functions of type [] -> [], and with `data` a memory, one active data segment and
// no data count section.
Bytes module_of(const std::vector<Body>& bodies, bool data = false) {
  Bytes m = {0x00, 0x61, 0x73, 0x6D, 0x01, 0x00, 0x00, 0x00};
  section(m, 1, {0x01, 0x60, 0x00, 0x00});
  Bytes funcs;
  uleb(funcs, bodies.size());
  for (size_t i = 0; i < bodies.size(); ++i) funcs.push_back(0x00);
  section(m, 3, funcs);
  if (data) section(m, 5, {0x01, 0x00, 0x01});
  Bytes code;
  uleb(code, bodies.size());
  for (const Body& b : bodies) {
    Bytes body;
    uleb(body, b.locals.size());
    for (auto [n, t] : b.locals) {
      uleb(body, n);
      body.push_back(t);
    }
    body.insert(body.end(), b.code.begin(), b.code.end());
    uleb(code, body.size());
    code.insert(code.end(), body.begin(), body.end());
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

constexpr uint8_t kEnd = 0x0B, kNop = 0x01, kI32Add = 0x6A, kIllegal = 0xFF, kLocalGet = 0x20, kDrop = 0x1A;
constexpr uint8_t kI32 = 0x7F, kI64 = 0x7E;

// Over 256 KiB of code: validated in chunks on several threads where the machine has them
// (validator.cc), in one otherwise; 400 bodies are two chunks either way.
std::vector<Body> many_bodies() {
  std::vector<Body> bodies(400, Body{Bytes(1024, kNop)});
  for (Body& body : bodies) body.code.push_back(kEnd);
  return bodies;
}

TEST(DecodeValidModule, ValidModuleIsTheTwoPassModule) {
  Bytes b = module_of({{{kNop, kEnd}}, {{0x41, 0x05, 0x1A, kEnd}, {{2, kI32}, {1, kI64}}}});  // nop; i32.const 5 drop
  Module one = decode_valid_module(b), two = decode_module(b);
  ASSERT_EQ(one.code.size(), two.code.size());
  for (size_t i = 0; i < one.code.size(); ++i) {
    EXPECT_EQ(one.code[i].code.bytes, two.code[i].code.bytes) << i;
    EXPECT_EQ(one.code[i].locals, two.code[i].locals) << i;
  }
}

TEST(DecodeValidModule, DeferredBodiesAreLeftUnread) {
  // What makes the one reading one: the decoder, told to defer, passes a malformed body (and
  // keeps all of its bytes for the validator), which its own reading rejects.
  Bytes b = module_of({{{kNop, kIllegal, kEnd}}});
  Module m;
  EXPECT_NO_THROW(m = decode_module(b.data(), b.size(), BodyReading::kDeferred));
  ASSERT_EQ(m.code.size(), 1u);
  EXPECT_EQ(m.code[0].code.bytes, (Bytes{kNop, kIllegal, kEnd}));
  EXPECT_THROW(decode_module(b), DecodeError);
}

TEST(DecodeValidModule, AMalformedBodyAloneIsTheDecodersError) {
  Bytes b = module_of({{{kNop, kIllegal, kEnd}}});
  ASSERT_EQ(two_pass(b).rfind("malformed at ", 0), 0u) << two_pass(b);
  EXPECT_EQ(one_pass(b), two_pass(b));
  std::vector<Body> bodies = many_bodies();
  bodies[250].code.insert(bodies[250].code.begin() + 3, kIllegal);  // in the second chunk
  b = module_of(bodies);
  ASSERT_EQ(two_pass(b).rfind("malformed at ", 0), 0u) << two_pass(b);
  EXPECT_EQ(one_pass(b), two_pass(b));
}

TEST(DecodeValidModule, MalformedOutranksInvalidInOneBody) {
  // i32.add on an empty stack (invalid), then an illegal opcode (malformed): the decoder's reading
  // meets the malformed byte, the validator's stops at the invalid add first.
  Bytes b = module_of({{{kI32Add, kIllegal, kEnd}}});
  ASSERT_EQ(two_pass(b).rfind("malformed at ", 0), 0u) << two_pass(b);
  EXPECT_EQ(one_pass(b), two_pass(b));
}

TEST(DecodeValidModule, MalformedLaterBodyOutranksInvalidEarlierOne) {
  Bytes b = module_of({{{kI32Add, kEnd}}, {{kNop, kIllegal, kEnd}}});
  ASSERT_EQ(two_pass(b).rfind("malformed at ", 0), 0u) << two_pass(b);
  EXPECT_EQ(one_pass(b), two_pass(b));
}

TEST(DecodeValidModule, BytesAfterTheFinalEndAreMalformed) {
  Bytes b = module_of({{{kEnd, kNop}}});
  EXPECT_NE(two_pass(b).find("section size mismatch"), std::string::npos) << two_pass(b);
  EXPECT_EQ(one_pass(b), two_pass(b));
}

TEST(DecodeValidModule, DataIndexWithoutDataCountSectionIsMalformed) {
  Bytes b = module_of({{{0xFC, 0x09, 0x00, kEnd}}}, true);  // data.drop 0
  EXPECT_NE(two_pass(b).find("data count section required"), std::string::npos) << two_pass(b);
  EXPECT_EQ(one_pass(b), two_pass(b));
}

TEST(DecodeValidModule, InvalidOnlyIsTheValidatorsError) {
  Bytes b = module_of({{{kNop, kEnd}}, {{kI32Add, kEnd}}});
  ASSERT_EQ(two_pass(b).rfind("invalid: ", 0), 0u) << two_pass(b);
  EXPECT_EQ(one_pass(b), two_pass(b));
}

TEST(DecodeValidModule, ParallelValidationKeepsTheOrder) {
  // The first body invalid, the last malformed: the malformed one is the module's error.
  std::vector<Body> bodies = many_bodies();
  bodies.front().code.insert(bodies.front().code.begin(), kI32Add);
  bodies.back().code.insert(bodies.back().code.begin() + 7, kIllegal);
  Bytes b = module_of(bodies);
  ASSERT_EQ(two_pass(b).rfind("malformed at ", 0), 0u) << two_pass(b);
  EXPECT_EQ(one_pass(b), two_pass(b));
  bodies.back().code.erase(bodies.back().code.begin() + 7);
  b = module_of(bodies);
  ASSERT_EQ(two_pass(b).rfind("invalid: ", 0), 0u) << two_pass(b);
  EXPECT_EQ(one_pass(b), two_pass(b));
}

TEST(DecodeValidModule, LocalTypesEitherSideOfTheFlatTable) {
  // The validator keeps the first 4096 locals' types by index and walks the runs past them:
  // 4096 i32 then one i64, read at 4095 (i32) and 4096 (i64), and 4097, no such local.
  auto body = [](uint32_t local, uint8_t add) {
    Bytes code = {kLocalGet};
    uleb(code, local);
    code.insert(code.end(), {kLocalGet});
    uleb(code, local);
    code.insert(code.end(), {add, kDrop, kEnd});
    return Body{code, {{4096, kI32}, {1, kI64}}};
  };
  constexpr uint8_t kI64Add = 0x7C;
  EXPECT_EQ(one_pass(module_of({body(4095, kI32Add)})), "ok");
  EXPECT_EQ(one_pass(module_of({body(4096, kI64Add)})), "ok");
  EXPECT_EQ(one_pass(module_of({body(4095, kI64Add)})), "invalid: type mismatch");
  EXPECT_EQ(one_pass(module_of({body(4096, kI32Add)})), "invalid: type mismatch");
  EXPECT_EQ(one_pass(module_of({body(4097, kI32Add)})), "invalid: unknown local");
  for (uint32_t at : {4095u, 4096u, 4097u}) EXPECT_EQ(one_pass(module_of({body(at, kI32Add)})), two_pass(module_of({body(at, kI32Add)})));
}

}  // namespace
}  // namespace dlab::wasm
