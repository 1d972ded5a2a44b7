#include "dispatchlab/probes/asm_analysis.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
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

bool is_indirect_jump(const std::string& arch, const std::string& ins) {
  std::string m = mnemonic(ins);
  if (arch == "x86_64") return starts(m, "jmp") && ins.find('*') != std::string::npos;
  if (arch == "aarch64") return m == "br" || m == "braa" || m == "brab" || m == "braaz" || m == "brabz";
  if (arch == "riscv64") return m == "jr" || (m == "jalr" && (ins.find("zero") != std::string::npos || ins.find("x0,") != std::string::npos));
  return false;
}

bool is_indirect_call(const std::string& arch, const std::string& ins) {
  std::string m = mnemonic(ins);
  if (arch == "x86_64") return starts(m, "call") && ins.find('*') != std::string::npos;
  if (arch == "aarch64") return m == "blr" || m == "blraa" || m == "blrab" || m == "blraaz" || m == "blrabz";
  if (arch == "riscv64") return m == "jalr" && !is_indirect_jump(arch, ins);
  return false;
}

std::string stack_pointer(const std::string& arch) { return arch == "x86_64" ? "rsp" : "sp"; }

std::vector<std::string> split_operands(const std::string& ins) {
  std::vector<std::string> out;
  std::string m = mnemonic(ins);
  size_t at = ins.find(m);
  std::string rest = trim(ins.substr(at == std::string::npos ? 0 : at + m.size())), cur;
  int depth = 0;
  for (char c : rest) {
    if (c == '(' || c == '[') ++depth;
    if (c == ')' || c == ']') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(trim(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!trim(cur).empty()) out.push_back(trim(cur));
  return out;
}

namespace {
std::string strip_percent(std::string r) {
  if (!r.empty() && r[0] == '%') r.erase(0, 1);
  return r;
}
bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
// Whole-token search: `name` not inside a longer name (x1 in x10, %r8 in %r8d).
bool has_token(const std::string& text, const std::string& name) {
  for (size_t p = text.find(name); p != std::string::npos; p = text.find(name, p + 1)) {
    bool left = p == 0 || !is_word_char(text[p - 1]);
    bool right = p + name.size() == text.size() || !is_word_char(text[p + name.size()]);
    if (left && right) return true;
  }
  return false;
}
bool parse_long(const std::string& s, long* out) {
  std::string t = trim(s);
  if (t.empty()) return false;
  char* end = nullptr;
  long v = std::strtol(t.c_str(), &end, 0);
  if (end == t.c_str() || *end != '\0') return false;
  *out = v;
  return true;
}
}  // namespace

std::vector<std::string> register_names(const std::string& arch, const std::string& reg_in) {
  std::string reg = strip_percent(reg_in);
  if (arch == "x86_64") {
    static const std::vector<std::vector<std::string>> kFamilies = {
        {"rax", "eax", "ax", "al", "ah"}, {"rbx", "ebx", "bx", "bl", "bh"}, {"rcx", "ecx", "cx", "cl", "ch"},
        {"rdx", "edx", "dx", "dl", "dh"}, {"rsi", "esi", "si", "sil"},      {"rdi", "edi", "di", "dil"},
        {"rbp", "ebp", "bp", "bpl"},      {"rsp", "esp", "sp", "spl"}};
    for (const auto& f : kFamilies)
      if (std::find(f.begin(), f.end(), reg) != f.end()) return f;
    for (int n = 8; n <= 15; ++n) {
      std::string r = "r" + std::to_string(n);
      std::vector<std::string> f = {r, r + "d", r + "w", r + "b"};
      if (std::find(f.begin(), f.end(), reg) != f.end()) return f;
    }
    return {reg};
  }
  if (arch == "aarch64") {
    if (reg == "fp" || reg == "x29" || reg == "w29") return {"x29", "w29", "fp"};
    if (reg == "lr" || reg == "x30" || reg == "w30") return {"x30", "w30", "lr"};
    long n = 0;
    if (reg.size() >= 2 && (reg[0] == 'x' || reg[0] == 'w') && parse_long(reg.substr(1), &n) && n >= 0 && n <= 28)
      return {"x" + std::to_string(n), "w" + std::to_string(n)};
    return {reg};
  }
  return {reg};
}

bool names_register(const std::string& arch, const std::string& ins, const std::string& reg) {
  std::string ops = ins.substr(std::min(ins.size(), mnemonic(ins).size() + ins.find(mnemonic(ins))));
  for (const auto& name : register_names(arch, reg))
    if (has_token(ops, arch == "x86_64" ? "%" + name : name)) return true;
  return false;
}

std::vector<MemoryOperand> memory_operands(const std::string& arch, const std::string& ins) {
  std::vector<MemoryOperand> out;
  auto ops = split_operands(ins);
  for (size_t i = 0; i < ops.size(); ++i) {
    const std::string& op = ops[i];
    MemoryOperand mo;
    mo.position = static_cast<int>(i);
    if (arch == "x86_64") {
      size_t open = op.find('(');
      if (open == std::string::npos) continue;
      size_t close = op.find(')', open);
      std::string disp = op.substr(0, open), inside = op.substr(open + 1, close - open - 1);
      if (!disp.empty() && disp[0] == '*') disp.erase(0, 1);                                        // jmpq *8(%rax)
      if (auto colon = disp.find(':'); colon != std::string::npos) disp = disp.substr(colon + 1);  // %fs:
      std::vector<std::string> parts;
      std::stringstream ss(inside);
      for (std::string p; std::getline(ss, p, ',');) parts.push_back(trim(p));
      if (!parts.empty()) mo.base = strip_percent(parts[0]);
      if (parts.size() > 1) mo.index = strip_percent(parts[1]);
      if (!trim(disp).empty() && !parse_long(disp, &mo.offset)) mo.symbolic = true;
      out.push_back(mo);
    } else if (arch == "aarch64") {
      if (op.empty() || op[0] != '[') continue;
      size_t close = op.find(']');
      std::string inside = op.substr(1, close - 1);
      std::vector<std::string> parts;
      std::stringstream ss(inside);
      for (std::string p; std::getline(ss, p, ',');) parts.push_back(trim(p));
      if (!parts.empty()) mo.base = parts[0];
      if (parts.size() > 1) {
        std::string second = parts[1];
        if (!second.empty() && second[0] == '#') {
          if (!parse_long(second.substr(1), &mo.offset)) mo.symbolic = true;
        } else if (!second.empty() && second[0] == ':') {
          mo.symbolic = true;
        } else {
          mo.index = second;
        }
      }
      bool pre = op.find('!', close) != std::string::npos;
      bool post = i + 1 < ops.size() && !ops[i + 1].empty() && ops[i + 1][0] == '#';
      mo.writeback = pre || post;
      out.push_back(mo);
    } else if (arch == "riscv64") {
      size_t open = op.find('(');
      if (open == std::string::npos || op.back() != ')') continue;
      mo.base = op.substr(open + 1, op.size() - open - 2);
      std::string disp = op.substr(0, open);
      if (!trim(disp).empty() && !parse_long(disp, &mo.offset)) mo.symbolic = true;
      out.push_back(mo);
    }
  }
  return out;
}

bool arm64_loads(const std::string& ins) { return starts(mnemonic(ins), "ld") && !memory_operands("aarch64", ins).empty(); }
bool arm64_stores(const std::string& ins) { return starts(mnemonic(ins), "st") && !memory_operands("aarch64", ins).empty(); }

int arm64_access_bytes(const std::string& ins) {
  if (!arm64_loads(ins) && !arm64_stores(ins)) return 0;
  std::string m = mnemonic(ins);
  int fixed = 0;  // the width the mnemonic fixes: ldrb, sturh, ldrsw ...
  if (m.size() > 2 && (m.back() == 'b' || m.back() == 'h' || (m.back() == 'w' && m.find("sw") != std::string::npos))) fixed = m.back() == 'b' ? 1 : m.back() == 'h' ? 2 : 4;
  int bytes = 0;
  for (const auto& op : split_operands(ins)) {
    if (op.empty() || op[0] == '[') break;
    int width = 0;
    switch (op[0]) {
      case 'x': case 'd': width = 8; break;
      case 'w': case 's': width = 4; break;
      case 'q': width = 16; break;
      case 'h': width = 2; break;
      case 'b': width = 1; break;
      default: width = 8;  // xzr/wzr, fp, lr
    }
    if (op == "wzr") width = 4;
    bytes += fixed ? fixed : width;
  }
  // Store-exclusive forms (stxr w9, x8, [x0]) name a status register first: not data.
  if (starts(m, "stx") || starts(m, "stlx")) bytes -= 4;
  return bytes;
}

long stack_growth(const std::string& arch, const std::string& ins) {
  std::string m = mnemonic(ins);
  auto ops = split_operands(ins);
  long n = 0;
  if (arch == "x86_64") {
    if (starts(m, "push")) return 8;
    if (starts(m, "pop")) return -8;
    if (ops.size() == 2 && strip_percent(ops[1]) == "rsp" && !ops[0].empty() && ops[0][0] == '$' && parse_long(ops[0].substr(1), &n)) {
      if (starts(m, "sub")) return n;
      if (starts(m, "add")) return -n;
    }
    return 0;
  }
  if (arch == "aarch64") {
    if ((m == "sub" || m == "add") && ops.size() == 3 && ops[0] == "sp" && ops[1] == "sp" && !ops[2].empty() && ops[2][0] == '#' &&
        parse_long(ops[2].substr(1), &n))
      return m == "sub" ? n : -n;
    for (const auto& mo : memory_operands(arch, ins)) {
      if (mo.base != "sp" || !mo.writeback) continue;
      if (ins.find('!') != std::string::npos) return -mo.offset;  // pre-indexed: [sp, #-16]!
      if (static_cast<size_t>(mo.position) + 1 < ops.size() && parse_long(ops[mo.position + 1].substr(1), &n)) return -n;  // [sp], #16
    }
  }
  return 0;
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
