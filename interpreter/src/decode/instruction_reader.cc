#include "decode/instruction_reader.h"

#include <array>
#include <iterator>
#include <cstring>

#include <fmt/format.h>

namespace dlab::wasm {

namespace {

// opcode -> its declaration, for the one-byte opcodes and each prefix's sub-opcodes. Built at
// compile time from both tables; an opcode declared twice (in one table or across the two) or
// outside these ranges stops the build here.
struct OpcodeIndex {
  struct Entry {
    uint8_t table = 0;  // 0 none, 1 kSimpleOps, 2 kInstructions
    uint16_t index = 0;
  };
  std::array<Entry, 256> byte{};
  std::array<Entry, 32> fb{}, fc{};
  std::array<Entry, 512> fd{};

  constexpr const Entry* find(uint32_t opcode) const {
    if (opcode < 256) return &byte[opcode];
    if (opcode >= 0xFB00 && opcode < 0xFB00 + fb.size()) return &fb[opcode - 0xFB00];
    if (opcode >= 0xFC00 && opcode < 0xFC00 + fc.size()) return &fc[opcode - 0xFC00];
    if (opcode >= 0xFD000 && opcode < 0xFD000 + fd.size()) return &fd[opcode - 0xFD000];
    return nullptr;
  }
  constexpr void place(uint32_t opcode, uint8_t table, size_t index) {
    Entry* e = const_cast<Entry*>(find(opcode));
    if (!e) throw "an opcode outside the reader's ranges";
    if (e->table != 0) throw "an opcode declared twice";
    *e = {table, static_cast<uint16_t>(index)};
  }
  constexpr OpcodeIndex() {
    for (size_t i = 0; i < std::size(kSimpleOps); ++i) place(kSimpleOps[i].opcode, 1, i);
    for (size_t i = 0; i < std::size(kInstructions); ++i) place(kInstructions[i].opcode, 2, i);
  }
};
constexpr OpcodeIndex kIndex;

bool is_numtype_or_vec(uint8_t b) { return b == 0x7F || b == 0x7E || b == 0x7D || b == 0x7C || b == 0x7B; }

MemArg memarg(BinaryReader& r) {
  MemArg a;
  a.short_flags = r.peek() < 64;
  uint32_t flags = r.u32();
  if (flags >= 128) r.fail("malformed memop flags");
  a.align = flags & 63;
  if (flags & 64) a.memory = r.u32();
  a.offset = r.u64();
  return a;
}

void simple_immediates(BinaryReader& r, const SimpleOp& s, Instruction& in) {
  switch (s.imm) {
    case Imm::NONE: break;
    case Imm::MEM: in.mem = memarg(r); break;
    case Imm::LANE: in.lane = r.u8(); break;
    case Imm::MEMLANE:
      in.mem = memarg(r);
      in.lane = r.u8();
      break;
    case Imm::SHUF: std::memcpy(in.bits, r.bytes(16), 16); break;
  }
}

// A block type: empty (0x40), a value type, or a type index as a non-negative s33.
BlockType blocktype(BinaryReader& r) {
  BlockType t;
  uint8_t b = r.peek();
  if (b == 0x40) {
    r.u8();
  } else if (is_numtype_or_vec(b) || is_abstract_heap(b) || b == 0x63 || b == 0x64) {
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

// One of a row's immediates; `second`: it is the row's second (y, heap2).
void immediate(BinaryReader& r, ImmKind k, bool second, Instruction& in) {
  switch (k) {
    case ImmKind::NONE: return;
    case ImmKind::LABEL: case ImmKind::LOCAL: case ImmKind::GLOBAL: case ImmKind::FUNC: case ImmKind::TYPE:
    case ImmKind::TABLE: case ImmKind::MEMORY: case ImmKind::TAG: case ImmKind::DATA: case ImmKind::ELEM:
    case ImmKind::FIELD: case ImmKind::COUNT:
      (second ? in.y : in.x) = r.u32();
      return;
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
        if (kind > 3) r.fail("malformed catch clause");
        if (kind < 2) r.u32();  // catch, catch_ref: a tag
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
    case ImmKind::I32: in.bits[0] = static_cast<uint32_t>(r.s32()); return;
    case ImmKind::I64: in.bits[0] = static_cast<uint64_t>(r.s64()); return;
    case ImmKind::F32: std::memcpy(in.bits, r.bytes(4), 4); return;
    case ImmKind::F64: std::memcpy(in.bits, r.bytes(8), 8); return;
    case ImmKind::V128: std::memcpy(in.bits, r.bytes(16), 16); return;
  }
}

}  // namespace

OpcodeDecl find_opcode(uint32_t opcode) {
  const OpcodeIndex::Entry* e = kIndex.find(opcode);
  if (!e || e->table == 0) return {};
  if (e->table == 1) return {&kSimpleOps[e->index], nullptr};
  return {nullptr, &kInstructions[e->index]};
}

// Extended-const's i32/i64 add, sub and mul: the numeric instructions a constant expression allows.
bool Instruction::constant() const {
  if (flags & CONST) return true;
  switch (opcode) {
    case 0x6A: case 0x6B: case 0x6C: case 0x7C: case 0x7D: case 0x7E: return true;
    default: return false;
  }
}

Instruction read_instruction(BinaryReader& r) {
  Instruction in;
  const uint8_t b = r.u8();
  const OpcodeIndex::Entry* e = &kIndex.byte[b];
  in.opcode = b;
  if (b == 0xFB || b == 0xFC || b == 0xFD) {
    const uint32_t sub = r.u32();
    const size_t size = b == 0xFB ? kIndex.fb.size() : b == 0xFC ? kIndex.fc.size() : kIndex.fd.size();
    if (sub >= size) r.fail("illegal opcode");
    in.opcode = (b == 0xFD ? 0xFD000 : b << 8) + sub;
    e = kIndex.find(in.opcode);
    if (e->table == 0) r.fail("illegal opcode");
  } else if (e->table == 0) {
    r.fail(fmt::format("illegal opcode {:#04x}", b));
  }
  if (e->table == 1) {
    in.simple = &kSimpleOps[e->index];
    simple_immediates(r, *in.simple, in);
    return in;
  }
  const InstructionDecl& d = kInstructions[e->index];
  if (d.flags & LEGACY_EH) r.fail("not supported: legacy exception handling (not in WebAssembly 3.0)");
  in.flags = d.flags;
  immediate(r, d.imm[0], false, in);
  immediate(r, d.imm[1], true, in);
  return in;
}

}  // namespace dlab::wasm
