#include "dispatchlab/harness/run_protocol.h"

#include <gtest/gtest.h>

#include "dispatchlab/harness/result_rows.h"
#include "fake_backend.h"

namespace dlab {
namespace {

using testing::FakeBackend;

const char* kCatalog = R"({
  "metrics": [
    {"name": "ticks", "unit": "ticks", "description": "t"},
    {"name": "flushes", "unit": "events", "description": "f"}
  ],
  "sources": [
    {"key": "cpu", "backend": "perf_event", "fallback": true, "events": {"flushes": "FLUSH"}},
    {"key": "tsc", "backend": "tsc", "events": {"ticks": "tsc"}}
  ]})";

// A backend whose "tsc" reads back a value chosen by the variant that just ran.
struct Scripted {
  MetricCatalog cat = MetricCatalog::from_json_text(kCatalog, "test");
  BackendSet backends;
  CounterPlan plan;
  Scripted() {
    backends.add(std::make_unique<FakeBackend>("perf_event", std::map<std::string, double>{}));
    backends.add(std::make_unique<FakeBackend>("tsc", std::map<std::string, double>{{"tsc", 100}}));
    plan = plan_counters(cat, backends, {"x86_64", "linux", "", "cpu", ""});
  }
};

RunProtocol quick(bool interleave) {
  RunProtocol p;
  p.samples = 3;
  p.warmup_rounds = 1;
  p.interleave = interleave;
  p.pin_cpu = -1;
  return p;
}

TEST(RunProtocol, InterleavesVariantsAfterWarmUp) {
  Scripted s;
  Meter meter(s.plan, s.backends);
  int a = 0, b = 0;
  std::vector<MeasuredCase> vs = {{"A", [&] { ++a; }}, {"B", [&] { ++b; }}};
  std::vector<int> progress;
  RunResult r = run_protocol(quick(true), meter, vs, [&](int done, int total, const std::string&) {
    EXPECT_EQ(total, 6);
    progress.push_back(done);
  });
  std::vector<std::string> expect = {"warmup:A", "warmup:B", "sample:A", "sample:B",
                                     "sample:A", "sample:B", "sample:A", "sample:B"};
  EXPECT_EQ(r.execution_log, expect);
  EXPECT_EQ(a, 4);
  EXPECT_EQ(b, 4);
  EXPECT_EQ(progress, (std::vector<int>{1, 2, 3, 4, 5, 6}));
  ASSERT_EQ(r.cases.size(), 2u);
  EXPECT_EQ(r.cases[0].samples.size(), 3u);
  EXPECT_EQ(r.pinned_cpu, -1);
  EXPECT_FALSE(r.pin_note.empty());
}

TEST(RunProtocol, BlockedOrderWhenNotInterleaved) {
  Scripted s;
  Meter meter(s.plan, s.backends);
  std::vector<MeasuredCase> vs = {{"A", [] {}}, {"B", [] {}}};
  RunResult r = run_protocol(quick(false), meter, vs);
  std::vector<std::string> expect = {"warmup:A", "sample:A", "sample:A", "sample:A",
                                     "warmup:B", "sample:B", "sample:B", "sample:B"};
  EXPECT_EQ(r.execution_log, expect);
}

TEST(RunProtocol, PinsToTheLastAllowedCpu) {
  std::string note;
  int cpu = pin_this_thread(-2, note);
  if (cpu < 0) GTEST_SKIP() << note;  // a container may forbid affinity changes
  EXPECT_EQ(sched_getcpu(), cpu);
  EXPECT_TRUE(note.empty());
}

TEST(RunProtocol, ProtocolRoundTripsThroughJson) {
  RunProtocol p = quick(true);
  p.bootstrap.seed = 99;
  RunProtocol q = RunProtocol::from_json(p.to_json());
  EXPECT_EQ(q.to_json(), p.to_json());
}

// A result of two cases on one time metric, `a` and `b` their samples by round.
RunResult timed(const std::string& metric, const std::vector<double>& a, const std::vector<double>& b) {
  RunResult r;
  r.metrics.push_back({metric, "ticks", "tsc", "", false, Availability::yes(), ""});
  r.cases = {{"A", {}}, {"B", {}}};
  for (double x : a) r.cases[0].samples.push_back({MetricValue{x}});
  for (double x : b) r.cases[1].samples.push_back({MetricValue{x}});
  return r;
}

