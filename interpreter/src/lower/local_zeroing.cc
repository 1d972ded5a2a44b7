// locals_needing_zero (local_zeroing.h): definite assignment of locals over a body's blocks.
#include "lower/local_zeroing.h"

#include <algorithm>

#include "decode/binary_reader.h"
#include "decode/instruction_reader.h"

namespace dlab::wasm {
namespace {

bool numeric(ValType t) {
  return t == ValType::kI32 || t == ValType::kI64 || t == ValType::kF32 || t == ValType::kF64 || t == ValType::kV128;
}

// A set of locals, one bit each. All bits set stands for unreachable code: every read there is
// fine, and meeting it changes no other set.
using Locals = std::vector<uint64_t>;

void meet(Locals& into, const Locals& from) {
  for (size_t w = 0; w < into.size(); ++w) into[w] &= from[w];
}

struct Frame {
  bool loop = false;
  bool in_if = false;  // an if whose else has not come: its false path skips the then-branch
  Locals at_entry;     // an if's set at its start (its else starts from it)
  Locals at_label;     // the meet of every branch to its end, and of the fallthrough
};

}  // namespace

std::vector<bool> locals_needing_zero(const FunctionBody& body, size_t params, size_t max_locals) {
  std::vector<ValType> types;
  for (const auto& [n, t] : body.locals) types.insert(types.end(), n, t);
  const size_t count = params + types.size();
  std::vector<bool> needs(count, false);
  auto zero_all = [&] {
    std::fill(needs.begin() + static_cast<std::ptrdiff_t>(params), needs.end(), true);
    return needs;
  };
  if (types.empty()) return needs;
  if (count > max_locals) return zero_all();

  const Locals all(count / 64 + 1, ~uint64_t{0});
  Locals cur(all.size(), 0);
  for (size_t i = 0; i < params; ++i) cur[i / 64] |= uint64_t{1} << (i % 64);
  // Reference locals are zeroed whatever the code does: counted as never written.
  std::vector<bool> always(count, false);
  for (size_t i = 0; i < types.size(); ++i)
    if (!numeric(types[i])) always[params + i] = needs[params + i] = true;

  std::vector<Frame> frames;
  frames.push_back({false, false, {}, all});  // the function's own block
  auto branch_to = [&](uint32_t depth) {
    if (depth >= frames.size()) return false;
    Frame& f = frames[frames.size() - 1 - depth];
    if (!f.loop) meet(f.at_label, cur);
    return true;
  };
  try {
    BinaryReader r(body.code.bytes.data(), body.code.bytes.size());
    while (!frames.empty()) {
      const Instruction in = read_instruction(r);
      switch (in.opcode) {
        case Opcode::local_get: {
          const size_t i = in.x;
          if (i >= count) return zero_all();
          if (!(cur[i / 64] >> (i % 64) & 1)) needs[i] = true;
          break;
        }
        case Opcode::local_set:
        case Opcode::local_tee: {
          const size_t i = in.x;
          if (i >= count) return zero_all();
          if (!always[i]) cur[i / 64] |= uint64_t{1} << (i % 64);
          break;
        }
        case Opcode::block:
          frames.push_back({false, false, {}, all});
          break;
        case Opcode::loop:
          frames.push_back({true, false, {}, all});
          break;
        case Opcode::if_:
          frames.push_back({false, true, cur, all});
          break;
        case Opcode::try_table: {
          // A call or throw anywhere in it may land at a clause's label; every set inside holds
          // at least what this one does, so the meet with this one covers them all.
          bool ok = true;
          for_each_catch(in, [&](const CatchImm& c) { ok = ok && branch_to(c.label); });
          if (!ok) return zero_all();
          frames.push_back({false, false, {}, all});
          break;
        }
        case Opcode::else_: {
          Frame& f = frames.back();
          if (!f.in_if) return zero_all();
          meet(f.at_label, cur);
          cur = f.at_entry;
          f.in_if = false;
          break;
        }
        case Opcode::end: {
          Frame f = std::move(frames.back());
          frames.pop_back();
          if (f.loop) break;  // only its fallthrough reaches what follows: cur as it is
          if (f.in_if) meet(f.at_label, f.at_entry);
          meet(f.at_label, cur);
          cur = std::move(f.at_label);
          break;
        }
        case Opcode::br:
          if (!branch_to(in.x)) return zero_all();
          cur = all;
          break;
        case Opcode::br_if:
        case Opcode::br_on_null:
        case Opcode::br_on_non_null:
        case Opcode::br_on_cast:
        case Opcode::br_on_cast_fail:
          if (!branch_to(in.x)) return zero_all();
          break;
        case Opcode::br_table: {
          bool ok = branch_to(in.x);
          for_each_label(in, [&](uint32_t l) { ok = ok && branch_to(l); });
          if (!ok) return zero_all();
          cur = all;
          break;
        }
        case Opcode::return_:
        case Opcode::unreachable:
        case Opcode::throw_:
        case Opcode::throw_ref:
        case Opcode::return_call:
        case Opcode::return_call_indirect:
        case Opcode::return_call_ref:
          cur = all;
          break;
        default:
          break;
      }
    }
  } catch (const std::exception&) {
    return zero_all();
  }
  return needs;
}

}  // namespace dlab::wasm
