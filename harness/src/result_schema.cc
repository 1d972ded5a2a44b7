#include "dispatchlab/harness/result_schema.h"

#include <stdexcept>

#include <fmt/format.h>

namespace dlab {

namespace {

// Columns shared by every measured row: the protocol and the build, so that a number carries how
// it was taken wherever the row travels.
#define DLAB_PROVENANCE_COLUMNS                                                                      \
  {"protocol", "run protocol name"},                                                                 \
      {"pinned_cpu", "CPU the measuring thread was pinned to, empty when not pinned (see run.json)"}, \
      {"warmup_rounds", "rounds run and discarded before sampling"},                                 \
      {"samples", "measured rounds per case"},                                                       \
      {"interleaved", "1 when the cases alternated within each round (A B A B ...), 0 when blocked"}, \
      {"pmu", "libpfm4 core PMU of the machine, empty when unknown"},                                \
      {"uarch", "microarchitecture from the CPU table (harness/catalog/cpus.json)"},                  \
      {"core", "core type of the CPU the run was pinned to (Firestorm (P), Icestorm (E): cpus.json by MIDR part), or the CPU's one core type; empty when unknown"}, \
      {"emulated", "empty when run natively; else the emulator or translator (qemu-user, FEX-Emu, ...) and the methods that found it: never a measurement, left out of the report, the RFC table and fleet merges"}, \
      {"compiler", "compiler and version of the measuring binary"},                                  \
      {"build_type", "CMake build type and preset"},                                                 \
      {"cxx_flags", "compiler flags that affect generated code"},                                    \
      {"git_commit", "commit of the source tree, +dirty when it had uncommitted changes"}

constexpr Column kSummary[] = {
    {"run_id", "run directory name: <UTC timestamp>-<short commit>"},
    {"experiment", "what was run (calibrate, models, ...)"},
    {"case", "the measured case's name within the experiment (the column was `variant` before schema version 3)"},
    {"params", "the case's parameters as key=value pairs joined by ';'"},
    {"metric", "catalog metric name"},
    {"unit", "unit of the metric per work unit, e.g. cycles/dispatch"},
    {"backend", "counter backend (perf_event, papi, tsc), empty when unavailable"},
    {"native_event", "native event(s) and formula from the metric catalog"},
    {"event_encoding", "libpfm4 (event names; libpfm4 detected this CPU's PMU) or raw (the catalog's raw codes); empty for software events and other backends"},
    {"estimated", "1 when the value is an estimate (cycles_tsc_estimate), else 0"},
    {"n", "number of samples summarised; 0 when unavailable"},
    {"median", "median per work unit; empty when unavailable"},
    {"min", "minimum per work unit"},
    {"mad", "median absolute deviation per work unit (unscaled)"},
    {"ci95_lo", "lower end of the bootstrap 95% CI of the median"},
    {"ci95_hi", "upper end of the bootstrap 95% CI of the median"},
    {"running_fraction_min", "lowest time_running/time_enabled over samples; below 1 means multiplexed and scaled"},
    {"baseline", "the case the ratio compares against (the experiment's first case, unless the case names its own)"},
    {"ratio", "median(case)/median(baseline); empty for the baseline itself"},
    {"ratio_ci95_lo", "bootstrap 95% CI of the ratio, rounds resampled in pairs"},
    {"ratio_ci95_hi", "upper end of that CI"},
    {"smaller_k", "rounds in which this case's sample was smaller than the baseline's"},
    {"smaller_n", "rounds compared"},
    {"unavailable_reason", "why the metric has no value here; empty when measured"},
    DLAB_PROVENANCE_COLUMNS,
};

constexpr Column kSamples[] = {
    {"run_id", "run directory name"},
    {"experiment", "what was run"},
    {"case", "the measured case's name"},
    {"metric", "catalog metric name"},
    {"round", "measured round, from 0"},
    {"value", "value per work unit in this sample; empty when unavailable"},
    {"running_fraction", "time_running/time_enabled of the metric's counters in this sample"},
    {"read_method", "how the counters were read (rdpmc, read(PERF_FORMAT_GROUP), PAPI_stop, rdtsc)"},
};

constexpr Column kCounters[] = {
    {"metric", "catalog metric name"},
    {"unit", "unit of the metric"},
    {"backend", "backend that would count it (perf_event, papi, tsc)"},
    {"source", "metric-catalog source (intel_icl, software, papi, tsc, ...)"},
    {"native_event", "native event(s) and formula"},
    {"event_encoding", "libpfm4 or raw for PMU events, empty otherwise"},
    {"selected", "1 for the candidate a measurement uses for this metric"},
    {"available", "1 when the events opened on this machine, else 0"},
    {"estimated", "1 when the metric is an estimate"},
    {"reason", "why unavailable, or the caveat of an available metric"},
};

constexpr Column kRegisterBudget[] = {
    {"target", "target triple"},
    {"convention", "calling convention attribute (default, preserve_none, preserve_most, ms_abi, sysv_abi, regcall)"},
    {"shape", "probe signature: ints, floats or mixed (alternating), or the signature given to `dlab probes fit`"},
    {"signature", "argument types in order"},
    {"status", "ok, ignored (clang ignores the convention on this target) or error"},
    {"int_in_registers", "integer/pointer arguments that arrive in registers (from the assembly method)"},
    {"int_args", "integer/pointer arguments in the signature"},
    {"float_in_registers", "floating-point arguments that arrive in registers"},
    {"float_args", "floating-point arguments in the signature"},
    {"registers", "register of each argument in order, '-' for the stack"},
    {"mir_liveins", "live-in registers of the all-arguments function in machine IR after instruction selection"},
    {"mir_fixed_stack", "fixed stack objects (incoming stack arguments) in that machine IR"},
    {"methods_agree", "1 when the assembly and machine-IR methods give the same register and stack counts"},
    {"compiler", "compiler that produced the code"},
    {"note", "the ignored-attribute warning, the compiler error, or the disagreement"},
};

constexpr Column kStatePlacement[] = {
    {"model", "models/ handler set (stack1: one copy of each kind)"},
    {"placement", "stack-state placement"},
    {"target", "target triple"},
    {"convention", "calling convention forced on the handlers (default: the placement's own)"},
    {"kind", "handler kind"},
    {"status", "ok, ignored or error (a musttail the target cannot honour is an error)"},
    {"instructions", "instructions in the handler"},
    {"callee_saved", "callee-saved registers the handler saves"},
    {"stack_accesses", "instructions touching stack-pointer-relative memory: spills, stack-passed arguments, saves"},
    {"tail_jump", "1 when the handler ends in a jump (dispatch is a tail call)"},
    {"compiler", "compiler that produced the code"},
    {"note", "warning or error text"},
};

constexpr Column kFunctions[] = {
    {"run_id", "run directory name"},
    {"experiment", "what was run (an experiment of cachegrind counts: <name>_valgrind)"},
    {"case", "the case (workload/engine, or workload/peer)"},
    {"function", "cachegrind's name of the function (demangled, with its parameters)"},
    {"family", "for an interpreter handler, its family (the handlers/ file its entry is in: control, numeric, ...); empty for any other function"},
    {"instructions", "instructions executed in the function per repetition (2N - N)"},
    {"loads", "loads per repetition"},
    {"stores", "stores per repetition"},
    {"branches", "conditional and indirect branches per repetition"},
    {"mispredicts", "simulated conditional and indirect mispredicts per repetition"},
    {"params", "the case's parameters as in summary.csv"},
    DLAB_PROVENANCE_COLUMNS,
};

constexpr TableSchema kTables[] = {
    {"summary", "one row per experiment, case and metric: the statistics of its samples", kSummary},
    {"samples", "one row per sample: the raw per-unit values behind summary.csv", kSamples},
    {"counters", "the counter availability table: one row per metric and candidate source", kCounters},
    {"register_budget", "ABI register probes: one row per target, convention and signature", kRegisterBudget},
    {"state_placement", "handler state placement: one row per model placement, target, convention and handler kind", kStatePlacement},
    {"functions", "cachegrind counts split by function: one row per case and function that ran in its repetitions (`--valgrind-functions`)", kFunctions},
};

}  // namespace

std::span<const TableSchema> result_tables() { return kTables; }

const TableSchema& result_table(const std::string& name) {
  for (const auto& t : kTables)
    if (name == t.name) return t;
  throw std::out_of_range("no result table named " + name);
}

std::string schema_markdown() {
  std::string s;
  for (const auto& t : kTables) {
    s += fmt::format("### `{}.csv`\n\n{}\n\n| column | meaning |\n|---|---|\n", t.name, t.description);
    for (const auto& c : t.columns) s += fmt::format("| `{}` | {} |\n", c.name, c.description);
    s += "\n";
  }
  return s;
}

nlohmann::json schema_json() {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& t : kTables) {
    nlohmann::json cols = nlohmann::json::array();
    for (const auto& c : t.columns) cols.push_back({{"name", c.name}, {"description", c.description}});
    j[t.name] = {{"description", t.description}, {"columns", cols}};
  }
  return j;
}

}  // namespace dlab
