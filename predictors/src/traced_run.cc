#include "dispatchlab/predictors/traced_run.h"

#include <ext/stdio_filebuf.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>

#include "dispatchlab/harness/files.h"
#include "dispatchlab/harness/process.h"
#include "dispatchlab/harness/temp_dir.h"
#include "dispatchlab/harness/quote.h"

namespace dlab::predictors {
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

// The folder valgrind is pointed at (VALGRIND_LIB): dlabtrace and links to valgrind's own files,
// made by the build (predictors/CMakeLists.txt) beside dlab.
std::string tracer_folder() {
  std::error_code ec;
  auto beside = std::filesystem::read_symlink("/proc/self/exe", ec).parent_path() / "valgrind-tools";
  if (std::filesystem::exists(beside / "dlabtrace-amd64-linux", ec)) return beside.string();
#ifdef DLAB_VALGRIND_TOOL_DIR
  if (std::filesystem::exists(std::filesystem::path(DLAB_VALGRIND_TOOL_DIR) / "dlabtrace-amd64-linux", ec)) return DLAB_VALGRIND_TOOL_DIR;
#endif
  return "";
}

}  // namespace

TracedBinary::TracedBinary(std::string exec) : exec_(std::move(exec)) {
  offset_ = offset_of(exec_);
  symbols_ = tool_output({"nm", "-n", "--defined-only", exec_}, "binutils");
}

CodeRange TracedBinary::code_of(const std::string& symbol) const {
  std::istringstream in(symbols_);
  CodeRange r = symbol_code_range(in, symbol, "nm " + exec_);
  return {r.lo + offset_, r.hi + offset_};
}

CodeRange TracedBinary::code_of_source(const std::string& source_file, const std::string& global_symbol) const {
  std::call_once(elf_symbols_read_, [&] { elf_symbols_ = tool_output({"readelf", "-sW", exec_}, "binutils"); });
  std::istringstream in(elf_symbols_);
  CodeRange r = elf_file_code_range(in, source_file, global_symbol, "readelf -sW " + exec_);
  return {r.lo + offset_, r.hi + offset_};
}

std::string TracedBinary::disassembly(CodeRange range) const {
  // objdump over the range only: the whole binary's disassembly is tens of megabytes.
  return tool_output({"objdump", "-d", "--no-show-raw-insn", fmt::format("--start-address=0x{:x}", range.lo - offset_),
                      fmt::format("--stop-address=0x{:x}", range.hi - offset_), exec_},
                     "binutils");
}

BranchSites TracedBinary::sites_in(CodeRange range) const {
  std::istringstream in(disassembly(range));
  return read_objdump_branch_sites(in, offset_);
}

