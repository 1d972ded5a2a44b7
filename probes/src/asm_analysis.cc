#include "dispatchlab/probes/asm_analysis.h"

#include <sstream>

namespace dlab::probes {

namespace {
std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}
bool starts(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }
}  // namespace

std::string mnemonic(const std::string& ins) {
  std::string m = ins.substr(0, ins.find_first_of(" \t"));
  // Prefixes are not the operation: Windows x64 tail calls are "rex64 jmpq *...".
  if (m == "rex64" || m == "notrack") {
    std::string rest = trim(ins.substr(m.size()));
    return rest.substr(0, rest.find_first_of(" \t"));
  }
  return m;
}

std::string arch_of_triple(const std::string& triple) {
  if (starts(triple, "x86_64")) return "x86_64";
  if (starts(triple, "aarch64") || starts(triple, "arm64")) return "aarch64";
  if (starts(triple, "riscv64")) return "riscv64";
  return triple.substr(0, triple.find('-'));
}

std::vector<AsmFunction> parse_asm_functions(const std::string& text) {
  std::vector<AsmFunction> out;
  std::istringstream in(text);
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    std::string t = trim(line);
    if (t.empty() || t[0] == '#' || starts(t, "//") || t[0] == ';') continue;
    std::string first_word = t.substr(0, t.find_first_of(" \t"));
    bool at_column_0 = line[0] != '\t' && line[0] != ' ';
    if (at_column_0 && first_word.size() > 1 && first_word.back() == ':') {
      std::string label = first_word.substr(0, first_word.size() - 1);
      if (starts(label, ".Lfunc_end") || starts(label, "Lfunc_end")) {
        inside = false;
      } else if (label[0] != '.' && label[0] != 'L' && label[0] != 'l' && label[0] != '$') {
        out.push_back({label, {}});
        inside = true;
      }
      continue;
    }
    if (!inside || t[0] == '.') continue;  // directives
    if (starts(t, ".seh_endproc")) inside = false;
    if (auto c = t.find(" //"); c != std::string::npos) t = trim(t.substr(0, c));
    // x86 comments follow the operands after padding ("jmpq *(%r8,%rax,8)   # TAILCALL"); arm64
    // immediates are ", #1", so only a '#' after two blanks or a tab is a comment.
    for (const char* marker : {"  #", "\t#"})
      if (auto c = t.find(marker); c != std::string::npos) t = trim(t.substr(0, c));
    if (!t.empty()) out.back().instructions.push_back(t);
  }
  return out;
}

const AsmFunction* find_function(const std::vector<AsmFunction>& fns, const std::string& name) {
  // Mach-O prefixes an underscore; regcall functions are named __regcall3__<name>.
  for (const auto& f : fns)
    for (const std::string& prefix : {"", "_", "__regcall3__", "___regcall3__"})
      if (f.name == prefix + name) return &f;
  return nullptr;
}

bool is_call(const std::string& arch, const std::string& m) {
  if (arch == "x86_64") return starts(m, "call");
  if (arch == "aarch64") return m == "bl" || m == "blr" || m == "blraa";
  if (arch == "riscv64") return m == "call" || m == "jal" || m == "jalr";
  return false;
}

bool is_return(const std::string& arch, const std::string& m) {
  if (arch == "x86_64") return starts(m, "ret");
  return m == "ret";
}

bool is_jump(const std::string& arch, const std::string& m) {
  if (arch == "x86_64") return starts(m, "jmp");
  if (arch == "aarch64") return m == "b" || m == "br" || m == "braa";
  if (arch == "riscv64") return m == "jr" || m == "tail" || m == "j";
  return false;
}

bool touches_stack(const std::string& arch, const std::string& ins) {
  std::string m = mnemonic(ins);
  if (arch == "x86_64") {
    if (starts(m, "push") || starts(m, "pop")) return true;
    return ins.find("(%rsp") != std::string::npos || ins.find("(%rbp") != std::string::npos;
  }
  if (arch == "aarch64") return ins.find("[sp") != std::string::npos || ins.find("[x29") != std::string::npos;
  if (arch == "riscv64") return ins.find("(sp)") != std::string::npos || ins.find("(s0)") != std::string::npos;
  return false;
}

std::vector<std::string> check_tail_handlers(const std::string& text, const std::string& arch, int* handlers_seen) {
  std::vector<std::string> problems;
  int seen = 0;
  for (const auto& f : parse_asm_functions(text)) {
    if (f.name.find("h_") == std::string::npos || f.name.find("dl_table") != std::string::npos) continue;
    ++seen;
    bool is_exit = f.name.find("h_exit") != std::string::npos;
    if (f.instructions.empty()) {
      problems.push_back(f.name + ": no instructions");
      continue;
    }
    for (const auto& ins : f.instructions) {
      std::string m = mnemonic(ins);
      if (is_call(arch, m)) problems.push_back(f.name + ": contains a call: " + ins);
      if (!is_exit && is_return(arch, m)) problems.push_back(f.name + ": returns instead of tail-calling: " + ins);
    }
    std::string last = mnemonic(f.instructions.back());
    if (is_exit && !is_return(arch, last)) problems.push_back(f.name + ": the exit handler does not end in a return");
    if (!is_exit && !is_jump(arch, last)) problems.push_back(f.name + ": does not end in a jump: " + f.instructions.back());
  }
  if (handlers_seen) *handlers_seen = seen;
  return problems;
}

}  // namespace dlab::probes
