#include "dispatchlab/harness/papi_backend.h"

#include <papi.h>

#include <mutex>

#include <fmt/format.h>

#include "shared_library.h"

namespace dlab {

namespace {

// The PAPI functions dlab calls, bound when first needed (shared_library.h says why);
// DLAB_PAPI_SONAME is the library the build found (CMakeLists.txt).
struct Papi {
  SharedLibrary library{DLAB_PAPI_SONAME};
  decltype(&::PAPI_strerror) strerror = nullptr;
  decltype(&::PAPI_library_init) library_init = nullptr;
  decltype(&::PAPI_create_eventset) create_eventset = nullptr;
  decltype(&::PAPI_add_named_event) add_named_event = nullptr;
  decltype(&::PAPI_start) start = nullptr;
  decltype(&::PAPI_stop) stop = nullptr;
  decltype(&::PAPI_cleanup_eventset) cleanup_eventset = nullptr;
  decltype(&::PAPI_destroy_eventset) destroy_eventset = nullptr;
  decltype(&::PAPI_get_component_index) get_component_index = nullptr;
  decltype(&::PAPI_get_component_info) get_component_info = nullptr;
  Papi() {
    library.bind(strerror, "PAPI_strerror");
    library.bind(library_init, "PAPI_library_init");
    library.bind(create_eventset, "PAPI_create_eventset");
    library.bind(add_named_event, "PAPI_add_named_event");
    library.bind(start, "PAPI_start");
    library.bind(stop, "PAPI_stop");
    library.bind(cleanup_eventset, "PAPI_cleanup_eventset");
    library.bind(destroy_eventset, "PAPI_destroy_eventset");
    library.bind(get_component_index, "PAPI_get_component_index");
    library.bind(get_component_info, "PAPI_get_component_info");
  }
};

const Papi& papi() {
  static const Papi p;
  return p;
}

std::string papi_error(int code) {
  const char* s = papi().strerror(code);
  return s ? s : fmt::format("PAPI error {}", code);
}

// PAPI_library_init may be called once per process.
int init_papi_once() {
  static std::once_flag once;
  static int rc = 0;
  std::call_once(once, [] { rc = papi().library_init(PAPI_VER_CURRENT); });
  return rc;
}

class PapiGroup final : public CounterGroup {
 public:
  explicit PapiGroup(const std::vector<std::string>& events) {
    int rc = papi().create_eventset(&set_);
    if (rc != PAPI_OK) throw CounterError("PAPI_create_eventset: " + papi_error(rc));
    for (const auto& e : events) {
      rc = papi().add_named_event(set_, e.c_str());
      if (rc != PAPI_OK) {
        destroy();
        throw CounterError(fmt::format("PAPI_add_named_event({}): {}", e, papi_error(rc)));
      }
    }
    values_.resize(events.size());
  }
  ~PapiGroup() override { destroy(); }

  void start() override {
    int rc = papi().start(set_);
    if (rc != PAPI_OK) throw CounterError("PAPI_start: " + papi_error(rc));
  }
  void stop() override {
    int rc = papi().stop(set_, values_.data());
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
    papi().cleanup_eventset(set_);
    papi().destroy_eventset(&set_);
    set_ = PAPI_NULL;
  }
  int set_ = PAPI_NULL;
  std::vector<long long> values_;
};

}  // namespace

PapiBackend::PapiBackend() {
  if (!papi().library.error().empty()) {
    unusable_reason_ = fmt::format("PAPI is not usable: {} (Debian: apt-get install libpapi7.0)", papi().library.error());
    return;
  }
  int rc = init_papi_once();
  if (rc != PAPI_VER_CURRENT) {
    unusable_reason_ = fmt::format("PAPI_library_init failed: {}", rc > 0 ? "version mismatch" : papi_error(rc));
    return;
  }
  int cidx = papi().get_component_index("perf_event");
  if (cidx < 0) {
    unusable_reason_ = "PAPI has no perf_event component";
    return;
  }
  const PAPI_component_info_t* info = papi().get_component_info(cidx);
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
