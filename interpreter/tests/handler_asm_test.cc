// The tail-call dispatch modes really dispatch by tail call: compiled with -S by CMake, every
// handler reaches its successor through an indirect jump, and none calls another handler.
// Unlike the models' handlers, interpreter handlers may return (a trap or `halt` stops the
// machine) and call out (host functions, memmove), so the check is: an indirect jump present,
// and indirect calls only in the handlers that call host functions.
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "dispatchlab/probes/asm_analysis.h"
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

void check_file(const std::string& path) {
  SCOPED_TRACE(path);
  const std::set<std::string> host_callers = {"call", "call_indirect", "return_call", "return_call_indirect"};
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
    bool jumps = false;
    for (const auto& ins : f.instructions) {
      jumps |= indirect_jump(ins);
      if (indirect_call(ins) && !host_callers.count(name)) ADD_FAILURE() << f.name << " calls indirectly: " << ins;
    }
    if (!stoppers.count(name)) EXPECT_TRUE(jumps) << f.name << " has no indirect jump to the next handler";
  }
  EXPECT_EQ(handlers, static_cast<int>(wasm::Op::kCount));
}

// Computed goto: clang may merge the handlers' `goto *` into one shared dispatch block (the
// models' goto_nodup); this mode is meant to keep one indirect jump per handler, as `goto`.
TEST(InterpreterAsm, GotoHandlersKeepTheirOwnIndirectJumps) {
  int jumps = 0;
  for (const auto& f : parse_asm_functions(read(DLAB_WASM_ASM_DIR "/dispatch_goto.s")))
    if (f.name.find("run_goto") != std::string::npos)
      for (const auto& ins : f.instructions) jumps += indirect_jump(ins);
  EXPECT_GT(jumps, static_cast<int>(wasm::Op::kCount) / 2) << "indirect jumps in run_goto";
}

TEST(InterpreterAsm, TailHandlersJumpToTheirSuccessor) { check_file(DLAB_WASM_ASM_DIR "/dispatch_tail.s"); }
TEST(InterpreterAsm, PreserveNoneHandlersJumpToTheirSuccessor) { check_file(DLAB_WASM_ASM_DIR "/dispatch_tail_pn.s"); }

}  // namespace
}  // namespace dlab::probes
