#include "dispatchlab/harness/tsc.h"

#include "dispatchlab/harness/latency_chains.h"

#include <time.h>

#include <thread>

#include <gtest/gtest.h>

namespace dlab {
namespace {

double raw_now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// The slowest counter rate a sane machine has: an x86 TSC runs at the nominal core clock (GHz);
// arm64's generic timer (cntvct_el0, its rate in CNTFRQ_EL0) at tens of MHz before ARMv8.6 (24 MHz
// on Apple's cores, 25 to 121 MHz on Neoverse servers, 62.5 MHz under qemu-user) and 1 GHz after.
#if defined(__aarch64__)
constexpr double kSlowestCounterHz = 1e6;
#else
constexpr double kSlowestCounterHz = 1e8;
#endif

TEST(Tsc, FrequencyAgreesWithMonotonicRawClock) {
  // Measure the rate once, then check it converts an independent interval of CLOCK_MONOTONIC_RAW
  // to within 1% (the rate is constant; the tolerance covers sleep and scheduling jitter). On
  // arm64 this is cntvct_el0 at CNTFRQ_EL0's rate cross-checked against the kernel's raw clock.
  double hz = measure_tsc_hz(100);
  ASSERT_GT(hz, kSlowestCounterHz);
  double c0 = raw_now();
  uint64_t t0 = tsc_begin();
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  uint64_t t1 = tsc_end();
  double c1 = raw_now();
  double tsc_seconds = static_cast<double>(t1 - t0) / hz;
  EXPECT_NEAR(tsc_seconds / (c1 - c0), 1.0, 0.01);
}

TEST(Tsc, IsMonotonic) {
  uint64_t prev = tsc_begin();
  for (int i = 0; i < 1000; ++i) {
    uint64_t now = tsc_end();
    ASSERT_GE(now, prev);
    prev = now;
  }
}

// Synthetic timings: a chain of `latency` cycles on a core running `cycles_per_tick` per tick, with
// a little spread across trials.
ChainTiming timing(const char* chain, const char* instruction, std::optional<double> latency, double cycles_per_tick) {
  ChainTiming t{chain, instruction, latency, {}};
  double true_latency = latency.value_or(3);
  for (double jitter : {0.99, 1.0, 1.01, 1.0, 1.02})
    t.ticks_per_op.push_back(true_latency / cycles_per_tick * jitter);
  return t;
}

TEST(TscCalibration, AgreeingChainsPublishThePrimaryChainsEstimate) {
  auto c = judge_tsc_calibration(2.1e9, true, "rdtsc",
                                 {timing("mul", "imul r64, r64", 3, 1.43), timing("add_reg", "add r64, r64", 1, 1.45)}, 0.10);
  ASSERT_TRUE(c.core_cycles_per_tick.has_value()) << c.refused;
  // The fastest trial counts (jitter 0.99 in `timing`): interference only ever slows a trial.
  EXPECT_NEAR(*c.core_cycles_per_tick, 1.43 / 0.99, 1e-9);
  EXPECT_TRUE(c.refused.empty());
  ASSERT_EQ(c.chains.size(), 2u);
  EXPECT_NEAR(*c.chains[1].cycles_per_tick, 1.45 / 0.99, 1e-9);
  EXPECT_LT(*c.chains[0].cycles_per_tick_min, *c.chains[0].cycles_per_tick_max);
  EXPECT_NE(c.method.find("imul"), std::string::npos);
}

TEST(TscCalibration, DisagreeingChainsPublishNoEstimateAndSayWhy) {
  // An add chain folded at rename (about 2.7 adds per cycle) against an honest imul chain.
  auto c = judge_tsc_calibration(2.1e9, true, "rdtsc",
                                 {timing("mul", "imul r64, r64", 3, 1.43), timing("add_reg", "add r64, r64", 1, 3.9)}, 0.10);
  EXPECT_FALSE(c.core_cycles_per_tick.has_value());
  EXPECT_NE(c.refused.find("calibration chains disagree: imul 1.444, add 3.939 cycles/tick"), std::string::npos) << c.refused;
  // Both chains' results are still recorded for the fingerprint.
  EXPECT_NEAR(*c.chains[0].cycles_per_tick, 1.43 / 0.99, 1e-9);
  EXPECT_NEAR(*c.chains[1].cycles_per_tick, 3.9 / 0.99, 1e-9);
}

TEST(TscCalibration, InterferenceInSomeTrialsDoesNotMakeTheChainsDisagree) {
  // A busy machine: most trials of each chain slowed by a preempting process, one clean trial each.
  ChainTiming mul{"mul", "imul", 3, {}}, add{"add_reg", "add", 1, {}};
  for (int i = 0; i < 15; ++i) {
    mul.ticks_per_op.push_back(3 / 1.5 * (i == 4 ? 1.0 : 2.0 + i * 0.1));
    add.ticks_per_op.push_back(1 / 1.5 * (i == 11 ? 1.0 : 1.5 + i * 0.2));
  }
  auto c = judge_tsc_calibration(1e9, true, "rdtsc", {mul, add}, 0.10);
  ASSERT_TRUE(c.core_cycles_per_tick.has_value()) << c.refused;
  EXPECT_NEAR(*c.core_cycles_per_tick, 1.5, 1e-9);
}

TEST(TscCalibration, TheToleranceIsTheLimit) {
  auto within = judge_tsc_calibration(1e9, true, "rdtsc", {timing("mul", "imul", 3, 1.0), timing("add_reg", "add", 1, 1.09)}, 0.10);
  EXPECT_TRUE(within.core_cycles_per_tick.has_value()) << within.refused;
  auto beyond = judge_tsc_calibration(1e9, true, "rdtsc", {timing("mul", "imul", 3, 1.0), timing("add_reg", "add", 1, 1.12)}, 0.10);
  EXPECT_FALSE(beyond.core_cycles_per_tick.has_value());
}

TEST(TscCalibration, AnUnknownLatencyPublishesNoEstimate) {
  // An arm64 core the CPU table does not know: the MUL latency is not the same on every core.
  auto c = judge_tsc_calibration(1e9, true, "cntvct_el0",
                                 {timing("mul", "mul x, x, x", std::nullopt, 1.0), timing("add_reg", "add x, x, x", 1, 1.0)}, 0.10);
  EXPECT_FALSE(c.core_cycles_per_tick.has_value());
  EXPECT_NE(c.refused.find("gives no latency for the mul chain"), std::string::npos) << c.refused;
}

TEST(TscCalibration, ThisMachineRecordsBothChainsAndAVerdict) {
  // Whatever the CPU: two chains timed, and either an estimate or the reason there is none.
  TscCalibration c = calibrate_tsc(this_cpu_identity());
  EXPECT_GT(c.tsc_hz, kSlowestCounterHz);
  ASSERT_EQ(c.chains.size(), 2u);
  for (const auto& chain : c.chains) {
    EXPECT_EQ(chain.trials, 15);
    EXPECT_GT(chain.ticks_per_op, 0);
  }
  EXPECT_NE(c.core_cycles_per_tick.has_value(), !c.refused.empty()) << c.refused;
  if (c.core_cycles_per_tick) {
    EXPECT_NEAR(*c.chains[0].cycles_per_tick / *c.chains[1].cycles_per_tick, 1.0, c.tolerance + 1e-9);
    EXPECT_GT(*c.core_cycles_per_tick, 0.1);
    EXPECT_LT(*c.core_cycles_per_tick, 10.0);
  }
  EXPECT_NE(c.method.find("dependent"), std::string::npos);
}

TEST(LatencyChains, TicksScaleWithWork) {
  // Twice the operations take about twice the ticks: each chain is a latency chain, not a
  // constant. Short runs and the minimum of many keep preemption by a busy machine out.
  for (const auto& info : latency_chains()) {
    run_latency_chain(info.chain, 10'000);
    uint64_t one = UINT64_MAX, two = UINT64_MAX;
    for (int i = 0; i < 21; ++i) {
      one = std::min(one, latency_chain_ticks(info.chain, 5'000));
      two = std::min(two, latency_chain_ticks(info.chain, 10'000));
    }
    EXPECT_NEAR(static_cast<double>(two) / static_cast<double>(one), 2.0, 0.35) << info.name << ": " << one << " " << two;
  }
}

TEST(LatencyChains, ZeroIterationsReturnAtOnce) {
  // The asm loops decrement before they test; zero must not mean 2^64.
  for (const auto& info : latency_chains()) run_latency_chain(info.chain, 0);
  EXPECT_EQ(latency_chain_named("mul"), LatencyChain::mul);
  EXPECT_FALSE(latency_chain_named("nope").has_value());
}

TEST(TscBackend, CountsOnlyTsc) {
  TscBackend b;
  EXPECT_TRUE(b.probe("tsc").available);
  EXPECT_FALSE(b.probe("cycles").available);
  EXPECT_THROW(b.open_group({"cycles"}), CounterError);
  auto g = b.open_group({"tsc"});
  g->start();
  run_latency_chain(LatencyChain::add_reg, 1000);
  g->stop();
  auto r = g->read();
  ASSERT_EQ(r.size(), 1u);
  EXPECT_GT(*r[0].value, 0);
  // The constant is supplied exactly when this machine's calibration published an estimate.
  EXPECT_EQ(b.constants().count("core_cycles_per_tick"), b.calibration().core_cycles_per_tick ? 1u : 0u);
  EXPECT_EQ(b.constant_availability("core_cycles_per_tick").available, b.calibration().core_cycles_per_tick.has_value());
}

}  // namespace
}  // namespace dlab
