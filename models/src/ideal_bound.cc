#include "dispatchlab/models/ideal_bound.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "dispatchlab/harness/process.h"
#include "dispatchlab/harness/temp_dir.h"
#include "dispatchlab/models/handler_name.h"
#include "dispatchlab/models/models.h"

namespace dlab::models {

std::string mca_assembly(const std::vector<predictors::ObjdumpLine>& lines) {
  std::string out;
  for (const predictors::ObjdumpLine& l : lines) {
    std::string insn = l.instruction;
    if (size_t hash = insn.find('#'); hash != std::string::npos) insn.resize(hash);
    if (size_t lt = insn.find('<'); lt != std::string::npos) insn.resize(lt);
    while (!insn.empty() && (insn.back() == ' ' || insn.back() == '\t')) insn.pop_back();
    // Alignment padding after the handler's last jump (nop, nopw, data16/cs-prefixed nops, int3)
    // is never executed: left out, and llvm-mca reads no data16 prefix anyway.
    if (insn.empty() || insn.starts_with("(bad)") || insn.starts_with("data16") || insn.starts_with("cs ") ||
        insn.starts_with("nop") || insn.starts_with("int3") || insn.starts_with("xchg   %ax,%ax"))
      continue;
    // A direct branch's target is bare hex in objdump ("je 1d5ece"), a decimal or a symbol to the
    // assembler: given its 0x (llvm-mca does not follow branches; the target only has to parse).
    if (size_t space = insn.find(' '); space != std::string::npos) {
      size_t start = insn.find_first_not_of(' ', space);
      if (start != std::string::npos && insn.find_first_not_of("0123456789abcdef", start) == std::string::npos)
        insn.insert(start, "0x");
    }
    out += insn + "\n";
  }
  return out;
}

std::string llvm_mca_host_cpu() {
  ProcessOptions o;
  o.capture_stdout = true;
  o.timeout_s = 30;
  ProcessResult r = run_process({"llvm-mca-19", "--version"}, o);
  size_t at = r.output.find("Host CPU:");
  if (!r.ok() || at == std::string::npos) return "";
  std::istringstream rest(r.output.substr(at + 9));
  std::string cpu;
  rest >> cpu;
  return cpu;
}

std::string llvm_mca_refuses(const std::string& mcpu) {
  TempDir dir("ideal");
  ProcessOptions o;
  o.quiet = true;
  o.timeout_s = 30;
  o.stderr_file = dir.file("stderr").string();
  ProcessResult r = run_process({"llvm-mca-19", "-mcpu=" + mcpu, dir.write("one.s", "add %rax, %rax\n").string()}, o);
  if (!r.spawn_error.empty() || r.ok()) return "";
  std::ifstream err(o.stderr_file);
  std::string first;
  std::getline(err, first);
  return first.empty() ? r.describe("llvm-mca-19") : first;
}

IdealBound ideal_bound(const ModelCase& c, const TracedBinary& binary, const std::string& mcpu) {
  IdealBound out;
  if (c.dispatch != "tail" && c.dispatch != "tail_pn") {
    out.reason = fmt::format("{} dispatch puts every handler in one function: no handler's own code for llvm-mca", c.dispatch);
    return out;
  }
  const ModelEntry& entry = find_entry(c.model, c.placement, c.dispatch);
  std::map<std::string, predictors::CodeRange> code;
  for (const auto& f : binary.functions_in(binary.code_of(entry.symbol))) code.emplace(f.name, f.code);
  std::map<uint32_t, std::string> handler_of;
  for (const KindLayout& k : layout(c.model))
    for (uint32_t i = 0; i < k.copies; ++i) handler_of[k.first_op + i] = handler_name(k.kind, static_cast<int>(i));
  handler_of[exit_op(c.model)] = "h_exit";
  // The program's dynamic profile: each instruction is one dispatch to its handler.
  std::map<std::string, uint64_t> dispatches;
  for (const DlInst& in : c.program()) ++dispatches[handler_of.at(in.op)];
  // One objdump over the entry's code (one per handler took most of a stack case's time), its
  // lines then given to the handler whose code holds their address.
  std::istringstream disassembly(binary.disassembly(binary.code_of(entry.symbol)));
  const std::vector<predictors::ObjdumpLine> lines = predictors::read_objdump_lines(disassembly);
  std::string input;
  for (const auto& [name, n] : dispatches) {
    auto it = code.find(name);
    if (it == code.end()) {
      out.reason = fmt::format("no function {} in {}'s code", name, entry.symbol);
      return out;
    }
    // objdump's lines are in address order (binary addresses; the ranges are the trace's).
    auto at = [&](uint64_t trace_address) {
      return std::lower_bound(lines.begin(), lines.end(), trace_address - binary.load_offset(),
                              [](const predictors::ObjdumpLine& l, uint64_t a) { return l.address < a; });
    };
    const std::vector<predictors::ObjdumpLine> own(at(it->second.lo), at(it->second.hi));
    input += fmt::format("# LLVM-MCA-BEGIN {}\n{}# LLVM-MCA-END\n", name, mca_assembly(own));
  }
  TempDir dir("ideal");
  std::string file = dir.write("handlers.s", input).string();
  // Twice: as LLVM's scheduling model assumes by default (every load independent of every store),
  // then with -noalias=false (a load waits for every older store): a handler repeated alone then
  // carries its store-to-load round trips through memory, the term the first run cannot see.
  auto weighted_cycles = [&](bool loads_after_stores) -> std::optional<double> {
    ProcessOptions o;
    o.capture_stdout = true;
    o.timeout_s = 120;
    o.max_output = size_t{64} << 20;
    o.stderr_file = dir.file("stderr").string();
    std::vector<std::string> argv{"llvm-mca-19", "-mcpu=" + mcpu, "-iterations=" + std::to_string(kMcaIterations), "-all-views=false",
                                  "-summary-view"};
    if (loads_after_stores) argv.push_back("-noalias=false");
    argv.push_back(file);
    ProcessResult r = run_process(argv, o);
    if (!r.ok()) {
      std::ifstream err(o.stderr_file);
      std::string first;
      std::getline(err, first);
      out.reason = fmt::format("llvm-mca-19 -mcpu={}: {}{}", mcpu, r.describe("llvm-mca-19"), first.empty() ? "" : ": " + first);
      return std::nullopt;
    }
    // Each region's summary: "[n] Code Region - NAME" then "Iterations:" and "Total Cycles:".
    std::map<std::string, double> cycles;
    std::istringstream in(r.output);
    std::string line, region;
    uint64_t iterations = 0;
    while (std::getline(in, line)) {
      if (size_t at = line.find("Code Region - "); at != std::string::npos) region = line.substr(at + 14);
      else if (line.starts_with("Iterations:")) iterations = std::stoull(line.substr(11));
      else if (line.starts_with("Total Cycles:") && !region.empty() && iterations)
        cycles[region] = std::stod(line.substr(13)) / static_cast<double>(iterations);
    }
    double total = 0, weighted = 0;
    for (const auto& [name, n] : dispatches) {
      auto it = cycles.find(name);
      if (it == cycles.end()) {
        out.reason = fmt::format("llvm-mca-19 gave no cycles for {}", name);
        return std::nullopt;
      }
      total += static_cast<double>(n);
      weighted += static_cast<double>(n) * it->second;
    }
    return weighted / total;
  };
  out.cycles_per_dispatch = weighted_cycles(false);
  if (!out.cycles_per_dispatch) return out;
  out.ordered_cycles_per_dispatch = weighted_cycles(true);
  out.handlers = dispatches.size();
  return out;
}

}  // namespace dlab::models
