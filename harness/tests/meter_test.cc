#include "dispatchlab/harness/meter.h"

#include <gtest/gtest.h>

#include "fake_backend.h"

namespace dlab {
namespace {

using testing::FakeBackend;
using testing::FakeLog;

const char* kCatalog = R"({
  "metrics": [
    {"name": "cycles", "unit": "cycles", "description": "c"},
    {"name": "backend_bound", "unit": "share", "description": "b"},
    {"name": "flushes", "unit": "events", "description": "f"},
    {"name": "ticks", "unit": "ticks", "description": "t"},
    {"name": "est", "unit": "cycles", "estimated": true, "description": "e"}
  ],
  "sources": [
    {"key": "cpu", "backend": "perf_event", "fallback": true, "events": {
      "cycles": "CYC",
      "backend_bound": {"inputs": {"be": "BE", "slots": "SLOTS"}, "formula": "be / slots"},
      "flushes": "FLUSH"}},
    {"key": "tsc", "backend": "tsc", "events": {
      "ticks": "tsc",
      "est": {"inputs": {"t": "tsc"}, "formula": "t * k", "backend_constants": ["k"]}}}
  ]})";

struct Fixture {
  MetricCatalog cat = MetricCatalog::from_json_text(kCatalog, "test");
  std::shared_ptr<FakeLog> log = std::make_shared<FakeLog>();
  BackendSet backends;
  CounterPlan plan;
  explicit Fixture(double running = 1.0) {
    backends.add(std::make_unique<FakeBackend>(
        "perf_event", std::map<std::string, double>{{"CYC", 1000}, {"BE", 30}, {"SLOTS", 120}}, log, running));
    auto tsc = std::make_unique<FakeBackend>("tsc", std::map<std::string, double>{{"tsc", 400}}, log);
    tsc->constants_ = {{"k", 2.5}};
    backends.add(std::move(tsc));
    plan = plan_counters(cat, backends, {"x86_64", "linux", "", "cpu", ""});
  }
};

TEST(Meter, EvaluatesFormulasAndKeepsUnavailableMetricsWithTheirReason) {
  Fixture f;
  Meter m(f.plan, f.backends);
  ASSERT_EQ(m.metrics().size(), 5u);
  int ran = 0;
  auto v = m.measure([&] { ++ran; });
  EXPECT_EQ(ran, 1);
  EXPECT_DOUBLE_EQ(*v[0].value, 1000);
  EXPECT_DOUBLE_EQ(*v[1].value, 0.25);  // 30 / 120
  EXPECT_FALSE(v[2].value.has_value());  // FLUSH does not open
  EXPECT_NE(v[2].reason.find("FLUSH"), std::string::npos);
  EXPECT_DOUBLE_EQ(*v[3].value, 400);
  EXPECT_DOUBLE_EQ(*v[4].value, 1000);  // 400 ticks * 2.5 cycles/tick
  EXPECT_TRUE(m.metrics()[4].estimated);
  EXPECT_EQ(v[0].read_method, "fake");
}

TEST(Meter, NestsTheTscInsideTheSystemCallGroups) {
  Fixture f;
  Meter m(f.plan, f.backends, {"ticks", "cycles"});
  f.log->events.clear();
  m.measure([] {});
  std::vector<std::string> expect = {"start:CYC", "start:tsc", "stop:tsc", "stop:CYC"};
  EXPECT_EQ(f.log->events, expect);
}

TEST(Meter, ReadsEnergyOutsideEverythingElse) {
  // A package-wide reading that updates once a millisecond (and, for powercap, a file read) must
  // not land inside the counted region of the other groups.
  auto cat = MetricCatalog::from_json_text(R"({
    "metrics": [{"name": "cycles", "unit": "cycles", "description": "c"}, {"name": "ticks", "unit": "ticks", "description": "t"},
                {"name": "energy", "unit": "joules", "description": "e"}],
    "sources": [{"key": "cpu", "backend": "perf_event", "fallback": true, "events": {"cycles": "CYC"}},
                {"key": "tsc", "backend": "tsc", "events": {"ticks": "tsc"}},
                {"key": "rapl", "backend": "powercap", "energy": true, "events": {"energy": "powercap/package"}}]})", "test");
  auto log = std::make_shared<FakeLog>();
  BackendSet b;
  b.add(std::make_unique<FakeBackend>("perf_event", std::map<std::string, double>{{"CYC", 1}}, log));
  b.add(std::make_unique<FakeBackend>("tsc", std::map<std::string, double>{{"tsc", 1}}, log));
  b.add(std::make_unique<FakeBackend>("powercap", std::map<std::string, double>{{"powercap/package", 1}}, log));
  CounterPlan plan = plan_counters(cat, b, {"x86_64", "linux", "", "cpu", ""});
  Meter m(plan, b);
  m.measure([] {});
  std::vector<std::string> expect = {"start:powercap/package", "start:CYC", "start:tsc",
                                     "stop:tsc", "stop:CYC", "stop:powercap/package"};
  EXPECT_EQ(log->events, expect);
}

TEST(Meter, ReportsMultiplexingAndRejectsUnknownMetrics) {
  Fixture f(0.5);
  Meter m(f.plan, f.backends, {"cycles"});
  auto v = m.measure([] {});
  EXPECT_DOUBLE_EQ(v[0].running_fraction, 0.5);
  EXPECT_THROW(Meter(f.plan, f.backends, {"no_such_metric"}), CounterError);
}

}  // namespace
}  // namespace dlab
