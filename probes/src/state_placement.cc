#include "dispatchlab/probes/state_placement.h"

#include <cctype>
#include <regex>

#include <fmt/format.h>

#include "dispatchlab/probes/asm_analysis.h"
#include "dispatchlab/probes/clang_runner.h"

namespace dlab::probes {

int callee_saved_in(const std::string& arch, const std::string& ins) {
  std::string m = mnemonic(ins);
  if (arch == "x86_64") return m.rfind("push", 0) == 0 ? 1 : 0;
  if (arch == "aarch64") {
    if (m != "stp" && m != "str" && m != "stur") return 0;
    if (ins.find("[sp") == std::string::npos && ins.find("[x29") == std::string::npos) return 0;
    static const std::regex saved(R"(\b(x(19|2[0-9]|30)|fp|lr|d(8|9|1[0-5]))\b)");
    std::string regs = ins.substr(0, ins.find('['));
    return static_cast<int>(std::distance(std::sregex_iterator(regs.begin(), regs.end(), saved), std::sregex_iterator()));
  }
  if (arch == "riscv64") {
    if ((m != "sd" && m != "fsd") || ins.find("(sp)") == std::string::npos) return 0;
    static const std::regex saved(R"(\b(ra|s([0-9]|1[01])|fs([0-9]|1[01]))\b)");
    std::string reg = ins.substr(0, ins.find(','));
    return std::regex_search(reg, saved) ? 1 : 0;
  }
  return 0;
}

namespace {
// "h_b_0" in any mangling (_ZL5h_b_0P..., ?h_b_0@@..., __ZL5h_b_0P...), not "h_b_01".
bool names_handler(const std::string& fn, const std::string& handler) {
  for (size_t p = fn.find(handler); p != std::string::npos; p = fn.find(handler, p + 1)) {
    size_t end = p + handler.size();
    if (end == fn.size() || !std::isdigit(static_cast<unsigned char>(fn[end]))) return true;
  }
  return false;
}
std::string handler_name(const std::string& kind) {
  bool upper = kind.size() == 1 && std::isupper(static_cast<unsigned char>(kind[0]));
  return fmt::format("h_{}{}_0", upper ? "x" : "", kind);
}
}  // namespace

std::vector<HandlerPlacement> analyse_placement(const std::string& asm_text, const std::string& arch,
                                                const std::vector<std::string>& kinds) {
  auto fns = parse_asm_functions(asm_text);
  std::vector<HandlerPlacement> out;
  for (const auto& k : kinds) {
    HandlerPlacement h;
    h.kind = k;
    const AsmFunction* f = nullptr;
    for (const auto& fn : fns)
      if (names_handler(fn.name, handler_name(k))) f = &fn;
    if (!f || f->instructions.empty()) {
      h.status = "error";
      h.note = "handler " + handler_name(k) + " not found in the assembly";
      out.push_back(h);
      continue;
    }
    h.status = "ok";
    h.instructions = static_cast<int>(f->instructions.size());
    for (const auto& ins : f->instructions) {
      h.callee_saved += callee_saved_in(arch, ins);
      h.stack_accesses += touches_stack(arch, ins);
    }
    h.tail_jump = is_jump(arch, mnemonic(f->instructions.back()));
    out.push_back(h);
  }
  return out;
}

std::vector<HandlerPlacement> state_placement(const std::string& models_dir, const std::string& placement,
                                              const std::string& target, const std::string& convention,
                                              const std::vector<std::string>& kinds) {
  std::vector<std::string> flags = {"-I" + models_dir + "/include", "-I" + models_dir + "/src"};
  if (convention != "default") flags.push_back("-DDL_CC_OVERRIDE=" + convention_attribute(convention));
  auto r = compile_file(models_dir + "/generated/stack1_" + placement + "_tail.cc", target, Output::kAsm, flags);
  std::vector<HandlerPlacement> out;
  auto fill = [&](std::vector<HandlerPlacement> v) {
    for (auto& h : v) {
      h.placement = placement;
      h.target = target;
      h.convention = convention;
    }
    return v;
  };
  std::string why;
  std::string status;
  if (!r.ok()) {
    status = "error";
    // musttail that cannot be honoured is a compile error: report the first error line.
    auto e = r.diagnostics.find("error: ");
    why = e == std::string::npos ? r.diagnostics.substr(0, 200) : r.diagnostics.substr(e + 7, r.diagnostics.find('\n', e) - e - 7);
  } else if (auto w = ignored_convention_warning(r.diagnostics); !w.empty()) {
    status = "ignored";
    why = w;
  }
  if (!status.empty()) {
    for (const auto& k : kinds) {
      HandlerPlacement h;
      h.kind = k;
      h.status = status;
      h.note = why;
      out.push_back(h);
    }
    return fill(out);
  }
  return fill(analyse_placement(r.output, arch_of_triple(target), kinds));
}

}  // namespace dlab::probes
