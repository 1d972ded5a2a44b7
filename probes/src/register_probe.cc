#include "dispatchlab/probes/register_probe.h"

#include <algorithm>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "dispatchlab/probes/asm_analysis.h"
#include "dispatchlab/probes/clang_runner.h"

namespace dlab::probes {

namespace {

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// Operands split at top-level commas ("8(%rsp,%rax,8), %rdx" has two).
std::vector<std::string> operands(const std::string& ins) {
  std::vector<std::string> out;
  size_t sp = ins.find_first_of(" \t");
  if (sp == std::string::npos) return out;
  std::string rest = ins.substr(sp + 1), cur;
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

std::vector<std::string> return_registers(const std::string& arch, bool is_float) {
  if (arch == "x86_64") return is_float ? std::vector<std::string>{"%xmm0"} : std::vector<std::string>{"%rax", "%eax"};
  if (arch == "aarch64") return is_float ? std::vector<std::string>{"d0", "s0"} : std::vector<std::string>{"x0", "w0"};
  return is_float ? std::vector<std::string>{"fa0"} : std::vector<std::string>{"a0"};
}

}  // namespace

MirFrame parse_mir_function(const std::string& mir, const std::string& name) {
  MirFrame f;
  std::istringstream in(mir);
  std::string line;
  bool in_function = false;
  enum { kNone, kLiveins, kFixedStack } list = kNone;
  while (std::getline(in, line)) {
    if (line.rfind("---", 0) == 0 || line.rfind("...", 0) == 0) {
      if (in_function) break;
      continue;
    }
    if (line.rfind("name:", 0) == 0) {
      std::string n = trim(line.substr(5));
      in_function = n == name || n == "__regcall3__" + name;
      f.found |= in_function;
      continue;
    }
    if (!in_function) continue;
    if (!line.empty() && line[0] != ' ') {  // a top-level key ends the previous list
      list = line.rfind("liveins:", 0) == 0 ? kLiveins : line.rfind("fixedStack:", 0) == 0 ? kFixedStack : kNone;
      continue;
    }
    std::string t = trim(line);
    if (t.rfind("- {", 0) != 0) continue;
    if (list == kLiveins) {
      auto b = t.find("reg: '$");
      if (b != std::string::npos) f.liveins.push_back(t.substr(b + 7, t.find('\'', b + 7) - b - 7));
    } else if (list == kFixedStack && t.find("type: default") != std::string::npos) {
      ++f.fixed_stack_objects;
    }
  }
  return f;
}

ArgLocation locate_returned_arg(const std::string& arch, ArgType type, const std::vector<std::string>& instructions) {
  bool is_float = info(type).is_float;
  auto rets = return_registers(arch, is_float);
  ArgLocation loc{type, true, false, rets.front()};
  bool att = arch == "x86_64";  // AT&T: destination last
  for (const auto& ins : instructions) {
    auto ops = operands(ins);
    if (ops.size() < 2) continue;
    const std::string& dst = att ? ops.back() : ops.front();
    if (std::find(rets.begin(), rets.end(), dst) == rets.end()) continue;
    const std::string& src = att ? ops.front() : ops.back();
    bool memory = src.find('(') != std::string::npos || src.find('[') != std::string::npos;
    loc.in_register = !memory;
    // Memory not addressed from the stack or frame pointer holds an argument passed by reference.
    loc.indirect = memory && !touches_stack(arch, "x " + src);
    loc.where = src;
    // the last write to the return register decides; keep scanning
  }
  if (loc.in_register && !loc.where.empty() && loc.where[0] == '%') loc.where.erase(0, 1);
  return loc;
}

int ProbeResult::in_registers(bool floats) const {
  int n = 0;
  for (const auto& a : args) n += a.in_register && info(a.type).is_float == floats;
  return n;
}
int ProbeResult::of_kind(bool floats) const {
  int n = 0;
  for (const auto& a : args) n += info(a.type).is_float == floats;
  return n;
}
int ProbeResult::on_stack() const {
  int n = 0;
  for (const auto& a : args) n += !a.in_register && !a.indirect;
  return n;
}
int ProbeResult::indirect() const {
  int n = 0;
  for (const auto& a : args) n += a.indirect;
  return n;
}
std::string ProbeResult::register_list() const {
  std::string s;
  for (const auto& a : args) {
    std::string w = a.in_register ? a.where : std::string("-");
    if (a.indirect) {
      // "(%rcx)" -> "&rcx"
      w = a.where;
      for (const char* junk : {"(", ")", "%", "[", "]"})
        for (size_t p = w.find(junk); p != std::string::npos; p = w.find(junk)) w.erase(p, 1);
      w = "&" + w;
    }
    s += (s.empty() ? "" : " ") + w;
  }
  return s;
}

std::string probe_source(const Signature& sig, const std::string& attr) {
  std::string params;
  for (size_t i = 0; i < sig.size(); ++i) params += fmt::format("{}{} a{}", i ? ", " : "", info(sig[i]).c_type, i);
  std::string s = "// generated by dlab probes: where does each argument arrive?\n";
  s += "extern \"C\" {\nextern void* volatile dl_sink[64];\n";
  s += fmt::format("{} void probe_all({}) {{\n", attr, params);
  for (size_t i = 0; i < sig.size(); ++i)
    s += info(sig[i]).is_float ? fmt::format("  dl_sink[{}] = (void*)(unsigned long long)(a{} * 3);\n", i, i)
                               : fmt::format("  dl_sink[{}] = (void*)(unsigned long long)a{};\n", i, i);
  s += "}\n";
  for (size_t i = 0; i < sig.size(); ++i) s += fmt::format("{} {} probe_{}({}) {{ return a{}; }}\n", attr, info(sig[i]).c_type, i, params, i);
  return s + "}\n";
}

ProbeResult probe(const std::string& triple, const std::string& convention, const Signature& sig) {
  ProbeResult r;
  r.triple = triple;
  r.convention = convention;
  r.signature = sig;
  std::string src = probe_source(sig, convention_attribute(convention));
  auto as = compile(src, triple, Output::kAsm);
  if (!as.ok()) {
    r.status = "error";
    r.note = as.diagnostics.substr(0, 300);
    return r;
  }
  if (auto w = ignored_convention_warning(as.diagnostics); !w.empty()) {
    r.status = "ignored";
    r.note = w;
    return r;
  }
  std::string arch = arch_of_triple(triple);
  auto fns = parse_asm_functions(as.output);
  for (size_t i = 0; i < sig.size(); ++i) {
    const AsmFunction* f = find_function(fns, fmt::format("probe_{}", i));
    if (!f) {
      r.status = "error";
      r.note = fmt::format("probe_{} not found in the assembly", i);
      return r;
    }
    r.args.push_back(locate_returned_arg(arch, sig[i], f->instructions));
  }
  auto mir = compile(src, triple, Output::kMir);
  r.mir = parse_mir_function(mir.output, "probe_all");
  r.status = "ok";
  // An argument passed by reference arrives as a pointer in a register: a live-in in the MIR.
  int regs = static_cast<int>(sig.size()) - r.on_stack();
  r.methods_agree = r.mir.found && static_cast<int>(r.mir.liveins.size()) == regs && r.mir.fixed_stack_objects == r.on_stack();
  if (!r.methods_agree)
    r.note = fmt::format("methods disagree: assembly {} in registers / {} on stack, MIR {} live-ins / {} fixed stack objects",
                         regs, r.on_stack(), r.mir.liveins.size(), r.mir.fixed_stack_objects);
  else if (r.indirect() > 0)
    r.note = fmt::format("{} arguments passed by reference (address in a register)", r.indirect());
  return r;
}

}  // namespace dlab::probes
