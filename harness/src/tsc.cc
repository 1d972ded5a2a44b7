#include "dispatchlab/harness/tsc.h"

#include <time.h>

#include <algorithm>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "dispatchlab/harness/latency_chains.h"
#include "platform.h"
#include "dispatchlab/harness/quote.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <x86intrin.h>
#endif

namespace dlab {

#if defined(__x86_64__)
uint64_t tsc_begin() {
  _mm_lfence();
  uint64_t t = __rdtsc();
  _mm_lfence();
  return t;
}
uint64_t tsc_end() {
  unsigned aux;
  uint64_t t = __rdtscp(&aux);
  _mm_lfence();
  return t;
}
static const char* kCounterName = "rdtsc";
static bool tsc_invariant() {
  unsigned a, b, c, d;
  if (!__get_cpuid(0x80000007, &a, &b, &c, &d)) return false;
  return (d >> 8) & 1;  // CPUID.80000007H:EDX[8] invariant TSC
}
#elif defined(__aarch64__)
uint64_t tsc_begin() {
  uint64_t t;
  asm volatile("isb\n\tmrs %0, cntvct_el0\n\tisb" : "=r"(t)::"memory");
  return t;
}
uint64_t tsc_end() { return tsc_begin(); }
static const char* kCounterName = "cntvct_el0";
static bool tsc_invariant() { return true; }  // the generic timer runs at a fixed frequency by architecture
#else
#error "dispatchlab's TSC backend supports x86-64 and arm64"
#endif

namespace {

double raw_seconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// A (clock, tsc) pair read as close together as we can: the tsc read bracketed by two clock reads,
// keeping the tightest of a few tries, so an interrupt between the reads does not skew the pair.
std::pair<double, uint64_t> paired_read() {
  double best_gap = 1e9, best_clock = 0;
  uint64_t best_tsc = 0;
  for (int i = 0; i < 16; ++i) {
    double a = raw_seconds();
    uint64_t t = tsc_begin();
    double b = raw_seconds();
    if (b - a < best_gap) {
      best_gap = b - a;
      best_clock = (a + b) / 2;
      best_tsc = t;
    }
  }
  return {best_clock, best_tsc};
}

}  // namespace

double measure_tsc_hz(int interval_ms) {
  auto [c0, t0] = paired_read();
  std::this_thread::sleep_for(std::chrono::milliseconds(interval_ms));
  auto [c1, t1] = paired_read();
  return static_cast<double>(t1 - t0) / (c1 - c0);
}

namespace {

// A trial can only be slowed down by what else happens on the machine (an interrupt, another
// guest, a preempting process), never sped up: the fastest trial of a chain is the one without
// interference. On a busy 2-vCPU VM the median of either chain can be hit and the two then
// disagree for a reason that has nothing to do with the core.
double fastest_of(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }

// "imul" from "imul r64, r64": how a message names a chain.
std::string mnemonic(const std::string& instruction) { return instruction.substr(0, instruction.find(' ')); }

}  // namespace

TscCalibration judge_tsc_calibration(double tsc_hz, bool invariant, const std::string& counter,
                                     const std::vector<ChainTiming>& timings, double tolerance) {
  TscCalibration c;
  c.tsc_hz = tsc_hz;
  c.invariant = invariant;
  c.counter = counter;
  c.tolerance = tolerance;
  for (const auto& t : timings) {
    ChainCalibration cc;
    cc.chain = t.chain;
    cc.instruction = t.instruction;
    cc.latency_cycles = t.latency_cycles;
    cc.trials = static_cast<int>(t.ticks_per_op.size());
    if (!t.ticks_per_op.empty()) {
      cc.ticks_per_op = fastest_of(t.ticks_per_op);
      if (t.latency_cycles && cc.ticks_per_op > 0) {
        auto [lo, hi] = std::minmax_element(t.ticks_per_op.begin(), t.ticks_per_op.end());
        cc.cycles_per_tick = *t.latency_cycles / cc.ticks_per_op;
        cc.cycles_per_tick_min = *t.latency_cycles / *hi;
        cc.cycles_per_tick_max = *t.latency_cycles / *lo;
      }
    }
    c.chains.push_back(cc);
  }
  auto rates = [&] {
    std::string s;
    for (const auto& cc : c.chains)
      s += fmt::format("{}{} {}", s.empty() ? "" : ", ", mnemonic(cc.instruction),
                       cc.cycles_per_tick ? fmt::format("{:.3f}", *cc.cycles_per_tick)
                                          : fmt::format("? ({:.4f} ticks/op, latency unknown)", cc.ticks_per_op));
    return s + " cycles/tick";
  };
  if (c.chains.size() < 2) {
    c.refused = "calibration needs a chain and a cross-check chain";
    return c;
  }
  const auto& p = c.chains[0];
  const auto& x = c.chains[1];
  if (p.trials == 0 || x.trials == 0) {
    c.refused = "calibration chains were not timed";
  } else if (!p.latency_cycles || !x.latency_cycles) {
    c.refused = fmt::format("the CPU table (harness/catalog/cpus.json) gives no latency for the {} chain on this core: {}",
                            !p.latency_cycles ? p.chain : x.chain, rates());
  } else if (!p.cycles_per_tick || !x.cycles_per_tick) {
    c.refused = "a calibration chain took no ticks: " + rates();
  } else {
    double hi = std::max(*p.cycles_per_tick, *x.cycles_per_tick), lo = std::min(*p.cycles_per_tick, *x.cycles_per_tick);
    double apart = hi / lo - 1;
    if (apart > tolerance)
      c.refused = fmt::format("calibration chains disagree: {}, {:.0f}% apart (more than {:.0f}%): no cycle estimate", rates(),
                              apart * 100, tolerance * 100);
    else
      c.core_cycles_per_tick = p.cycles_per_tick;
  }
  c.method = fmt::format(
      "{} rate measured against CLOCK_MONOTONIC_RAW over 200 ms; core cycles per tick = latency / ticks per operation of "
      "a dependent {} chain ({} cycles), cross-checked by a dependent {} chain ({} cycles), the fastest of {} interleaved "
      "trials each, published when within {:.0f}%: {}",
      counter, p.instruction, p.latency_cycles ? fmt::format("{:g}", *p.latency_cycles) : "unknown", x.instruction,
      x.latency_cycles ? fmt::format("{:g}", *x.latency_cycles) : "unknown", p.trials, tolerance * 100, rates());
  return c;
}

TscCalibration calibrate_tsc(const CpuIdentity& cpu, const Emulation* emulation) {
  double hz = measure_tsc_hz(200);
  if (emulation && emulation->emulated) {
    // A translator's chains time its own code: under qemu-user the two chains were seen to agree
    // (imul 1.45, add 1.43 cycles/tick, "a 3.78 GHz core") on a 2.6 GHz host. No estimate.
    TscCalibration c;
    c.tsc_hz = hz;
    c.invariant = tsc_invariant();
    c.counter = kCounterName;
    c.tolerance = cpu.calibration_tolerance;
    c.refused = emulation->reason() + ": no cycle estimate";
    c.method = fmt::format("{} rate measured against CLOCK_MONOTONIC_RAW over 200 ms; no calibration chain timed: {}", kCounterName,
                           emulation->reason());
    return c;
  }
  std::vector<std::pair<LatencyChain, std::optional<double>>> plan;
  for (const auto& name : {cpu.primary_chain, cpu.cross_check_chain}) {
    auto chain = latency_chain_named(name);
    if (!chain) {
      TscCalibration c = judge_tsc_calibration(hz, tsc_invariant(), kCounterName, {}, cpu.calibration_tolerance);
      c.refused = fmt::format("no calibration chain named {} for this architecture", quote_input(name));
      return c;
    }
    auto it = cpu.chain_latency.find(name);
    plan.emplace_back(*chain, it == cpu.chain_latency.end() ? std::nullopt : std::optional<double>(it->second));
  }
  // Warm the core up first so that the first trials do not see a low-power clock.
  latency_chain_ticks(LatencyChain::add_reg, 500'000);
  TscCalibration c;
  // A disagreement can be a burst of interference (another guest, an interrupt storm) during one
  // measurement; a core that shortcuts a chain disagrees every time. So a disagreement is
  // measured once more before the estimate is refused.
  for (int attempt = 1; attempt <= 2; ++attempt) {
    std::vector<ChainTiming> timings;
    for (auto [chain, latency] : plan) {
      const auto& info = latency_chain_info(chain);
      timings.push_back({std::string(info.name), std::string(info.instruction), latency, {}});
    }
    // About 4 M core cycles (~1.3 ms) per trial whatever the latency, short enough that many
    // trials run between interruptions; the chains alternate trial by trial so that a change of
    // core clock affects both alike.
    constexpr double kTrialCycles = 4e6;
    for (int trial = 0; trial < 15; ++trial)
      for (size_t i = 0; i < plan.size(); ++i) {
        double latency = plan[i].second.value_or(3);
        auto iterations = static_cast<uint64_t>(kTrialCycles / (latency * kChainOpsPerIteration)) + 1;
        uint64_t ticks = latency_chain_ticks(plan[i].first, iterations);
        timings[i].ticks_per_op.push_back(static_cast<double>(ticks) / static_cast<double>(iterations * kChainOpsPerIteration));
      }
    c = judge_tsc_calibration(hz, tsc_invariant(), kCounterName, timings, cpu.calibration_tolerance);
    c.attempts = attempt;
    if (c.core_cycles_per_tick || c.refused.find("disagree") == std::string::npos) break;
  }
  return c;
}

namespace {

class TscGroup final : public CounterGroup {
 public:
  explicit TscGroup(size_t n) : n_(n) {}
  void start() override { begin_ = tsc_begin(); }
  void stop() override { end_ = tsc_end(); }
  std::vector<CounterReading> read() override {
    CounterReading r;
    r.raw = end_ - begin_;
    r.value = static_cast<double>(r.raw);
    return std::vector<CounterReading>(n_, r);
  }
  std::string read_method() const override { return kCounterName; }

 private:
  size_t n_;
  uint64_t begin_ = 0, end_ = 0;
};

}  // namespace

const TscCalibration& process_tsc_calibration() {
  static const TscCalibration c = calibrate_tsc(this_cpu_identity(), &this_process_emulation());
  return c;
}

Availability TscBackend::probe(const std::string& native_event) {
  if (native_event != "tsc") return Availability::no("the TSC backend counts only 'tsc'");
  if (!tsc_invariant()) return Availability::yes("TSC is not invariant on this CPU: ticks may not be a constant time unit");
  return Availability::yes();
}

std::unique_ptr<CounterGroup> TscBackend::open_group(const std::vector<std::string>& native_events) {
  for (const auto& e : native_events)
    if (e != "tsc") throw CounterError("the TSC backend counts only 'tsc', not " + quote_input(e));
  return std::make_unique<TscGroup>(native_events.size());
}

std::map<std::string, double> TscBackend::constants() {
  if (!calibration().core_cycles_per_tick) return {};
  return {{"core_cycles_per_tick", *calibration().core_cycles_per_tick}};
}

Availability TscBackend::constant_availability(const std::string& name) {
  if (name != "core_cycles_per_tick") return Availability::no("the TSC backend supplies only core_cycles_per_tick");
  if (!calibration().core_cycles_per_tick) return Availability::no(calibration().refused);
  return Availability::yes();
}

}  // namespace dlab