TEST(RunProtocol, TheStopRuleReadsEachCasesRatioIntervalOnTheTimeMetric) {
  std::vector<MeasuredCase> vs = {{"A", nullptr}, {"B", nullptr}};
  // B is exactly twice A in every round: the ratio's interval has no width.
  StopCheck tight = check_intervals(timed("tsc_ticks", {100, 103, 98, 101, 99}, {200, 206, 196, 202, 198}), vs, {});
  EXPECT_EQ(tight.metric, 0);
  EXPECT_NEAR(tight.widest, 0, 1e-12);
  EXPECT_EQ(tight.widest_case, "B");
  // Here the pairs disagree by up to 30%: far wider than any stated half-width.
  StopCheck wide = check_intervals(timed("tsc_ticks", {100, 100, 100, 100, 100}, {200, 140, 260, 170, 230}), vs, {});
  EXPECT_GT(wide.widest, 0.1);
  // No time metric: nothing to check (and run_protocol says so instead of sampling on).
  EXPECT_EQ(check_intervals(timed("flushes", {1, 2}, {3, 4}), vs, {}).metric, -1);
}

TEST(RunProtocol, AdaptiveSamplingStopsOnceTheIntervalsAreNarrowAndRecordsWhy) {
  const char* catalog = R"({"metrics": [{"name": "tsc_ticks", "unit": "ticks", "description": "t"}],
                            "sources": [{"key": "tsc", "backend": "tsc", "events": {"tsc_ticks": "tsc"}}]})";
  MetricCatalog cat = MetricCatalog::from_json_text(catalog, "test");
  BackendSet backends;
  backends.add(std::make_unique<FakeBackend>("tsc", std::map<std::string, double>{{"tsc", 100}}));
  CounterPlan plan = plan_counters(cat, backends, {"x86_64", "linux", "", "cpu", ""});
  Meter meter(plan, backends);
  RunProtocol p = quick(true);
  p.max_samples = 9;
  std::vector<MeasuredCase> vs = {{"A", [] {}}, {"B", [] {}}};
  RunResult r = run_protocol(p, meter, vs);  // every sample reads 100: no width at the least rounds
  EXPECT_EQ(r.rounds, 3);
  EXPECT_EQ(r.cases[1].samples.size(), 3u);
  EXPECT_NE(r.stop_note.find("stopped after 3 rounds"), std::string::npos) << r.stop_note;
  EXPECT_NE(r.protocol.to_json().at("stop_rule").get<std::string>().find("from 3 to 9 rounds"), std::string::npos);
  p.stop_half_width = 0;
  EXPECT_THROW(run_protocol(p, meter, vs), std::invalid_argument);
}

TEST(ResultRows, SummariesArePerUnitWithRatiosAndExplicitGaps) {
  Scripted s;
  Meter meter(s.plan, s.backends);
  // Same raw ticks (100) per run, but B does 4x the work units: per unit B is a quarter of A.
  std::vector<MeasuredCase> vs = {{"A", [] {}, 10, "op", {{"k", "1"}}}, {"B", [] {}, 40, "op", {{"k", "4"}}}};
  RunResult r = run_protocol(quick(true), meter, vs);
  MachineFingerprint m;
  m.build.compiler = "Clang test";
  m.build.git_commit = "abc";
  auto t = experiment_tables("run1", "exp", r, vs, m);
  ASSERT_EQ(t.summary.size(), 4u);  // 2 measured x 2 metrics
  ASSERT_EQ(t.samples.size(), 12u);
  // Row order: A/ticks, A/flushes, B/ticks, B/flushes.
  EXPECT_EQ(t.summary.at(0, "median"), "10");
  EXPECT_EQ(t.summary.at(0, "unit"), "ticks/op");
  EXPECT_EQ(t.summary.at(0, "ratio"), "");  // baseline
  EXPECT_EQ(t.summary.at(2, "median"), "2.5");
  EXPECT_EQ(t.summary.at(2, "ratio"), "0.25");
  EXPECT_EQ(t.summary.at(2, "smaller_k"), "3");
  EXPECT_EQ(t.summary.at(2, "params"), "k=4");
  EXPECT_EQ(t.summary.at(2, "compiler"), "Clang test");
  EXPECT_EQ(t.summary.at(2, "interleaved"), "1");
  // The unavailable metric is empty with its reason, never 0.
  EXPECT_EQ(t.summary.at(1, "median"), "");
  EXPECT_EQ(t.summary.at(1, "n"), "0");
  EXPECT_NE(t.summary.at(1, "unavailable_reason").find("FLUSH"), std::string::npos);
  EXPECT_EQ(t.samples.at(3, "metric"), "flushes");
  EXPECT_EQ(t.samples.at(3, "value"), "");
  EXPECT_EQ(t.samples.at(3, "running_fraction"), "");  // no made-up 1 for a counter that never ran
}

}  // namespace
}  // namespace dlab
