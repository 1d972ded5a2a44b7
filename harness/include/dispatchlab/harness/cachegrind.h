// Deterministic counts where no PMU exists: valgrind's cachegrind with cache and branch
// simulation. It counts whole processes, so a measurement runs the same command with N and with
// 2N repetitions and keeps the difference, which removes start-up and driver costs exactly.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "dispatchlab/harness/counter_backend.h"
#include "dispatchlab/harness/meter.h"
#include "dispatchlab/harness/metric_catalog.h"
#include "dispatchlab/harness/run_protocol.h"

namespace dlab {

using CachegrindCounts = std::map<std::string, uint64_t>;  // event (Ir, Dr, Dw, Bcm, Bim, ...) -> count

// Parses a cachegrind.out file: its "events:" and "summary:" lines. Throws CounterError.
CachegrindCounts parse_cachegrind_out(const std::string& text);

// Per function, by cachegrind's fn= name (demangled, with its parameters): the sum of its lines'
// counts over every file (fl=) it appears under. Throws CounterError with the line number of a
// count line outside a function or with more values than events.
using CachegrindFunctions = std::map<std::string, CachegrindCounts>;
CachegrindFunctions parse_cachegrind_functions(const std::string& text);

// Runs argv under `valgrind --tool=cachegrind --cache-sim=yes --branch-sim=yes` and returns the
// summary counts (and, when `functions` is given, fills it per function). Throws CounterError
// with valgrind's message when it fails.
CachegrindCounts run_cachegrind(const std::vector<std::string>& argv, CachegrindFunctions* functions = nullptr);

// Both runs of a case from one valgrind start-up. argv is a program that sets up once (decodes,
// lowers, instantiates) and then calls count_forked_pair below: it forks, the child makes N
// repetitions and the parent 2N, and each process writes its own counts when it ends. Starting
// valgrind and the program twice cost most of a small case's time. The two counts differ by N
// repetitions and by what the two processes do apart from them: glibc's fork returns to parent and
// child by different paths, and the parent waits for the child. Measured against two processes
// (glibc 2.36, a crc32 call of 83 M instructions): 943 instructions, 322 loads, 122 stores and 11
// simulated mispredicts more. Negligible against a call of millions of instructions (a kernel's);
// not for repetitions of a few thousand (the models' programs), which keep two processes.
// Throws CounterError.
struct CachegrindPair {
  CachegrindCounts once, twice;                      // N and 2N repetitions
  CachegrindFunctions once_functions, twice_functions;  // filled only when asked for
};
CachegrindPair run_cachegrind_pair(const std::vector<std::string>& argv, bool with_functions = false);

// In the counted program, after its set-up: forks; the child runs `repeat(n)`, this process
// `repeat(2 * n)` and then waits for the child. Both end with _exit (no destructors, no output
// flushed after the fork), so they end alike. Does not return when both succeed (status 0); a
// child that failed ends this process with status 1 and says so on stderr; an exception from this
// process's own repetitions is rethrown after the child is reaped. Not for a process with threads
// running: fork copies only the calling thread.
[[noreturn]] void count_forked_pair(uint64_t n, const std::function<void(uint64_t repetitions)>& repeat);

// counts(2N) - counts(N), per event. Signed: simulated cache misses depend on where the loader
// put things, so they may differ by a few either way; instruction, load and store counts do not.
std::map<std::string, int64_t> difference(const CachegrindCounts& twice, const CachegrindCounts& once);

// The same per function, over the functions of either run (a function one run lacks counts zero
// there, so a difference may be negative and the rows add up to the summary's); functions whose
// every difference is zero are left out.
std::map<std::string, std::map<std::string, int64_t>> difference(const CachegrindFunctions& twice, const CachegrindFunctions& once);

// Availability of the cachegrind events; counts only whole processes, so it never joins a Meter.
class ValgrindBackend final : public CounterBackend {
 public:
  std::string name() const override { return "valgrind"; }
  Availability probe(const std::string& native_event) override;
  std::unique_ptr<CounterGroup> open_group(const std::vector<std::string>& native_events) override;
  bool in_process() const override { return false; }
};

// The catalog's cachegrind metrics (cg_instructions, cg_loads, ...) with their availability here,
// as a RunResult lists its metrics; and, for one 2N - N difference, each metric's value (its
// formula applied, unscaled: per N work units), in the same order.
std::vector<MeteredMetric> cachegrind_metrics(const MetricCatalog& catalog);
std::vector<MetricValue> cachegrind_values(const MetricCatalog& catalog, const std::map<std::string, int64_t>& diff);

// An empty result of the "cachegrind-2n-minus-n" protocol (one deterministic sample per case,
// no warm-up, not pinned) with the cachegrind metrics; callers add one VariantSamples per case.
RunResult cachegrind_result(const MetricCatalog& catalog);

}  // namespace dlab
