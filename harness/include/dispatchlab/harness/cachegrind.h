// Deterministic counts where no PMU exists: valgrind's cachegrind with cache and branch
// simulation. It counts whole processes, so a measurement runs the same command with N and with
// 2N repetitions and keeps the difference, which removes start-up and driver costs exactly.
#pragma once

#include <cstdint>
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

// Runs argv under `valgrind --tool=cachegrind --cache-sim=yes --branch-sim=yes` and returns the
// summary counts. Throws CounterError with valgrind's message when it fails.
CachegrindCounts run_cachegrind(const std::vector<std::string>& argv);

// counts(2N) - counts(N), per event. Signed: simulated cache misses depend on where the loader
// put things, so they may differ by a few either way; instruction, load and store counts do not.
std::map<std::string, int64_t> difference(const CachegrindCounts& twice, const CachegrindCounts& once);

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
