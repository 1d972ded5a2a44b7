// The tail-call dispatch modes really dispatch by tail call: in the assembly CMake leaves (the linked
// objects' own in a release build, -save-temps=obj; else -S copies), every
// handler reaches its successor through an indirect jump, and none calls another handler; and
// the stack placements are what they say (vec: through Machine::vsp; sp_spill: on the stack;
// sp_wt, sp_wb: the top of stack arrives in a register; sp_wb: results stay there).
// Unlike the models' handlers, interpreter handlers may return (a trap or `halt` stops the
// machine) and call out (host functions, memmove), so the check is: an indirect jump present,
// and indirect calls only in the handlers that call host functions.
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "dispatchlab/probes/asm_analysis.h"
#include "machine.h"
#include "ops.h"

namespace dlab::probes {
namespace {

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool indirect_jump(const std::string& ins) { return mnemonic(ins).rfind("jmp", 0) == 0 && ins.find('*') != std::string::npos; }
bool indirect_call(const std::string& ins) { return mnemonic(ins).rfind("call", 0) == 0 && ins.find('*') != std::string::npos; }

// What a handler's code must show besides its jump: where its stack pointer lives (the SP axis of
// engines.def's PLACEMENT rows).
enum class SpHome { ARG, MACHINE, SPILL };

SpHome sp_home(wasm::Placement p) {
  switch (p) {
#define PLACEMENT(name, enumerator, sp, top) \
  case wasm::Placement::enumerator: return SpHome::sp;
#include "dispatchlab/interpreter/engines.def"
#undef PLACEMENT
  }
  return SpHome::ARG;
}

// Every engine of engines.def, as the asm files CMake writes (dispatch_<name>.s).
struct EngineRow {
  const char* name;
  wasm::Dispatch dispatch;
  wasm::Placement placement;
  wasm::Budget budget;
};
constexpr EngineRow kEngines[] = {
#define ENGINE(name, d, p, b, bounds) {#name, wasm::Dispatch::d, wasm::Placement::p, wasm::Budget::b},
#include "dispatchlab/interpreter/engines.def"
#undef ENGINE
};
std::string asm_file(const EngineRow& e) { return std::string(DLAB_WASM_ASM_DIR "/dispatch_") + e.name + ".s"; }
// Engines this build leaves out (CMake's DLAB_ALL_ENGINES=OFF): no assembly to check.
bool built(const EngineRow& e) { return std::string(DLAB_ENGINES_NOT_BUILT).find(std::string(" ") + e.name + " ") == std::string::npos; }

// "24(%rdx)"-style operand of Machine::vsp: the vec placement's stack pointer in the machine.
std::string vsp_operand() {
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Winvalid-offsetof"
  return std::to_string(offsetof(wasm::Machine, vsp)) + "(%";
#pragma clang diagnostic pop
}

// The register IR's generated forms (ops.h's tables): compiled where the placement is sp; in the
// other placements each is a stub that traps (the runtime never writes them there).
std::set<std::string> register_forms() {
  std::set<std::string> out;
  auto add = [&](wasm::Op op) {
    if (op != wasm::Op::kCount) out.insert(wasm::kOpNames[static_cast<size_t>(op)]);
  };
  for (const auto& s : wasm::kSimpleOps) {
    add(s.reg);
    add(s.reg_k);
    add(s.reg_a);
  }
  for (const auto& f : wasm::kForms) {
    add(f.forms.rr_br_if);
    add(f.forms.rr_br_unless);
    add(f.forms.rk_br_if);
    add(f.forms.rk_br_unless);
  }
  return out;
}

void check_file(const std::string& path, SpHome home = SpHome::ARG, bool register_ir = true) {
  SCOPED_TRACE(path);
  static const std::set<std::string> register_only = register_forms();
  // Indirect calls: the calls' host functions, and gc_op's out-of-line GC function (its word 1).
  const std::set<std::string> host_callers = {"call", "call_indirect", "call_at", "call_indirect_at", "return_call", "return_call_indirect", "call_ref", "return_call_ref",
                                              "gc_op"};
  const std::set<std::string> stoppers = {"halt", "unreachable"};
  // Every op has its handler in the file.  // never continue
  int handlers = 0;
  for (const auto& f : parse_asm_functions(read(path))) {
    // Handlers are h_<op> in an anonymous namespace: Itanium-mangled as "<length>h_<op>E".
    std::string name;
    for (const char* op : wasm::kOpNames) {
      std::string h = std::string("h_") + op;
      if (f.name.find(std::to_string(h.size()) + h + "E") != std::string::npos) name = op;
    }
    if (name.empty()) continue;
    ++handlers;
    bool jumps = false, machine_sp = false, stack_sp = false;
    for (const auto& ins : f.instructions) {
      jumps |= indirect_jump(ins);
      if (indirect_call(ins) && !host_callers.count(name)) ADD_FAILURE() << f.name << " calls indirectly: " << ins;
      machine_sp |= ins.find(vsp_operand()) != std::string::npos;
      stack_sp |= ins.find("(%rsp)") != std::string::npos;
    }
    if (stoppers.count(name) || (!register_ir && register_only.count(name))) continue;
    EXPECT_TRUE(jumps) << f.name << " has no indirect jump to the next handler";
    // vec: the stack pointer goes through Machine::vsp in every handler; sp_spill: through the
    // stack, where the ninth argument is passed.
    if (home == SpHome::MACHINE) EXPECT_TRUE(machine_sp) << f.name << " does not touch Machine::vsp (" << vsp_operand() << ")";
    if (home == SpHome::SPILL) EXPECT_TRUE(stack_sp) << f.name << " does not touch the stack-passed stack pointer";
  }
  EXPECT_EQ(handlers, static_cast<int>(wasm::Op::kCount));
}

// The instructions of handler h_<op> in a tail-call file.
std::vector<std::string> handler_code(const std::string& path, const std::string& op) {
  std::string h = "h_" + op;
  for (const auto& f : parse_asm_functions(read(path)))
    if (f.name.find(std::to_string(h.size()) + h + "E") != std::string::npos) return f.instructions;
  ADD_FAILURE() << "no handler " << h << " in " << path;
  return {};
}

// A read of the top-of-stack slot: an instruction whose source (AT&T: first) operand is -8(%reg),
// the slot below the operand-stack pointer (lea computes the new stack pointer, it reads nothing).
bool reads_top_slot(const std::vector<std::string>& code) {
  for (const auto& ins : code) {
    if (mnemonic(ins).rfind("lea", 0) == 0) continue;
    std::string rest = ins.substr(ins.find(mnemonic(ins)) + mnemonic(ins).size());
    size_t first = rest.find_first_not_of(" \t");
    if (first != std::string::npos && rest.compare(first, 4, "-8(%") == 0) return true;
  }
  return false;
}

// sp_wt: the handlers written against TOP_VALUE (a binop, a load, local.tee) take the top from
// their argument register and never load its slot; the same handlers in the sp placement do
// (which shows the check can fail).
TEST(InterpreterAsm, WriteThroughHandlersTakeTheTopFromARegister) {
  for (const char* op : {"local_tee", "i32_add", "i32_load8_u", "i64_mul"}) {
    SCOPED_TRACE(op);
    EXPECT_TRUE(reads_top_slot(handler_code(DLAB_WASM_ASM_DIR "/dispatch_tail.s", op)));
    EXPECT_TRUE(reads_top_slot(handler_code(DLAB_WASM_ASM_DIR "/dispatch_tail_pn.s", op)));
    EXPECT_FALSE(reads_top_slot(handler_code(DLAB_WASM_ASM_DIR "/dispatch_tail_wt.s", op)));
    EXPECT_FALSE(reads_top_slot(handler_code(DLAB_WASM_ASM_DIR "/dispatch_tail_pn_wt.s", op)));
  }
}

// A store to an operand slot: an instruction (not a compare) whose destination (AT&T: last operand)
// is -N(%reg), a slot below the operand-stack pointer.
bool writes_a_slot(const std::vector<std::string>& code) {
  for (const auto& ins : code) {
    std::string m = mnemonic(ins);
    if (m.rfind("cmp", 0) == 0 || m.rfind("test", 0) == 0) continue;
    size_t comma = ins.rfind(',');
    if (comma == std::string::npos) continue;
    std::string dst = ins.substr(comma + 1);
    size_t first = dst.find_first_not_of(" \t");
    if (first != std::string::npos && dst[first] == '-' && dst.find("(%") != std::string::npos) return true;
  }
  return false;
}

// sp_wb: the same handlers neither load the top's slot nor store a result to any slot: the new top
// stays in the register (sp_wt stores it through, which shows the check can fail).
TEST(InterpreterAsm, WriteBackHandlersKeepTheResultInARegister) {
  for (const char* op : {"i32_add", "i32_load8_u", "i64_mul"}) {
    SCOPED_TRACE(op);
    EXPECT_TRUE(writes_a_slot(handler_code(DLAB_WASM_ASM_DIR "/dispatch_tail_wt.s", op)));
    for (const char* file : {DLAB_WASM_ASM_DIR "/dispatch_tail_wb.s", DLAB_WASM_ASM_DIR "/dispatch_tail_pn_wb.s"}) {
      auto code = handler_code(file, op);
      EXPECT_FALSE(reads_top_slot(code)) << file;
      EXPECT_FALSE(writes_a_slot(code)) << file;
    }
  }
}

// "56(%"-style operand of Machine::fuel.
std::string fuel_operand() {
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Winvalid-offsetof"
  return std::to_string(offsetof(wasm::Machine, fuel)) + "(%";
#pragma clang diagnostic pop
}

// An instruction that reads Machine::fuel: it names the field and is not a mov into it (the
// exhausted path of the argument engines stores the spent counter back; that reads nothing).
bool reads_machine_fuel(const std::vector<std::string>& code) {
  for (const auto& ins : code) {
    size_t at = ins.find(fuel_operand());
    if (at == std::string::npos) continue;
    bool destination = mnemonic(ins).rfind("mov", 0) == 0 && ins.rfind(',') < at;
    if (!destination) return true;
  }
  return false;
}

bool names_the_epoch(const std::vector<std::string>& code) {
  for (const auto& ins : code)
    if (ins.find("g_epoch") != std::string::npos) return true;
  return false;
}

// The budget axis in machine code: the fuel engines' branches charge a register (the counter is
// a handler argument) and never read Machine::fuel; fuel_machine's read it; deadline's read the
// epoch; the unbudgeted engine does neither (which shows both checks can fail).
TEST(InterpreterAsm, FuelArgumentEnginesChargeARegisterAndTheOthersTheMachine) {
  int checked = 0;
  for (const auto& e : kEngines) {
    if (e.dispatch != wasm::Dispatch::kTail && e.dispatch != wasm::Dispatch::kTailPreserveNone) continue;
    if (e.placement != wasm::Placement::kSp) continue;
    // (not call: around a host function the argument engines hand the counter to the machine)
    for (const char* op : {"br", "br_if", "i32_lt_s_br_if"}) {
      SCOPED_TRACE(std::string(e.name) + " " + op);
      auto code = handler_code(asm_file(e), op);
      EXPECT_EQ(reads_machine_fuel(code), e.budget == wasm::Budget::kFuelMachine);
      EXPECT_EQ(names_the_epoch(code), e.budget == wasm::Budget::kDeadline);
      ++checked;
    }
  }
  EXPECT_GE(checked, 3 * 8);  // three handlers in tail and tail_pn x none, fuel, fuel_machine, deadline
}

// Every goto engine: clang may merge the handlers' `goto *` into one shared dispatch block (the
// models' goto_nodup); these engines are meant to keep one indirect jump per handler, as `goto`.
TEST(InterpreterAsm, GotoEnginesKeepTheirOwnIndirectJumps) {
  int engines = 0;
  for (const auto& e : kEngines) {
    if (e.dispatch != wasm::Dispatch::kGoto || !built(e)) continue;
    ++engines;
    int jumps = 0;
    for (const auto& f : parse_asm_functions(read(asm_file(e))))
      if (f.name.find(std::string("run_") + e.name) != std::string::npos)
        for (const auto& ins : f.instructions) jumps += indirect_jump(ins);
    EXPECT_GT(jumps, static_cast<int>(wasm::Op::kCount) / 2) << "indirect jumps in run_" << e.name;
  }
  EXPECT_GT(engines, 0);
}

// Every tail-call engine (plain and preserve_none): each handler reaches its successor by an
// indirect jump, and its stack pointer is where its placement says (vec: through Machine::vsp in
// every handler; sp_spill: through the stack, where the ninth argument is passed).
TEST(InterpreterAsm, TailEnginesJumpToTheirSuccessorWithTheStackPointerWhereTheirPlacementSays) {
  int engines = 0;
  for (const auto& e : kEngines) {
    if ((e.dispatch != wasm::Dispatch::kTail && e.dispatch != wasm::Dispatch::kTailPreserveNone) || !built(e)) continue;
    ++engines;
    check_file(asm_file(e), sp_home(e.placement), e.placement == wasm::Placement::kSp);  // placement.h's DLW_REGISTER_IR
  }
  EXPECT_GT(engines, 0);
}

}  // namespace
}  // namespace dlab::probes
