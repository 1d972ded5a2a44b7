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

TEST(MetricCatalog, EveryRawCodeIsWhatLibpfm4EncodesItsNameAs) {
  // The raw tables are how CPUs newer than this libpfm4 are counted; they are kept beside the
  // names, and this test is what keeps the two from drifting apart.
#if !defined(__x86_64__)
  GTEST_SKIP() << "x86 entries can only be encoded by an x86 build of libpfm4";
#endif
  int checked = 0;
  for (const auto& src : MetricCatalog::builtin().sources()) {
    if (src.arch != "x86_64") continue;
    for (const auto& [name, raw] : src.raw) {
      perf_event_attr by_name, by_code;
      PerfEventBackend::encode(name, by_name);
      PerfEventBackend::encode(raw, by_code);
      EXPECT_EQ(by_name.type, by_code.type) << src.key << ": " << name;
      EXPECT_EQ(by_name.config, by_code.config) << src.key << ": " << name << " is " << std::hex << by_name.config << ", not " << raw;
      ++checked;
    }
    // Every counted input of a source with a raw table has its raw form.
    if (src.raw.empty()) continue;
    for (const auto& m : src.mappings)
      if (m.counted()) EXPECT_EQ(m.raw_inputs.size(), m.inputs.size()) << src.key << "/" << m.metric;
  }
  EXPECT_GT(checked, 30);
  // Arm codes cannot be encoded on x86; they are the architected PMUv3 common event numbers.
  for (const auto& src : MetricCatalog::builtin().sources())
    if (src.arch == "aarch64")
      for (const auto& [name, raw] : src.raw) EXPECT_EQ(raw.rfind("perf_raw::r", 0), 0u) << name;
}

TEST(MetricCatalog, EncodingIsLibpfm4OnlyWhenLibpfm4DetectedTheSourcesPmu) {
  const auto& cat = MetricCatalog::builtin();
  EXPECT_EQ(cat.source("intel_spr")->encoding_for("spr"), EventEncoding::libpfm4);
  EXPECT_EQ(cat.source("intel_spr")->encoding_for(""), EventEncoding::raw);  // Emerald Rapids on libpfm4 4.13
  EXPECT_EQ(cat.source("intel_adl_glc")->encoding_for("adl_glc"), EventEncoding::raw);  // written as raw codes
  EXPECT_EQ(cat.source("software")->encoding_for(""), EventEncoding::libpfm4);
  EXPECT_EQ(cat.source("intel_spr")->find("cycles")->describe(EventEncoding::raw), "perf_raw::r003c");
}

TEST(MetricCatalog, FindsSourcesByLibpfm4PmuAndTheFallback) {
  const auto& cat = MetricCatalog::builtin();
  EXPECT_EQ(cat.source_for_libpfm_pmu("x86_64", "icx")->key, "intel_icl");
  EXPECT_EQ(cat.source_for_libpfm_pmu("x86_64", "amd64_fam1ah_zen5")->key, "amd_zen4");
  EXPECT_EQ(cat.source_for_libpfm_pmu("aarch64", "arm_n1")->key, "arm_neoverse_n1");
  EXPECT_EQ(cat.source_for_libpfm_pmu("x86_64", ""), nullptr);
  EXPECT_EQ(cat.fallback_source("x86_64")->key, "generic");
  EXPECT_EQ(cat.fallback_source("aarch64")->key, "generic");
  EXPECT_TRUE(cat.is_hardware_metric("memory_order_flushes"));
  EXPECT_TRUE(cat.is_hardware_metric("pipeline_resyncs"));
  EXPECT_FALSE(cat.is_hardware_metric("task_clock"));
  EXPECT_FALSE(cat.is_hardware_metric("cycles_tsc_estimate"));
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
  // One event with a scope; 'event' does not mix with a formula.
  auto one = MetricCatalog::from_json_text(wrap(R"({"cycles": {"event": "perf::CYCLES", "scope": "package"}})"), "t");
  EXPECT_EQ(one.source("k")->find("cycles")->inputs.at("value"), "perf::CYCLES");
  EXPECT_EQ(one.source("k")->find("cycles")->scope, "package");
  EXPECT_THROW(MetricCatalog::from_json_text(wrap(R"({"cycles": {"event": "x", "inputs": {"a": "x"}, "formula": "a"}})"), "t"),
               std::runtime_error);
}

TEST(MetricCatalog, EnergyComesFromRaplPerfThenPowercapAndNamesMacOsSource) {
  const auto& cat = MetricCatalog::builtin();
  std::vector<std::string> order;
  for (const auto& s : cat.sources())
    if (s.find("energy_joules")) order.push_back(s.key);
  EXPECT_EQ(order, (std::vector<std::string>{"rapl_perf", "rapl_powercap", "apple_task_energy"}));
  EXPECT_EQ(cat.source("rapl_perf")->find("energy_joules")->inputs.at("value"), "power/energy-pkg/");
  EXPECT_EQ(cat.source("rapl_perf")->find("energy_cores_joules")->inputs.at("value"), "power/energy-cores/");
  EXPECT_EQ(cat.source("rapl_powercap")->find("energy_joules")->scope, "package");
  EXPECT_EQ(cat.source("apple_task_energy")->find("energy_joules")->inputs.at("value"), "task_power_info_v2.task_energy");
  EXPECT_EQ(cat.source("apple_task_energy")->os, "darwin");
  // Energy interfaces are not core PMUs: a VM's missing PMU is not why energy is missing.
  for (const char* k : {"rapl_perf", "rapl_powercap", "apple_task_energy"}) EXPECT_FALSE(cat.source(k)->is_pmu_source()) << k;
  EXPECT_FALSE(cat.is_hardware_metric("energy_joules"));
  EXPECT_NE(cat.metric("energy_joules")->note.find("package scope"), std::string::npos);
  EXPECT_EQ(cat.metric("energy_joules")->unit, "joules");
}

}  // namespace
}  // namespace dlab
