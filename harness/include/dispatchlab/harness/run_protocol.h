// The run protocol: how variants are run and sampled. One named object whose every parameter is
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
  // true: each round runs every variant once, in the order given (A B A B ...), so slow drifts of
  // the machine hit all variants alike and samples pair up by round. false: all of A, then all of B.
  bool interleave = true;
  BootstrapOptions bootstrap;

  nlohmann::json to_json() const;
  static RunProtocol from_json(const nlohmann::json& j);
};

struct Variant {
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

struct VariantSamples {
  std::string variant;
  std::vector<std::vector<MetricValue>> samples;  // [round][metric], raw per-run values
};

struct RunResult {
  RunProtocol protocol;
  int pinned_cpu = -1;
  std::string pin_note;                     // why not pinned, when not; or what the pinned CPU is not (an E core)
  std::vector<MeteredMetric> metrics;
  std::vector<VariantSamples> variants;     // same order as the Variant list
  std::vector<std::string> execution_log;   // "warmup:A", "sample:B" ... in the order run
};

// Called after every measured run with (done, total).
using ProgressFn = std::function<void(int done, int total, const std::string& variant)>;

// Pins (if asked), warms up, and samples every variant under the protocol.
RunResult run_protocol(const RunProtocol& protocol, Meter& meter, const std::vector<Variant>& variants,
                       const ProgressFn& progress = {});

// Pins the calling thread to `cpu` (-2: the last allowed CPU of the kind measurements run on, the
// performance cores of a heterogeneous chip). Returns the CPU, or -1 with `note` set; `note` also
// says when the CPU is not of the measuring kind.
int pin_this_thread(int cpu, std::string& note);
// The CPU pin_this_thread takes for `requested` (-2, or a CPU) among `allowed` (sorted), on a chip
// `id` describes; -1 with `note` set when none. Pure, so heterogeneous chips are tested anywhere.
int choose_pin_cpu(int requested, const std::vector<int>& allowed, const CpuIdentity& id, std::string& note);

}  // namespace dlab
