// The one opcode reader: an instruction's opcode and typed immediates, read and checked by the
// declarations of instructions.def and handlers.def (kSimpleOps), so that the decoder, the
// validator, the lowering and the constant-expression evaluator switch on a decoded Instruction
// instead of each reading immediates by hand. The decoder runs it over every expression first:
// what the others see has already passed its checks (the malformed-module messages are its).
#pragma once

#include <cstddef>
#include <cstdint>

#include "decode/binary_reader.h"
#include "engines/ops.h"

namespace dlab::wasm {

// The immediates of instructions.def's rows (that file says what each holds).
enum class ImmKind : uint8_t {
  NONE, LABEL, LOCAL, GLOBAL, FUNC, TYPE, TABLE, MEMORY, TAG, DATA, ELEM, FIELD, COUNT,
  LABELS, BLOCKTYPE, CATCHES, HEAPTYPE, VALTYPES, CASTFLAGS, I32, I64, F32, F64, V128,
};

// instructions.def's flags.
enum InstrFlags : uint8_t { OPENS = 1, END = 2, DATACOUNT = 4, CONST = 8, LEGACY_EH = 16 };

struct InstructionDecl {
  const char* name;
  uint32_t opcode;
  ImmKind imm[2];
  uint8_t flags;
};

inline constexpr InstructionDecl kInstructions[] = {
#define INSTR(name, opcode, a, b, flags) {#name, opcode, {ImmKind::a, ImmKind::b}, flags},
#define LEGACY(name, opcode) {#name, opcode, {ImmKind::NONE, ImmKind::NONE}, LEGACY_EH},
#include "decode/instructions.def"
#undef INSTR
#undef LEGACY
};

// The declaration of an opcode (as kSimpleOps and instructions.def write them): at most one of
// the two is set; neither for an opcode no table declares.
struct OpcodeDecl {
  const SimpleOp* simple = nullptr;
  const InstructionDecl* decl = nullptr;
};
OpcodeDecl find_opcode(uint32_t opcode);

struct BlockType {
  enum Kind : uint8_t { kEmpty, kValue, kIndex } kind = kEmpty;
  ValType value = ValType::kI32;  // kValue
  uint32_t index = 0;             // kIndex: a function type's index
};

// A memarg (WebAssembly 3.0): flags below 64 are the alignment, 64..127 the alignment + 64 with a
// memory index following; the offset is a u64.
struct MemArg {
  uint32_t align = 0;  // log2, as encoded (the validator bounds it by the natural one)
  uint32_t memory = 0;
  uint64_t offset = 0;
  // The flags were one byte below 64 (no memory index, no padded LEB): the only memargs the
  // register IR writes in its own forms (a byte-for-byte condition it has always had).
  bool short_flags = false;
};

struct CatchImm {
  uint8_t kind;  // 0 catch, 1 catch_ref, 2 catch_all, 3 catch_all_ref
  uint32_t tag;  // catch, catch_ref
  uint32_t label;
};

struct Instruction {
  uint32_t opcode = 0;
  uint8_t flags = 0;
  const SimpleOp* simple = nullptr;  // a kSimpleOps instruction's declaration (numeric, memory, SIMD)
  uint32_t x = 0, y = 0;             // the index immediates, in encoding order; br_table: x the default
  BlockType block;
  HeapType heap = 0, heap2 = 0;
  uint8_t cast_flags = 0;
  uint8_t lane = 0;
  MemArg mem;
  uint64_t bits[2] = {0, 0};  // consts (an i32 zero-extended; floats' bits), v128, i8x16.shuffle's lanes
  uint32_t count = 0;         // br_table's labels (before the default), try_table's clauses, select's types
  ValType type = ValType::kI32;  // select t*: the first type
  // br_table's labels / try_table's clauses as encoded, already checked: walked again by
  // for_each_label / for_each_catch, so that no instruction allocates (a huge br_table costs its
  // length, not a vector). They point into the bytes read: valid while those are.
  const uint8_t* vec = nullptr;
  size_t vec_bytes = 0;

  bool constant() const;  // allowed in a constant expression (extended-const's add, sub and mul too)
  uint8_t lane_at(int i) const { return static_cast<uint8_t>(bits[i / 8] >> (8 * (i % 8))); }  // shuffle
};

// Reads one instruction at r, checking its opcode and immediates (DecodeError as the spec's
// malformed assertions word it: "illegal opcode", "malformed block type", ...).
Instruction read_instruction(BinaryReader& r);

// br_table's labels before the default, in order.
template <typename F>
void for_each_label(const Instruction& in, F f) {
  BinaryReader r(in.vec, in.vec_bytes);
  for (uint32_t i = 0; i < in.count; ++i) f(r.u32());
}
// try_table's catch clauses, in order.
template <typename F>
void for_each_catch(const Instruction& in, F f) {
  BinaryReader r(in.vec, in.vec_bytes);
  for (uint32_t i = 0; i < in.count; ++i) {
    CatchImm c{r.u8(), 0, 0};
    if (c.kind < 2) c.tag = r.u32();
    c.label = r.u32();
    f(c);
  }
}

}  // namespace dlab::wasm
