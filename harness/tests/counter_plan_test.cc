#include "dispatchlab/harness/counter_plan.h"

#include <gtest/gtest.h>

#include "dispatchlab/harness/meter.h"
#include "dispatchlab/harness/tsc.h"
#include "fake_backend.h"

namespace dlab {
namespace {

using testing::FakeBackend;

const char* kCatalog = R"({
  "metrics": [
    {"name": "cycles", "unit": "cycles", "description": "c"},
    {"name": "flushes", "unit": "events", "description": "f"},
    {"name": "backend_bound", "unit": "share", "description": "b"},
    {"name": "task_clock", "unit": "ns", "description": "t"},
    {"name": "orphan", "unit": "x", "description": "no source maps it"}
  ],
  "sources": [
    {"key": "cpu_a", "backend": "perf_event", "libpfm_pmus": ["a"],
     "raw": {"A::CYCLES": "perf_raw::r003c", "A::BE": "perf_raw::r02a4", "A::SLOTS": "perf_raw::r01a4"}, "events": {
      "cycles": "A::CYCLES",
      "flushes": {"none": "cpu A has no flush event"},
      "backend_bound": {"inputs": {"be": "A::BE", "slots": "A::SLOTS"}, "formula": "be / slots"}}},
    {"key": "generic", "backend": "perf_event", "fallback": true, "events": {"cycles": "perf::CYCLES"}},
    {"key": "software", "backend": "perf_event", "events": {"task_clock": "perf::TASK-CLOCK"}},
    {"key": "papi", "backend": "papi", "events": {"cycles": "PAPI_TOT_CYC"}}
  ]})";

TEST(CounterPlan, PrefersThePmuSourceAndFallsBackToOtherBackends) {
  auto cat = MetricCatalog::from_json_text(kCatalog, "test");
  BackendSet b;
  b.add(std::make_unique<FakeBackend>("perf_event", std::map<std::string, double>{{"perf::TASK-CLOCK", 1}}));
  b.add(std::make_unique<FakeBackend>("papi", std::map<std::string, double>{{"PAPI_TOT_CYC", 1}}));
  CounterPlan plan = plan_counters(cat, b, {"x86_64", "linux", "a", "cpu_a", ""});
  EXPECT_EQ(plan.pmu_source, "cpu_a");
  const auto* cycles = plan.selection("cycles");
  ASSERT_NE(cycles, nullptr);
  EXPECT_TRUE(cycles->availability.available);
  EXPECT_EQ(cycles->source->key, "papi");  // perf_event could not open A::CYCLES
  // The generic fallback is not considered when a PMU source matched.
  for (const auto& c : plan.candidates) EXPECT_NE(c.source ? c.source->key : "", "generic");
  EXPECT_TRUE(plan.selection("task_clock")->availability.available);
}

TEST(CounterPlan, UnavailableMetricsCarryEveryCandidatesReason) {
  auto cat = MetricCatalog::from_json_text(kCatalog, "test");
  BackendSet b;
  b.add(std::make_unique<FakeBackend>("perf_event", std::map<std::string, double>{}));
  b.add(std::make_unique<FakeBackend>("papi", std::map<std::string, double>{}));
  CounterPlan plan = plan_counters(cat, b, {"x86_64", "linux", "a", "cpu_a", ""});
  const auto* cycles = plan.selection("cycles");
  EXPECT_FALSE(cycles->availability.available);
  EXPECT_NE(cycles->availability.reason.find("perf_event: fake: A::CYCLES"), std::string::npos) << cycles->availability.reason;
  EXPECT_NE(cycles->availability.reason.find("papi: fake: PAPI_TOT_CYC"), std::string::npos);
  EXPECT_EQ(plan.selection("flushes")->availability.reason, "perf_event: cpu A has no flush event");
  EXPECT_FALSE(plan.selection("orphan")->availability.available);
  EXPECT_NE(plan.selection("orphan")->availability.reason.find("no event source"), std::string::npos);
}

