#pragma once
// A program run under valgrind with its trace streamed (never stored) through a TraceSimulation:
// what `dlab models --predict` and `dlab wasm bench --predict` run. The tracer is dlabtrace, the
// project's Valgrind tool (predictors/valgrind_tool/dlab_trace.c): lackey's trace format, for the
// simulated code range only (the rest of the process is a count of instructions), written in large
// blocks. dlab's start-up alone is 7 million instructions, 21 s under lackey on a Zen 5 guest and
// under a second under dlabtrace. amd64 Linux only: the load address of a position-independent
// executable under valgrind is amd64's.
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "dispatchlab/harness/meter.h"
#include "dispatchlab/predictors/binary_code.h"
#include "dispatchlab/predictors/trace_simulation.h"

namespace dlab::predictors {

// Where valgrind (3.x, amd64) loads a position-independent main executable: a pc in its trace is
// the binary's address plus this. Checked, not assumed: a traced code range that meets no load or
// store, or sites that meet no branch, is an error (TraceSimulation::run).
inline constexpr uint64_t kValgrindPieLoadAddress = 0x108000;

// A binary's symbols and branch sites (nm, readelf and objdump, from binutils), read once.
class TracedBinary {
 public:
  explicit TracedBinary(std::string exec);
  const std::string& path() const { return exec_; }
  uint64_t load_offset() const { return offset_; }  // a trace address minus the binary's
  // A global function's code (to the next global symbol), in the trace's addresses.
  CodeRange code_of(const std::string& symbol) const;
  // The code of one source file's functions with the global function `global_symbol` beside them
  // (elf_file_code_range), in the trace's addresses.
  CodeRange code_of_source(const std::string& source_file, const std::string& global_symbol) const;
  BranchSites sites_in(CodeRange range) const;
  // objdump's disassembly of a range (trace addresses), and the functions whose code starts in it,
  // each to the next symbol: C++ names as their identifier (_ZL5h_u_3... is h_u_3).
  std::string disassembly(CodeRange range) const;
  struct Function {
    std::string name;
    CodeRange code;
  };
  std::vector<Function> functions_in(CodeRange range) const;

 private:
  std::string exec_;
  uint64_t offset_ = 0;         // trace address minus binary address
  std::string symbols_;         // nm -n --defined-only
  // readelf -sW, read on first use: once, whichever of the threads simulating cases side by side
  // (dlab wasm bench --predict) asks first; the others wait for it.
  mutable std::once_flag elf_symbols_read_;
  mutable std::string elf_symbols_;
};

// "" when this build has dlabtrace and valgrind runs, else what to do.
std::string tracer_unavailable();

struct TracedRun {
  std::string output;               // the program's standard output
  uint64_t trace_instructions = 0;  // the whole process's instructions, start-up included
};

// Runs `argv` (argv[0] the traced binary) under valgrind's dlabtrace, tracing `range`, into `sim`;
// killed (its process group) after `timeout_s`. std::runtime_error naming `what` when valgrind, the
// program or the trace fails.
// `sample`: trace the first `on` of every `period` instructions only (dlabtrace --sample; 0 0: all).
struct TraceSample {
  uint64_t on = 0, period = 0;
  bool sampled() const { return period != 0; }
};
TracedRun run_traced(const std::vector<std::string>& argv, CodeRange range, TraceSimulation& sim, double timeout_s,
                     const std::string& what, TraceSample sample = {});

// The result metrics of a simulation's counts, one per entry of `counts` (a case's, all cases having
// the same rows): simulated_<quantity>[<predictor>], backend "simulation", estimated, the predictor's
// configuration and `traced` (what was traced, how) in the native_event column; never in a counted
// metric's place (docs/results-schema.md).
std::vector<MeteredMetric> simulated_metrics(const std::vector<SimulatedCount>& counts, const std::string& traced);

}  // namespace dlab::predictors
