// The time-stamp counter (rdtsc on x86-64, cntvct_el0 on arm64): a constant-rate clock, not core
// cycles. Its rate is measured against CLOCK_MONOTONIC_RAW, and the ratio of core cycles to ticks
// is *estimated* with a dependent-add loop; anything derived from it is labelled as an estimate.
#pragma once

#include <cstdint>
#include <string>

#include "dispatchlab/harness/counter_backend.h"

namespace dlab {

// Fenced reads for the two ends of a measured region. At the start, lfence before rdtsc waits for
// earlier instructions to finish and lfence after keeps the region from starting before the read;
// at the end, rdtscp waits for the region's instructions and the lfence after keeps later work out.
uint64_t tsc_begin();
uint64_t tsc_end();

struct TscCalibration {
  double tsc_hz = 0;                 // ticks per second, measured against CLOCK_MONOTONIC_RAW
  bool invariant = false;            // the CPU says the TSC runs at a constant rate in all states
  double core_cycles_per_tick = 0;   // median over trials of (dependent adds) / (ticks)
  double core_cycles_per_tick_min = 0, core_cycles_per_tick_max = 0;
  int trials = 0;
  std::string counter;               // "rdtsc" or "cntvct_el0"
  std::string method;                // how the numbers above were obtained, for the result sidecar
};

// Measures the tick rate over `interval_ms` of CLOCK_MONOTONIC_RAW.
double measure_tsc_hz(int interval_ms);
// Full calibration; takes about 0.5 s.
TscCalibration calibrate_tsc();
// The calibration of this process: done once, on first use, and shared by the TSC backend and the
// fingerprint, so the estimate a result uses is the one its sidecar records.
const TscCalibration& process_tsc_calibration();

// Runs `adds` dependent one-cycle additions and returns the ticks taken (the calibration kernel).
uint64_t dependent_add_ticks(uint64_t adds);

class TscBackend final : public CounterBackend {
 public:
  std::string name() const override { return "tsc"; }
  Availability probe(const std::string& native_event) override;
  std::unique_ptr<CounterGroup> open_group(const std::vector<std::string>& native_events) override;
  std::map<std::string, double> constants() override;
  const TscCalibration& calibration() { return process_tsc_calibration(); }
};

}  // namespace dlab