TEST(CounterPlan, FormulaInputsMustFitInOneGroup) {
  auto cat = MetricCatalog::from_json_text(kCatalog, "test");
  BackendSet b;
  auto perf = std::make_unique<FakeBackend>("perf_event", std::map<std::string, double>{{"A::BE", 1}, {"A::SLOTS", 4}});
  perf->max_group_ = 1;
  b.add(std::move(perf));
  CounterPlan plan = plan_counters(cat, b, {"x86_64", "linux", "a", "cpu_a", ""});
  const auto* bb = plan.selection("backend_bound");
  EXPECT_FALSE(bb->availability.available);
  EXPECT_NE(bb->availability.reason.find("one group"), std::string::npos);
}

TEST(CounterPlan, WholeProcessBackendsNeedNoGroups) {
  // cachegrind-like: counts whole runs, so a two-input formula is available without a group.
  auto cat = MetricCatalog::from_json_text(kCatalog, "test");
  BackendSet b;
  auto perf = std::make_unique<FakeBackend>("perf_event", std::map<std::string, double>{{"A::BE", 1}, {"A::SLOTS", 4}});
  perf->max_group_ = 1;
  perf->whole_process_ = true;
  b.add(std::move(perf));
  CounterPlan plan = plan_counters(cat, b, {"x86_64", "linux", "a", "cpu_a", ""});
  EXPECT_TRUE(plan.selection("backend_bound")->availability.available) << plan.selection("backend_bound")->availability.reason;
  // ... and a Meter leaves such metrics out unless they are asked for by name.
  Meter m(plan, b);
  for (const auto& mm : m.metrics()) EXPECT_NE(mm.name, "backend_bound");
}

TEST(CounterPlan, UnknownCpuUsesTheGenericFallback) {
  auto cat = MetricCatalog::from_json_text(kCatalog, "test");
  BackendSet b;
  b.add(std::make_unique<FakeBackend>("perf_event", std::map<std::string, double>{{"perf::CYCLES", 1}}));
  CounterPlan plan = plan_counters(cat, b, {"x86_64", "linux", "", "generic", ""});
  EXPECT_EQ(plan.pmu_source, "generic");
  EXPECT_EQ(plan.selection("cycles")->source->key, "generic");
  // papi is absent from this BackendSet: its candidate is unavailable, saying so.
  bool saw_papi = false;
  for (const auto& c : plan.candidates)
    if (c.source && c.source->key == "papi") {
      saw_papi = true;
      EXPECT_NE(c.availability.reason.find("no papi backend"), std::string::npos);
    }
  EXPECT_TRUE(saw_papi);
}

TEST(CounterPlan, PmuEventsAreRawCodesWhenLibpfm4DidNotDetectTheCpu) {
  // A CPU the CPU table maps to cpu_a but libpfm4 does not know (an Emerald Rapids on libpfm4
  // 4.13): the kernel gets the catalog's raw codes, and the candidate says so.
  auto cat = MetricCatalog::from_json_text(kCatalog, "test");
  BackendSet b;
  b.add(std::make_unique<FakeBackend>("perf_event", std::map<std::string, double>{{"perf_raw::r003c", 1}}));
  CounterPlan plan = plan_counters(cat, b, {"x86_64", "linux", "", "cpu_a", ""});
  EXPECT_EQ(plan.encoding, EventEncoding::raw);
  const auto* cycles = plan.selection("cycles");
  EXPECT_TRUE(cycles->availability.available) << cycles->availability.reason;
  EXPECT_EQ(cycles->native_event(), "perf_raw::r003c");
  EXPECT_EQ(cycles->encoding_name(), "raw");
  EXPECT_EQ(plan.selection("task_clock")->encoding_name(), "");  // software events are not PMU events
  // Detected by libpfm4: the names.
  CounterPlan named = plan_counters(cat, b, {"x86_64", "linux", "a", "cpu_a", ""});
  EXPECT_EQ(named.encoding, EventEncoding::libpfm4);
  EXPECT_EQ(named.selection("cycles")->source->key, "cpu_a");
  EXPECT_FALSE(named.selection("cycles")->availability.available);  // the fake knows only the raw code
}

