#include "asm_check.h"

#include <sstream>

namespace dlab::models {

namespace {
std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}
std::string mnemonic(const std::string& ins) { return ins.substr(0, ins.find_first_of(" \t")); }
}  // namespace

std::vector<AsmFunction> parse_asm_functions(const std::string& text) {
  std::vector<AsmFunction> out;
  std::istringstream in(text);
  std::string line, pending_function;
  AsmFunction* cur = nullptr;
  while (std::getline(in, line)) {
    std::string t = trim(line);
    if (t.empty() || t[0] == '#' || t.rfind("//", 0) == 0) continue;
    if (t.rfind(".type", 0) == 0 && t.find("function") != std::string::npos) {
      // ".type name,@function" (x86) or ".type name,%function" (arm64)
      size_t b = t.find_first_not_of(" \t", 5), c = t.find(',');
      pending_function = trim(t.substr(b, c - b));
      continue;
    }
    std::string first_word = t.substr(0, t.find_first_of(" \t"));
    if (first_word.size() > 1 && first_word.back() == ':' && line[0] != '\t' && line[0] != ' ') {
      std::string label = first_word.substr(0, first_word.size() - 1);
      if (label == pending_function) {
        out.push_back({label, {}});
        cur = &out.back();
        pending_function.clear();
      } else if (label.rfind(".Lfunc_end", 0) == 0) {
        cur = nullptr;
      }
      continue;
    }
    if (!cur || t[0] == '.') continue;  // directives
    if (auto c = t.find(" //"); c != std::string::npos) t = trim(t.substr(0, c));
    // x86 comments follow the operands after padding ("jmpq *(%r8,%rax,8)   # TAILCALL"); arm64
    // immediates are ", #1", so only a '#' after two blanks or a tab is a comment.
    for (const char* marker : {"  #", "\t#"})
      if (auto c = t.find(marker); c != std::string::npos) t = trim(t.substr(0, c));
    cur->instructions.push_back(t);
  }
  return out;
}

std::vector<std::string> check_tail_handlers(const std::string& text, const std::string& arch, int* handlers_seen) {
  std::vector<std::string> problems;
  int seen = 0;
  bool x86 = arch == "x86_64";
  auto is_call = [&](const std::string& m) { return x86 ? m.rfind("call", 0) == 0 : (m == "bl" || m == "blr" || m == "blraa"); };
  auto is_ret = [&](const std::string& m) { return x86 ? m.rfind("ret", 0) == 0 : m == "ret"; };
  auto is_jump = [&](const std::string& m) { return x86 ? m.rfind("jmp", 0) == 0 : (m == "b" || m == "br" || m == "braa"); };
  for (const auto& f : parse_asm_functions(text)) {
    if (f.name.find("h_") == std::string::npos) continue;
    ++seen;
    bool is_exit = f.name.find("h_exit") != std::string::npos;
    if (f.instructions.empty()) {
      problems.push_back(f.name + ": no instructions");
      continue;
    }
    for (const auto& ins : f.instructions) {
      std::string m = mnemonic(ins);
      if (is_call(m)) problems.push_back(f.name + ": contains a call: " + ins);
      if (!is_exit && is_ret(m)) problems.push_back(f.name + ": returns instead of tail-calling: " + ins);
    }
    std::string last = mnemonic(f.instructions.back());
    if (is_exit && !is_ret(last)) problems.push_back(f.name + ": the exit handler does not end in a return");
    if (!is_exit && !is_jump(last)) problems.push_back(f.name + ": does not end in a jump: " + f.instructions.back());
  }
  if (handlers_seen) *handlers_seen = seen;
  return problems;
}

}  // namespace dlab::models
