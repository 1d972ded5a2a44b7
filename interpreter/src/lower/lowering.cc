// Lowering a function body (lowering.h): the driver, over its instructions in order, and the
// control structure (blocks, loops, if/else, try_table, their labels and branch fixups). Each
// instruction is written in its stack IR form (stack_ir.cc) or its register IR one
// (register_ir.cc), and the peephole stage (peephole.cc) rewrites what was written. The class
// is lowerer.h's.
#include "lower/lowering.h"

#include <fmt/format.h>

#include "engines/machine.h"
#include "lower/lowerer.h"

namespace dlab::wasm {
namespace lowering_impl {

// A function's frame shape before any code: its parameter, local and result slots, its locals
// within Runtime::kMaxLocals. Eager and lazy lowering both start from it.
void set_frame_slots(FuncInst& f, const FunctionBody& body) {
  uint64_t declared = f.type.params.size();
  for (const auto& [n, t] : body.locals) declared += n;
  if (declared > Runtime::kMaxLocals)
    throw ImplementationLimit(fmt::format("a function declares {} locals; this interpreter's limit is {}", declared, Runtime::kMaxLocals));
  f.param_slots = slots_of(f.type.params);
  f.local_slots = 0;
  for (const auto& [n, t] : body.locals) f.local_slots += n * slots_of(t);
  f.result_slots = slots_of(f.type.results);
}

void Lowerer::run() {
  set_frame_slots(f_, body_);
  for (auto t : f_.type.params) add_local(t);
  for (const auto& [n, t] : body_.locals)
    for (uint32_t i = 0; i < n; ++i) add_local(t);
  max_height_ = height_;
  sp_at_ = height_;  // a call leaves the stack pointer above the callee's locals
  Ctl fn;
  fn.results = f_.type.results;
  fn.height_base = height_;
  ctls_.push_back(std::move(fn));
  BinaryReader r(body_.code.bytes.data(), body_.code.bytes.size());
  while (!ctls_.empty()) instruction(r);
  label();
  f_.max_slots = max_height_;
  f_.code = std::move(code_);
}

std::pair<std::vector<ValType>, std::vector<ValType>> Lowerer::block_type(const BlockType& b) {
  if (b.kind == BlockType::kEmpty) return {};
  if (b.kind == BlockType::kValue) return {{}, {b.value}};
  const FuncType& ft = inst_.module.types.at(b.index);
  return {ft.params, ft.results};
}

void Lowerer::enter(CtlKind kind, std::vector<ValType> params, std::vector<ValType> results) {
  if (kind == CtlKind::kIf) pop();
  // Register IR: every value below the label (its parameters too) in its own slot first, so that
  // every path reaching the label finds them there; an `if`'s condition stays as it is.
  const Loc condition = popped_;
  if (reg_ && !dead()) materialize_all();
  Ctl c;
  c.kind = kind;
  c.live_at_start = !dead();
  c.dead = dead();
  if (c.live_at_start) {
    for (size_t i = 0; i < params.size(); ++i) pop();
    c.type_base = types_.size();
    c.height_base = height_;
  }
  c.params = std::move(params);
  c.results = std::move(results);
  c.loop_pc = code_.size();
  if (kind == CtlKind::kLoop) label();
  if (kind == CtlKind::kIf && c.live_at_start) {
    popped_ = condition;
    c.else_fixup = branch_on_top(false);
  }
  ctls_.push_back(std::move(c));
  push(ctls_.back().params);
}

void Lowerer::else_() {
  Ctl& c = ctls_.back();
  if (c.live_at_start) {
    if (reg_ && !c.dead) materialize_all();
    if (!c.dead) {
      size_t at = emit(Op::br);
      word(0);
      c.fixups.emplace_back(at, at + 1);
    }
    if (c.else_fixup) patch(*c.else_fixup, code_.size());
    c.else_fixup.reset();
    label();
    c.dead = false;
    types_.resize(c.type_base);
    locs_.resize(c.type_base);
    height_ = c.height_base;
  }
  c.kind = CtlKind::kElse;
  push(c.params);
}

// try_table: a block whose instructions are a catch range of the function. Each clause names a
// label outside the try_table; it lands there as a branch would, at the label's height.
void Lowerer::try_table(const Instruction& in) {
  auto [params, results] = block_type(in.block);
  size_t range = SIZE_MAX;
  if (!dead()) {
    if (reg_) materialize_all();
    label();  // the range begins at an instruction boundary that no rewrite crosses
    range = f_.catches.size();
    CatchRange cr;
    for_each_catch(in, [&](const CatchImm& clause) {
      Ctl& l = ctls_[ctls_.size() - 1 - clause.label];
      CatchClause c;
      c.tag = catches_a_tag(clause.kind) ? inst_.tags.at(clause.tag) : nullptr;
      c.ref = pushes_exnref(clause.kind);
      c.height = l.height_base;
      if (l.kind == CtlKind::kLoop) c.target = l.loop_pc;
      else l.catch_fixups.emplace_back(range, cr.clauses.size());
      cr.clauses.push_back(c);
    });
    f_.catches.push_back(std::move(cr));
  }
  enter(CtlKind::kBlock, std::move(params), std::move(results));
  ctls_.back().try_range = range;
  if (range != SIZE_MAX) f_.catches[range].begin = code_.size();
}

void Lowerer::end() {
  // Register IR: the function's end with nothing branching to it returns from wherever its
  // result is (a pending local too); any other label needs its values in their slots on this path.
  const Ctl& ending = ctls_.back();
  if (reg_ && !dead() && ending.kind == CtlKind::kFunction && ending.fixups.empty() && ending.catch_fixups.empty()) {
    register_return(ending.height_base, false);
    ctls_.pop_back();
    return;
  }
  if (reg_ && !dead()) materialize_all();
  Ctl c = std::move(ctls_.back());
  if (c.try_range != SIZE_MAX) f_.catches[c.try_range].end = code_.size();
  if (c.else_fixup) patch(*c.else_fixup, code_.size());
  for (const auto& fix : c.fixups) patch(fix, code_.size());
  for (const auto& [range, clause] : c.catch_fixups) f_.catches[range].clauses[clause].target = code_.size();
  label();
  if (c.kind == CtlKind::kFunction) {
    if (reg_) register_return(c.height_base, true);
    else {
      emit(Op::return_);
      word(f_.result_slots);
    }
    ctls_.pop_back();
    return;
  }
  ctls_.pop_back();
  if (c.live_at_start) {
    types_.resize(c.type_base);
    locs_.resize(c.type_base);
    height_ = c.height_base;
    push(c.results);
  }
}

void Lowerer::instruction(BinaryReader& r) {
  const Instruction in = read_instruction(r);
  // Control structure is tracked even in dead code; everything else emitted in dead code is
  // rolled back afterwards.
  switch (in.opcode) {
    case Opcode::block: case Opcode::loop: case Opcode::if_: {
      auto [params, results] = block_type(in.block);
      const CtlKind kind = in.opcode == Opcode::block ? CtlKind::kBlock : in.opcode == Opcode::loop ? CtlKind::kLoop : CtlKind::kIf;
      enter(kind, std::move(params), std::move(results));
      return;
    }
    case Opcode::try_table: try_table(in); return;
    case Opcode::else_: else_(); return;
    case Opcode::end: end(); return;
    default: break;
  }
  const size_t mark = code_.size();
  const bool was_dead = dead();
  body(in);
  if (was_dead) {
    code_.resize(mark);
    while (!window_.empty() && window_.back().at >= mark) window_.pop_back();
    label();
  }
}

// Register IR: an instruction with a register form is written in it; any other runs in its
// stack form, with every pending value in its slot and the stack pointer at the height it
// expects (sp_at when it is elsewhere), which it then leaves at its own.
void Lowerer::body(const Instruction& in) {
  if (!reg_ || dead()) return stack_body(in);
  if (register_body(in)) return;
  stack_form();
  stack_body(in);
  sp_at_ = dead() ? kUnknownHeight : height_;
}

}  // namespace lowering_impl

void lower_function(Instance& inst, uint32_t defined_index, const uint64_t* op_words, Lowering lowering, bool record_starts) {
  size_t imported = inst.funcs.size() - inst.module.code.size();
  lowering_impl::Lowerer(inst, *inst.funcs.at(imported + defined_index), inst.module.code.at(defined_index), op_words, lowering,
                         record_starts)
      .run();
}

void prepare_late_lowering(Instance& inst, uint32_t defined_index) {
  size_t imported = inst.funcs.size() - inst.module.code.size();
  FuncInst& f = *inst.funcs.at(imported + defined_index);
  const FunctionBody& body = inst.module.code.at(defined_index);
  lowering_impl::set_frame_slots(f, body);
  f.max_slots = f.param_slots + f.local_slots;  // a lower bound: lower_on_call checks the lowered frame's again
  f.body = &body;
  const uint64_t* words = inst.late_lowering.op_words;
  f.code = {words[static_cast<size_t>(Op::lower_on_call)], reinterpret_cast<uint64_t>(&f)};
}

const char* lower_on_first_call(FuncInst* f) noexcept {
  static thread_local std::string why;
  try {
    Instance& inst = *f->instance;
    lowering_impl::Lowerer(inst, *f, *f->body, inst.late_lowering.op_words, inst.late_lowering.lowering, false).run();
    f->body = nullptr;
    if (!f->catches.empty()) (*inst.late_lowering.catch_code)[f->code.data()] = f;
    return nullptr;
  } catch (const std::exception& e) {
    why = e.what();
  } catch (...) {
    why = "lowering failed";
  }
  return why.c_str();
}

void lower_body(Instance& inst, FuncInst& f, const FunctionBody& body, const uint64_t* op_words, Lowering lowering) {
  lowering_impl::Lowerer(inst, f, body, op_words, lowering, false).run();
}

}  // namespace dlab::wasm
