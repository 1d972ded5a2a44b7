// The lowering of instructions.def's rows with a declared effect (decode/stack_effect.h): their
// operand types follow the effect, and their handler is the one of the same name when the row
// has no immediate (array_len, ref_eq, ref_i31, ...), so such an instruction is its declaration
// and its handler. The rules below are for handlers whose words come from the immediates (a
// table, a memory, a segment) or whose form depends on them (a 64-bit memory or table).
#include <array>
#include <iterator>
#include <string_view>

#include <fmt/format.h>

#include "lower/lowerer.h"

namespace dlab::wasm::lowering_impl {

namespace {

// A row lowered by its declaration and the handler of its name: an effect in letters, no
// immediate, no sequence of operands (a return's count comes from the function: its rule).
constexpr bool named_by_its_row(const InstructionDecl& d) {
  if (stack_effect(d.effect).by_rule || d.imm[0] != ImmKind::NONE) return false;
  for (char c : std::string_view(d.effect))
    if (is_sequence_letter(c)) return false;
  return true;
}

// The handler named as the instruction, found at compile time (for the rows that can use one: a
// declared effect and no immediate); Op::kCount where none is.
constexpr Op handler_named(std::string_view name) {
  for (size_t i = 0; i < std::size(kOpNames); ++i)
    if (name == kOpNames[i]) return static_cast<Op>(i);
  return Op::kCount;
}
constexpr std::array<Op, std::size(kInstructions)> kSameNamedHandlers = [] {
  std::array<Op, std::size(kInstructions)> handlers{};
  for (size_t i = 0; i < handlers.size(); ++i) {
    const InstructionDecl& d = kInstructions[i];
    const bool by_name = named_by_its_row(d);
    handlers[i] = by_name ? handler_named(d.name) : Op::kCount;
  }
  return handlers;
}();

// A row with a declared effect and no immediate is its declaration and its handler: one that moves
// no operand (nop) lowers to nothing, every other has a handler of its name (a new row without one
// stops the build here, not a module at run time).
constexpr bool every_immediate_free_row_has_its_handler() {
  for (size_t i = 0; i < kSameNamedHandlers.size(); ++i) {
    const InstructionDecl& d = kInstructions[i];
    const StackEffect e = stack_effect(d.effect);
    const bool by_name = named_by_its_row(d);
    const bool moves_nothing = e.pops.empty() && e.pushes.empty() && !(d.flags & STOPS);
    if (by_name && !moves_nothing && kSameNamedHandlers[i] == Op::kCount) return false;
  }
  return true;
}
static_assert(every_immediate_free_row_has_its_handler(),
              "an instructions.def row with a declared effect and no immediate needs an OP handler of its name");

}  // namespace

// The operand types of a declared effect: its pops, then its pushes, the context letters
// resolved from the immediates (the memory's or the table's address type, the table's element,
// the type x and the storage it names) or from the reference popped ('R').
void Lowerer::apply_effect(const Instruction& in) {
  uint32_t memory = 0, table = 0;
  for (int k = 0; k < 2; ++k) {
    if (in.decl->imm[k] == ImmKind::MEMORY) memory = k ? in.y : in.x;
    if (in.decl->imm[k] == ImmKind::TABLE) table = k ? in.y : in.x;
  }
  const StackEffect& e = effect_of(*in.decl).effect;
  for (char c : e.pops)
    if (is_sequence_letter(c)) throw Unsupported(fmt::format("{} pops a sequence: it needs its lowering rule (stack_ir.cc)", in.decl->name));
  ValType popped_ref = ValType::kFuncRef;  // replaced by the one 'r' pops, which an 'R' needs (stack_effect.h)
  for (size_t i = e.pops.size(); i-- > 0;) {
    const ValType t = pop();
    if (e.pops[i] == static_cast<char>(ContextLetter::kAnyRef)) popped_ref = t;
  }
  for (char letter : e.pushes) {
    if (auto t = fixed_letter_type(letter)) {
      push(*t);
      continue;
    }
    switch (static_cast<ContextLetter>(letter)) {
      case ContextLetter::kMemoryAddress: push(memory64(memory) ? ValType::kI64 : ValType::kI32); break;
      case ContextLetter::kTableAddress: push(table64(table) ? ValType::kI64 : ValType::kI32); break;
      case ContextLetter::kTableElement: push(inst_.tables.at(table)->type.element); break;
      case ContextLetter::kNonNullRef: push(ref_type(false, ref_heap(popped_ref))); break;
      case ContextLetter::kTypeRefNonNull: push(ref_type(false, kHeapTypeIndex + in.x)); break;
      case ContextLetter::kStorage: push(unpacked(def(in.x).fields.at(in.decl->imm[1] == ImmKind::FIELD ? in.y : 0))); break;
      case ContextLetter::kPackedRead: push(ValType::kI32); break;
      default: throw Unsupported(fmt::format("{}: the letter '{}' is never pushed", in.decl->name, letter));  // stack_effect.h refuses it
    }
  }
}

void Lowerer::declared_op(const Instruction& in) {
  apply_effect(in);
  auto table_word = [&](uint32_t idx) { word(reinterpret_cast<uint64_t>(inst_.tables.at(idx))); };
  switch (in.opcode) {
    case Opcode::i32_const: case Opcode::i64_const: case Opcode::f32_const: case Opcode::f64_const:
      emit(Op::const_);
      word(in.bits[0]);
      return;
    case Opcode::v128_const:  // two words, low half first
      emit(Op::const2);
      word(in.bits[0]);
      word(in.bits[1]);
      return;
    case Opcode::memory_size: on_memory(in.x, [&] { emit(Op::memory_size); }); return;
    case Opcode::memory_grow: on_memory(in.x, [&] { emit(memory64(in.x) ? Op::memory_grow_a64 : Op::memory_grow); }); return;
    case Opcode::memory_init:  // data x, memory y
      on_memory(in.y, [&] {
        emit(memory64(in.y) ? Op::memory_init_a64 : Op::memory_init);
        word(reinterpret_cast<uint64_t>(&inst_.datas.at(in.x)));
      });
      return;
    case Opcode::memory_fill: on_memory(in.x, [&] { emit(memory64(in.x) ? Op::memory_fill_a64 : Op::memory_fill); }); return;
    case Opcode::data_drop: emit(Op::data_drop); word(reinterpret_cast<uint64_t>(&inst_.datas.at(in.x))); return;
    case Opcode::elem_drop: emit(Op::elem_drop); word(reinterpret_cast<uint64_t>(&inst_.elems.at(in.x))); return;
    // index64's slots count from the top of the operands the handler finds (its pops).
    case Opcode::table_get: index64(in.x, {1}); emit(Op::table_get); table_word(in.x); return;
    case Opcode::table_set: index64(in.x, {2}); emit(Op::table_set); table_word(in.x); return;
    case Opcode::table_size: emit(Op::table_size); table_word(in.x); return;
    case Opcode::table_grow:
      index64(in.x, {1});
      emit(Op::table_grow);
      table_word(in.x);
      // A table64's "cannot grow" is i64 -1: the handler's 32-bit -1 sign-extended (a size it
      // returns is below 2^31, Runtime::kMaxTableElements).
      if (table64(in.x)) emit(Op::i64_extend_i32_s);
      return;
    case Opcode::table_fill: index64(in.x, {3, 1}); emit(Op::table_fill); table_word(in.x); return;
    case Opcode::struct_get: case Opcode::struct_get_s: case Opcode::struct_get_u: case Opcode::struct_set:
    case Opcode::array_new: case Opcode::array_get: case Opcode::array_get_s: case Opcode::array_get_u: case Opcode::array_set:
    case Opcode::array_fill:
      gc_access(in);
      return;
    default: {
      const StackEffect& e = effect_of(*in.decl).effect;
      const bool stops = in.decl->flags & STOPS;
      if (e.pops.empty() && e.pushes.empty() && !stops && in.decl->imm[0] == ImmKind::NONE) return;  // nop: nothing to run
      const Op handler = kSameNamedHandlers[static_cast<size_t>(in.decl - std::begin(kInstructions))];
      if (handler == Op::kCount) throw Unsupported(fmt::format("{} has no handler of its name and no lowering rule", in.decl->name));
      emit(handler);
      if (stops) mark_dead();  // unreachable, throw_ref: what follows in the block never runs
    }
  }
}

}  // namespace dlab::wasm::lowering_impl
