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
  std::string note;        // said with every available candidate (what the number covers)
};

// How one source counts one metric: a single event, a formula over several events that must be
// read together, or an explicit statement that the source cannot count it.
// How a PMU source's events are handed to the kernel: by libpfm4 name when libpfm4 detected this
// CPU's PMU (and so vouches for its tables), else as the raw codes the catalog keeps beside the
// names. Kernel software events and other backends are always "libpfm4"/their own names.
enum class EventEncoding { libpfm4, raw };
const char* to_string(EventEncoding e);

struct MetricMapping {
  std::string metric;
  std::map<std::string, std::string> inputs;      // formula name -> native event (one entry "value" for a plain event)
  std::map<std::string, std::string> raw_inputs;  // the same inputs as raw codes (PMU sources with a raw table)
  std::optional<Formula> formula;            // absent: the metric is inputs.at("value")
  std::set<std::string> backend_constants;   // formula names the backend supplies (a calibration)
  std::string none_reason;                   // non-empty: this source has no event for the metric
  std::string note;
  // What the event measures beyond the measured thread ("package", "task"), when the backend
  // cannot resolve it further (see CounterBackend::scope); "" for the thread's own events.
  std::string scope;

  bool counted() const { return none_reason.empty(); }
  // The inputs in an encoding: raw_inputs for raw (empty when the catalog has no raw code for one).
  const std::map<std::string, std::string>& inputs_for(EventEncoding e) const { return e == EventEncoding::raw ? raw_inputs : inputs; }
  // "skl::UNHALTED_CORE_CYCLES" or "be=perf_raw::r02a4, slots=icl::TOPDOWN:SLOTS_P; be / slots".
  std::string describe(EventEncoding e = EventEncoding::libpfm4) const;
};

struct EventSource {
  std::string key;      // "intel_icl", "software", "tsc", ...
  std::string backend;  // "perf_event", "papi", "tsc", "kperf"
  std::string arch;     // "x86_64", "aarch64", or empty for any
  std::string os;       // "darwin", or empty for Linux
  std::string vendor;   // CPUID vendor string, or empty
  std::vector<std::string> libpfm_pmus;  // libpfm4 PMUs whose detection vouches for these names
  std::map<std::string, std::string> raw;  // event name -> perf_raw code (checked against libpfm4 in a test)
  bool names_are_raw = false;              // every event is written as a perf_raw code already
  bool fallback = false;  // used only when no PMU-specific source matches
  // An energy interface (RAPL, task_power_info_v2), not a core PMU: its metrics are not hardware
  // metrics a missing core PMU explains.
  bool energy = false;
  std::string note;
  std::vector<MetricMapping> mappings;

  const MetricMapping* find(const std::string& metric) const;
  // Whether this source is about a CPU's PMU (as opposed to software events, PAPI or the TSC).
  bool is_pmu_source() const {
    return !energy && (!libpfm_pmus.empty() || !raw.empty() || fallback || backend == "kperf");
  }
  // libpfm4 names when libpfm4 detected one of this source's PMUs, else raw codes. Sources with no
  // raw table (generic, software) always use their names.
  EventEncoding encoding_for(const std::string& detected_libpfm_pmu) const;
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

  // The PMU source that lists a libpfm4 PMU name (for CPUs the CPU table does not know), or null.
  const EventSource* source_for_libpfm_pmu(const std::string& arch, const std::string& libpfm_pmu) const;
  // The generic fallback for an architecture (the kernel's generic hardware events), or null.
  const EventSource* fallback_source(const std::string& arch) const;
  // Whether any PMU source maps `metric` (counted or with a reason): a hardware metric, which
  // a machine without a PMU cannot count whatever the source.
  bool is_hardware_metric(const std::string& metric) const;

 private:
  std::vector<MetricDef> metrics_;
  std::vector<EventSource> sources_;
};

}  // namespace dlab
