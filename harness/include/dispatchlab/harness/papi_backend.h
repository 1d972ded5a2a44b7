// PAPI backend: named events (presets such as PAPI_TOT_CYC or native names) through PAPI's
// low-level API. PAPI counts through its perf_event component, so where that component is
// disabled (a VM without a PMU) every event is unavailable with PAPI's own reason.
#pragma once

#include "dispatchlab/harness/counter_backend.h"

namespace dlab {

class PapiBackend final : public CounterBackend {
 public:
  PapiBackend();
  std::string name() const override { return "papi"; }
  Availability probe(const std::string& native_event) override;
  std::unique_ptr<CounterGroup> open_group(const std::vector<std::string>& native_events) override;

 private:
  std::string unusable_reason_;  // empty when PAPI initialised and its perf_event component is enabled; else why not
};

}  // namespace dlab
