// The tail-call dispatch modes really dispatch by tail call: in the assembly CMake leaves (the linked
// objects' own in a release build, -save-temps=obj; else -S copies), on x86-64 and on AArch64 (the
// cross build's objects, this test run under qemu-user: it only reads text), every handler reaches
// its successor through an indirect jump (x86-64 `jmp *`, arm64 `br xN` / `braa`), and none calls
// another handler; and the stack placements are what they say (vec: through Machine::vsp; sp_spill:
// on the stack; sp_wt, sp_wb: the top of stack arrives in a register; sp_wb: results stay there).
// Where each piece of handler state lives is not written down here per architecture: the probes
// (dispatchlab/probes/register_probe.h) compile the engine's own handler signature for this
// target's triple and convention and say which register (or stack slot) each argument arrives in,
// and the handlers' code must use those.
// Unlike the models' handlers, interpreter handlers may return (a trap or `halt` stops the
// machine) and call out (host functions, memmove), so the check is: an indirect jump present,
// and indirect calls only in the handlers that call host functions.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "dispatchlab/interpreter/runtime.h"
#include "dispatchlab/probes/asm_analysis.h"
#include "dispatchlab/probes/register_probe.h"
#include "engines/machine.h"
#include "engines/ops.h"

namespace dlab::probes {
namespace {

// The architecture the engines (and this test) were compiled for, as the probes name it.
#if defined(__aarch64__)
constexpr const char* kArch = "aarch64";
constexpr const char* kTriple = "aarch64-linux-gnu";
#elif defined(__x86_64__)
constexpr const char* kArch = "x86_64";
constexpr const char* kTriple = "x86_64-linux-gnu";
#else
#error "handler_asm_test reads x86-64 or AArch64 ELF assembly"
#endif

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool indirect_jump(const std::string& ins) { return is_indirect_jump(kArch, ins); }
bool indirect_call(const std::string& ins) { return is_indirect_call(kArch, ins); }

// What a handler's code must show besides its jump: where its stack pointer lives and whether a
// top of stack is cached (the SP and TOP axes of engines.def's PLACEMENT rows), and where the
// budget's counter is (its BUDGET rows).
enum class SpHome { ARG, MACHINE, SPILL };
enum class TopHome { NONE, WT, WB };
enum class Counter { NONE, ARG, MACHINE, EPOCH };

SpHome sp_home(wasm::Placement p) {
  switch (p) {
#define PLACEMENT(name, enumerator, sp, top) \
  case wasm::Placement::enumerator: return SpHome::sp;
#include "dispatchlab/interpreter/engines.def"
#undef PLACEMENT
  }
  return SpHome::ARG;
}
TopHome top_home(wasm::Placement p) {
  switch (p) {
#define PLACEMENT(name, enumerator, sp, top) \
  case wasm::Placement::enumerator: return TopHome::top;
#include "dispatchlab/interpreter/engines.def"
#undef PLACEMENT
  }
  return TopHome::NONE;
}
Counter counter(wasm::Budget b) {
  switch (b) {
#define BUDGET(name, enumerator, counter) \
  case wasm::Budget::enumerator: return Counter::counter;
#include "dispatchlab/interpreter/engines.def"
#undef BUDGET
  }
  return Counter::NONE;
}

// Every engine of engines.def, as the asm files CMake writes (dispatch_<name>.s).
using EngineRow = wasm::EngineConfig;
const std::vector<wasm::EngineConfig> kEngines = wasm::engine_configs();
std::string asm_file(const EngineRow& e) { return std::string(DLAB_WASM_ASM_DIR "/dispatch_") + e.engine_name() + ".s"; }
std::string asm_file(const char* engine) { return std::string(DLAB_WASM_ASM_DIR "/dispatch_") + engine + ".s"; }
// Engines this build leaves out (engines.def's BUILD column): no assembly to check.
bool built(const std::string& engine) { return std::string(DLAB_ENGINES_NOT_BUILT).find(" " + engine + " ") == std::string::npos; }
bool built(const EngineRow& e) { return built(e.engine_name()); }
// The tests of the engines only the measurements compare skip in a build without them, saying so.
#define SKIP_UNLESS_BUILT(...)                                                                                    \
  for (const char* engine : {__VA_ARGS__})                                                                        \
    if (!built(engine))                                                                                           \
  GTEST_SKIP() << engine << " is not built here (engines.def's COMPARED rows: -DDLAB_COMPARED_ENGINES=ON, which " \
                  "`just test-compared`, `just rfc` and `just models` set, then ctest -L compared)"
std::string convention(const EngineRow& e) { return wasm::dispatch_convention(e.dispatch); }
bool tail_mode(const EngineRow& e) { return wasm::dispatch_form(e.dispatch) == wasm::DispatchForm::kHandlers; }

#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Winvalid-offsetof"
const long kVspOffset = static_cast<long>(offsetof(wasm::Machine, vsp));
const long kFuelOffset = static_cast<long>(offsetof(wasm::Machine, fuel));
#pragma clang diagnostic pop

// An access to the machine's field at `offset` ("88(%rdx)", "[x2, #88]"), off `base` when given.
bool addresses_field(const std::string& ins, long offset, const std::string& base = "") {
  for (const auto& mo : memory_operands(kArch, ins))
    if (!mo.symbolic && mo.index.empty() && mo.offset == offset && mo.base != stack_pointer(kArch) && !mo.base.empty() &&
        (base.empty() || register_names(kArch, base) == register_names(kArch, mo.base)))
      return true;
  return false;
}
// A memory operand based on `reg` (at any width), as when a handler reads ip[1] or fp[k].
bool addresses_off(const std::string& ins, const std::string& reg) {
  for (const auto& mo : memory_operands(kArch, ins))
    if (register_names(kArch, mo.base) == register_names(kArch, reg)) return true;
  return false;
}
// An operand slot at or below the stack pointer in `reg`: `-8(%rsi)`, `[x21, #-8]!`, a push's
// `[x1], #8` (not ip's or the machine's fields, which are above their pointers).
bool addresses_slot_off(const std::string& ins, const std::string& reg) {
  for (const auto& mo : memory_operands(kArch, ins))
    if (register_names(kArch, mo.base) == register_names(kArch, reg) && mo.index.empty() && !mo.symbolic && mo.offset <= 0) return true;
  return false;
}
bool touches_machine_stack(const std::string& ins) {
  for (const auto& mo : memory_operands(kArch, ins))
    if (mo.base == stack_pointer(kArch)) return true;
  return false;
}

// The register IR's generated forms and superinstructions (ops.h's tables): compiled where the placement is sp; in the
// other placements each is a stub that traps (the runtime never writes them there).
std::set<std::string> register_forms() {
  std::set<std::string> out;
  auto add = [&](wasm::Op op) {
    if (op != wasm::Op::kCount) out.insert(wasm::kOpNames[static_cast<size_t>(op)]);
  };
  for (const auto& s : wasm::kSimpleOps) {
    for (wasm::Op op : s.forms) add(op);
  }
  for (const auto& s : wasm::kSupers)
    if (s.register_ir) add(s.op);
  for (const auto& f : wasm::kForms) {
    add(f.forms.rr_br_if);
    add(f.forms.rr_br_unless);
    add(f.forms.rk_br_if);
    add(f.forms.rk_br_unless);
  }
  return out;
}

// A superinstruction's first (0) or second (1) instruction, by its name `first__second`; "" for
// an instruction that is no pair.
std::string half(const std::string& name, int which) {
  size_t at = name.find("__");
  if (at == std::string::npos) return "";
  return which == 0 ? name.substr(0, at) : name.substr(at + 2);
}

// The op whose handler a function is, by its mangled name ("<length>h_<op>E", in an anonymous
// namespace), or kNoOp. A map from the names, not a scan of every op per function: with about 2,800
// ops and a file per engine, the scan was most of this test's time (minutes under qemu-user).
constexpr size_t kNoOp = SIZE_MAX;
size_t op_of_handler(const std::string& mangled) {
  static const std::map<std::string, size_t> by_name = [] {
    std::map<std::string, size_t> m;
    for (size_t i = 0; i < std::size(wasm::kOpNames); ++i) m.emplace(wasm::kOpNames[i], i);
    return m;
  }();
  for (size_t p = mangled.find("h_"); p != std::string::npos; p = mangled.find("h_", p + 1)) {
    // The length before "h_" has one to four digits; the wrong split (a digit of what precedes it)
    // names no op followed by 'E'.
    size_t length = 0, scale = 1;
    for (size_t k = 1; k <= 4 && k <= p && mangled[p - k] >= '0' && mangled[p - k] <= '9'; ++k, scale *= 10) {
      length += static_cast<size_t>(mangled[p - k] - '0') * scale;
      if (length < 3 || p + length >= mangled.size() || mangled[p + length] != 'E') continue;
      auto it = by_name.find(mangled.substr(p + 2, length - 2));
      if (it != by_name.end()) return it->second;
    }
  }
  return kNoOp;
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
    const size_t number = op_of_handler(f.name);
    if (number == kNoOp) continue;
    const std::string name = wasm::kOpNames[number];
    ++handlers;
    bool jumps = false, machine_sp = false, stack_sp = false;
    for (const auto& ins : f.instructions) {
      jumps |= indirect_jump(ins);
      if (indirect_call(ins) && !host_callers.count(name) && !host_callers.count(half(name, 0)) && !host_callers.count(half(name, 1)))
        ADD_FAILURE() << f.name << " calls indirectly: " << ins;
      machine_sp |= addresses_field(ins, kVspOffset);
      stack_sp |= touches_machine_stack(ins);
    }
    if (stoppers.count(name) || (!register_ir && register_only.count(name))) continue;
    if (wasm::unwritten_register_form(static_cast<wasm::Op>(number))) continue;  // a stub that traps
    EXPECT_TRUE(jumps) << f.name << " has no indirect jump to the next handler";
    // vec: the stack pointer goes through Machine::vsp in every handler; sp_spill: through the
    // stack, where the ninth argument is passed.
    if (home == SpHome::MACHINE) EXPECT_TRUE(machine_sp) << f.name << " does not touch Machine::vsp (offset " << kVspOffset << ")";
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

// A read of the top-of-stack slot, the 8 bytes below the operand-stack pointer. x86-64: an
// instruction whose source (AT&T: first) operand is -8(%reg) (lea computes the new stack pointer,
// it reads nothing). arm64: a load whose bytes overlap [reg - 8, reg): `ldur w8, [x1, #-8]`,
// pre-indexed `ldr w8, [x1, #-8]!`, or a pair `ldp x8, x9, [x1, #-16]`.
bool reads_top_slot(const std::vector<std::string>& code) {
  for (const auto& ins : code) {
    if (std::string(kArch) == "x86_64") {
      if (mnemonic(ins).rfind("lea", 0) == 0) continue;
      for (const auto& mo : memory_operands(kArch, ins))
        if (mo.position == 0 && !mo.symbolic && !mo.base.empty() && mo.offset == -8) return true;
    } else {
      if (!arm64_loads(ins)) continue;
      long bytes = arm64_access_bytes(ins);
      for (const auto& mo : memory_operands(kArch, ins))
        if (!mo.symbolic && mo.index.empty() && mo.base != "sp" && mo.offset < 0 && mo.offset + bytes > -8) return true;
    }
  }
  return false;
}

// sp_wt: the handlers written against TOP_VALUE (a binop, a load, local.tee) take the top from
// their argument register and never load its slot; the same handlers in the sp placement do
// (which shows the check can fail).
TEST(InterpreterAsm, WriteThroughHandlersTakeTheTopFromARegister) {
  SKIP_UNLESS_BUILT("tail_wt", "tail_pn_wt");
  for (const char* op : {"local_tee", "i32_add", "i32_load8_u", "i64_mul"}) {
    SCOPED_TRACE(op);
    EXPECT_TRUE(reads_top_slot(handler_code(asm_file("tail"), op)));
    EXPECT_TRUE(reads_top_slot(handler_code(asm_file("tail_pn"), op)));
    EXPECT_FALSE(reads_top_slot(handler_code(asm_file("tail_wt"), op)));
    EXPECT_FALSE(reads_top_slot(handler_code(asm_file("tail_pn_wt"), op)));
  }
}

// A store to an operand slot, below the operand-stack pointer. x86-64: an instruction (not a
// compare) whose destination (AT&T: last operand) is -N(%reg). arm64: a store (str, stur, stp ...)
// to [reg, #-N] (not the machine stack: a frame's `stp x29, x30, [sp, #-16]!`).
bool writes_a_slot(const std::vector<std::string>& code) {
  for (const auto& ins : code) {
    if (std::string(kArch) == "x86_64") {
      std::string m = mnemonic(ins);
      if (m.rfind("cmp", 0) == 0 || m.rfind("test", 0) == 0) continue;
      auto ops = split_operands(ins);
      for (const auto& mo : memory_operands(kArch, ins))
        if (ops.size() > 1 && mo.position + 1 == static_cast<int>(ops.size()) && !mo.symbolic && !mo.base.empty() && mo.offset < 0) return true;
    } else {
      if (!arm64_stores(ins)) continue;
      for (const auto& mo : memory_operands(kArch, ins))
        if (!mo.symbolic && mo.base != "sp" && mo.base != "x29" && mo.offset < 0) return true;
    }
  }
  return false;
}

// A function's generic return, a branch that leaves values and the float-to-integer conversions
// call nothing (handlers.def's COPY_DOWN, numeric.h's trunc): as calls to memmove and libm's trunc
// they made each handler spill its state around the call. The f32.trunc operator itself still
// calls libm in an x86-64 build without SSE4.1 (no roundss), which shows the check can fail.
TEST(InterpreterAsm, ReturnsBranchValuesAndConversionsCallNothing) {
  auto calls = [](const std::vector<std::string>& code) {
    for (const auto& ins : code)
      if (is_call(kArch, mnemonic(ins))) return true;
    return false;
  };
  for (const char* op : {"return_", "br_drop", "br_table", "i32_trunc_f32_s", "i32_trunc_f64_u", "i64_trunc_f64_s",
                         "i64_trunc_f32_u", "i32_trunc_sat_f64_s", "i64_trunc_sat_f64_u"}) {
    SCOPED_TRACE(op);
    EXPECT_FALSE(calls(handler_code(asm_file("tail_pn"), op)));
  }
#if defined(__x86_64__) && !defined(__SSE4_1__)
  EXPECT_TRUE(calls(handler_code(asm_file("tail_pn"), "f32_trunc")));
#endif
}

// sp_wb: the same handlers neither load the top's slot nor store a result to any slot: the new top
// stays in the register (sp_wt stores it through, which shows the check can fail).
TEST(InterpreterAsm, WriteBackHandlersKeepTheResultInARegister) {
  SKIP_UNLESS_BUILT("tail_wt", "tail_wb", "tail_pn_wb");
  for (const char* op : {"i32_add", "i32_load8_u", "i64_mul"}) {
    SCOPED_TRACE(op);
    EXPECT_TRUE(writes_a_slot(handler_code(asm_file("tail_wt"), op)));
    for (const std::string& file : {asm_file("tail_wb"), asm_file("tail_pn_wb")}) {
      auto code = handler_code(file, op);
      EXPECT_FALSE(reads_top_slot(code)) << file;
      EXPECT_FALSE(writes_a_slot(code)) << file;
    }
  }
}

// ---- where the probes say each argument arrives -----------------------------------------------

// The names of an engine's handler parameters, in order (placement.h's DLW_P_PARAMS, budget.h's
// DLW_B_PARAM); their types are the engine's own handler signature (wasm::handler_signature).
std::vector<std::string> parameter_names(const EngineRow& e) {
  std::vector<std::string> names;
  switch (sp_home(e.placement)) {
    case SpHome::ARG: names = {"ip", "sp", "fp", "m"}; break;
    case SpHome::MACHINE: names = {"ip", "fp", "m"}; break;
    case SpHome::SPILL: names = {"ip", "fp", "m", "pad0", "pad1", "pad2", "pad3", "pad4", "sp"}; break;
  }
  if (top_home(e.placement) != TopHome::NONE) names.push_back("top");
  // The register IR's accumulators (placement.h's DLW_ACC_PARAM): where the register IR is built.
  if (sp_home(e.placement) == SpHome::ARG && top_home(e.placement) == TopHome::NONE)
    for (const char* acc : {"acc", "acc_f64", "acc_f32"}) names.push_back(acc);
  if (counter(e.budget) == Counter::ARG) names.push_back("fuel");
  // The memory's base (placement.h's DLW_MEM_PARAM): where the register IR is, in preserve_none engines.
  if (convention(e) == "preserve_none" && sp_home(e.placement) == SpHome::ARG && top_home(e.placement) == TopHome::NONE)
    names.push_back("mem");
  return names;
}


// The probe of one engine's handler signature for this target and the engine's convention (what
// `dlab probes fit --engines` prints), its arguments by name. One clang run per distinct
// signature and convention.
struct Prediction {
  ProbeResult probe;
  std::map<std::string, ArgLocation> at;
  std::string describe() const { return probe.triple + " " + probe.convention + " (" + to_string(probe.signature) + "): " + probe.register_list(); }
};
const Prediction& predicted(const EngineRow& e) {
  static std::map<std::string, ProbeResult> probes;
  static std::map<std::string, Prediction> by_engine;
  if (auto it = by_engine.find(e.engine_name()); it != by_engine.end()) return it->second;
  std::string sig = wasm::handler_signature(e.dispatch, e.placement, e.budget);
  std::string key = convention(e) + " " + sig;
  if (!probes.count(key)) probes[key] = probe(kTriple, convention(e), parse_signature(sig));
  Prediction p{probes[key], {}};
  auto names = parameter_names(e);
  EXPECT_EQ(names.size(), p.probe.args.size()) << e.engine_name() << ": handler signature " << sig;
  for (size_t i = 0; i < names.size() && i < p.probe.args.size(); ++i) p.at[names[i]] = p.probe.args[i];
  return by_engine[e.engine_name()] = p;
}

// sp_spill: the handler loads the operand-stack pointer from the stack slot the probe says the
// ninth argument arrives in, counted from the machine stack pointer at entry (x86-64 handlers push
// callee-saved registers first, which moves it: stack_growth), addresses an operand slot off the
// register it loaded it into (which tells it from the padding arguments beside it, which clang
// reloads and stores back as well), and stores it back there.
bool stack_pointer_in_entry_slot(const std::vector<std::string>& code, long entry_offset) {
  std::set<std::string> loaded_into;
  bool stores = false;
  long depth = 0;
  for (const auto& ins : code) {
    auto ops = split_operands(ins);
    for (const auto& mo : memory_operands(kArch, ins)) {
      if (mo.base != stack_pointer(kArch) || mo.symbolic || !mo.index.empty()) continue;
      long at = mo.offset - depth;  // the access's offset from the entry stack pointer
      if (std::string(kArch) == "x86_64") {
        if (at != entry_offset || ops.size() != 2) continue;
        if (mo.position == 0 && mnemonic(ins).rfind("mov", 0) == 0) loaded_into.insert(ops[1].substr(1));
        if (mo.position == 1) stores = true;
      } else {
        // ldr x9, [sp]; ldp x8, x9, [sp]: the k-th data register holds the 8 bytes at offset + 8k
        for (int k = 0; k < mo.position; ++k)
          if (at + 8 * k == entry_offset) {
            if (arm64_loads(ins)) loaded_into.insert(ops[k]);
            if (arm64_stores(ins)) stores = true;
          }
      }
    }
    depth += stack_growth(kArch, ins);
  }
  bool used = false;
  for (const auto& ins : code)
    for (const auto& r : loaded_into) used |= addresses_slot_off(ins, r);
  return used && stores;
}

// Every tail-call engine's handler state is where the probes put its handler signature's
// arguments for this target: the handlers the hot loops run address ip (the next word) and fp
// (local.get's frame slot) off the registers predicted for them; the stack pointer, off its
// register (sp, sp_wt, sp_wb), off the machine in m's register (vec, Machine::vsp), or in the stack
// slot predicted for the ninth argument (sp_spill, which the probe must put on the stack); the
// cached top (sp_wt, sp_wb) and the fuel counter are used in theirs; and where the probe puts every
// argument in a register, those handlers touch the machine stack not once (no spill).
TEST(InterpreterAsm, HandlerStateIsInTheRegistersTheProbesPredict) {
  int engines = 0;
  for (const auto& e : kEngines) {
    if (!tail_mode(e) || !built(e)) continue;
    const Prediction& p = predicted(e);
    SCOPED_TRACE(e.engine_name() + ": " + p.describe());
    ASSERT_EQ(p.probe.status, "ok") << p.probe.note;
    EXPECT_TRUE(p.probe.methods_agree) << p.probe.note;
    ++engines;
    SpHome home = sp_home(e.placement);
    bool all_in_registers = p.probe.on_stack() == 0 && p.probe.indirect() == 0;
    if (home == SpHome::SPILL) EXPECT_FALSE(p.at.at("sp").in_register) << "sp_spill's ninth argument is in a register here";
    else EXPECT_TRUE(all_in_registers);
    auto reg = [&](const char* name) { return p.at.at(name).where; };
    for (const char* op : {"i32_add", "local_get", "br_if"}) {
      SCOPED_TRACE(op);
      auto code = handler_code(asm_file(e), op);
      auto any = [&](auto pred) { return std::any_of(code.begin(), code.end(), pred); };
      EXPECT_TRUE(any([&](const std::string& i) { return addresses_off(i, reg("ip")); })) << "no word read off ip's " << reg("ip");
      if (std::string(op) == "local_get") EXPECT_TRUE(any([&](const std::string& i) { return addresses_off(i, reg("fp")); })) << "no frame slot read off fp's " << reg("fp");
      switch (home) {
        case SpHome::ARG:
          EXPECT_TRUE(any([&](const std::string& i) { return names_register(kArch, i, reg("sp")); })) << "sp's " << reg("sp") << " unused";
          // (br_if reads its condition off a copy on x86-64: `movq %r13, %rax; addq $-8, %r13; cmpl $0, -8(%rax)`)
          if (std::string(op) != "br_if") EXPECT_TRUE(any([&](const std::string& i) { return addresses_slot_off(i, reg("sp")); })) << "no slot addressed off sp's " << reg("sp");
          break;
        case SpHome::MACHINE:
          EXPECT_TRUE(any([&](const std::string& i) { return addresses_field(i, kVspOffset, reg("m")); }))
              << "Machine::vsp (offset " << kVspOffset << ") not addressed off m's " << reg("m");
          break;
        case SpHome::SPILL: {  // each of the three moves the stack pointer: a load and a store
          auto slot = memory_operands(kArch, "mov " + reg("sp"));  // the probe's operand: "24(%rsp)", "[sp]"
          if (slot.size() != 1 || slot[0].base != stack_pointer(kArch)) {
            ADD_FAILURE() << "the probe's ninth argument is not a stack slot: " << reg("sp");
            break;
          }
          EXPECT_TRUE(stack_pointer_in_entry_slot(code, slot[0].offset)) << "the operand-stack pointer is not passed in " << reg("sp");
          break;
        }
      }
      if (top_home(e.placement) != TopHome::NONE && std::string(op) == "i32_add")
        EXPECT_TRUE(any([&](const std::string& i) { return names_register(kArch, i, reg("top")); })) << "the top's " << reg("top") << " unused";
      if (counter(e.budget) == Counter::ARG && std::string(op) == "br_if")
        EXPECT_TRUE(any([&](const std::string& i) { return names_register(kArch, i, reg("fuel")); })) << "the counter's " << reg("fuel") << " uncharged";
      if (all_in_registers)
        for (const auto& ins : code) EXPECT_FALSE(touches_stack(kArch, ins)) << "stack traffic: " << ins;
    }
  }
  EXPECT_GT(engines, 0);
}

// An instruction that reads Machine::fuel off m's register: it names the field and is not a store
// to it (the exhausted path of the argument engines stores the spent counter back; that reads
// nothing). x86-64: not a mov into it; arm64: a load (ldr; a charge is ldr, sub, str).
bool reads_machine_fuel(const std::vector<std::string>& code, const std::string& m_reg) {
  for (const auto& ins : code) {
    if (!addresses_field(ins, kFuelOffset, m_reg)) continue;
    if (std::string(kArch) == "x86_64") {
      auto ops = split_operands(ins);
      bool destination = false;
      for (const auto& mo : memory_operands(kArch, ins))
        destination |= mo.offset == kFuelOffset && mnemonic(ins).rfind("mov", 0) == 0 && ops.size() > 1 && mo.position + 1 == static_cast<int>(ops.size());
      if (!destination) return true;
    } else if (arm64_loads(ins)) {
      return true;
    }
  }
  return false;
}

bool names_the_epoch(const std::vector<std::string>& code) {
  for (const auto& ins : code)
    if (ins.find("g_epoch") != std::string::npos) return true;
  return false;
}

// The budget axis in machine code: the fuel engines' branches charge a register (the counter is
// a handler argument: the register the probe predicts for it) and never read Machine::fuel;
// fuel_machine's read it off m's register; deadline's read the epoch; the unbudgeted engine does
// neither (which shows both checks can fail); and none of them spills anything around the charge
// (tail_pn_fuel in particular: its counter stays in its preserve_none register).
TEST(InterpreterAsm, FuelArgumentEnginesChargeARegisterAndTheOthersTheMachine) {
  int checked = 0;
  for (const auto& e : kEngines) {
    if (!tail_mode(e) || e.placement != wasm::Placement::kSp || !built(e)) continue;
    const Prediction& p = predicted(e);
    ASSERT_EQ(p.probe.status, "ok") << e.engine_name() << ": " << p.probe.note;
    // (not call: around a host function the argument engines hand the counter to the machine)
    for (const char* op : {"br", "br_if", "i32_lt_s_br_if"}) {
      SCOPED_TRACE(e.engine_name() + " " + op + ": " + p.describe());
      auto code = handler_code(asm_file(e), op);
      EXPECT_EQ(reads_machine_fuel(code, p.at.at("m").where), e.budget == wasm::Budget::kFuelMachine);
      EXPECT_EQ(names_the_epoch(code), e.budget == wasm::Budget::kDeadline);
      if (counter(e.budget) == Counter::ARG) {
        ASSERT_TRUE(p.at.at("fuel").in_register);
        bool charged = false;
        for (const auto& ins : code) charged |= names_register(kArch, ins, p.at.at("fuel").where);
        EXPECT_TRUE(charged) << "the counter's " << p.at.at("fuel").where << " is not charged";
      }
      for (const auto& ins : code) EXPECT_FALSE(touches_stack(kArch, ins)) << "stack traffic: " << ins;
      ++checked;
    }
  }
  // three handlers in tail and tail_pn x none, fuel, deadline (and fuel_machine where it is built)
  EXPECT_GE(checked, 3 * (built("tail_fuel_machine") ? 8 : 6));
}

// Every goto engine: clang may merge the handlers' `goto *` into one shared dispatch block (the
// models' goto_nodup); these engines are meant to keep one indirect jump per handler, as `goto`.
TEST(InterpreterAsm, GotoEnginesKeepTheirOwnIndirectJumps) {
  int engines = 0;
  for (const auto& e : kEngines) {
    if (wasm::dispatch_form(e.dispatch) != wasm::DispatchForm::kThreaded || !built(e)) continue;
    ++engines;
    int jumps = 0;
    for (const auto& f : parse_asm_functions(read(asm_file(e))))
      if (f.name.find(std::string("run_") + e.engine_name()) != std::string::npos)
        for (const auto& ins : f.instructions) jumps += indirect_jump(ins);
    // Half the ops at least, leaving out the register IR's forms (a default build compiles none into goto).
    const int ops = static_cast<int>(wasm::Op::kCount) - static_cast<int>(register_forms().size());
    EXPECT_GT(jumps, ops / 2) << "indirect jumps in run_" << e.engine_name();
  }
  // goto is an engine only the measurements compare: `just test-compared` runs this with it built.
  if (engines == 0) GTEST_SKIP() << "no goto engine in this build (configure with -DDLAB_COMPARED_ENGINES=ON)";
}

// Every tail-call engine (plain and preserve_none): each handler reaches its successor by an
// indirect jump, and its stack pointer is where its placement says (vec: through Machine::vsp in
// every handler; sp_spill: through the stack, where the ninth argument is passed).
TEST(InterpreterAsm, TailEnginesJumpToTheirSuccessorWithTheStackPointerWhereTheirPlacementSays) {
  int engines = 0;
  for (const auto& e : kEngines) {
    if (!tail_mode(e) || !built(e)) continue;
    ++engines;
    check_file(asm_file(e), sp_home(e.placement), e.placement == wasm::Placement::kSp);  // placement.h's DLW_REGISTER_IR
  }
  EXPECT_GT(engines, 0);
}

}  // namespace
}  // namespace dlab::probes
