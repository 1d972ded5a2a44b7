// Meter: measures a region of code with every selected metric of a CounterPlan. Each metric's
// inputs are one counter group (so a ratio's numerator and denominator are read together); groups
// nest with the TSC innermost, so the timestamp brackets the region most tightly.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dispatchlab/harness/counter_plan.h"

namespace dlab {

struct MetricValue {
  std::optional<double> value;     // nullopt: unavailable, see `reason`
  std::string reason;              // why unavailable (empty when measured)
  double running_fraction = 1.0;   // lowest time_running/time_enabled of the metric's inputs
  std::string read_method;         // how the counters were read for this sample
};

struct MeteredMetric {
  std::string name;
  std::string unit;
  std::string backend;       // empty when unavailable with no backend
  std::string native_event;  // catalog description of the events
  bool estimated = false;
  Availability availability;
  std::string encoding;      // "libpfm4" or "raw" for PMU events, "" otherwise
};

class Meter {
 public:
  // `metrics`: names to measure (empty: every catalog metric). Metrics the plan marks unavailable
  // are kept and reported as unavailable in every sample.
  Meter(const CounterPlan& plan, BackendSet& backends, const std::vector<std::string>& metrics = {});
  ~Meter();

  const std::vector<MeteredMetric>& metrics() const { return metrics_; }
  // One sample: the values are in the order of metrics().
  std::vector<MetricValue> measure(const std::function<void()>& region);

 private:
  struct Slot;
  std::vector<MeteredMetric> metrics_;
  std::vector<std::unique_ptr<Slot>> slots_;  // one per metric, same order
  std::vector<size_t> start_order_;           // slot indices, outermost first
};

}  // namespace dlab
