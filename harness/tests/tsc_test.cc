#include "dispatchlab/harness/tsc.h"

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

TEST(Tsc, FrequencyAgreesWithMonotonicRawClock) {
  // Measure the rate once, then check it converts an independent interval of CLOCK_MONOTONIC_RAW
  // to within 1% (the rate is constant; the tolerance covers sleep and scheduling jitter).
  double hz = measure_tsc_hz(100);
  ASSERT_GT(hz, 1e8);
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

TEST(Tsc, CalibrationIsPlausibleAndLabelled) {
  TscCalibration c = calibrate_tsc();
  EXPECT_GT(c.tsc_hz, 1e8);
  // Core clocks between a quarter and eight times the TSC rate cover every real machine; outside
  // that the dependent-add kernel is not what it claims to be.
  EXPECT_GT(c.core_cycles_per_tick, 0.25);
  EXPECT_LT(c.core_cycles_per_tick, 8.0);
  EXPECT_LE(c.core_cycles_per_tick_min, c.core_cycles_per_tick);
  EXPECT_GE(c.core_cycles_per_tick_max, c.core_cycles_per_tick);
  EXPECT_NE(c.method.find("dependent"), std::string::npos);
}

TEST(Tsc, DependentAddTicksScaleWithWork) {
  // Twice the adds take about twice the ticks: the kernel is a latency chain, not a constant.
  // Short runs (~0.3 and ~0.6 ms) and the minimum of many keep preemption by a busy machine out.
  dependent_add_ticks(10'000'000);
  uint64_t one = UINT64_MAX, two = UINT64_MAX;
  for (int i = 0; i < 41; ++i) {
    one = std::min(one, dependent_add_ticks(1'000'000));
    two = std::min(two, dependent_add_ticks(2'000'000));
  }
  EXPECT_NEAR(static_cast<double>(two) / static_cast<double>(one), 2.0, 0.35) << one << " " << two;
}

TEST(TscBackend, CountsOnlyTsc) {
  TscBackend b;
  EXPECT_TRUE(b.probe("tsc").available);
  EXPECT_FALSE(b.probe("cycles").available);
  EXPECT_THROW(b.open_group({"cycles"}), CounterError);
  auto g = b.open_group({"tsc"});
  g->start();
  dependent_add_ticks(100000);
  g->stop();
  auto r = g->read();
  ASSERT_EQ(r.size(), 1u);
  EXPECT_GT(*r[0].value, 0);
  EXPECT_GT(b.constants().at("core_cycles_per_tick"), 0);
}

}  // namespace
}  // namespace dlab
