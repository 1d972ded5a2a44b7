// The time-stamp counter (rdtsc on x86-64, cntvct_el0 on arm64): a constant-rate clock, not core
// cycles. Its rate is measured against CLOCK_MONOTONIC_RAW. The ratio of core cycles to ticks is
// *estimated* from a chain of dependent multiplies (a latency no current core shortcuts) and
// published only when a chain of dependent register adds gives the same ratio; anything derived
// from it is labelled as an estimate, and a refused calibration leaves cycles_tsc_estimate
// unavailable with the reason.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dispatchlab/harness/counter_backend.h"
#include "dispatchlab/harness/cpu_identity.h"
#include "dispatchlab/harness/emulation.h"

namespace dlab {

// Fenced reads for the two ends of a measured region. At the start, lfence before rdtsc waits for
// earlier instructions to finish and lfence after keeps the region from starting before the read;
// at the end, rdtscp waits for the region's instructions and the lfence after keeps later work out.
uint64_t tsc_begin();
uint64_t tsc_end();

// One calibration chain (latency_chains.h) timed over several trials.
struct ChainTiming {
  std::string chain;                     // "mul", "add_reg"
  std::string instruction;               // "imul r64, r64"
  std::optional<double> latency_cycles;  // its latency on this core; absent when the CPU table does not say
  std::vector<double> ticks_per_op;      // one value per trial
};

// What the chain came to: core cycles per tick = latency / (ticks per operation).
struct ChainCalibration {
  std::string chain, instruction;
  std::optional<double> latency_cycles;
  double ticks_per_op = 0;                         // the fastest trial's (interference only slows a trial)
  std::optional<double> cycles_per_tick;           // from ticks_per_op; absent when the latency is unknown
  std::optional<double> cycles_per_tick_min, cycles_per_tick_max;
  int trials = 0;
};

struct TscCalibration {
  double tsc_hz = 0;                 // ticks per second, measured against CLOCK_MONOTONIC_RAW
  bool invariant = false;            // the CPU says the TSC runs at a constant rate in all states
  std::string counter;               // "rdtsc" or "cntvct_el0"
  std::vector<ChainCalibration> chains;  // the calibrating chain first, then its cross-check
  double tolerance = 0.10;           // largest relative disagreement that still publishes an estimate
  int attempts = 0;                  // measurements taken (a disagreement is measured once more)
  // Core cycles per tick from the first chain, present only when the cross-check agreed.
  std::optional<double> core_cycles_per_tick;
  std::string refused;               // why there is no estimate ("calibration chains disagree: ...")
  std::string method;                // how the numbers above were obtained, for the result sidecar
};

// Judges chain timings (timings[0] calibrates, timings[1] cross-checks): the estimate is published
// only when both latencies are known and the two rates agree within `tolerance`. Pure, so the
// decision is tested with synthetic timings.
TscCalibration judge_tsc_calibration(double tsc_hz, bool invariant, const std::string& counter,
                                     const std::vector<ChainTiming>& timings, double tolerance);

// Measures the tick rate over `interval_ms` of CLOCK_MONOTONIC_RAW.
double measure_tsc_hz(int interval_ms);
// Full calibration with the chains and latencies `cpu` names; takes about half a second. Under an
// emulator (`emulation` says so) no chain is timed: the tick rate is measured, and the estimate is
// refused with the emulation's reason ("emulated: qemu-user (...)").
TscCalibration calibrate_tsc(const CpuIdentity& cpu, const Emulation* emulation = nullptr);
// The calibration of this process: done once, on first use, and shared by the TSC backend and the
// fingerprint, so the estimate a result uses is the one its sidecar records. Refused under emulation.
const TscCalibration& process_tsc_calibration();

class TscBackend final : public CounterBackend {
 public:
  std::string name() const override { return "tsc"; }
  Availability probe(const std::string& native_event) override;
  std::unique_ptr<CounterGroup> open_group(const std::vector<std::string>& native_events) override;
  std::map<std::string, double> constants() override;
  Availability constant_availability(const std::string& name) override;
  const TscCalibration& calibration() const { return calibration_ ? *calibration_ : process_tsc_calibration(); }
  // Tests: a backend with a given calibration instead of this process's.
  explicit TscBackend(std::optional<TscCalibration> calibration = std::nullopt) : calibration_(std::move(calibration)) {}

 private:
  std::optional<TscCalibration> calibration_;
};

}  // namespace dlab
