// The catalog is data; these tests are what keep it honest: every x86 event string must encode
// with this libpfm4 (LIBPFM_ENCODE_INACTIVE=1 makes every x86 PMU encodable on any x86 host).
#include "dispatchlab/harness/metric_catalog.h"

#include <linux/perf_event.h>

#include <gtest/gtest.h>

#include "dispatchlab/harness/counter_backend.h"
#include "dispatchlab/harness/perf_event_backend.h"

namespace dlab {
namespace {

TEST(MetricCatalog, EveryX86EventEncodesWithLibpfm4) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "x86 entries can only be encoded by an x86 build of libpfm4";
#endif
  const auto& cat = MetricCatalog::builtin();
  int encoded = 0;
  std::vector<std::string> failures;
  for (const auto& src : cat.sources()) {
    if (src.backend != "perf_event" || !(src.arch.empty() || src.arch == "x86_64")) continue;
    for (const auto& m : src.mappings) {
      for (const auto& [name, ev] : m.inputs) {
        perf_event_attr attr;
        try {
          PerfEventBackend::encode(ev, attr);
          ++encoded;
        } catch (const CounterError& e) {
          failures.push_back(src.key + "/" + m.metric + ": " + e.what());
        }
      }
    }
  }
  for (const auto& f : failures) ADD_FAILURE() << f;
  EXPECT_GT(encoded, 60) << "the catalog should have x86 events for 7 PMU families plus generic and software";
}

TEST(MetricCatalog, BackendBoundOnIceLakeIsTheRawGeneralCounterEvent) {
  // libpfm4 encodes TOPDOWN:BACKEND_BOUND_SLOTS as the perf-metrics placeholder 0x200; the catalog
  // must carry event 0xa4 umask 0x02 instead.
  const auto* icl = MetricCatalog::builtin().source("intel_icl");
  ASSERT_NE(icl, nullptr);
  const auto* m = icl->find("backend_bound");
  ASSERT_NE(m, nullptr);
  perf_event_attr attr;
  PerfEventBackend::encode(m->inputs.at("be"), attr);
  EXPECT_EQ(attr.config & 0xffff, 0x02a4u);
}

TEST(MetricCatalog, EveryPmuSourceCoversEveryHardwareMetricExplicitly) {
  // A PMU source must say for each hardware metric either which event counts it or why none does,
  // so that "unavailable" always comes with a reason from the catalog.
  const auto& cat = MetricCatalog::builtin();
  const std::vector<std::string> hw = {"cycles", "instructions", "branch_mispredicts", "memory_order_flushes",
                                       "store_forward_blocks", "pipeline_resyncs", "backend_bound", "frontend_bound"};
  for (const auto& src : cat.sources()) {
    if (!src.is_pmu_source() || src.fallback) continue;
    for (const auto& metric : hw) EXPECT_NE(src.find(metric), nullptr) << src.key << " lacks " << metric;
  }
  const auto* apple = cat.source("apple_kperf");
  ASSERT_NE(apple, nullptr);
  for (const auto& metric : hw) EXPECT_NE(apple->find(metric), nullptr) << "apple_kperf lacks " << metric;
}

TEST(MetricCatalog, SelectsSourcesByPmuThenCpuModelThenFallback) {
  const auto& cat = MetricCatalog::builtin();
  EXPECT_EQ(cat.pmu_source_for("x86_64", "icx", 6, 106)->key, "intel_icl");
  EXPECT_EQ(cat.pmu_source_for("x86_64", "emr", 6, 207)->key, "intel_spr");
  EXPECT_EQ(cat.pmu_source_for("x86_64", "amd64_fam1ah_zen5", 26, 2)->key, "amd_zen4");
  EXPECT_EQ(cat.pmu_source_for("x86_64", "", 6, 151)->key, "intel_adl_glc");  // libpfm4 4.13 lacks adl_glc
  EXPECT_EQ(cat.pmu_source_for("x86_64", "", 6, 1)->key, "generic");
  EXPECT_EQ(cat.pmu_source_for("aarch64", "arm_n1", 0, 0)->key, "arm_neoverse_n1");
  // Apple's kperf source is for macOS and never chosen on Linux.
  EXPECT_EQ(cat.pmu_source_for("aarch64", "", 8, 0)->key, "generic");
}

TEST(MetricCatalog, RejectsInconsistentEntries) {
  auto wrap = [](const std::string& events) {
    return R"({"metrics": [{"name": "cycles", "unit": "cycles", "description": "d"}], "sources": [{"key": "k", "backend": "perf_event", "events": )" +
           events + "}]}";
  };
  EXPECT_NO_THROW(MetricCatalog::from_json_text(wrap(R"({"cycles": "perf::CYCLES"})"), "t"));
  EXPECT_THROW(MetricCatalog::from_json_text(wrap(R"({"nonsense": "perf::CYCLES"})"), "t"), std::runtime_error);
  EXPECT_THROW(MetricCatalog::from_json_text(wrap(R"({"cycles": {"inputs": {"a": "x"}, "formula": "a / b"}})"), "t"),
               std::runtime_error);
  EXPECT_THROW(MetricCatalog::from_json_text(wrap(R"({"cycles": {"none": ""}})"), "t"), std::runtime_error);
  EXPECT_THROW(MetricCatalog::from_json_text("{", "t"), std::runtime_error);
}

}  // namespace
}  // namespace dlab
