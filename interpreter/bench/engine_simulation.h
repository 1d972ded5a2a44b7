// Memory-order flushes and branch mispredicts of the interpreter's engines on real programs,
// SIMULATED (`dlab wasm bench --predict`): each case, a workload in one engine, runs as `dlab wasm
// run --invoke` under valgrind's dlabtrace, traced in the engine's own code only (its dispatch
// file's handlers with its entry run_<engine>: predictors::elf_file_code_range), its trace streamed
// through the predictors asked for (predictors/traced_run.h). Never timed: the counts are the
// trace's, whatever CPU ran it. amd64 Linux only.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dispatchlab/harness/result_writer.h"
#include "dispatchlab/interpreter/engine_config.h"
#include "dispatchlab/predictors/llvm_mca.h"
#include "dispatchlab/predictors/traced_run.h"

namespace dlab::bench {

struct SimulatedCase {
  std::string name;
  std::vector<std::string> argv;  // the dlab command line; argv[0] is the binary traced
  wasm::EngineConfig engine;
  std::map<std::string, std::string> params;  // written into the case's rows
};

struct EngineSimulationOptions {
  std::string predictors;     // names of docs/predictors.md's tables, comma-separated, or all
  uint32_t window = 64;       // instructions after which a store's address is known (memory rows)
  predictors::TraceSample sample;  // traced windows of a long run (dlab wasm profile --predict-sample); default all
  bool table_on_stderr = false;    // the per-case table on stderr (dlab wasm profile's report goes there), else stdout
  std::string progress = "wasm bench --predict";  // the progress lines' prefix: the command
  // Load addresses the branch rows are simulated at (1: the trace's own): each a sample of the
  // case, so a row's median and interval are over where the binary was loaded
  // (predictors::load_address_shifts).
  uint32_t load_addresses = 1;
  // llvm-mca-19's -mcpu, and why it, for the ideal bound of each case whose engine's handlers are
  // functions of their own (predictors::ideal_bound_of_trace; the switch and goto loops have no
  // handler's own code, and say so); mcpu "" for none.
  predictors::McaCpu ideal;
};

// The predictor list checked (std::invalid_argument naming both tables' rows) and the tracer's
// availability (std::runtime_error saying what to install), before anything runs.
void check_engine_simulation(const EngineSimulationOptions& options);

// Runs every case (two at a time where there are two cores), prints each one's counts per 1,000
// dispatches and, with a run directory, writes <experiment>.summary.csv / .samples.csv / .json:
// metrics simulated_<quantity>[<predictor>] per dispatch, and with an ideal CPU the ideal bound,
// ideal_cycles[llvm-mca-19 <cpu>], ideal_cycles_ordered[...] and ideal_cycles_resources[...] per
// dispatch (ESTIMATED). No warm-up: a case's counts are over one whole call, its cold start included. A dispatch is an indirect jump executed
// in the engine's code: every tail and goto handler ends in its own, the switch loop has one.
// Returns the same as JSON (each case's parameters and counts, and how it was traced).
nlohmann::json run_simulated_cases(const std::vector<SimulatedCase>& cases, const EngineSimulationOptions& options,
                                   const std::optional<RunDirectory>& dir, const std::string& experiment);

}  // namespace dlab::bench
