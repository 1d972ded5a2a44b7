// Which backend counts each catalog metric on this machine, decided by opening the events.
// `dlab counters` prints a CounterPlan; Meter measures with it.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "dispatchlab/harness/counter_backend.h"
#include "dispatchlab/harness/metric_catalog.h"

namespace dlab {

// What the plan needs to know about the CPU (filled from the fingerprint).
struct HostCpu {
  std::string arch;        // "x86_64", "aarch64"
  std::string os;          // "linux", "darwin"
  std::string libpfm_pmu;  // libpfm4's detected core PMU, or ""
  int family = -1;
  int model = -1;
};
HostCpu this_host_cpu();

// The backends available to this build, by name. Backends that cannot exist here (kperf on
// Linux) are absent, so their sources are skipped.
class BackendSet {
 public:
  static BackendSet for_this_machine();
  void add(std::unique_ptr<CounterBackend> b);
  CounterBackend* find(const std::string& name) const;

 private:
  std::map<std::string, std::unique_ptr<CounterBackend>> backends_;
};

struct MetricCandidate {
  const MetricDef* metric = nullptr;
  const EventSource* source = nullptr;
  const MetricMapping* mapping = nullptr;  // null: the metric has no candidate source at all
  Availability availability;

  std::string backend() const { return source ? source->backend : ""; }
  std::string native_event() const { return mapping ? mapping->describe() : ""; }
};

struct CounterPlan {
  HostCpu host;
  std::string pmu_source;  // catalog key of the PMU source used for this CPU, or ""
  // Every (metric, source) pair considered, grouped by metric in catalog order, most specific
  // source first.
  std::vector<MetricCandidate> candidates;
  // Per metric: the first available candidate, or an unavailable one whose reason joins every
  // candidate's reason.
  std::vector<MetricCandidate> selected;

  const MetricCandidate* selection(const std::string& metric) const;
};

CounterPlan plan_counters(const MetricCatalog& catalog, BackendSet& backends, const HostCpu& host);

}  // namespace dlab
