#include "dispatchlab/harness/counter_plan.h"

#include <sys/utsname.h>

#include <fmt/format.h>

#include "dispatchlab/harness/cachegrind.h"
#include "dispatchlab/harness/cpu_identity.h"
#include "dispatchlab/harness/emulation.h"
#include "dispatchlab/harness/papi_backend.h"
#include "dispatchlab/harness/perf_event_backend.h"
#include "dispatchlab/harness/powercap.h"
#include "dispatchlab/harness/rapl_perf.h"
#include "dispatchlab/harness/tsc.h"
#include "platform.h"

namespace dlab {

HostCpu this_host_cpu() {
  HostCpu h;
  utsname u;
  uname(&u);
  h.arch = u.machine;
  h.os = "linux";
  h.libpfm_pmu = detect_core_pmu().name;
  h.pmu_source = this_cpu_identity().catalog_source;
  h.no_pmu = platform::no_core_pmu_reason();
  h.emulated = this_process_emulation().reason();
  return h;
}

BackendSet BackendSet::for_this_machine() {
  BackendSet s;
  s.add(std::make_unique<PerfEventBackend>());
  s.add(std::make_unique<PapiBackend>());
  s.add(std::make_unique<TscBackend>());
  s.add(std::make_unique<ValgrindBackend>());
  s.add(std::make_unique<RaplPerfBackend>());
  s.add(std::make_unique<PowercapBackend>());
  return s;
}

void BackendSet::add(std::unique_ptr<CounterBackend> b) {
  std::string n = b->name();
  backends_[n] = std::move(b);
}

CounterBackend* BackendSet::find(const std::string& name) const {
  auto it = backends_.find(name);
  return it == backends_.end() ? nullptr : it->second.get();
}

const MetricCandidate* CounterPlan::selection(const std::string& metric) const {
  for (const auto& c : selected)
    if (c.metric->name == metric) return &c;
  return nullptr;
}

namespace {

class Prober {
 public:
  explicit Prober(BackendSet& b) : backends_(b) {}

  Availability mapping(const EventSource& src, const MetricMapping& m, const MetricDef& def, EventEncoding encoding) {
    if (!m.counted()) return Availability::no(m.none_reason);
    CounterBackend* b = backends_.find(src.backend);
    if (!b) return Availability::no(fmt::format("no {} backend in this build", src.backend));
    for (const auto& name : m.backend_constants)
      if (Availability a = b->constant_availability(name); !a.available) return a;
    std::vector<std::string> events;
    std::string event_caveat;
    for (const auto& [name, ev] : m.inputs_for(encoding)) {
      Availability a = event(*b, ev);
      if (!a.available) return a;
      if (event_caveat.empty()) event_caveat = a.reason;
      events.push_back(ev);
    }
    // Inputs of a formula are read as one group; check that they fit together. Whole-process
    // backends (cachegrind) have no groups: they read every event of the run at once.
    if (events.size() > 1 && b->in_process()) {
      try {
        b->open_group(events);
      } catch (const CounterError& e) {
        return Availability::no(std::string("inputs cannot be counted as one group: ") + e.what());
      }
    }
    std::string caveat = def.estimated ? "estimated" : "";
    for (const auto& extra : {def.note, m.note, event_caveat})
      if (!extra.empty()) caveat += (caveat.empty() ? "" : ": ") + extra;
    return Availability::yes(caveat);
  }

  // The backend's scope of a one-event mapping on this machine ("package 0 (cpu 0)"), or "".
  std::string scope(const EventSource& src, const MetricMapping& m, EventEncoding encoding) {
    CounterBackend* b = backends_.find(src.backend);
    const auto& in = m.inputs_for(encoding);
    if (!b || in.size() != 1) return "";
    return b->scope(in.begin()->second);
  }

