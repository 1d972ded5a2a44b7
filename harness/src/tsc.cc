#include "dispatchlab/harness/tsc.h"

#include <time.h>

#include <algorithm>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "platform.h"

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

uint64_t dependent_add_ticks(uint64_t adds) {
  uint64_t iterations = adds / 32 + 1;
  uint64_t acc = 0;
  uint64_t t0 = tsc_begin();
#if defined(__x86_64__)
  // 32 additions on one register form a chain of 1-cycle latency; the loop counter runs in
  // parallel on another port, so an iteration takes 32 core cycles on every x86-64 core.
  asm volatile(
      "1:\n\t"
      ".rept 32\n\tadd $1, %[acc]\n\t.endr\n\t"
      "dec %[n]\n\tjnz 1b"
      : [acc] "+r"(acc), [n] "+r"(iterations)::"cc");
#elif defined(__aarch64__)
  asm volatile(
      "1:\n\t"
      ".rept 32\n\tadd %x[acc], %x[acc], #1\n\t.endr\n\t"
      "subs %x[n], %x[n], #1\n\tb.ne 1b"
      : [acc] "+r"(acc), [n] "+r"(iterations)::"cc");
#endif
  uint64_t t1 = tsc_end();
  return t1 - t0;
}

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

TscCalibration calibrate_tsc() {
  TscCalibration c;
  c.counter = kCounterName;
  c.invariant = tsc_invariant();
  c.tsc_hz = measure_tsc_hz(200);
  // Warm the core up first so that the first trials do not see a low-power clock.
  dependent_add_ticks(20'000'000);
  constexpr uint64_t kAdds = 32 * 1'000'000;  // ~10 ms at 3 GHz per trial
  std::vector<double> ratios;
  for (int i = 0; i < 9; ++i) {
    uint64_t ticks = dependent_add_ticks(kAdds);
    // kAdds/32+1 iterations of 32 adds were executed
    double adds = static_cast<double>((kAdds / 32 + 1) * 32);
    ratios.push_back(adds / static_cast<double>(ticks));
  }
  std::sort(ratios.begin(), ratios.end());
  c.trials = static_cast<int>(ratios.size());
  c.core_cycles_per_tick = ratios[ratios.size() / 2];
  c.core_cycles_per_tick_min = ratios.front();
  c.core_cycles_per_tick_max = ratios.back();
  c.method = fmt::format(
      "{} rate measured against CLOCK_MONOTONIC_RAW over 200 ms; core cycles per tick = median of {} trials of "
      "32M dependent 1-cycle adds (range {:.4f}-{:.4f})",
      c.counter, c.trials, c.core_cycles_per_tick_min, c.core_cycles_per_tick_max);
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
  static const TscCalibration c = calibrate_tsc();
  return c;
}

Availability TscBackend::probe(const std::string& native_event) {
  if (native_event != "tsc") return Availability::no("the TSC backend counts only 'tsc'");
  if (!tsc_invariant()) return Availability::yes("TSC is not invariant on this CPU: ticks may not be a constant time unit");
  return Availability::yes();
}

std::unique_ptr<CounterGroup> TscBackend::open_group(const std::vector<std::string>& native_events) {
  for (const auto& e : native_events)
    if (e != "tsc") throw CounterError("the TSC backend counts only 'tsc', not '" + e + "'");
  return std::make_unique<TscGroup>(native_events.size());
}

std::map<std::string, double> TscBackend::constants() {
  return {{"core_cycles_per_tick", calibration().core_cycles_per_tick}};
}

}  // namespace dlab
