// CPU identification on facts of CPUs this machine is not (harness/tests/fixtures/cpuinfo), through
// to the catalog source, the event encoding and the reasons a plan gives: what makes `just test`
// mean the same on every machine it runs on.
#include "dispatchlab/harness/cpu_identity.h"

#include <gtest/gtest.h>

#include "dispatchlab/harness/counter_plan.h"
#include "dispatchlab/harness/files.h"
#include "dispatchlab/harness/metric_catalog.h"
#include "fake_backend.h"

namespace dlab {
namespace {

const std::string kNoPmu = "no hardware PMU: VM (KVMKVMKVM) exposes no counters to this guest";

CpuFacts fixture(const std::string& name, const std::string& arch, const std::string& libpfm_pmu = "") {
  std::string path = std::string(DLAB_TEST_SOURCE_DIR) + "/harness/tests/fixtures/cpuinfo/" + name;
  std::string text = read_text_file(path);
  EXPECT_FALSE(text.empty()) << path;
  CpuFacts f = parse_cpuinfo(text, arch, name);
  f.libpfm_pmu = libpfm_pmu;
  return f;
}

CpuIdentity identify(const CpuFacts& f) { return CpuTable::builtin().identify(f, MetricCatalog::builtin()); }

// A plan for that CPU in a VM without a PMU, over a perf_event backend that opens nothing.
CounterPlan plan_in_vm(const CpuFacts& f, const CpuIdentity& id, BackendSet& b) {
  b.add(std::make_unique<testing::FakeBackend>("perf_event", std::map<std::string, double>{{"perf::TASK-CLOCK", 1}}));
  return plan_counters(MetricCatalog::builtin(), b, {f.arch, f.os, f.libpfm_pmu, id.catalog_source, kNoPmu});
}

TEST(CpuIdentity, IceLakeSpIsCountedWithLibpfm4Names) {
  CpuFacts f = fixture("icelake_sp_kvm.txt", "x86_64", "icx");
  EXPECT_EQ(f.vendor, "GenuineIntel");
  EXPECT_EQ(f.family, 6);
  EXPECT_EQ(f.model, 106);
  EXPECT_EQ(f.stepping, 6);
  EXPECT_TRUE(f.flags.count("avx512_vnni"));
  CpuIdentity id = identify(f);
  EXPECT_TRUE(id.known);
  EXPECT_EQ(id.key, "icx");
  EXPECT_EQ(id.name, "Ice Lake-SP");
  EXPECT_EQ(id.catalog_source, "intel_icl");
  EXPECT_EQ(id.matched_by, "CPUID GenuineIntel 6:106 stepping 6");
  EXPECT_EQ(id.primary_chain, "mul");
  EXPECT_EQ(id.cross_check_chain, "add_reg");
  EXPECT_EQ(id.chain_latency.at("mul"), 3);
  BackendSet b;
  CounterPlan plan = plan_in_vm(f, id, b);
  EXPECT_EQ(plan.encoding, EventEncoding::libpfm4);
  EXPECT_EQ(plan.selection("cycles")->native_event(), "icl::UNHALTED_CORE_CYCLES");
}

TEST(CpuIdentity, EmeraldRapidsIsCountedWithSapphireRapidsEventsAsRawCodes) {
  // Debian 12's libpfm4 4.13 detects no PMU on model 207.
  CpuFacts f = fixture("emerald_rapids_kvm.txt", "x86_64", "");
  CpuIdentity id = identify(f);
  EXPECT_EQ(id.key, "emr");
  EXPECT_EQ(id.name, "Emerald Rapids");
  EXPECT_EQ(id.catalog_source, "intel_spr");
  EXPECT_NE(id.note.find("Sapphire Rapids"), std::string::npos);
  BackendSet b;
  CounterPlan plan = plan_in_vm(f, id, b);
  EXPECT_EQ(plan.pmu_source, "intel_spr");
  EXPECT_EQ(plan.encoding, EventEncoding::raw);
  EXPECT_EQ(plan.selection("cycles")->native_event(), "perf_raw::r003c");
  EXPECT_EQ(plan.selection("store_forward_blocks")->native_event(), "perf_raw::r8203");
  EXPECT_EQ(plan.selection("cycles")->encoding_name(), "raw");
  // Every hardware metric is unavailable for the machine's reason, the flushes included.
  for (const char* m : {"cycles", "instructions", "branch_mispredicts", "memory_order_flushes", "store_forward_blocks",
                        "pipeline_resyncs", "backend_bound", "frontend_bound"}) {
    const auto* c = plan.selection(m);
    EXPECT_FALSE(c->availability.available) << m;
    EXPECT_EQ(c->availability.reason.rfind(kNoPmu, 0), 0u) << m << ": " << c->availability.reason;
  }
}

TEST(CpuIdentity, AModelTheFeaturesContradictIsIdentifiedByItsFeatures) {
  // Recorded on a development VM: CPUID model 167 (Rocket Lake) with AMX and AVX512-FP16.
  CpuFacts f = fixture("kvm_model167_with_amx.txt", "x86_64", "icl");
  EXPECT_EQ(f.model, 167);
  CpuIdentity id = identify(f);
  EXPECT_TRUE(id.known);
  EXPECT_EQ(id.key, "spr-class");
  EXPECT_EQ(id.catalog_source, "intel_spr");
  EXPECT_NE(id.note.find("Rocket Lake"), std::string::npos) << id.note;
  EXPECT_NE(id.note.find("amx_tile"), std::string::npos) << id.note;
  EXPECT_EQ(id.matched_by, "CPU features (amx_tile)");
  // libpfm4 detected icl from the model; that does not vouch for intel_spr's names.
  EXPECT_EQ(MetricCatalog::builtin().source(id.catalog_source)->encoding_for(f.libpfm_pmu), EventEncoding::raw);
}

TEST(CpuIdentity, Zen4) {
  CpuFacts f = fixture("zen4_genoa.txt", "x86_64", "amd64_fam19h_zen4");
  CpuIdentity id = identify(f);
  EXPECT_EQ(id.key, "zen4");
  EXPECT_EQ(id.catalog_source, "amd_zen4");
  EXPECT_EQ(id.chain_latency.at("mul"), 3);
  BackendSet b;
  CounterPlan plan = plan_in_vm(f, id, b);
  EXPECT_EQ(plan.encoding, EventEncoding::libpfm4);
  EXPECT_EQ(plan.selection("pipeline_resyncs")->native_event(), "amd64_fam19h_zen4::RESYNCS");
  // Zen 5 on this libpfm4 (no zen5 PMU): Zen 4's events as raw codes.
  CpuFacts zen5 = f;
  zen5.family = 26;
  zen5.model = 2;
  zen5.libpfm_pmu = "";
  CpuIdentity id5 = identify(zen5);
  EXPECT_EQ(id5.key, "zen5");
  EXPECT_EQ(id5.catalog_source, "amd_zen4");
  EXPECT_EQ(MetricCatalog::builtin().source("amd_zen4")->encoding_for(""), EventEncoding::raw);
}

TEST(CpuIdentity, AlderLakeNamesBothCoreTypes) {
  CpuIdentity id = identify(fixture("alder_lake_hybrid.txt", "x86_64", ""));
  EXPECT_EQ(id.key, "adl");
  EXPECT_EQ(id.cores, (std::vector<std::string>{"Golden Cove (P)", "Gracemont (E)"}));
  EXPECT_EQ(id.catalog_source, "intel_adl_glc");
}

TEST(CpuIdentity, NeoverseV2ByMidrWithItsMultiplyLatency) {
  CpuFacts f = fixture("neoverse_v2.txt", "aarch64", "");
  ASSERT_EQ(f.arm_cores.size(), 1u);
  EXPECT_EQ(f.arm_cores[0], std::make_pair(0x41u, 0xd4fu));
  EXPECT_TRUE(f.flags.count("sve2"));
  CpuIdentity id = identify(f);
  EXPECT_EQ(id.key, "neoverse-v2");
  EXPECT_EQ(id.catalog_source, "arm_neoverse_v2");
  EXPECT_EQ(id.matched_by, "MIDR implementer 0x41 part 0xd4f");
  EXPECT_EQ(id.chain_latency.at("mul"), 2);
  const EventSource* src = MetricCatalog::builtin().source(id.catalog_source);
  EXPECT_EQ(src->encoding_for(""), EventEncoding::raw);
  EXPECT_EQ(src->find("cycles")->describe(EventEncoding::raw), "perf_raw::r0011");
}

TEST(CpuIdentity, AppleSiliconOnLinuxAndOnMacOs) {
  CpuFacts asahi = fixture("apple_m1_asahi.txt", "aarch64", "");
  EXPECT_EQ(asahi.arm_cores, (std::vector<std::pair<unsigned, unsigned>>{{0x61, 0x022}, {0x61, 0x023}}));
  CpuIdentity linux_id = identify(asahi);
  EXPECT_EQ(linux_id.key, "apple-m1");
  EXPECT_EQ(linux_id.cores.size(), 2u);
  EXPECT_EQ(linux_id.catalog_source, "apple_m1_linux");  // Asahi's perf driver; kperf is macOS's
  EXPECT_EQ(linux_id.matched_by, "MIDR implementer 0x61 parts 0x022, 0x023");

  CpuFacts mac;
  mac.arch = "aarch64";
  mac.os = "darwin";
  mac.brand = "Apple M2 Pro";
  CpuIdentity mac_id = identify(mac);
  EXPECT_EQ(mac_id.key, "apple-m2");
  EXPECT_EQ(mac_id.catalog_source, "apple_kperf");
  EXPECT_EQ(mac_id.chain_latency.at("mul"), 3);
  mac.brand = "Apple M20";  // a prefix is not a match
  EXPECT_FALSE(identify(mac).known);
}

TEST(CpuIdentity, UnknownCpusFallBackToLibpfm4ThenTheGenericEvents) {
  CpuFacts f = fixture("unknown_intel.txt", "x86_64", "");
  CpuIdentity id = identify(f);
  EXPECT_FALSE(id.known);
  EXPECT_EQ(id.name.rfind("unknown (CPUID GenuineIntel 6:250", 0), 0u) << id.name;
  EXPECT_EQ(id.catalog_source, "generic");
  EXPECT_EQ(id.key, "x86_64");
  f.libpfm_pmu = "spr";  // a newer libpfm4 than the table
  CpuIdentity by_pfm = identify(f);
  EXPECT_EQ(by_pfm.catalog_source, "intel_spr");
  EXPECT_EQ(by_pfm.key, "spr");
  // An arm64 core the table does not know has no multiply latency: no calibration will publish.
  CpuFacts arm = fixture("neoverse_v2.txt", "aarch64", "");
  arm.arm_cores = {{0x41, 0xfff}};
  CpuIdentity unknown_arm = identify(arm);
  EXPECT_FALSE(unknown_arm.known);
  EXPECT_EQ(unknown_arm.chain_latency.count("mul"), 0u);
}

TEST(CpuIdentity, MalformedCpuinfoNamesFileAndLine) {
  try {
    fixture("malformed_model.txt", "x86_64");
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("malformed_model.txt:4:"), std::string::npos) << e.what();
  }
}

TEST(CpuTable, EveryX86ModelIsClaimedByOneEntryAtMost) {
  // Overlapping ranges would make identification depend on the order of the table.
  const auto& entries = CpuTable::builtin().entries();
  for (size_t i = 0; i < entries.size(); ++i)
    for (size_t j = i + 1; j < entries.size(); ++j) {
      const auto &a = entries[i], &b = entries[j];
      if (a.vendor.empty() || a.vendor != b.vendor || a.family != b.family) continue;
      for (auto [alo, ahi] : a.models)
        for (auto [blo, bhi] : b.models) {
          if (alo > bhi || blo > ahi) continue;
          bool steppings_disjoint = !a.steppings.empty() && !b.steppings.empty();
          for (auto [slo, shi] : a.steppings)
            for (auto [tlo, thi] : b.steppings)
              if (!(slo > thi || tlo > shi)) steppings_disjoint = false;
          EXPECT_TRUE(steppings_disjoint) << a.key << " and " << b.key << " both claim models " << alo << "-" << ahi;
        }
    }
  EXPECT_GE(entries.size(), 25u);
}

TEST(CpuTable, RejectsEntriesThatNameNoCatalogSource) {
  const std::string head = R"({"calibration": {"tolerance": 0.1,
      "x86_64": {"primary": "mul", "cross_check": "add_reg", "latency": {"mul": 3}},
      "aarch64": {"primary": "mul", "cross_check": "add_reg", "latency": {}}}, "feature_classes": [], "cpus": [)";
  EXPECT_NO_THROW(CpuTable::from_json_text(head + R"({"key": "k", "name": "n", "source": "generic", "vendor": "V", "family": 6, "models": ["1-2"]}]})", "t"));
  EXPECT_THROW(CpuTable::from_json_text(head + R"({"key": "k", "name": "n", "source": "nope"}]})", "t"), std::runtime_error);
  EXPECT_THROW(CpuTable::from_json_text(head + R"({"key": "k", "name": "n", "source": "generic", "models": ["9-1"]}]})", "t"),
               std::runtime_error);
  EXPECT_THROW(CpuTable::from_json_text(head + R"({"key": "k", "name": "n", "source": "generic", "parts": ["d0c"]}]})", "t"),
               std::runtime_error);
  EXPECT_THROW(CpuTable::from_json_text("{", "t"), std::runtime_error);
}

TEST(CpuIdentity, ThisMachineIsIdentifiedOrSaysWhatItSaw) {
  const CpuIdentity& id = this_cpu_identity();
  EXPECT_FALSE(id.key.empty());
  EXPECT_FALSE(id.name.empty());
  EXPECT_FALSE(id.matched_by.empty());
  EXPECT_FALSE(id.primary_chain.empty());
}

}  // namespace
}  // namespace dlab
