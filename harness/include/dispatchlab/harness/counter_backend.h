// Counter backends, after Google Benchmark's split: a backend knows how to open native events
// (perf_event, PAPI, the TSC, a null one for tests); a CounterGroup is a set of events opened
// together and read at once; Meter (meter.h) turns groups into per-sample metric values.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace dlab {

// Whether an event or metric can be counted here. `reason` says why not, or qualifies a yes
// ("estimated: ..."). Decided by opening the event, never by PMU detection alone: a VM detects a
// PMU it cannot count.
struct Availability {
  bool available = false;
  std::string reason;

  static Availability yes(std::string caveat = {}) { return {true, std::move(caveat)}; }
  static Availability no(std::string why) { return {false, std::move(why)}; }
};

struct CounterReading {
  // Count scaled to the whole enabled time; nullopt when the event never got a counter
  // (time_running == 0), which is "unavailable", never 0.
  std::optional<double> value;
  uint64_t raw = 0;
  uint64_t time_enabled_ns = 0;
  uint64_t time_running_ns = 0;
  // time_running / time_enabled: 1 means counted all the time, below 1 means multiplexed.
  double running_fraction = 1.0;
  // Why `value` is empty, where the backend knows better than "never scheduled" (an energy
  // counter that did not update during the sample).
  std::string no_value_reason;
};

class CounterError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class CounterGroup {
 public:
  virtual ~CounterGroup() = default;
  virtual void start() = 0;  // zero the counts and start counting
  virtual void stop() = 0;
  // One reading per event, in the order the group was opened with; valid after stop().
  virtual std::vector<CounterReading> read() = 0;
  // "read(PERF_FORMAT_GROUP)", "rdpmc", "PAPI_stop", "rdtsc" ...: how values were obtained.
  virtual std::string read_method() const = 0;
};

class CounterBackend {
 public:
  virtual ~CounterBackend() = default;
  virtual std::string name() const = 0;
  virtual Availability probe(const std::string& native_event) = 0;
  // Opens the events as one group. Throws CounterError with the reason when it cannot.
  virtual std::unique_ptr<CounterGroup> open_group(const std::vector<std::string>& native_events) = 0;
  // Named constants this backend supplies to catalog formulas (the TSC's calibration).
  virtual std::map<std::string, double> constants() { return {}; }
  // Whether `name` is among them, and why not (a calibration that refused to publish, say).
  virtual Availability constant_availability(const std::string& name) {
    return constants().count(name) ? Availability::yes() : Availability::no("backend '" + this->name() + "' supplies no '" + name + "'");
  }
  // false for backends that count whole processes (valgrind): Meter leaves them out unless asked.
  virtual bool in_process() const { return true; }
  // What an event measures beyond the measured thread, said in every row that uses it ("package 0
  // (cpu 0)" for RAPL energy); "" for events of the thread itself or when the backend cannot tell.
  virtual std::string scope(const std::string& /*native_event*/) { return {}; }
};

// Counts nothing and says so: what tests and machines without any counter use.
class NullBackend final : public CounterBackend {
 public:
  explicit NullBackend(std::string backend_name = "null") : name_(std::move(backend_name)) {}
  std::string name() const override { return name_; }
  Availability probe(const std::string&) override {
    return Availability::no("backend '" + name_ + "' is not available in this build or on this OS");
  }
  std::unique_ptr<CounterGroup> open_group(const std::vector<std::string>&) override {
    throw CounterError("backend '" + name_ + "' counts nothing");
  }

 private:
  std::string name_;
};

}  // namespace dlab
