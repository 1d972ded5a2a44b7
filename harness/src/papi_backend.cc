#include "dispatchlab/harness/papi_backend.h"

#include <papi.h>

#include <mutex>

#include <fmt/format.h>

namespace dlab {

namespace {

std::string papi_error(int code) {
  const char* s = PAPI_strerror(code);
  return s ? s : fmt::format("PAPI error {}", code);
}

// PAPI_library_init may be called once per process.
int init_papi_once() {
  static std::once_flag once;
  static int rc = 0;
  std::call_once(once, [] { rc = PAPI_library_init(PAPI_VER_CURRENT); });
  return rc;
}

class PapiGroup final : public CounterGroup {
 public:
  explicit PapiGroup(const std::vector<std::string>& events) {
    int rc = PAPI_create_eventset(&set_);
    if (rc != PAPI_OK) throw CounterError("PAPI_create_eventset: " + papi_error(rc));
    for (const auto& e : events) {
      rc = PAPI_add_named_event(set_, e.c_str());
      if (rc != PAPI_OK) {
        destroy();
        throw CounterError(fmt::format("PAPI_add_named_event({}): {}", e, papi_error(rc)));
      }
    }
    values_.resize(events.size());
  }
  ~PapiGroup() override { destroy(); }

  void start() override {
    int rc = PAPI_start(set_);
    if (rc != PAPI_OK) throw CounterError("PAPI_start: " + papi_error(rc));
  }
  void stop() override {
    int rc = PAPI_stop(set_, values_.data());
    if (rc != PAPI_OK) throw CounterError("PAPI_stop: " + papi_error(rc));
  }
  std::vector<CounterReading> read() override {
    std::vector<CounterReading> out(values_.size());
    for (size_t i = 0; i < values_.size(); ++i) {
      out[i].raw = static_cast<uint64_t>(values_[i]);
      out[i].value = static_cast<double>(values_[i]);
    }
    return out;
  }
  std::string read_method() const override { return "PAPI_stop"; }

 private:
  void destroy() {
    if (set_ == PAPI_NULL) return;
    PAPI_cleanup_eventset(set_);
    PAPI_destroy_eventset(&set_);
    set_ = PAPI_NULL;
  }
  int set_ = PAPI_NULL;
  std::vector<long long> values_;
};

}  // namespace

PapiBackend::PapiBackend() {
  int rc = init_papi_once();
  if (rc != PAPI_VER_CURRENT) {
    unusable_reason_ = fmt::format("PAPI_library_init failed: {}", rc > 0 ? "version mismatch" : papi_error(rc));
    return;
  }
  int cidx = PAPI_get_component_index("perf_event");
  if (cidx < 0) {
    unusable_reason_ = "PAPI has no perf_event component";
    return;
  }
  const PAPI_component_info_t* info = PAPI_get_component_info(cidx);
  if (info && info->disabled)
    unusable_reason_ = fmt::format("PAPI perf_event component disabled: {}", info->disabled_reason);
}

Availability PapiBackend::probe(const std::string& native_event) {
  if (!unusable_reason_.empty()) return Availability::no(unusable_reason_);
  try {
    PapiGroup g({native_event});
    return Availability::yes();
  } catch (const CounterError& e) {
    return Availability::no(e.what());
  }
}

std::unique_ptr<CounterGroup> PapiBackend::open_group(const std::vector<std::string>& native_events) {
  if (!unusable_reason_.empty()) throw CounterError(unusable_reason_);
  return std::make_unique<PapiGroup>(native_events);
}

}  // namespace dlab
