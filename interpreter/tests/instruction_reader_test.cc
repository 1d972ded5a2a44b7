// The opcode reader (decode/instruction_reader.h): each kind of immediate decoded, every declared
// opcode known exactly once across instructions.def and handlers.def, and malformed input refused
// with the spec's messages.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "decode/instruction_reader.h"

namespace dlab::wasm {
namespace {

Instruction read(const std::vector<uint8_t>& bytes, size_t* left = nullptr) {
  BinaryReader r(bytes.data(), bytes.size());
  Instruction in = read_instruction(r);
  if (left) *left = r.remaining();
  return in;
}

std::string error_of(const std::vector<uint8_t>& bytes) {
  try {
    read(bytes);
  } catch (const DecodeError& e) {
    return e.what();
  }
  return "";
}

TEST(InstructionReader, EveryOpcodeIsDeclaredOnce) {
  std::map<uint32_t, int> seen;
  for (const SimpleOp& s : kSimpleOps) ++seen[s.opcode];
  for (const InstructionDecl& d : kInstructions) ++seen[d.opcode];
  EXPECT_EQ(seen.size(), std::size(kSimpleOps) + std::size(kInstructions));
  for (const auto& [opcode, n] : seen) EXPECT_EQ(n, 1) << std::hex << opcode;
  for (const SimpleOp& s : kSimpleOps) {
    OpcodeDecl d = find_opcode(s.opcode);
    EXPECT_EQ(d.simple, &s) << std::hex << s.opcode;
    EXPECT_EQ(d.decl, nullptr);
  }
  for (const InstructionDecl& i : kInstructions) {
    OpcodeDecl d = find_opcode(i.opcode);
    EXPECT_EQ(d.decl, &i) << i.name;
    EXPECT_EQ(d.simple, nullptr);
  }
  EXPECT_EQ(find_opcode(0xFF).decl, nullptr);
  EXPECT_EQ(find_opcode(0xFB1F).decl, nullptr);
}

TEST(InstructionReader, IndicesAndConstants) {
  size_t left = 99;
  Instruction in = read({0x11, 0x85, 0x01, 0x02, 0x0B}, &left);  // call_indirect 133 2, then end
  EXPECT_EQ(in.opcode, Opcode::call_indirect);
  EXPECT_EQ(in.x, 133u);
  EXPECT_EQ(in.y, 2u);
  EXPECT_EQ(left, 1u);
  in = read({0xFB, 0x02, 0x07, 0x03});  // struct.get 7 3
  EXPECT_EQ(in.opcode, Opcode::struct_get);
  EXPECT_EQ(in.x, 7u);
  EXPECT_EQ(in.y, 3u);
  in = read({0xFC, 0x08, 0x04, 0x01});  // memory.init data 4, memory 1
  EXPECT_EQ(in.opcode, Opcode::memory_init);
  EXPECT_TRUE(in.flags & DATACOUNT);
  EXPECT_EQ(in.x, 4u);
  EXPECT_EQ(in.y, 1u);
  EXPECT_EQ(read({0x41, 0x7F}).bits[0], 0xFFFFFFFFull);  // i32.const -1, zero-extended
  EXPECT_EQ(read({0x42, 0x7F}).bits[0], ~0ull);
  EXPECT_EQ(read({0x43, 0x00, 0x00, 0x80, 0x3F}).bits[0], 0x3F800000ull);  // f32 1.0
  EXPECT_TRUE(read({0x43, 0x00, 0x00, 0x80, 0x3F}).constant());
  std::vector<uint8_t> v128 = {0xFD, 0x0C};
  for (int i = 0; i < 16; ++i) v128.push_back(static_cast<uint8_t>(i));
  in = read(v128);
  EXPECT_EQ(in.opcode, Opcode::v128_const);
  EXPECT_EQ(in.bits[0], 0x0706050403020100ull);
  EXPECT_EQ(in.bits[1], 0x0F0E0D0C0B0A0908ull);
  EXPECT_TRUE(read({0x6A}).constant());   // extended-const's i32.add
  EXPECT_FALSE(read({0x6D}).constant());  // i32.div_s
  EXPECT_FALSE(read({0x20, 0x00}).constant());
}

TEST(InstructionReader, BlockTypesHeapTypesAndValueTypes) {
  Instruction in = read({0x02, 0x40});
  EXPECT_EQ(in.block.kind, BlockType::kEmpty);
  EXPECT_TRUE(in.flags & OPENS);
  in = read({0x03, 0x7E});
  EXPECT_EQ(in.block.kind, BlockType::kValue);
  EXPECT_EQ(in.block.value, ValType::kI64);
  in = read({0x04, 0x05});
  EXPECT_EQ(in.block.kind, BlockType::kIndex);
  EXPECT_EQ(in.block.index, 5u);
  EXPECT_EQ(read({0xD0, 0x70}).heap, kHeapFunc);
  EXPECT_EQ(read({0xFB, 0x16, 0x03}).heap, kHeapTypeIndex + 3);  // ref.cast (ref 3)
  in = read({0x1C, 0x01, 0x7D});  // select (result f32)
  EXPECT_EQ(in.count, 1u);
  EXPECT_EQ(in.type, ValType::kF32);
  EXPECT_TRUE(read({0x0B}).flags & END);
}

TEST(InstructionReader, Vectors) {
  // br_table 3 5 135 (default 9): the labels walked again from their bytes, which must outlive
  // the Instruction (a function body's do)
  const std::vector<uint8_t> br_table = {0x0E, 0x03, 0x03, 0x05, 0x87, 0x01, 0x09};
  Instruction in = read(br_table);
  EXPECT_EQ(in.count, 3u);
  EXPECT_EQ(in.x, 9u);
  std::vector<uint32_t> labels;
  for_each_label(in, [&](uint32_t l) { labels.push_back(l); });
  EXPECT_EQ(labels, (std::vector<uint32_t>{3, 5, 135}));
  // try_table (block empty) (catch 1 0) (catch_all_ref 2)
  const std::vector<uint8_t> try_table = {0x1F, 0x40, 0x02, 0x00, 0x01, 0x00, 0x03, 0x02};
  in = read(try_table);
  EXPECT_EQ(in.count, 2u);
  std::vector<CatchImm> clauses;
  for_each_catch(in, [&](const CatchImm& c) { clauses.push_back(c); });
  ASSERT_EQ(clauses.size(), 2u);
  EXPECT_EQ(clauses[0].kind, CatchKind::kCatch);
  EXPECT_EQ(clauses[0].tag, 1u);
  EXPECT_EQ(clauses[0].label, 0u);
  EXPECT_EQ(clauses[1].kind, CatchKind::kCatchAllRef);
  EXPECT_EQ(clauses[1].label, 2u);
  // br_on_cast flags 1, label 0, any -> (ref 2)
  in = read({0xFB, 0x18, 0x01, 0x00, 0x6E, 0x02});
  EXPECT_EQ(in.cast_flags, 1);
  EXPECT_EQ(in.x, 0u);
  EXPECT_EQ(in.heap, kHeapAny);
  EXPECT_EQ(in.heap2, kHeapTypeIndex + 2);
}

TEST(InstructionReader, DeclaredImmediates) {
  Instruction in = read({0x28, 0x42, 0x01, 0x10});  // i32.load align 2, memory 1, offset 16
  ASSERT_NE(in.simple, nullptr);
  EXPECT_EQ(in.simple->op, Op::i32_load);
  EXPECT_EQ(in.mem.align, 2u);
  EXPECT_EQ(in.mem.memory, 1u);
  EXPECT_EQ(in.mem.offset, 16u);
  EXPECT_FALSE(in.mem.short_flags);
  EXPECT_TRUE(read({0x28, 0x02, 0x00}).mem.short_flags);
  EXPECT_FALSE(read({0x28, 0x82, 0x00, 0x00}).mem.short_flags);  // a padded LEB
  EXPECT_EQ(read({0xFD, 0x15, 0x07}).lane, 7);  // i8x16.extract_lane_s 7
  std::vector<uint8_t> shuffle = {0xFD, 0x0D};
  for (int i = 0; i < 16; ++i) shuffle.push_back(static_cast<uint8_t>(31 - i));
  in = read(shuffle);
  EXPECT_EQ(in.lane_at(0), 31);
  EXPECT_EQ(in.lane_at(15), 16);
  EXPECT_EQ(read({0xFC, 0x00}).simple->op, Op::i32_trunc_sat_f32_s);
}

TEST(InstructionReader, MalformedInput) {
  EXPECT_EQ(error_of({0xFF}), "illegal opcode 0xff");
  EXPECT_EQ(error_of({0xFB, 0x1F}), "illegal opcode");
  EXPECT_EQ(error_of({0xFC, 0x80, 0x01}), "illegal opcode");  // 0xFC 128
  EXPECT_EQ(error_of({0xFD, 0x80, 0x10}), "illegal opcode");  // 0xFD 2048
  EXPECT_EQ(error_of({0x06, 0x40}), "not supported: legacy exception handling (not in WebAssembly 3.0)");
  EXPECT_EQ(error_of({0x02, 0x60}), "malformed block type");  // s33 -32, not a value type
  EXPECT_EQ(error_of({0x1F, 0x40, 0x01, 0x04, 0x00}), "malformed catch clause");
  EXPECT_EQ(error_of({0xFB, 0x18, 0x04, 0x00, 0x6E, 0x6E}), "malformed cast flags");
  EXPECT_EQ(error_of({0x28, 0x80, 0x01, 0x00}), "malformed memop flags");
  EXPECT_EQ(error_of({0x0E, 0x02, 0x00}), "unexpected end");
  EXPECT_EQ(error_of({0xD0, 0x60}), "malformed heap type");
}

TEST(StackEffect, DeclarationsAreReadAndCheckedOnce) {
  EXPECT_TRUE(valid_stack_effect("ii:i"));
  EXPECT_TRUE(valid_stack_effect(":"));
  EXPECT_TRUE(valid_stack_effect("tet:"));
  EXPECT_TRUE(valid_stack_effect("*"));
  EXPECT_FALSE(valid_stack_effect("ii"));      // no colon
  EXPECT_FALSE(valid_stack_effect("i:i:i"));   // two
  EXPECT_FALSE(valid_stack_effect("z:i"));     // an unknown letter
  EXPECT_FALSE(valid_stack_effect(":r"));      // any reference is popped, never pushed
  EXPECT_TRUE(valid_stack_effect("r:R"));      // ... and made non-null
  EXPECT_FALSE(valid_stack_effect("i:R"));     // 'R' needs the 'r' it is made from
  EXPECT_FALSE(valid_stack_effect("R:"));
  EXPECT_TRUE(valid_stack_effect("xiW:"));     // the GC letters: x and W popped only ...
  EXPECT_FALSE(valid_stack_effect(":x"));
  EXPECT_FALSE(valid_stack_effect(":W"));
  EXPECT_TRUE(valid_stack_effect("Fi:X"));     // ... X and P pushed only, F either way
  EXPECT_FALSE(valid_stack_effect("X:"));
  EXPECT_FALSE(valid_stack_effect("P:"));
  EXPECT_TRUE(valid_stack_effect("xi:P"));
  EXPECT_TRUE(valid_stack_effect("Li:L"));     // the sequences: a label's types either way ...
  EXPECT_TRUE(valid_stack_effect("Ax:Z"));     // ... a callee's parameters popped, its results pushed
  EXPECT_FALSE(valid_stack_effect("Z:"));
  EXPECT_FALSE(valid_stack_effect(":A"));
  EXPECT_FALSE(valid_stack_effect(":O"));      // this function's results and a tag's: popped only
  EXPECT_FALSE(valid_stack_effect(":T"));
  EXPECT_EQ(letters_used("Li:L"), letter_bit('L') | letter_bit('i'));
  const StackEffect e = stack_effect("et:t");
  EXPECT_EQ(e.pops, "et");
  EXPECT_EQ(e.pushes, "t");
  EXPECT_FALSE(e.by_rule);
  EXPECT_TRUE(stack_effect("*").by_rule);
  EXPECT_EQ(fixed_letter_type('N'), ref_type(false, kHeapI31));
  EXPECT_EQ(fixed_letter_type('a'), std::nullopt);  // the memory's: resolved from the immediate
  // The rows read through the one reader: table.grow's effect is its declaration's.
  Instruction in = read({0xFC, 0x0F, 0x00});
  ASSERT_NE(in.decl, nullptr);
  EXPECT_EQ(in.opcode, Opcode::table_grow);
  EXPECT_STREQ(in.decl->effect, "et:t");
  // struct.get's effect is declared: its reference and its field, both resolved from x and y.
  Instruction get = read({0xFB, 0x02, 0x03, 0x01});
  ASSERT_NE(get.decl, nullptr);
  EXPECT_EQ(get.opcode, Opcode::struct_get);
  EXPECT_STREQ(get.decl->effect, "x:F");
  EXPECT_EQ(get.x, 3u);
  EXPECT_EQ(get.y, 1u);
}

}  // namespace
}  // namespace dlab::wasm
