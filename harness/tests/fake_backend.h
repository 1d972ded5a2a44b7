// A scripted counter backend for tests: events listed in `counts` open and read back those values
// (times `scale` per sample, to make samples differ); any other event fails with a fixed reason.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "dispatchlab/harness/counter_backend.h"

namespace dlab::testing {

struct FakeLog {
  std::vector<std::string> events;  // "start:<first event>", "stop:<first event>"
};

class FakeBackend final : public CounterBackend {
 public:
  FakeBackend(std::string name, std::map<std::string, double> counts, std::shared_ptr<FakeLog> log = nullptr,
              double running_fraction = 1.0)
      : name_(std::move(name)), counts_(std::move(counts)), log_(std::move(log)), running_(running_fraction) {}
  std::string name() const override { return name_; }
  Availability probe(const std::string& e) override {
    return counts_.count(e) ? Availability::yes() : Availability::no("fake: " + e + " does not exist");
  }
  std::unique_ptr<CounterGroup> open_group(const std::vector<std::string>& events) override {
    for (const auto& e : events)
      if (!counts_.count(e)) throw CounterError("fake: " + e + " does not exist");
    if (events.size() > max_group_) throw CounterError("fake: group too large");
    return std::make_unique<Group>(*this, events);
  }
  std::map<std::string, double> constants() override { return constants_; }
  bool in_process() const override { return !whole_process_; }

  size_t max_group_ = 8;
  bool whole_process_ = false;
  std::map<std::string, double> constants_;
  int samples_taken = 0;

 private:
  class Group final : public CounterGroup {
   public:
    Group(FakeBackend& b, std::vector<std::string> events) : b_(b), events_(std::move(events)) {}
    void start() override {
      if (b_.log_) b_.log_->events.push_back("start:" + events_.front());
    }
    void stop() override {
      if (b_.log_) b_.log_->events.push_back("stop:" + events_.front());
      ++b_.samples_taken;
    }
    std::vector<CounterReading> read() override {
      std::vector<CounterReading> out;
      for (const auto& e : events_) {
        CounterReading r;
        r.running_fraction = b_.running_;
        r.value = b_.counts_.at(e);
        r.raw = static_cast<uint64_t>(*r.value);
        out.push_back(r);
      }
      return out;
    }
    std::string read_method() const override { return "fake"; }

   private:
    FakeBackend& b_;
    std::vector<std::string> events_;
  };

  std::string name_;
  std::map<std::string, double> counts_;
  std::shared_ptr<FakeLog> log_;
  double running_;
};

}  // namespace dlab::testing
