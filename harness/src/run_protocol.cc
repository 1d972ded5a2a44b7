#include "dispatchlab/harness/run_protocol.h"

#include <sched.h>

#include <cerrno>
#include <cstring>

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace dlab {

nlohmann::json RunProtocol::to_json() const {
  return {{"name", name},
          {"pin_cpu", pin_cpu},
          {"warmup_rounds", warmup_rounds},
          {"samples", samples},
          {"interleave", interleave},
          {"bootstrap_resamples", bootstrap.resamples},
          {"bootstrap_seed", bootstrap.seed}};
}

RunProtocol RunProtocol::from_json(const nlohmann::json& j) {
  RunProtocol p;
  p.name = j.at("name");
  p.pin_cpu = j.at("pin_cpu");
  p.warmup_rounds = j.at("warmup_rounds");
  p.samples = j.at("samples");
  p.interleave = j.at("interleave");
  p.bootstrap.resamples = j.at("bootstrap_resamples");
  p.bootstrap.seed = j.at("bootstrap_seed");
  return p;
}

int pin_this_thread(int cpu, std::string& note) {
  if (cpu == -1) {
    note = "not pinned (protocol pin_cpu=-1)";
    return -1;
  }
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) {
    note = fmt::format("not pinned: sched_getaffinity: {}", std::strerror(errno));
    return -1;
  }
  std::vector<int> allowed_cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &allowed)) allowed_cpus.push_back(c);
  std::string kind_note;
  cpu = choose_pin_cpu(cpu, allowed_cpus, this_cpu_identity(), kind_note);
  if (cpu < 0) {
    note = kind_note;
    return -1;
  }
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  if (sched_setaffinity(0, sizeof one, &one) != 0) {
    note = fmt::format("not pinned: sched_setaffinity({}): {}", cpu, std::strerror(errno));
    return -1;
  }
  note = kind_note;
  return cpu;
}

int choose_pin_cpu(int requested, const std::vector<int>& allowed, const CpuIdentity& id, std::string& note) {
  note.clear();
  auto is_allowed = [&](int c) { return std::find(allowed.begin(), allowed.end(), c) != allowed.end(); };
  std::vector<int> measuring = id.measuring_cpus();
  auto kind_name = [&](int c) { return id.core_of(c).empty() ? std::string("unknown") : id.core_of(c); };
  if (requested == -2) {
    for (auto it = measuring.rbegin(); it != measuring.rend(); ++it)
      if (is_allowed(*it)) return *it;
    if (allowed.empty()) {
      note = "not pinned: this process may run on no CPU";
      return -1;
    }
    int c = allowed.back();
    if (!measuring.empty())
      note = fmt::format("no {} core (CPUs {}) is in this process's affinity mask: pinned to CPU {}, a {} core", kind_name(measuring.front()),
                         fmt::join(measuring, ","), c, kind_name(c));
    return c;
  }
  if (requested < 0 || requested >= CPU_SETSIZE || !is_allowed(requested)) {
    note = fmt::format("not pinned: CPU {} is not in this process's affinity mask", requested);
    return -1;
  }
  if (!measuring.empty() && std::find(measuring.begin(), measuring.end(), requested) == measuring.end()) {
    std::string pmu = id.measuring_kernel_pmu();
    note = fmt::format("CPU {} is a {} core, not a {} one{}", requested, kind_name(requested), kind_name(measuring.front()),
                       pmu.empty() ? "" : fmt::format(": hardware events are bound to {}, which does not count there", pmu));
  }
  return requested;
}

RunResult run_protocol(const RunProtocol& protocol, Meter& meter, const std::vector<Variant>& variants,
                       const ProgressFn& progress) {
  if (variants.empty()) throw std::invalid_argument("run_protocol: no variants");
  if (protocol.samples < 1) throw std::invalid_argument("run_protocol: samples must be at least 1");
  RunResult r;
  r.protocol = protocol;
  r.metrics = meter.metrics();
  r.pinned_cpu = pin_this_thread(protocol.pin_cpu, r.pin_note);
  for (const auto& v : variants) r.variants.push_back({v.name, {}});

  const int total = protocol.samples * static_cast<int>(variants.size());
  int done = 0;
  auto one = [&](size_t vi, bool measured) {
    auto values = meter.measure(variants[vi].run);
    r.execution_log.push_back((measured ? "sample:" : "warmup:") + variants[vi].name);
    if (!measured) return;
    r.variants[vi].samples.push_back(std::move(values));
    if (progress) progress(++done, total, variants[vi].name);
  };
  if (protocol.interleave) {
    for (int w = 0; w < protocol.warmup_rounds; ++w)
      for (size_t vi = 0; vi < variants.size(); ++vi) one(vi, false);
    for (int s = 0; s < protocol.samples; ++s)
      for (size_t vi = 0; vi < variants.size(); ++vi) one(vi, true);
  } else {
    for (size_t vi = 0; vi < variants.size(); ++vi) {
      for (int w = 0; w < protocol.warmup_rounds; ++w) one(vi, false);
      for (int s = 0; s < protocol.samples; ++s) one(vi, true);
    }
  }
  return r;
}

}  // namespace dlab