TEST(CounterPlan, WithoutAPmuEveryHardwareMetricSaysSoFirst) {
  // The reason is the machine's, not the CPU's: a metric the source cannot map (flushes) and one
  // no source maps at all still say there is no PMU, on any CPU.
  auto cat = MetricCatalog::from_json_text(kCatalog, "test");
  BackendSet b;
  b.add(std::make_unique<FakeBackend>("perf_event", std::map<std::string, double>{{"perf::TASK-CLOCK", 1}}));
  const std::string no_pmu = "no hardware PMU: VM (KVMKVMKVM) exposes no counters to this guest";
  CounterPlan plan = plan_counters(cat, b, {"x86_64", "linux", "a", "cpu_a", no_pmu});
  for (const char* m : {"cycles", "flushes", "backend_bound"}) {
    const auto* c = plan.selection(m);
    EXPECT_FALSE(c->availability.available) << m;
    EXPECT_EQ(c->availability.reason.rfind(no_pmu, 0), 0u) << m << ": " << c->availability.reason;
  }
  EXPECT_TRUE(plan.selection("task_clock")->availability.available);
  // "orphan" is mapped by no PMU source: not a hardware metric, so its own reason stands.
  EXPECT_EQ(plan.selection("orphan")->availability.reason.find(no_pmu), std::string::npos);
}

TEST(CounterPlan, ARefusedCalibrationLeavesTheCycleEstimateUnavailable) {
  TscCalibration refused;
  refused.refused = "calibration chains disagree: imul 1.540, add 3.900 cycles/tick";
  BackendSet b;
  b.add(std::make_unique<TscBackend>(refused));
  CounterPlan plan = plan_counters(MetricCatalog::builtin(), b, {"x86_64", "linux", "", "generic", ""});
  EXPECT_TRUE(plan.selection("tsc_ticks")->availability.available);
  const auto* est = plan.selection("cycles_tsc_estimate");
  EXPECT_FALSE(est->availability.available);
  EXPECT_NE(est->availability.reason.find("calibration chains disagree"), std::string::npos) << est->availability.reason;
  TscCalibration agreed;
  agreed.core_cycles_per_tick = 1.5;
  BackendSet b2;
  b2.add(std::make_unique<TscBackend>(agreed));
  CounterPlan ok = plan_counters(MetricCatalog::builtin(), b2, {"x86_64", "linux", "", "generic", ""});
  EXPECT_TRUE(ok.selection("cycles_tsc_estimate")->availability.available);
}

TEST(CounterPlan, ThisMachineListsSoftwareEventsAndTscAsAvailable) {
  BackendSet b = BackendSet::for_this_machine();
  CounterPlan plan = plan_counters(MetricCatalog::builtin(), b, this_host_cpu());
  EXPECT_TRUE(plan.selection("task_clock")->availability.available) << plan.selection("task_clock")->availability.reason;
  EXPECT_TRUE(plan.selection("tsc_ticks")->availability.available);
  // The estimate is available only where this machine's calibration passed its cross-check.
  const auto* est = plan.selection("cycles_tsc_estimate");
  EXPECT_EQ(est->availability.available, process_tsc_calibration().core_cycles_per_tick.has_value()) << est->availability.reason;
  if (est->availability.available) EXPECT_NE(est->availability.reason.find("estimated"), std::string::npos);
  // Every unavailable metric says why.
  for (const auto& c : plan.selected)
    if (!c.availability.available) EXPECT_FALSE(c.availability.reason.empty()) << c.metric->name;
}

}  // namespace
}  // namespace dlab
