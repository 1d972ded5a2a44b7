#include "dispatchlab/models/case_simulation.h"

#include <ext/stdio_filebuf.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <future>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "dispatchlab/harness/process.h"
#include "dispatchlab/harness/quote.h"
#include "dispatchlab/models/models.h"

namespace dlab::models {
namespace {

// The tools' whole output, or an error that says what to install.
std::string tool_output(const std::vector<std::string>& argv, const char* package) {
  ProcessOptions o;
  o.capture_stdout = true;
  o.timeout_s = 120;
  o.max_output = size_t{256} << 20;
  ProcessResult r = run_process(argv, o);
  if (!r.ok()) throw std::runtime_error(fmt::format("{} (it comes with Debian's {}: ./tools/bootstrap installs it)", r.describe(argv[0]), package));
  return r.output;
}

// A position-independent executable (ELF type ET_DYN) is loaded where valgrind puts it; a fixed
// one (ET_EXEC) at its own addresses.
uint64_t offset_of(const std::string& exec) {
  std::ifstream f(exec, std::ios::binary);
  unsigned char header[18] = {};
  if (!f.read(reinterpret_cast<char*>(header), sizeof header) || header[0] != 0x7f || header[1] != 'E' || header[2] != 'L' || header[3] != 'F')
    throw std::runtime_error(fmt::format("{} is not an ELF executable", dlab::escape_input(exec)));
  const unsigned type = header[16] | (header[17] << 8);  // e_type, little-endian (amd64)
  return type == 3 ? kValgrindPieLoadAddress : 0;
}

}  // namespace

TracedBinary::TracedBinary(std::string exec) : exec_(std::move(exec)) {
  offset_ = offset_of(exec_);
  symbols_ = tool_output({"nm", "-n", "--defined-only", exec_}, "binutils");
}

predictors::CodeRange TracedBinary::code_of(const std::string& symbol) const {
  std::istringstream in(symbols_);
  predictors::CodeRange r = predictors::symbol_code_range(in, symbol, "nm " + exec_);
  return {r.lo + offset_, r.hi + offset_};
}

std::string TracedBinary::disassembly(predictors::CodeRange range) const {
  // objdump over the range only: the whole binary's disassembly is tens of megabytes.
  return tool_output({"objdump", "-d", "--no-show-raw-insn", fmt::format("--start-address=0x{:x}", range.lo - offset_),
                      fmt::format("--stop-address=0x{:x}", range.hi - offset_), exec_},
                     "binutils");
}

predictors::BranchSites TracedBinary::sites_in(predictors::CodeRange range) const {
  std::istringstream in(disassembly(range));
  return predictors::read_objdump_branch_sites(in, offset_);
}

std::vector<TracedBinary::Function> TracedBinary::functions_in(predictors::CodeRange range) const {
  std::vector<Function> out;
  std::istringstream in(symbols_);
  for (const predictors::NmSymbol& sym : predictors::read_nm_symbols(in)) {
    if (sym.type != 't' && sym.type != 'T' && sym.type != 'W') continue;
    const uint64_t a = sym.address + offset_;
    if (!out.empty() && out.back().code.hi == 0) out.back().code.hi = a;  // a function runs to the next symbol
    if (a < range.lo || a >= range.hi) continue;
    std::string name = sym.name;
    // An internal-linkage C++ function: _ZL<length><identifier><parameters>.
    if (name.starts_with("_ZL")) {
      size_t digits = 3;
      while (digits < name.size() && std::isdigit(static_cast<unsigned char>(name[digits]))) ++digits;
      if (digits > 3 && digits - 3 < 6) {
        size_t length = std::stoul(name.substr(3, digits - 3));
        if (digits + length <= name.size()) name = name.substr(digits, length);
      }
    }
    out.push_back({name, {a, 0}});
  }
  if (!out.empty() && out.back().code.hi == 0) out.back().code.hi = range.hi;
  for (auto& f : out) f.code.hi = std::min(f.code.hi, range.hi);
  return out;
}

CaseSimulation simulate_case(const ModelCase& c, const TracedBinary& binary, uint64_t reps, const predictors::PredictorSelection& rows,
                             uint32_t window, double timeout_s) {
  const ModelEntry& entry = find_entry(c.model, c.placement, c.dispatch);
  CaseSimulation out;
  out.code = binary.code_of(entry.symbol);
  predictors::BranchSites sites;
  if (!rows.branch.empty()) sites = binary.sites_in(out.code);
  out.branch_sites = sites.size();
  std::vector<uint32_t> windows;
  if (!rows.memory.empty()) windows.push_back(window);
  predictors::TraceSimulation sim(rows, windows, std::move(sites), out.code.lo, out.code.hi);

  std::vector<std::string> argv = {"valgrind", "--tool=lackey", "--trace-mem=yes", "--log-fd=3", binary.path()};
  for (auto& a : c.exec_args()) argv.push_back(a);
  argv.insert(argv.end(), {"--reps", std::to_string(reps)});
  int trace_pipe[2];
  if (::pipe2(trace_pipe, O_CLOEXEC) != 0) throw std::system_error(errno, std::generic_category(), "pipe");
  // A larger pipe: valgrind writes its log in blocks of a few hundred bytes, and with the default
  // 64 KB each block could wake the reader. Best effort (a limit on pipe sizes refuses it).
  ::fcntl(trace_pipe[1], F_SETPIPE_SZ, 1 << 20);
  ProcessOptions o;
  o.capture_stdout = true;  // dlab-model-exec's one line: its checksum and dispatches
  o.max_output = 1 << 16;
  o.timeout_s = timeout_s;
  o.own_process_group = true;
  o.pass_fd = trace_pipe[1];  // lackey's trace (valgrind's log) on the program's descriptor 3
  std::future<ProcessResult> child = std::async(std::launch::async, [&] {
    ProcessResult r = run_process(argv, o);
    ::close(trace_pipe[1]);  // the reader's end of file
    return r;
  });
  std::string trace_error;
  {
    __gnu_cxx::stdio_filebuf<char> buffer(trace_pipe[0], std::ios::in, size_t{1} << 16);  // closes the read end when done
    std::istream in(&buffer);
    try {
      out.trace_instructions = sim.run(in, "lackey trace of " + c.name()).instructions;
    } catch (const std::exception& e) {
      trace_error = e.what();  // the read end closes here: a program still writing stops
    }
  }
  ProcessResult r = child.get();
  // A trace the simulation refused ends valgrind by SIGPIPE when the read end closes: the trace's
  // error is the cause then. Any other failure of the program is its own, said first.
  const bool stopped_by_us = !trace_error.empty() && r.signal == SIGPIPE;
  if (!r.ok() && !stopped_by_us)
    throw std::runtime_error(fmt::format("{} under lackey: {}{}", c.name(), r.describe("valgrind"),
                                         trace_error.empty() ? "" : " (and the trace: " + trace_error + ")"));
  if (!trace_error.empty()) throw std::runtime_error(trace_error);
  // "<case> checksum <hex> dispatches <n>": the last word.
  std::string last = r.output.substr(r.output.find_last_of(' ') == std::string::npos ? 0 : r.output.find_last_of(' ') + 1);
  while (!last.empty() && (last.back() == '\n' || last.back() == '\r')) last.pop_back();
  try {
    size_t used = 0;
    out.dispatches = std::stoull(last, &used);
    if (used != last.size() || out.dispatches == 0) throw std::invalid_argument("");
  } catch (const std::exception&) {
    throw std::runtime_error(fmt::format("{}: dlab-model-exec printed no dispatch count: '{}'", c.name(), dlab::escape_input(r.output.substr(0, 200))));
  }
  out.counts = sim.counts();
  return out;
}

}  // namespace dlab::models
