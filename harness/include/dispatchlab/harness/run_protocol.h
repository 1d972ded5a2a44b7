// The run protocol: how measured are run and sampled. One named object whose every parameter is
// written into every result row, so a number can always be traced to how it was taken.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dispatchlab/harness/cpu_identity.h"
#include "dispatchlab/harness/meter.h"
#include "dispatchlab/harness/statistics.h"

namespace dlab {

struct RunProtocol {
  std::string name = "interleaved-rounds-v1";
  // CPU to pin the measuring thread to: -1 = do not pin, -2 = the last CPU this process may use
  // (away from CPU 0, which takes most interrupts).
  int pin_cpu = -2;
  int warmup_rounds = 2;   // full rounds run and discarded (caches, predictors, page faults, clocks)
  int samples = 15;        // measured rounds
  // true: each round runs every case once, in the order given (A B A B ...), so slow drifts of
  // the machine hit all measured alike and samples pair up by round. false: all of A, then all of B.
  bool interleave = true;
  BootstrapOptions bootstrap;
  // Sampling until the intervals are narrow, not a fixed count (interleaved runs only): when
  // max_samples > samples, rounds go on past `samples` until every case's 95% CI of its ratio to
  // its baseline (or, with one case, of its median) has a half-width of at most stop_half_width
  // of the ratio, on the run's time metric (cycles where counted, else TSC ticks, else task
  // clock), or until max_samples rounds. 0: a fixed count of `samples`.
  int max_samples = 0;
  double stop_half_width = 0.02;

  nlohmann::json to_json() const;
  static RunProtocol from_json(const nlohmann::json& j);
  // For progress lines: "5 samples each" or "5 to 10 rounds each (on while an interval is wider than 2%)".
  std::string rounds_text() const;
};

struct MeasuredCase {
  std::string name;
  std::function<void()> run;
  // Work units one run performs (dispatches, iterations): values are reported per unit.
  double units = 1;
  std::string unit_name = "run";
  std::map<std::string, std::string> params;  // written into result rows (copies, order, ...)
  // The case this one's ratio is paired against, by name; empty: the experiment's first. A bench
  // whose cases answer several questions at once (each budget against the same engine unbudgeted)
  // names each case's own baseline, all of them still in one interleaved run.
  std::string baseline;
};

struct CaseSamples {
  std::string name;
  std::vector<std::vector<MetricValue>> samples;  // [round][metric], raw per-run values
};

struct RunResult {
  RunProtocol protocol;
  int pinned_cpu = -1;
  std::string pin_note;                     // why not pinned, when not; or what the pinned CPU is not (an E core)
  std::vector<MeteredMetric> metrics;
  std::vector<CaseSamples> cases;        // same order as the MeasuredCase list
  std::vector<std::string> execution_log;   // "warmup:A", "sample:B" ... in the order run
  int rounds = 0;                           // measured rounds taken (samples, or more when adaptive)
  std::string stop_note;                    // adaptive: why sampling stopped where it did
};

// The adaptive rule's check after a round: the metric it reads (the run's time metric, or -1 when
// no metric has values) and the widest half-width of a case's ratio CI, relative to the ratio,
// with that case's name. Exposed for the tests.
struct StopCheck {
  int metric = -1;
  double widest = 0;
  std::string widest_case;
};
StopCheck check_intervals(const RunResult& r, const std::vector<MeasuredCase>& measured, const BootstrapOptions& bootstrap);

// Called after every measured run with (done, total).
using ProgressFn = std::function<void(int done, int total, const std::string& case_name)>;

// The result of counts taken once per case outside a Meter (cachegrind's, a simulation's): one
// sample, no warm-up, not interleaved, not pinned (`pin_note` says why that does not matter).
RunResult single_count_result(std::string protocol_name, std::string pin_note);

// Pins (if asked), warms up, and samples every case under the protocol.
RunResult run_protocol(const RunProtocol& protocol, Meter& meter, const std::vector<MeasuredCase>& measured,
                       const ProgressFn& progress = {});

// Pins the calling thread to `cpu` (-2: the last allowed CPU of the kind measurements run on, the
// performance cores of a heterogeneous chip). Returns the CPU, or -1 with `note` set; `note` also
// says when the CPU is not of the measuring kind.
int pin_this_thread(int cpu, std::string& note);
// The CPU pin_this_thread takes for `requested` (-2, or a CPU) among `allowed` (sorted), on a chip
// `id` describes; -1 with `note` set when none. Pure, so heterogeneous chips are tested anywhere.
int choose_pin_cpu(int requested, const std::vector<int>& allowed, const CpuIdentity& id, std::string& note);

}  // namespace dlab
