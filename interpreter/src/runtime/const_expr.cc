#include "runtime/const_expr.h"

#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "decode/instruction_reader.h"
#include "gc/gc_ops.h"

namespace dlab::wasm::runtime_impl {

// A validated constant expression, evaluated: the consts, global.get, ref.null / ref.func,
// extended-const's i32/i64 add, sub and mul, and GC's allocations, ref.i31 and the extern / any
// conversions, on a stack of slots (v128 two), until `end`. The allocations are the gc_op
// functions the lowering writes (gc_ops.h), on this stack, with collection off (instantiation).
std::pair<uint64_t, uint64_t> eval_const(Machine& m, const Instance& inst, const Expr& e) {
  BinaryReader r(e.bytes.data(), e.bytes.size());
  std::vector<uint64_t> slots;
  std::vector<uint8_t> widths;  // slots of each value
  auto push = [&](uint64_t lo) {
    slots.push_back(lo);
    widths.push_back(1);
  };
  auto binop = [&](auto f) {
    uint64_t b = slots.back();
    slots.pop_back();
    widths.pop_back();
    slots.back() = f(slots.back(), b);
  };
  auto gc = [&](GcOpFn fn, uint64_t a, uint64_t b, uint32_t values) {
    uint64_t ip[4] = {0, 0, a, b};
    for (uint32_t k = 0; k < values; ++k) widths.pop_back();  // the function pops their slots
    slots.resize(slots.size() + 2);  // room for the result
    uint64_t* sp = fn(&m, ip, slots.data() + slots.size() - 2);
    if (!sp) throw Trap(m.trap);
    slots.resize(static_cast<size_t>(sp - slots.data()));
    widths.push_back(1);
  };
  auto rtt = [&](uint32_t x) { return reinterpret_cast<uint64_t>(&inst.types->rtt(inst.type_ids.at(x))); };
  auto push_v128 = [&](uint64_t lo, uint64_t hi) {
    push(lo);
    slots.push_back(hi);
    widths.back() = 2;
  };
  for (;;) {
    const Instruction in = read_instruction(r);
    switch (in.opcode) {
      case 0x0B:
        if (widths.back() == 2) return {slots[slots.size() - 2], slots.back()};
        return {slots.back(), 0};
      case 0x41: case 0x42: case 0x43: case 0x44: push(in.bits[0]); break;
      case 0x23: {
        const GlobalInst* g = inst.globals.at(in.x);
        if (g->type.type == ValType::kV128) push_v128(g->lo, g->hi);
        else push(g->lo);
        break;
      }
      case 0xD0: push(0); break;
      case 0xD2: push(reinterpret_cast<uint64_t>(inst.funcs.at(in.x))); break;
      case 0xFD00C: push_v128(in.bits[0], in.bits[1]); break;  // v128.const
      case 0xFB00: gc(&gc_struct_new, rtt(in.x), 0, static_cast<uint32_t>(inst.module.types.at(in.x).fields.size())); break;
      case 0xFB01: gc(&gc_struct_new_default, rtt(in.x), 0, 0); break;
      case 0xFB06: gc(&gc_array_new, rtt(in.x), 0, 2); break;
      case 0xFB07: gc(&gc_array_new_default, rtt(in.x), 0, 1); break;
      case 0xFB08: gc(&gc_array_new_fixed, rtt(in.x), in.y, in.y); break;
      case 0xFB1A: case 0xFB1B: break;  // any.convert_extern, extern.convert_any: the same slot
      case 0xFB1C: slots.back() = ref::i31(static_cast<uint32_t>(slots.back())); break;
      // i32 results stay zero-extended in their 64-bit lane, as every i32 does.
      case 0x6A: binop([](uint64_t a, uint64_t b) -> uint64_t { return static_cast<uint32_t>(a + b); }); break;
      case 0x6B: binop([](uint64_t a, uint64_t b) -> uint64_t { return static_cast<uint32_t>(a - b); }); break;
      case 0x6C: binop([](uint64_t a, uint64_t b) -> uint64_t { return static_cast<uint32_t>(a * b); }); break;
      case 0x7C: binop([](uint64_t a, uint64_t b) { return a + b; }); break;
      case 0x7D: binop([](uint64_t a, uint64_t b) { return a - b; }); break;
      case 0x7E: binop([](uint64_t a, uint64_t b) { return a * b; }); break;
      default: throw std::logic_error(fmt::format("constant expression opcode {:#x} (module not validated?)", in.opcode));
    }
  }
}

}  // namespace dlab::wasm::runtime_impl
