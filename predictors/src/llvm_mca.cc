#include "dispatchlab/predictors/llvm_mca.h"

#include <algorithm>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "dispatchlab/harness/process.h"
#include "dispatchlab/harness/temp_dir.h"

namespace dlab::predictors {
namespace {

// LLVM 19's x86 scheduling models give push, pop and an add or sub of %rsp a register dependence
// on %rsp, one cycle each: a handler that saves six registers and restores them before its tail
// jump (the interpreter's call and return) becomes a chain of 14 cycles it does not have on any
// core with a stack engine (Intel since the Pentium M, AMD since K10: rsp's offset is tracked at
// rename, Intel's optimization manual, "Stack Pointer Tracker"; AMD's Software Optimization Guide
// for family 17h, "Stack Engine"). So each is given to llvm-mca as what remains of it: push as a
// store and pop as a load at the offset the tracker knows, add and sub of a constant to %rsp
// dropped, every other %rsp-relative operand moved by the offset so far. Once anything else
// writes %rsp (push of an immediate or of memory, pushf, leave, a lea, and or mov into it) the
// offset is no longer known: that line and the rest of the region are left as they are, chain
// and all. The offset follows the region's lines in address order (a path, not a control-flow graph).
std::string with_stack_engine(const std::string& insn, int64_t& offset, bool& lost) {
  static const std::regex push(R"(^pushq?\s+(%[a-z0-9]+)$)"), pop(R"(^popq?\s+(%[a-z0-9]+)$)"),
      adjust(R"(^(add|sub)q?\s+\$(0x[0-9a-f]+|[0-9]+),%rsp$)"), relative(R"((-?)(0x[0-9a-f]+|[0-9]+)?\(%rsp)"),
      writes_rsp(R"(^(push|pop|leave|enter)|,%rsp$)");
  if (lost) return insn;
  auto displacement = [](int64_t at) { return fmt::format("{}0x{:x}", at < 0 ? "-" : "", at < 0 ? -at : at); };
  auto slot = [&](int64_t at) { return displacement(at) + "(%rsp)"; };
  std::smatch m;
  if (std::regex_match(insn, m, push)) {
    offset -= 8;
    return fmt::format("mov    {},{}", m[1].str(), slot(offset));
  }
  if (std::regex_match(insn, m, pop)) {
    std::string load = fmt::format("mov    {},{}", slot(offset), m[1].str());
    offset += 8;
    return load;
  }
  if (std::regex_match(insn, m, adjust)) {
    const int64_t by = static_cast<int64_t>(std::stoull(m[2].str(), nullptr, 0));
    offset += m[1].str() == "add" ? by : -by;
    return "";
  }
  if (std::regex_search(insn, writes_rsp)) {
    lost = true;
    return insn;
  }
  if (offset == 0 || !std::regex_search(insn, m, relative)) return insn;
  int64_t at = m[2].matched ? static_cast<int64_t>(std::stoull(m[2].str(), nullptr, 0)) : 0;
  if (m[1].length()) at = -at;
  return m.prefix().str() + displacement(at + offset) + "(%rsp" + m.suffix().str();
}

}  // namespace

std::string mca_assembly(const std::vector<ObjdumpLine>& lines) {
  std::string out;
  int64_t rsp_offset = 0;  // the stack engine's, from the first line
  bool rsp_lost = false;
  for (const ObjdumpLine& l : lines) {
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
    insn = with_stack_engine(insn, rsp_offset, rsp_lost);
    if (!insn.empty()) out += insn + "\n";
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

McaCpu resolve_mca_cpu(const std::string& asked, const std::string& table_mcpu, const std::string& table_model) {
  if (asked.empty()) throw std::invalid_argument("an empty CPU name: name one llvm-mca-19 knows, native or none");
  if (asked == "none") return {};
  McaCpu out{asked, "asked for"};
  if (asked == "native" && !table_mcpu.empty()) {
    out = {table_mcpu, fmt::format("this CPU's row of the CPU table (harness/catalog/cpus.json); LLVM 19's scheduling model for it: {}",
                                   table_model)};
  } else if (asked == "native") {
    out.mcpu = llvm_mca_host_cpu();
    out.why = "llvm-mca's name for the host (the CPU table names none for this CPU)";
    if (out.mcpu.empty()) out.mcpu = "native";
  }
  if (std::string why = llvm_mca_refuses(out.mcpu); !why.empty()) throw std::invalid_argument(why);
  return out;
}

McaCycles mca_region_cycles(const std::vector<McaRegion>& regions, const std::string& mcpu, bool loads_after_stores) {
  McaCycles out;
  std::string input;
  for (const McaRegion& r : regions) input += fmt::format("# LLVM-MCA-BEGIN {}\n{}# LLVM-MCA-END\n", r.name, r.assembly);
  TempDir dir("mca");
  const std::string file = dir.write("regions.s", input).string();
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
    out.error = fmt::format("llvm-mca-19 -mcpu={}: {}{}", mcpu, r.describe("llvm-mca-19"), first.empty() ? "" : ": " + first);
    return out;
  }
  // Each region's summary: "[n] Code Region - NAME" then "Iterations:" and "Total Cycles:".
  std::istringstream in(r.output);
  std::string line, region;
  uint64_t iterations = 0;
  while (std::getline(in, line)) {
    if (size_t at = line.find("Code Region - "); at != std::string::npos) region = line.substr(at + 14);
    else if (line.starts_with("Iterations:")) iterations = std::stoull(line.substr(11));
    else if (line.starts_with("Total Cycles:") && !region.empty() && iterations)
      out.per_iteration[region] = std::stod(line.substr(13)) / static_cast<double>(iterations);
    else if (line.starts_with("Block RThroughput:") && !region.empty())
      out.resource_bound[region] = std::stod(line.substr(18));
  }
  for (const McaRegion& reg : regions)
    if (!out.per_iteration.contains(reg.name) || !out.resource_bound.contains(reg.name)) {
      out.error = fmt::format("llvm-mca-19 gave no cycles for {}", reg.name);
      break;
    }
  return out;
}

HotPath hot_path(const std::vector<ObjdumpLine>& lines, const std::unordered_map<uint64_t, uint64_t>& executions, uint64_t load_offset) {
  HotPath out;
  if (lines.empty()) return out;
  auto ran = [&](uint64_t address) {
    auto it = executions.find(address + load_offset);
    return it == executions.end() ? uint64_t{0} : it->second;
  };
  out.entries = ran(lines.front().address);
  for (const ObjdumpLine& l : lines) out.executions += ran(l.address);
  if (out.entries == 0) return out;
  for (const ObjdumpLine& l : lines)
    if (2 * ran(l.address) >= out.entries) out.lines.push_back(l);
  return out;
}

std::vector<MeteredMetric> ideal_bound_metrics(const McaCpu& cpu, const std::string& code) {
  const std::string& mcpu = cpu.mcpu;
  auto metric = [&](const char* name, std::string how) {
    return MeteredMetric{fmt::format("{}[llvm-mca-19 {}]", name, mcpu), "cycles", "llvm-mca",
                         fmt::format("ESTIMATED: {}; {}; -mcpu={}: {}; not a measurement", code, how, mcpu, cpu.why), true,
                         Availability::yes("estimated"), ""};
  };
  return {metric("ideal_cycles", fmt::format("llvm-mca-19 -mcpu={} ({} iterations of each region: no mispredicts, flushes or cache "
                                             "misses, loads independent of stores; push and pop as the stack engine leaves them); "
                                             "each region repeated alone, so its own loop-carried chain is charged in full",
                                             mcpu, kMcaIterations)),
          metric("ideal_cycles_ordered", fmt::format("as ideal_cycles with every load ordered after every older store (-noalias=false): "
                                                     "each region repeated alone carries its store-to-load round trips through memory; "
                                                     "an upper bound on what memory dependences add")),
          metric("ideal_cycles_resources", "each region's Block RThroughput (its busiest resource, dependences ignored): a lower bound "
                                           "of ideal_cycles, and of the time wherever LLVM's model of the core is right")};
}

TracedIdealBound ideal_bound_of_trace(const TracedBinary& binary, CodeRange code, const std::unordered_map<uint64_t, uint64_t>& executions,
                                      uint64_t dispatches, const std::string& mcpu) {
  TracedIdealBound out;
  if (dispatches == 0) {
    out.reason = "no dispatch ran";
    return out;
  }
  std::istringstream disassembly(binary.disassembly(code));
  const std::vector<ObjdumpLine> lines = read_objdump_lines(disassembly);  // address order (binary addresses)
  auto at = [&](uint64_t trace_address) {
    return std::lower_bound(lines.begin(), lines.end(), trace_address - binary.load_offset(),
                            [](const ObjdumpLine& l, uint64_t a) { return l.address < a; });
  };
  std::vector<McaRegion> regions;
  std::vector<uint64_t> entries;
  uint64_t all = 0, on_paths = 0;
  for (const auto& [pc, n] : executions) all += n;
  for (const TracedBinary::Function& f : binary.functions_in(code)) {
    HotPath path = hot_path(std::vector<ObjdumpLine>(at(f.code.lo), at(f.code.hi)), executions, binary.load_offset());
    if (path.lines.empty()) continue;
    for (const ObjdumpLine& l : path.lines) on_paths += std::min(path.entries, executions.at(l.address + binary.load_offset()));
    // A static function's name may repeat (two files' helpers): the region named by its address too.
    regions.push_back({fmt::format("{}@{:x}", f.name, f.code.lo), mca_assembly(path.lines)});
    entries.push_back(path.entries);
    out.by_function.push_back({f.name, path.entries, path.lines.size(), 0});
  }
  if (regions.empty()) {
    out.reason = "the trace entered no function of the code range";
    return out;
  }
  out.functions = regions.size();
  out.path_share = all ? static_cast<double>(on_paths) / static_cast<double>(all) : 0;
  auto per_dispatch = [&](bool loads_after_stores) -> std::optional<double> {
    McaCycles mca = mca_region_cycles(regions, mcpu, loads_after_stores);
    if (!mca.error.empty()) {
      out.reason = mca.error;
      return std::nullopt;
    }
    double cycles = 0;
    for (size_t i = 0; i < regions.size(); ++i) cycles += static_cast<double>(entries[i]) * mca.per_iteration.at(regions[i].name);
    if (!loads_after_stores) {
      double resources = 0;
      for (size_t i = 0; i < regions.size(); ++i) {
        out.by_function[i].cycles_per_entry = mca.per_iteration.at(regions[i].name);
        resources += static_cast<double>(entries[i]) * mca.resource_bound.at(regions[i].name);
      }
      out.resource_cycles_per_dispatch = resources / static_cast<double>(dispatches);
    }
    return cycles / static_cast<double>(dispatches);
  };
  out.cycles_per_dispatch = per_dispatch(false);
  std::stable_sort(out.by_function.begin(), out.by_function.end(), [](const auto& a, const auto& b) {
    return static_cast<double>(a.entries) * a.cycles_per_entry > static_cast<double>(b.entries) * b.cycles_per_entry;
  });
  if (out.cycles_per_dispatch) out.ordered_cycles_per_dispatch = per_dispatch(true);
  return out;
}

}  // namespace dlab::predictors
