#include "dispatchlab/harness/run_protocol.h"

#include <sched.h>

#include <cerrno>
#include <cstring>

#include <algorithm>
#include <limits>

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
          {"bootstrap_seed", bootstrap.seed},
          {"max_samples", max_samples},
          {"stop_half_width", stop_half_width},
          {"stop_rule", max_samples > samples ? fmt::format("sample from {} to {} rounds, stopping after the first round in which every "
                                                            "case's 95% CI of its ratio to its baseline has a half-width of at most "
                                                            "{:g}% of the ratio (the time metric: cycles, else tsc_ticks, else task_clock)",
                                                            samples, max_samples, stop_half_width * 100)
                                              : fmt::format("a fixed {} rounds", samples)}};
}

std::string RunProtocol::rounds_text() const {
  if (interleave && max_samples > samples)
    return fmt::format("{} to {} rounds each (on while an interval is wider than {:g}%)", samples, max_samples, stop_half_width * 100);
  return fmt::format("{} samples each", samples);
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
  p.max_samples = j.value("max_samples", 0);  // absent before the adaptive rule: a fixed count
  p.stop_half_width = j.value("stop_half_width", 0.02);
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

StopCheck check_intervals(const RunResult& r, const std::vector<MeasuredCase>& cases, const BootstrapOptions& bootstrap) {
  StopCheck c;
  for (const char* name : {"cycles", "tsc_ticks", "task_clock"}) {
    for (size_t m = 0; m < r.metrics.size() && c.metric < 0; ++m)
      if (r.metrics[m].name == name && !r.cases.empty() && !r.cases[0].samples.empty() && r.cases[0].samples[0][m].value)
        c.metric = static_cast<int>(m);
    if (c.metric >= 0) break;
  }
  if (c.metric < 0) return c;
  // The rounds in which both cases (or the one) have a value: a missing one is left out, never
  // read as zero.
  auto paired = [&](size_t a, size_t b, std::vector<double>& x, std::vector<double>& y) {
    const auto& sa = r.cases[a].samples;
    const auto& sb = r.cases[b].samples;
    for (size_t k = 0; k < sa.size() && k < sb.size(); ++k)
      if (sa[k][c.metric].value && sb[k][c.metric].value) {
        x.push_back(*sa[k][c.metric].value);
        y.push_back(*sb[k][c.metric].value);
      }
  };
  auto index_of = [&](const std::string& name) {
    for (size_t i = 0; i < cases.size(); ++i)
      if (cases[i].name == name) return i;
    return size_t{0};
  };
  for (size_t vi = 0; vi < cases.size(); ++vi) {
    size_t base = cases[vi].baseline.empty() ? 0 : index_of(cases[vi].baseline);
    if (base == vi && cases.size() > 1) continue;  // a baseline: its cases' ratios carry its noise
    std::vector<double> x, y;
    paired(vi, base, x, y);
    // No value in any round: nothing narrows it, so the rule never stops on it.
    double half = std::numeric_limits<double>::infinity();
    if (!x.empty() && base == vi) {
      Summary s = summarize(x, bootstrap);
      if (s.median > 0) half = (s.ci95_hi - s.ci95_lo) / 2 / s.median;
    } else if (!x.empty()) {
      Comparison cmp = compare_paired(x, y, bootstrap);
      if (cmp.ratio_of_medians > 0) half = (cmp.ratio_ci95_hi - cmp.ratio_ci95_lo) / 2 / cmp.ratio_of_medians;
    }
    if (half >= c.widest) c.widest = half, c.widest_case = cases[vi].name;
  }
  return c;
}

RunResult single_count_result(std::string protocol_name, std::string pin_note) {
  RunResult r;
  r.protocol.name = std::move(protocol_name);
  r.protocol.samples = 1;
  r.protocol.warmup_rounds = 0;
  r.protocol.interleave = false;
  r.protocol.pin_cpu = -1;
  r.pin_note = std::move(pin_note);
  r.rounds = 1;
  return r;
}

RunResult run_protocol(const RunProtocol& protocol, Meter& meter, const std::vector<MeasuredCase>& cases,
                       const ProgressFn& progress) {
  if (cases.empty()) throw std::invalid_argument("run_protocol: no cases");
  if (protocol.samples < 1) throw std::invalid_argument("run_protocol: samples must be at least 1");
  const bool adaptive = protocol.interleave && protocol.max_samples > protocol.samples;
  if (adaptive && !(protocol.stop_half_width > 0)) throw std::invalid_argument("run_protocol: stop_half_width must be positive");
  RunResult r;
  r.protocol = protocol;
  r.metrics = meter.metrics();
  r.pinned_cpu = pin_this_thread(protocol.pin_cpu, r.pin_note);
  for (const auto& v : cases) r.cases.push_back({v.name, {}});

  int total = (adaptive ? protocol.max_samples : protocol.samples) * static_cast<int>(cases.size());
  int done = 0;
  auto one = [&](size_t vi, bool measured) {
    auto values = meter.measure(cases[vi].run);
    r.execution_log.push_back((measured ? "sample:" : "warmup:") + cases[vi].name);
    if (!measured) return;
    r.cases[vi].samples.push_back(std::move(values));
    if (progress) progress(++done, total, cases[vi].name);
  };
  if (protocol.interleave) {
    for (int w = 0; w < protocol.warmup_rounds; ++w)
      for (size_t vi = 0; vi < cases.size(); ++vi) one(vi, false);
    const int most = adaptive ? protocol.max_samples : protocol.samples;
    for (int s = 0; s < most; ++s) {
      for (size_t vi = 0; vi < cases.size(); ++vi) one(vi, true);
      r.rounds = s + 1;
      if (!adaptive || r.rounds < protocol.samples) continue;
      // The bootstrap here uses the protocol's seed and resamples, so the interval that stopped
      // the run is the one its summary rows report. It runs between rounds, never inside a
      // measurement: its data are a few doubles per case, so the next round's first case meets
      // caches much as the previous round's last case left them.
      StopCheck c = check_intervals(r, cases, protocol.bootstrap);
      if (c.metric < 0) {
        r.stop_note = fmt::format("{} rounds: no time metric has values, so the intervals cannot be checked", r.rounds);
        break;
      }
      if (c.widest <= protocol.stop_half_width) {
        r.stop_note = fmt::format("stopped after {} rounds: every interval's half-width at most {:g}% ({} widest, {:.2f}%)", r.rounds,
                                  protocol.stop_half_width * 100, c.widest_case, c.widest * 100);
        break;
      }
      if (r.rounds == most)
        r.stop_note = fmt::format("stopped at the most rounds, {}: {} still {:.2f}% (the rule: {:g}%)", r.rounds, c.widest_case,
                                  c.widest * 100, protocol.stop_half_width * 100);
    }
  } else {
    for (size_t vi = 0; vi < cases.size(); ++vi) {
      for (int w = 0; w < protocol.warmup_rounds; ++w) one(vi, false);
      for (int s = 0; s < protocol.samples; ++s) one(vi, true);
    }
    r.rounds = protocol.samples;
  }
  return r;
}

}  // namespace dlab