std::vector<TracedBinary::Function> TracedBinary::functions_in(CodeRange range) const {
  std::vector<Function> out;
  std::istringstream in(symbols_);
  for (const NmSymbol& sym : read_nm_symbols(in)) {
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

std::string tracer_unavailable() {
#if !defined(__x86_64__) || !defined(__linux__)
  return "--predict runs on amd64 Linux only: it reads x86-64 disassembly and valgrind's amd64 load address";
#else
  if (tracer_folder().empty())
    return "dlabtrace, the Valgrind tool --predict traces with, is not built: it needs Debian's valgrind (its pub_tool headers and "
           "libcoregrind): run ./tools/bootstrap, then just build";
  if (!run_process({"valgrind", "--version"}, {.quiet = true, .timeout_s = 30}).spawn_error.empty())
    return "valgrind is not installed: ./tools/bootstrap installs it (Debian's valgrind)";
  return "";
#endif
}

TracedRun run_traced(const std::vector<std::string>& argv, CodeRange range, TraceSimulation& sim, double timeout_s, const std::string& what,
                     TraceSample sample) {
  if (std::string why = tracer_unavailable(); !why.empty()) throw std::runtime_error(why);
  // env sets VALGRIND_LIB, where valgrind looks for its tools: an argument vector, no shell.
  std::vector<std::string> command = {"env", "VALGRIND_LIB=" + tracer_folder(), "valgrind", "--tool=dlabtrace",
                                      fmt::format("--range={:x}-{:x}", range.lo, range.hi), "--trace-fd=3"};
  if (sample.sampled()) {
    if (sample.on == 0 || sample.on >= sample.period)
      throw std::invalid_argument(fmt::format("a trace sample of {} in every {} instructions: need 0 < on < period", sample.on, sample.period));
    command.push_back(fmt::format("--sample={}/{}", sample.on, sample.period));
  }
  command.insert(command.end(), argv.begin(), argv.end());
  int trace_pipe[2];
  if (::pipe2(trace_pipe, O_CLOEXEC) != 0) throw std::system_error(errno, std::generic_category(), "pipe");
  ::fcntl(trace_pipe[1], F_SETPIPE_SZ, 1 << 20);  // best effort: dlabtrace writes a megabyte at a time
  // valgrind's and the program's standard error in a file, quoted when the run fails: valgrind
  // 3.19 says "unhandled dwarf2 abbrev form" for each of clang-19's DWARF 5 forms it meets.
  TempDir scratch("dlabtrace");
  ProcessOptions o;
  o.capture_stdout = true;
  o.max_output = 1 << 20;
  o.stderr_file = scratch.file("stderr").string();
  // No standard input: a traced program that read dlab's (a terminal) would wait for a reader until
  // its timeout, and what it reads would differ from the run it repeats.
  o.stdin_file = "/dev/null";
  o.timeout_s = timeout_s;
  o.own_process_group = true;
  o.pass_fd = trace_pipe[1];  // the trace on the program's descriptor 3
  std::future<ProcessResult> child = std::async(std::launch::async, [&] {
    ProcessResult r = run_process(command, o);
    ::close(trace_pipe[1]);  // the reader's end of file
    return r;
  });
  TracedRun out;
  std::string trace_error;
  {
    __gnu_cxx::stdio_filebuf<char> buffer(trace_pipe[0], std::ios::in, size_t{1} << 16);  // closes the read end when done
    std::istream in(&buffer);
    try {
      out.trace_instructions = sim.run(in, "dlabtrace trace of " + what).instructions;
    } catch (const std::exception& e) {
      trace_error = e.what();  // the read end closes here: a program still writing stops
    }
  }
  ProcessResult r = child.get();
  // A trace the simulation refused ends valgrind by SIGPIPE when the read end closes: the trace's
  // error is the cause then. Any other failure of the program is its own, said first.
  const bool stopped_by_us = !trace_error.empty() && r.signal == SIGPIPE;
  if (!r.ok() && !stopped_by_us) {
    std::string err;
    try {
      err = read_text_file(o.stderr_file);
    } catch (const std::exception&) {
    }
    if (err.size() > 800) err = "..." + err.substr(err.size() - 800);
    throw std::runtime_error(fmt::format("{} under valgrind: {}{}{}", what, r.describe("valgrind"),
                                         trace_error.empty() ? "" : " (and the trace: " + trace_error + ")",
                                         err.empty() ? "" : "; its standard error ends: " + dlab::escape_input(err)));
  }
  if (!trace_error.empty()) throw std::runtime_error(trace_error);
  out.output = std::move(r.output);
  return out;
}

std::vector<MeteredMetric> simulated_metrics(const std::vector<SimulatedCount>& counts, const std::string& traced) {
  std::vector<MeteredMetric> out;
  for (const auto& sc : counts) {
    const bool memory = sc.quantity == "memory_order_flushes";
    out.push_back({fmt::format("simulated_{}[{}]", sc.quantity, sc.predictor), memory ? "flushes" : "mispredicts", "simulation",
                   fmt::format("SIMULATED by {} ({}){}, {}; not a counted event", sc.predictor, sc.configuration,
                               memory ? fmt::format(", stores resolved after {} instructions", sc.window) : "", traced),
                   true, Availability::yes("simulated"), ""});
  }
  return out;
}

}  // namespace dlab::predictors
