#pragma once
// llvm-mca-19 (LLVM's scheduling model of one CPU) over machine code taken from a binary: the
// ideal bound of issue 46, item 5, for the models (models/ideal_bound.h) and the interpreter's
// engines (interpreter/bench/engine_simulation.h). What it gives is ESTIMATED cycles: no
// mispredicts, no memory-order flushes, no cache misses; by default every load independent of every
// store. Never a measurement.
#include <cstdint>
#include <map>
#include <unordered_map>
#include <string>
#include <vector>

#include <optional>

#include "dispatchlab/harness/meter.h"
#include "dispatchlab/predictors/binary_code.h"
#include "dispatchlab/predictors/traced_run.h"

namespace dlab::predictors {

// Iterations llvm-mca runs each region's code for (its steady state: the first one's start-up is a
// hundredth of the count).
inline constexpr uint64_t kMcaIterations = 100;

// objdump's instruction lines as assembly llvm-mca reads (AT&T): without objdump's "# ..."
// comments and "<symbol+offset>" annotations, alignment padding left out, a direct branch's bare
// hex target given its 0x.
std::string mca_assembly(const std::vector<ObjdumpLine>& lines);

// Why llvm-mca-19 refuses this -mcpu (its first line of error: an unknown CPU), or "" when it
// accepts it or cannot be run at all (then each bound says why it is missing).
std::string llvm_mca_refuses(const std::string& mcpu);

// The host CPU as llvm-mca-19 names it ("Host CPU:" of its --version), "" when it cannot tell.
std::string llvm_mca_host_cpu();

// The -mcpu an option names, and why that one: a CPU name as given; native as the CPU table's
// name for this CPU (`table_mcpu`, whose scheduling model LLVM 19 gives it: `table_model`), else
// as llvm-mca's name for the host ("native" when it cannot tell); none as "" (no bound).
// std::invalid_argument with llvm-mca's own words when it refuses the name.
struct McaCpu {
  std::string mcpu;  // "" for none
  std::string why;   // for the metrics' provenance and the sidecar
};
McaCpu resolve_mca_cpu(const std::string& asked, const std::string& table_mcpu = "", const std::string& table_model = "");

struct McaRegion {
  std::string name;      // unique among the regions of one call
  std::string assembly;  // mca_assembly's
};
struct McaCycles {
  std::map<std::string, double> per_iteration;  // each region's cycles per iteration of its code
  // Each region's Block RThroughput: the cycles its instructions occupy the busiest resource per
  // iteration, dependences ignored; a lower bound of per_iteration (and of any core LLVM's model is right for).
  std::map<std::string, double> resource_bound;
  std::string error;                            // why there are none ("" when every region has its cycles)
};
// Every region through one llvm-mca-19 -mcpu=`mcpu` run, each region its own code region
// (# LLVM-MCA-BEGIN/END). `loads_after_stores`: -noalias=false, every load ordered after every
// older store (a region repeated alone then carries its store-to-load round trips through memory).
McaCycles mca_region_cycles(const std::vector<McaRegion>& regions, const std::string& mcpu, bool loads_after_stores);

// The instructions of one function that ran on its usual path: those a trace saw run at least half
// as often as the function's first instruction (its entries), in address order. A handler's cold
// paths (a trap, a slow case) drop out; an instruction in a loop inside the function stays, counted
// once per entry (so an estimate from it is a lower bound for loops). `lines`: the function's
// objdump lines (binary addresses); `executions`: per instruction address of the trace
// (binary address + `load_offset`). No entry: an empty path.
struct HotPath {
  std::vector<ObjdumpLine> lines;
  uint64_t entries = 0;
  uint64_t executions = 0;  // every execution the trace saw of the function's instructions
};
HotPath hot_path(const std::vector<ObjdumpLine>& lines, const std::unordered_map<uint64_t, uint64_t>& executions, uint64_t load_offset);

// The ideal bound of a traced run of `code` (an engine whose handlers are functions of their own):
// each function the trace entered, its hot_path through llvm-mca-19 -mcpu=`mcpu`, weighted by its
// entries, over `dispatches`: ideal cycles per dispatch, and the same with every load after every
// older store. `executions`: TraceSimulation::executions() of that range. ESTIMATED, a lower bound
// where a function loops (a loop's body counted once per entry); `path_share` says how much of
// what ran the paths account for.
struct TracedIdealBound {
  std::optional<double> cycles_per_dispatch, ordered_cycles_per_dispatch;
  std::optional<double> resource_cycles_per_dispatch;  // from the regions' resource bounds
  std::string reason;       // why there is none
  size_t functions = 0;     // functions entered, each one llvm-mca region
  double path_share = 0;    // executions on the paths (each at most once per entry) over all executions in `code`
  struct Function {
    std::string name;
    uint64_t entries = 0;
    size_t path_instructions = 0;
    double cycles_per_entry = 0;  // llvm-mca's, with loads independent of stores
  };
  std::vector<Function> by_function;  // every function entered, most cycles (entries x cycles) first
};
TracedIdealBound ideal_bound_of_trace(const TracedBinary& binary, CodeRange code, const std::unordered_map<uint64_t, uint64_t>& executions,
                                      uint64_t dispatches, const std::string& mcpu);

// The ideal bound's three metrics, in this order, for a result: ideal_cycles[llvm-mca-19 <mcpu>],
// ideal_cycles_ordered[...] and ideal_cycles_resources[...], each ESTIMATED, its provenance saying
// `code` (what llvm-mca was given, and how it was weighted), why that -mcpu, and what the variant assumes.
std::vector<MeteredMetric> ideal_bound_metrics(const McaCpu& cpu, const std::string& code);

}  // namespace dlab::predictors
