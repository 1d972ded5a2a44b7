// The instruction table (handlers.def's NUM, MEM and VEC declarations, through ops.h) is what the
// validator types instructions by, what the lowering lays their words out by, and what each
// handler's length must be. For every declared instruction this builds a function that feeds it
// operands of its declared types and drops its results, and checks that
//   - the validator accepts it (its typing comes from the declaration);
//   - the lowering writes the op and exactly 1 + imm_words(immediates) words before the next op;
//   - its handler consumes exactly that many words (the counting engine checks every NEXT
//     against the declaration and traps when they differ).
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "dispatchlab/interpreter/module.h"
#include "dispatchlab/interpreter/runtime.h"
#include "dispatchlab/interpreter/validator.h"
#include "decode/instruction_reader.h"
#include "engines/ops.h"
#include "module_bytes.h"

namespace dlab::wasm {
namespace {

using test_support::section;
using test_support::uleb;

// An operand of the type a signature letter names: 1 (or 1.0, or sixteen 1 bytes), and address 0,
// so that no declared instruction traps (no division by zero, every access in the one page).
// Returns the lowered words the const takes (const_: op + value; a v128 const2: op + two).
size_t push_operand(std::vector<uint8_t>& code, char letter, bool memory64) {
  switch (letter) {
    case 'a':
      if (memory64) code.insert(code.end(), {0x42, 0x00});  // an i64 address
      else code.insert(code.end(), {0x41, 0x00});
      return 2;
    case 'i': code.insert(code.end(), {0x41, 0x01}); return 2;
    case 'l': code.insert(code.end(), {0x42, 0x01}); return 2;
    case 'f': {
      float one = 1.0f;
      uint8_t b[4];
      std::memcpy(b, &one, 4);
      code.push_back(0x43);
      code.insert(code.end(), b, b + 4);
      return 2;
    }
    case 'd': {
      double one = 1.0;
      uint8_t b[8];
      std::memcpy(b, &one, 8);
      code.push_back(0x44);
      code.insert(code.end(), b, b + 8);
      return 2;
    }
    default:  // v
      code.insert(code.end(), {0xFD, 0x0C});
      code.insert(code.end(), 16, uint8_t{1});
      return 3;
  }
}

void encode_opcode(std::vector<uint8_t>& code, uint32_t opcode) {
  if (opcode < 0x100) {
    code.push_back(static_cast<uint8_t>(opcode));
  } else if (opcode < 0xFD000) {
    code.push_back(0xFC);
    uleb(code, opcode - 0xFC00);
  } else {
    code.push_back(0xFD);
    uleb(code, opcode - 0xFD000);
  }
}

void encode_immediates(std::vector<uint8_t>& code, const SimpleOp& s) {
  switch (s.imm) {
    case Imm::NONE: break;
    case Imm::MEM: uleb(code, s.align); uleb(code, 0); break;
    case Imm::LANE: code.push_back(0); break;
    case Imm::MEMLANE: uleb(code, s.align); uleb(code, 0); code.push_back(0); break;
    case Imm::SHUF: code.insert(code.end(), 16, uint8_t{0}); break;
  }
}

// A module exporting f: () -> (), one page of memory, whose body runs `s` once. `op_at` gets the
// index of the instruction's op word in the plainly lowered code.
std::vector<uint8_t> module_for(const SimpleOp& s, size_t& op_at, bool memory64 = false) {
  std::vector<uint8_t> body{0x00};  // no locals
  const char* colon = std::strchr(s.signature, ':');
  op_at = 0;
  for (const char* p = s.signature; p != colon; ++p) op_at += push_operand(body, *p, memory64);
  encode_opcode(body, s.opcode);
  encode_immediates(body, s);
  for (const char* p = colon + 1; *p; ++p) body.push_back(0x1A);  // drop
  body.push_back(0x0B);
  std::vector<uint8_t> m = {0x00, 0x61, 0x73, 0x6D, 0x01, 0x00, 0x00, 0x00};
  section(m, 1, {0x01, 0x60, 0x00, 0x00});        // one type: [] -> []
  section(m, 3, {0x01, 0x00});                    // one function of it
  section(m, 5, {0x01, static_cast<uint8_t>(memory64 ? 0x04 : 0x00), 0x01});  // one memory (i64-indexed: memory64), one page
  section(m, 7, {0x01, 0x01, 'f', 0x00, 0x00});   // export "f" = function 0
  std::vector<uint8_t> code{0x01};
  uleb(code, body.size());
  code.insert(code.end(), body.begin(), body.end());
  section(m, 10, code);
  return m;
}

TEST(InstructionTable, EveryDeclaredInstructionValidatesLowersAndRunsAtItsDeclaredLength) {
  size_t checked = 0;
  for (const SimpleOp& s : kSimpleOps) {
    std::string name = kOpNames[static_cast<size_t>(s.op)];
    SCOPED_TRACE(fmt::format("{} (opcode {:#x}, \"{}\")", name, s.opcode, s.signature));
    size_t op_at = 0;
    Module m;
    try {
      m = decode_module(module_for(s, op_at));
    } catch (const std::exception& e) {
      ADD_FAILURE() << "malformed: " << e.what();
      continue;
    }
    try {
      validate_module(m);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "invalid: " << e.what();
      continue;
    }
    Runtime rt(EngineConfig{Dispatch::kSwitch});
    rt.set_lazy_lowering(false);  // the code is read after instantiation
    rt.set_lowering(Lowering::none());  // the op itself, no fold / fuse / super form
    rt.enable_profile();
    Instance& inst = rt.instantiate(std::move(m));
    FuncInst* f = inst.exports.at("f").func;
    const auto& code = f->code;
    // The counting engine's op words are the op numbers (as a switch engine's).
    ASSERT_GT(code.size(), op_at);
    EXPECT_EQ(code[op_at], static_cast<uint64_t>(s.op));
    size_t next = op_at + 1 + static_cast<size_t>(imm_words(s.imm));
    ASSERT_LT(next, code.size());
    const bool results = *(std::strchr(s.signature, ':') + 1) != '\0';
    uint64_t after = code[next];
    EXPECT_TRUE(results ? (after == static_cast<uint64_t>(Op::drop) || after == static_cast<uint64_t>(Op::drop2))
                        : after == static_cast<uint64_t>(Op::return_))
        << "the word after the instruction's " << 1 + imm_words(s.imm) << " is op " << after;
    EXPECT_NO_THROW(rt.invoke(f, {}));
    EXPECT_EQ(rt.profile().op_counts[static_cast<size_t>(s.op)], 1u);
    ++checked;
  }
  EXPECT_GT(checked, 400u);
}

// The memory64 form of an instruction (ops.h's kForms), or Op::kCount.
Op a64_form(Op op) {
  for (const FormsOf& f : kForms)
    if (f.op == op) return f.forms.a64;
  return Op::kCount;
}

TEST(InstructionTable, EveryMemoryInstructionHasAMemory64FormAtItsDeclaredLength) {
  size_t checked = 0;
  for (const SimpleOp& s : kSimpleOps) {
    if (s.imm != Imm::MEM && s.imm != Imm::MEMLANE) continue;
    std::string name = kOpNames[static_cast<size_t>(s.op)];
    SCOPED_TRACE(name + " in a memory64 module");
    Op a64 = a64_form(s.op);
    ASSERT_NE(a64, Op::kCount) << "no _a64 form";
    size_t op_at = 0;
    Module m = decode_module(module_for(s, op_at, true));
    ASSERT_NO_THROW(validate_module(m));
    Runtime rt(EngineConfig{Dispatch::kSwitch});
    rt.set_lazy_lowering(false);  // the code is read after instantiation
    rt.set_lowering(Lowering::none());
    rt.enable_profile();
    Instance& inst = rt.instantiate(std::move(m));
    FuncInst* f = inst.exports.at("f").func;
    ASSERT_GT(f->code.size(), op_at);
    EXPECT_EQ(f->code[op_at], static_cast<uint64_t>(a64));
    EXPECT_NO_THROW(rt.invoke(f, {}));
    EXPECT_EQ(rt.profile().op_counts[static_cast<size_t>(a64)], 1u);
    ++checked;
  }
  EXPECT_GT(checked, 40u);
}

// handlers.def's FAMILY markers: each op's family is the handlers/ file its entry is in.
TEST(InstructionTable, EveryOpHasTheFamilyOfTheFileItsEntryIsIn) {
  EXPECT_EQ(kFamilyMarkers[0], 0);  // the first family begins at the first op: no op before it
  EXPECT_EQ(op_family_of("br"), "control");
  EXPECT_EQ(op_family_of("call_indirect"), "control");
  EXPECT_EQ(op_family_of("local_get"), "stack_locals_globals");
  EXPECT_EQ(op_family_of("br_if_r"), "control");  // the register IR's branches and returns too
  EXPECT_EQ(op_family_of("br_table_r"), "control");
  EXPECT_EQ(op_family_of("copy_r"), "stack_locals_globals");
  EXPECT_EQ(op_family_of("struct_get32"), "gc");
  EXPECT_EQ(op_family_of("table_get"), "tables");
  EXPECT_EQ(op_family_of("i32_load8_u"), "memory");
  EXPECT_EQ(op_family_of("i32_add"), "numeric");
  EXPECT_EQ(op_family_of("i32_add_ri"), "numeric");  // a folded form, generated by its BINOP entry
  EXPECT_EQ(op_family_of("i8x16_shuffle"), "simd");
  EXPECT_EQ(op_family_of(kOpNames[static_cast<size_t>(kSupers[0].op)]), "superinstructions");
  EXPECT_EQ(op_family_of("no_such_op"), "");
  for (size_t i = 0; i < static_cast<size_t>(Op::kCount); ++i) EXPECT_STRNE(op_family(i), "") << kOpNames[i];
  // At each boundary: the family's first op is its own, the op before it the previous family's.
  for (size_t k = 1; k < kFamilyCount; ++k) {
    const size_t first = kFamilyMarkers[k] - k;
    EXPECT_STREQ(op_family(first), kFamilyNames[k]) << kOpNames[first];
    EXPECT_STREQ(op_family(first - 1), kFamilyNames[k - 1]) << kOpNames[first - 1];
  }
  EXPECT_STREQ(kOpNames[kFamilyMarkers[1] - 2], "return_r1");  // control.def's last entry
  EXPECT_STREQ(kOpNames[kFamilyMarkers[1] - 1], "drop");           // stack_locals_globals.def's first
}

TEST(InstructionTable, AnUndeclaredOpcodeIsNotFound) {
  EXPECT_EQ(find_opcode(0x06).simple, nullptr);  // try (legacy exceptions) is not a table instruction
  EXPECT_EQ(find_opcode(Opcode::v128_const).simple, nullptr);  // instructions.def's, lowered by its rule
  ASSERT_NE(find_opcode(Opcode::i32_add).simple, nullptr);
  EXPECT_EQ(find_opcode(Opcode::i32_add).simple->op, Op::i32_add);
}

}  // namespace
}  // namespace dlab::wasm