 private:
  Availability event(CounterBackend& b, const std::string& ev) {
    auto key = b.name() + "\n" + ev;
    auto it = cache_.find(key);
    if (it == cache_.end()) it = cache_.emplace(key, b.probe(ev)).first;
    return it->second;
  }
  BackendSet& backends_;
  std::map<std::string, Availability> cache_;
};

constexpr const char* kEmulatedCounters = "; hardware counters under a translator count its work, not this program's";

std::string with_no_pmu(const HostCpu& host, const std::string& reason) {
  if (host.no_pmu.empty() || reason.rfind(host.no_pmu, 0) == 0) return reason;
  return host.no_pmu + "; " + reason;
}

}  // namespace

CounterPlan plan_counters(const MetricCatalog& catalog, BackendSet& backends, const HostCpu& host) {
  CounterPlan plan;
  plan.host = host;
  const EventSource* pmu = catalog.source(host.pmu_source);
  if (pmu) {
    plan.pmu_source = pmu->key;
    plan.encoding = pmu->encoding_for(host.libpfm_pmu);
  }
  auto other_os = [&](const EventSource& s) { return !s.is_pmu_source() && !s.os.empty() && s.os != host.os; };
  auto applies = [&](const EventSource& s) {
    if (s.is_pmu_source()) return &s == pmu;
    if (other_os(s)) return true;  // listed, with the reason below
    return s.arch.empty() || s.arch == host.arch;
  };
  Prober prober(backends);
  for (const auto& def : catalog.metrics()) {
    size_t first = plan.candidates.size();
    for (const auto& src : catalog.sources()) {
      if (!applies(src)) continue;
      const MetricMapping* m = src.find(def.name);
      if (!m) continue;
      EventEncoding enc = &src == pmu ? plan.encoding : EventEncoding::libpfm4;
      MetricCandidate c{&def, &src, m, {}, enc};
      if (other_os(src)) {
        c.other_os = true;
        std::string why = fmt::format("source {} is for {} only: not implemented on this OS ({})", src.key, src.os, host.os);
        if (!m->counted()) why += fmt::format("; on {}: {}", src.os, m->none_reason);
        c.availability = Availability::no(why);
      } else if (!host.emulated.empty() && catalog.is_hardware_metric(def.name)) {
        c.availability = Availability::no(host.emulated + kEmulatedCounters);
      } else {
        c.availability = prober.mapping(src, *m, def, enc);
        // Without a PMU no hardware event counts, whatever the source maps: that is said first.
        if (!c.availability.available && src.is_pmu_source()) c.availability.reason = with_no_pmu(host, c.availability.reason);
      }
      c.scope = m->counted() && !c.other_os ? prober.scope(src, *m, enc) : "";
      if (c.scope.empty()) c.scope = m->scope;
      plan.candidates.push_back(std::move(c));
    }
    if (plan.candidates.size() == first) {
      std::string why = fmt::format("no event source for this CPU ({}) maps this metric", pmu ? pmu->key : host.arch);
      if (catalog.is_hardware_metric(def.name)) why = with_no_pmu(host, why);
      plan.candidates.push_back({&def, nullptr, nullptr, Availability::no(why)});
    }
    const MetricCandidate* chosen = nullptr;
    std::string reasons, other_os_reasons;
    for (size_t i = first; i < plan.candidates.size(); ++i) {
      const auto& c = plan.candidates[i];
      if (c.availability.available) {
        chosen = &c;
        break;
      }
      // The machine's no-PMU reason is said once, first (below), not once per candidate.
      std::string why = c.availability.reason;
      if (!host.no_pmu.empty() && why.rfind(host.no_pmu + "; ", 0) == 0) why.erase(0, host.no_pmu.size() + 2);
      // Another OS's source is no reason this machine lacks the metric, unless it is the only one.
      std::string& into = c.other_os ? other_os_reasons : reasons;
      if (!into.empty()) into += "; ";
      into += (c.source ? c.source->backend + ": " : "") + why;
    }
    if (reasons.empty()) reasons = other_os_reasons;
    // Under emulation the machine's reason is the only one a hardware metric needs.
    if (!chosen && !host.emulated.empty() && catalog.is_hardware_metric(def.name)) reasons = host.emulated + kEmulatedCounters;
    if (chosen) {
      plan.selected.push_back(*chosen);
    } else {
      if (catalog.is_hardware_metric(def.name) && host.emulated.empty()) reasons = with_no_pmu(host, reasons);
      MetricCandidate none = plan.candidates[first];
      none.availability = Availability::no(reasons);
      plan.selected.push_back(none);
    }
  }
  return plan;
}

}  // namespace dlab
