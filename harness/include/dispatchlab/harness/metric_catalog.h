// The metric catalog: abstract metrics (cycles, memory_order_flushes, ...) and, per event source
// (a PMU family, the kernel's software events, PAPI, the TSC), the native events that count them.
// The data lives in harness/catalog/metrics.json, embedded into the binary at build time, so that
// there is exactly one list of events; this header only gives it types.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "dispatchlab/harness/formula.h"

namespace dlab {

struct MetricDef {
  std::string name;
  std::string unit;
  std::string description;
  bool estimated = false;  // the value is derived from a model, not counted
};

// How one source counts one metric: a single event, a formula over several events that must be
// read together, or an explicit statement that the source cannot count it.
struct MetricMapping {
  std::string metric;
  std::map<std::string, std::string> inputs;  // formula name -> native event (one entry "value" for a plain event)
  std::optional<Formula> formula;            // absent: the metric is inputs.at("value")
  std::set<std::string> backend_constants;   // formula names the backend supplies (a calibration)
  std::string none_reason;                   // non-empty: this source has no event for the metric
  std::string note;

  bool counted() const { return none_reason.empty(); }
  // "skl::UNHALTED_CORE_CYCLES" or "be=perf_raw::r02a4, slots=icl::TOPDOWN:SLOTS_P; be / slots".
  std::string describe() const;
};

struct EventSource {
  std::string key;      // "intel_icl", "software", "tsc", ...
  std::string backend;  // "perf_event", "papi", "tsc", "kperf"
  std::string arch;     // "x86_64", "aarch64", or empty for any
  std::string os;       // "darwin", or empty for Linux
  std::string vendor;   // CPUID vendor string, or empty
  std::vector<std::string> libpfm_pmus;  // libpfm4 PMU names this source's events are for
  std::vector<std::pair<int, int>> cpu_models;  // (family, model) matched when libpfm4 lacks the PMU
  bool fallback = false;  // used only when no PMU-specific source matches
  std::string note;
  std::vector<MetricMapping> mappings;

  const MetricMapping* find(const std::string& metric) const;
  // Whether this source is about a CPU's PMU (as opposed to software events, PAPI or the TSC).
  bool is_pmu_source() const { return !libpfm_pmus.empty() || !cpu_models.empty() || fallback; }
};

class MetricCatalog {
 public:
  // The catalog compiled into this binary (harness/catalog/metrics.json at build time).
  static const MetricCatalog& builtin();
  // Throws std::runtime_error naming the file and the offending entry.
  static MetricCatalog from_json_text(const std::string& text, const std::string& origin);
  static MetricCatalog from_file(const std::string& path);

  const std::vector<MetricDef>& metrics() const { return metrics_; }
  const std::vector<EventSource>& sources() const { return sources_; }
  const MetricDef* metric(const std::string& name) const;
  const EventSource* source(const std::string& key) const;

  // The PMU source for this CPU: by libpfm4 PMU name first, then by CPUID family/model, then the
  // generic fallback. Never null on an architecture that has a fallback entry.
  const EventSource* pmu_source_for(const std::string& arch, const std::string& libpfm_pmu,
                                    int family, int model) const;

 private:
  std::vector<MetricDef> metrics_;
  std::vector<EventSource> sources_;
};

}  // namespace dlab
