// The one opcode reader: an instruction's opcode and typed immediates, read and checked by the
// declarations of instructions.def and handlers.def (kSimpleOps), so that the decoder, the
// validator, the lowering and the constant-expression evaluator switch on a decoded Instruction
// instead of each reading immediates by hand. The decoder runs it over every expression first:
// what the others see has already passed its checks (the malformed-module messages are its).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>

#include "decode/binary_reader.h"
#include "decode/opcode.h"
#include "decode/stack_effect.h"
#include "engines/ops.h"

namespace dlab::wasm {

// The immediates of instructions.def's rows (that file says what each holds).
// The u32 indices come first (LABEL..COUNT): read_instruction reads that range inline.
enum class ImmKind : uint8_t {
  NONE, LABEL, LOCAL, GLOBAL, FUNC, TYPE, TABLE, MEMORY, TAG, DATA, ELEM, FIELD, COUNT,
  LABELS, BLOCKTYPE, CATCHES, HEAPTYPE, VALTYPES, CASTFLAGS, I32, I64, F32, F64, V128,
  // kSimpleOps' immediates (ops.h's Imm), so that one index entry says how to read either table's
  MEMARG, LANE, MEMLANE, SHUF,
};

// instructions.def's flags.
enum InstrFlags : uint8_t { OPENS = 1, END = 2, DATACOUNT = 4, CONST = 8, LEGACY_EH = 16, STOPS = 32, TAIL = 64 };

struct InstructionDecl {
  const char* name;
  uint32_t opcode;
  ImmKind imm[2];
  const char* effect;  // stack_effect.h's notation; "*" for a rule in validate/ and lower/
  uint8_t flags;
};

inline constexpr InstructionDecl kInstructions[] = {
#define INSTR(name, opcode, a, b, effect, flags) {#name, opcode, {ImmKind::a, ImmKind::b}, effect, flags},
#define LEGACY(name, opcode) {#name, opcode, {ImmKind::NONE, ImmKind::NONE}, "*", LEGACY_EH},
#include "decode/instructions.def"
#undef INSTR
#undef LEGACY
};

// Each instructions.def row's effect read once, at compile time: its pops and pushes, the letters
// it uses (stack_effect.h's letters_used), and whether it is plain: fixed letters only, no index
// immediate to check, no flag that acts (a constant, ref.eq, i31.get_s), which a walker applies
// without resolving anything.
struct DeclaredEffect {
  StackEffect effect;
  uint64_t letters = 0;
  bool plain = false;
};
inline constexpr auto kDeclaredEffects = [] {
  std::array<DeclaredEffect, std::size(kInstructions)> out{};
  for (size_t i = 0; i < out.size(); ++i) {
    const InstructionDecl& d = kInstructions[i];
    DeclaredEffect& e = out[i];
    e.effect = stack_effect(d.effect);
    e.letters = letters_used(d.effect);
    bool fixed = !e.effect.by_rule;
    for (char c : std::string_view(d.effect))
      if (c != ':' && !fixed_letter_type(c)) fixed = false;
    auto index = [](ImmKind k) { return k >= ImmKind::LABEL && k <= ImmKind::COUNT; };
    e.plain = fixed && !index(d.imm[0]) && !index(d.imm[1]) && !(d.flags & (STOPS | TAIL));
  }
  return out;
}();
inline const DeclaredEffect& effect_of(const InstructionDecl& d) { return kDeclaredEffects[static_cast<size_t>(&d - kInstructions)]; }
// handlers.def's signatures (kSimpleOps), read once likewise: every walker applies one per
// numeric, memory or SIMD instruction.
inline constexpr auto kSimpleEffects = [] {
  std::array<StackEffect, std::size(kSimpleOps)> out{};
  for (size_t i = 0; i < out.size(); ++i) out[i] = stack_effect(kSimpleOps[i].signature);
  return out;
}();
inline const StackEffect& effect_of(const SimpleOp& s) { return kSimpleEffects[static_cast<size_t>(&s - kSimpleOps)]; }

// Every declared effect of both tables is well formed (a typo stops the build).
constexpr bool every_stack_effect_valid() {
  for (const SimpleOp& s : kSimpleOps)
    if (!valid_stack_effect(s.signature) || stack_effect(s.signature).by_rule) return false;
  for (const InstructionDecl& d : kInstructions) {
    if (!valid_stack_effect(d.effect)) return false;
    // A context letter needs the immediate it is resolved from: a memory's, a table's.
    auto has = [&](ImmKind k) { return d.imm[0] == k || d.imm[1] == k; };
    for (char c : std::string_view(d.effect)) {
      if (c == static_cast<char>(ContextLetter::kMemoryAddress) && !has(ImmKind::MEMORY)) return false;
      if ((c == static_cast<char>(ContextLetter::kTableAddress) || c == static_cast<char>(ContextLetter::kTableElement)) &&
          !has(ImmKind::TABLE))
        return false;
      if (is_type_letter(c) && d.imm[0] != ImmKind::TYPE) return false;  // x is the first immediate
      if (c == static_cast<char>(ContextLetter::kLabel) && d.imm[0] != ImmKind::LABEL) return false;
      if ((c == static_cast<char>(ContextLetter::kCallArgs) || c == static_cast<char>(ContextLetter::kCallResults)) &&
          d.imm[0] != ImmKind::FUNC && d.imm[0] != ImmKind::TYPE)
        return false;
      if (c == static_cast<char>(ContextLetter::kTagParams) && d.imm[0] != ImmKind::TAG) return false;
    }
    // A tail call compares its callee's results with this function's: it names a callee.
    if ((d.flags & TAIL) && std::string_view(d.effect).find('A') == std::string_view::npos) return false;
  }
  return true;
}
static_assert(every_stack_effect_valid(), "a malformed stack effect in instructions.def or handlers.def");

// The declaration of an opcode (as kSimpleOps and instructions.def write them): at most one of
// the two is set; neither for an opcode no table declares.
struct OpcodeDecl {
  const SimpleOp* simple = nullptr;
  const InstructionDecl* decl = nullptr;
};
OpcodeDecl find_opcode(uint32_t opcode);
inline OpcodeDecl find_opcode(Opcode opcode) { return find_opcode(opcode_value(opcode)); }

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

// A try_table catch clause's kind, as encoded: whether it names a tag, and whether it also
// pushes the exception reference.
enum class CatchKind : uint8_t { kCatch = 0, kCatchRef = 1, kCatchAll = 2, kCatchAllRef = 3 };
constexpr bool catches_a_tag(CatchKind k) { return k == CatchKind::kCatch || k == CatchKind::kCatchRef; }
constexpr bool pushes_exnref(CatchKind k) { return k == CatchKind::kCatchRef || k == CatchKind::kCatchAllRef; }

struct CatchImm {
  CatchKind kind;
  uint32_t tag;  // catch, catch_ref
  uint32_t label;
};

struct Instruction {
  Opcode opcode = Opcode::unreachable;
  uint8_t flags = 0;
  const SimpleOp* simple = nullptr;  // a kSimpleOps instruction's declaration (numeric, memory, SIMD)
  const InstructionDecl* decl = nullptr;  // or an instructions.def row's
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

namespace reader_impl {

// opcode -> its declaration and what the reader needs of it (the immediates, the flags), for
// the one-byte opcodes and each prefix's sub-opcodes. Built at compile time from both tables; an
// opcode declared twice (in one table or across the two) or outside these ranges stops the build.
struct OpcodeIndex {
  struct Entry {
    uint8_t table = 0;  // 0 none, 1 kSimpleOps, 2 kInstructions
    uint8_t flags = 0;
    ImmKind imm[2] = {ImmKind::NONE, ImmKind::NONE};
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
  constexpr void place(uint32_t opcode, Entry entry) {
    Entry* e = const_cast<Entry*>(find(opcode));
    if (!e) throw "an opcode outside the reader's ranges";
    if (e->table != 0) throw "an opcode declared twice";
    *e = entry;
  }
  static constexpr ImmKind of(Imm i) {
    switch (i) {
      case Imm::MEM: return ImmKind::MEMARG;
      case Imm::LANE: return ImmKind::LANE;
      case Imm::MEMLANE: return ImmKind::MEMLANE;
      case Imm::SHUF: return ImmKind::SHUF;
      default: return ImmKind::NONE;
    }
  }
  constexpr OpcodeIndex() {
    for (size_t i = 0; i < std::size(kSimpleOps); ++i)
      place(kSimpleOps[i].opcode, {1, 0, {of(kSimpleOps[i].imm), ImmKind::NONE}, static_cast<uint16_t>(i)});
    for (size_t i = 0; i < std::size(kInstructions); ++i) {
      const InstructionDecl& d = kInstructions[i];
      place(d.opcode, {2, d.flags, {d.imm[0], d.imm[1]}, static_cast<uint16_t>(i)});
    }
  }
};
inline constexpr OpcodeIndex kOpcodeIndex;

// A memarg's flags, memory index and offset.
inline void read_memarg(BinaryReader& r, MemArg& a) {
  a.short_flags = r.peek() < 64;
  uint32_t flags = r.u32();
  if (flags >= 128) r.fail("malformed memop flags");
  a.align = flags & 63;
  if (flags & 64) a.memory = r.u32();
  a.offset = r.u64();
}
void other_immediate(BinaryReader& r, ImmKind k, bool second, Instruction& in);
[[noreturn]] void fail_opcode(BinaryReader& r, uint8_t b, bool legacy);

}  // namespace reader_impl

// Reads one instruction at r, checking its opcode and immediates (DecodeError as the spec's
// malformed assertions word it: "illegal opcode", "malformed block type", ...). Inline, with the
// common immediates (indices, integer constants, memargs), because every walker calls it per
// instruction: the decoder's scan, validation and lowering each cost about what their hand
// reading did.
inline Instruction read_instruction(BinaryReader& r) {
  using namespace reader_impl;
  Instruction in;
  const uint8_t b = r.u8();
  const OpcodeIndex::Entry* e = &kOpcodeIndex.byte[b];
  in.opcode = static_cast<Opcode>(b);
  if (is_prefix_byte(b)) {
    const uint32_t sub = r.u32();
    const uint32_t base = b == 0xFD ? 0xFD000 : static_cast<uint32_t>(b) << 8;
    // A sub-opcode past its prefix's table is illegal (never an opcode of another range).
    const size_t size = b == 0xFB ? kOpcodeIndex.fb.size() : b == 0xFC ? kOpcodeIndex.fc.size() : kOpcodeIndex.fd.size();
    if (sub >= size) fail_opcode(r, b, false);
    in.opcode = static_cast<Opcode>(base + sub);
    e = kOpcodeIndex.find(base + sub);
  }
  if (e->table == 0) fail_opcode(r, b, false);
  if (e->flags & LEGACY_EH) fail_opcode(r, b, true);
  in.flags = e->flags;
  if (e->table == 1) in.simple = &kSimpleOps[e->index];
  else in.decl = &kInstructions[e->index];
  for (int k = 0; k < 2; ++k) {
    const ImmKind kind = e->imm[k];
    if (kind == ImmKind::NONE) break;
    if (kind <= ImmKind::COUNT) (k ? in.y : in.x) = r.u32();
    else if (kind == ImmKind::MEMARG) read_memarg(r, in.mem);
    else if (kind == ImmKind::I32) in.bits[0] = static_cast<uint32_t>(r.s32());
    else other_immediate(r, kind, k == 1, in);
  }
  return in;
}

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
    CatchImm c{static_cast<CatchKind>(r.u8()), 0, 0};
    if (catches_a_tag(c.kind)) c.tag = r.u32();
    c.label = r.u32();
    f(c);
  }
}

}  // namespace dlab::wasm
