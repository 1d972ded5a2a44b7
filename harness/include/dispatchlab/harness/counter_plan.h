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

// What the plan needs to know about the machine: facts, so that a plan for another CPU can be
// made in a test.
struct HostCpu {
  std::string arch;        // "x86_64", "aarch64"
  std::string os;          // "linux", "darwin"
  std::string libpfm_pmu;  // libpfm4's detected core PMU, or "": decides libpfm4 names vs raw codes
  std::string pmu_source;  // metric-catalog source from CPU identification (cpus.json), "" for none
  // "" when the kernel exposes a core PMU; else the reason every hardware metric is unavailable
  // ("no hardware PMU: VM (KVMKVMKVM) exposes no counters to this guest").
  std::string no_pmu;
  // "" natively; under an emulator its reason ("emulated: qemu-user (...)"): every hardware metric is
  // then unavailable with it, whatever would open (a translator's counts are of its own work).
  std::string emulated;
};
// This machine: identified through the CPU table, with the kernel's PMU.
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

  EventEncoding encoding = EventEncoding::libpfm4;  // how the PMU source's events are handed over
  // What the event measures beyond the measured thread: the backend's answer on this machine
  // ("package 0 (cpu 0)"), else the catalog's ("package"); "" for the thread's own events.
  std::string scope;
  // A source for another OS (task_power_info_v2 on Linux): listed, but never a reason here.
  bool other_os = false;

  std::string backend() const { return source ? source->backend : ""; }
  // The catalog's description of the events, with the scope where there is one:
  // "power/energy-pkg/ [scope: package 0 (cpu 0)]". Every row that names the event says it.
  std::string native_event() const {
    if (!mapping) return "";
    std::string d = mapping->describe(encoding);
    return scope.empty() || d.empty() ? d : d + " [scope: " + scope + "]";
  }
  const std::map<std::string, std::string>& inputs() const { return mapping->inputs_for(encoding); }
  // "libpfm4" or "raw" for PMU events; "" for software events and other backends.
  std::string encoding_name() const { return source && source->is_pmu_source() ? to_string(encoding) : ""; }
};

struct CounterPlan {
  HostCpu host;
  std::string pmu_source;  // catalog key of the PMU source used for this CPU, or ""
  EventEncoding encoding = EventEncoding::libpfm4;  // of that source's events here
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
