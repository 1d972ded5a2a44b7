#include "decode/instruction_reader.h"

#include <cstring>

#include <fmt/format.h>

#include "decode/binary_codes.h"

namespace dlab::wasm {

namespace {

// A block type: empty (0x40), a value type, or a type index as a non-negative s33.
BlockType blocktype(BinaryReader& r) {
  BlockType t;
  uint8_t b = r.peek();
  if (b == code_byte(TypeCode::kEmpty)) {
    r.u8();
  } else if (is_numtype_or_vec(b) || is_abstract_heap(b) || b == code_byte(TypeCode::kRefNull) || b == code_byte(TypeCode::kRef)) {
    t.kind = BlockType::kValue;
    t.value = read_valtype(r);
  } else {
    int64_t idx = r.s33();
    if (idx < 0) r.fail("malformed block type");
    t.kind = BlockType::kIndex;
    t.index = static_cast<uint32_t>(idx);
  }
  return t;
}

}  // namespace

namespace reader_impl {

// Any immediate (read_instruction reads the common ones inline, the rest here).
void other_immediate(BinaryReader& r, ImmKind k, bool second, Instruction& in) {
  switch (k) {
    case ImmKind::LABELS: {
      in.count = r.u32();
      in.vec = r.position();
      for (uint32_t i = 0; i < in.count; ++i) r.u32();
      in.vec_bytes = static_cast<size_t>(r.position() - in.vec);
      in.x = r.u32();
      return;
    }
    case ImmKind::BLOCKTYPE: in.block = blocktype(r); return;
    case ImmKind::CATCHES: {
      in.count = r.u32();
      in.vec = r.position();
      for (uint32_t i = 0; i < in.count; ++i) {
        uint8_t kind = r.u8();
        if (kind > static_cast<uint8_t>(CatchKind::kCatchAllRef)) r.fail("malformed catch clause");
        if (catches_a_tag(static_cast<CatchKind>(kind))) r.u32();
        r.u32();                // the label
      }
      in.vec_bytes = static_cast<size_t>(r.position() - in.vec);
      return;
    }
    case ImmKind::HEAPTYPE: (second ? in.heap2 : in.heap) = read_heaptype(r); return;
    case ImmKind::VALTYPES:
      in.count = r.u32();
      for (uint32_t i = 0; i < in.count; ++i) {
        ValType t = read_valtype(r);
        if (i == 0) in.type = t;
      }
      return;
    case ImmKind::CASTFLAGS:
      in.cast_flags = r.u8();
      if (in.cast_flags > 3) r.fail("malformed cast flags");
      in.x = r.u32();
      in.heap = read_heaptype(r);
      in.heap2 = read_heaptype(r);
      return;
    case ImmKind::F32: std::memcpy(in.bits, r.bytes(4), 4); return;
    case ImmKind::F64: std::memcpy(in.bits, r.bytes(8), 8); return;
    case ImmKind::V128: case ImmKind::SHUF: std::memcpy(in.bits, r.bytes(16), 16); return;
    case ImmKind::LANE: in.lane = r.u8(); return;
    case ImmKind::MEMLANE:
      read_memarg(r, in.mem);
      in.lane = r.u8();
      return;
    case ImmKind::MEMARG: read_memarg(r, in.mem); return;
    case ImmKind::I32: in.bits[0] = static_cast<uint32_t>(r.s32()); return;
    case ImmKind::I64: in.bits[0] = static_cast<uint64_t>(r.s64()); return;
    case ImmKind::NONE: return;
    case ImmKind::LABEL: case ImmKind::LOCAL: case ImmKind::GLOBAL: case ImmKind::FUNC: case ImmKind::TYPE:
    case ImmKind::TABLE: case ImmKind::MEMORY: case ImmKind::TAG: case ImmKind::DATA: case ImmKind::ELEM:
    case ImmKind::FIELD: case ImmKind::COUNT:
      (second ? in.y : in.x) = r.u32();
      return;
  }
}

void fail_opcode(BinaryReader& r, uint8_t b, bool legacy) {
  if (legacy) r.fail("not supported: legacy exception handling (not in WebAssembly 3.0)");
  if (is_prefix_byte(b)) r.fail("illegal opcode");
  r.fail(fmt::format("illegal opcode {:#04x}", b));
}

}  // namespace reader_impl

OpcodeDecl find_opcode(uint32_t opcode) {
  const reader_impl::OpcodeIndex::Entry* e = reader_impl::kOpcodeIndex.find(opcode);
  if (!e || e->table == 0) return {};
  if (e->table == 1) return {&kSimpleOps[e->index], nullptr};
  return {nullptr, &kInstructions[e->index]};
}

// Extended-const's i32/i64 add, sub and mul: the numeric instructions a constant expression allows.
bool Instruction::constant() const {
  if (flags & CONST) return true;
  switch (opcode) {
    case Opcode::i32_add: case Opcode::i32_sub: case Opcode::i32_mul:
    case Opcode::i64_add: case Opcode::i64_sub: case Opcode::i64_mul: return true;
    default: return false;
  }
}

}  // namespace dlab::wasm
