// arm64 CPUs and their counters, as data (issue 33 item 5): identification by MIDR (from
// /proc/cpuinfo and from sysfs) for every arm64 row of harness/catalog/cpus.json, the kinds of core
// of Apple's heterogeneous chips with the CPUs and the perf PMU of each, a run pinned to one kind,
// and every catalog metric's event (or the reason there is none) per core, checked against the
// event lists the kernel shows (harness/tests/fixtures/arm64, shaped after sysfs and `perf list`).
#include <gtest/gtest.h>

#include "dispatchlab/harness/counter_plan.h"
#include "dispatchlab/harness/cpu_identity.h"
#include "dispatchlab/harness/files.h"
#include "dispatchlab/harness/fingerprint.h"
#include "dispatchlab/harness/metric_catalog.h"
#include "dispatchlab/harness/run_protocol.h"
#include "dispatchlab/harness/sysfs_root.h"
#include "fake_backend.h"

namespace dlab {
namespace {

const std::string kFixtures = std::string(DLAB_TEST_SOURCE_DIR) + "/harness/tests/fixtures/";
const std::vector<std::string> kHardware = {"cycles", "instructions", "branch_mispredicts", "memory_order_flushes",
                                            "store_forward_blocks", "pipeline_resyncs", "backend_bound", "frontend_bound"};

CpuFacts cpuinfo(const std::string& name) {
  std::string text = read_text_file(kFixtures + "cpuinfo/" + name);
  EXPECT_FALSE(text.empty()) << name;
  return parse_cpuinfo(text, "aarch64", name);
}

CpuIdentity identify(const CpuFacts& f) { return CpuTable::builtin().identify(f, MetricCatalog::builtin()); }

struct Expected {
  std::string file, key, name, source, system;
  std::optional<double> mul;
};

TEST(Arm64Cpus, EveryArm64RowIsIdentifiedFromItsCpuinfo) {
  const std::vector<Expected> cases = {
      {"neoverse_n1_graviton2.txt", "neoverse-n1", "Neoverse N1", "arm_neoverse_n1", "AWS Graviton2", 2},
      {"neoverse_v1_graviton3.txt", "neoverse-v1", "Neoverse V1", "arm_neoverse_v1", "AWS Graviton3", 2},
      {"neoverse_n2.txt", "neoverse-n2", "Neoverse N2", "arm_neoverse_n2", "", 2},
      {"azure_cobalt_100.txt", "cobalt-100", "Azure Cobalt 100 (Neoverse N2)", "arm_neoverse_n2", "Microsoft Azure Cobalt 100", 2},
      {"neoverse_v2.txt", "neoverse-v2", "Neoverse V2", "arm_neoverse_v2", "Google Axion", 2},
      {"ampereone.txt", "ampereone", "AmpereOne", "arm_pmuv3_common", "AmpereOne (A192)", std::nullopt},
      {"apple_m1_asahi.txt", "apple-m1", "Apple M1", "apple_m1_linux", "", 3},
      {"apple_m1_pro_asahi.txt", "apple-m1", "Apple M1 Pro", "apple_m1_linux", "", 3},
      {"apple_m2_asahi.txt", "apple-m2", "Apple M2", "apple_m1_linux", "", 3},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.file);
    CpuIdentity id = identify(cpuinfo(c.file));
    EXPECT_TRUE(id.known) << id.name;
    EXPECT_EQ(id.key, c.key);
    EXPECT_EQ(id.name, c.name);
    EXPECT_EQ(id.catalog_source, c.source);
    if (!c.system.empty()) EXPECT_NE(std::find(id.systems.begin(), id.systems.end(), c.system), id.systems.end());
    if (c.mul) EXPECT_EQ(id.chain_latency.at("mul"), *c.mul);
    else EXPECT_EQ(id.chain_latency.count("mul"), 0u) << "a core whose MUL latency the table does not give gets no estimate";
    EXPECT_FALSE(id.core_kinds.empty());
  }
  // Cobalt 100 is Microsoft's implementer on an N2 core: libpfm4 (which detects N2 only under 0x41)
  // does not vouch for the names, so the raw codes are used.
  EXPECT_EQ(MetricCatalog::builtin().source("arm_neoverse_n2")->encoding_for(""), EventEncoding::raw);
  EXPECT_EQ(MetricCatalog::builtin().source("arm_neoverse_n2")->encoding_for("arm_n2"), EventEncoding::libpfm4);
}

TEST(Arm64Cpus, CpuinfoGivesEveryCpusMidr) {
  CpuFacts f = cpuinfo("neoverse_n1_graviton2.txt");
  ASSERT_EQ(f.arm_cpus.size(), 2u);
  EXPECT_EQ(f.arm_cpus[1].cpu, 1);
  EXPECT_EQ(f.arm_cpus[0].variant, 3u);
  EXPECT_EQ(f.arm_cpus[0].revision, 1u);
  EXPECT_EQ(f.arm_cpus[0].midr(), 0x413fd0c1u);
  CpuIdentity id = identify(f);
  ASSERT_EQ(id.core_kinds.size(), 1u);
  EXPECT_EQ(id.core_kinds[0].core, "Neoverse N1");
  EXPECT_EQ(id.core_kinds[0].cpus, (std::vector<int>{0, 1}));
  EXPECT_EQ(id.core_kinds[0].midr, "0x413fd0c1");
  EXPECT_TRUE(id.measuring_cpus().empty());  // one kind: any CPU
  EXPECT_EQ(id.core_of(1), "Neoverse N1");
}

TEST(Arm64Cpus, SysfsMidrsNameTheAppleClustersApart) {
  SysfsRoot root(kFixtures + "arm64/asahi_m1");
  auto cpus = read_arm_midrs(root);
  ASSERT_EQ(cpus.size(), 8u);
  EXPECT_EQ(cpus[0].part, 0x022u);
  EXPECT_EQ(cpus[7].part, 0x023u);
  CpuFacts f;
  f.arch = "aarch64";
  f.os = "linux";
  adopt_arm_midrs(f, cpus);
  EXPECT_EQ(f.arm_cores, (std::vector<std::pair<unsigned, unsigned>>{{0x61, 0x022}, {0x61, 0x023}}));
  CpuIdentity id = identify(f);
  EXPECT_EQ(id.key, "apple-m1");
  ASSERT_EQ(id.core_kinds.size(), 2u);
  // Performance cores first, each kind with its CPUs and the perf PMU that counts it.
  EXPECT_EQ(id.core_kinds[0].core, "Firestorm (P)");
  EXPECT_EQ(id.core_kinds[0].kind, "P");
  EXPECT_EQ(id.core_kinds[0].cpus, (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(id.core_kinds[0].kernel_pmu, "apple_firestorm_pmu");
  EXPECT_EQ(id.core_kinds[0].midr, "0x611f0231");
  EXPECT_EQ(id.core_kinds[1].core, "Icestorm (E)");
  EXPECT_EQ(id.core_kinds[1].cpus, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(id.core_kinds[1].kernel_pmu, "apple_icestorm_pmu");
  EXPECT_EQ(id.measuring_cpus(), (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(id.measuring_kernel_pmu(), "apple_firestorm_pmu");
  EXPECT_EQ(id.core_of(2), "Icestorm (E)");
  // Each PMU the table names exists in that machine's sysfs and covers exactly its kind's CPUs.
  for (const auto& k : id.core_kinds) {
    std::string dir = "/sys/bus/event_source/devices/" + k.kernel_pmu;
    ASSERT_TRUE(root.exists(dir)) << dir;
    EXPECT_EQ(parse_cpu_list(root.read(dir + "/cpus")), k.cpus) << k.kernel_pmu;
  }
  // The fingerprint lists both kinds.
  auto j = core_kinds_json(id);
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["core"], "Firestorm (P)");
  EXPECT_EQ(j[1]["cpus"], (std::vector<int>{0, 1, 2, 3}));
  // M2: Avalanche / Blizzard, with their own PMUs.
  CpuIdentity m2 = identify(cpuinfo("apple_m2_asahi.txt"));
  ASSERT_EQ(m2.core_kinds.size(), 2u);
  EXPECT_EQ(m2.core_kinds[0].core, "Avalanche (P)");
  EXPECT_EQ(m2.core_kinds[0].cpus, (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(m2.core_kinds[0].kernel_pmu, "apple_avalanche_pmu");
  EXPECT_EQ(m2.core_kinds[1].kernel_pmu, "apple_blizzard_pmu");
}

TEST(Arm64Cpus, ARunIsPinnedToOneKind) {
  CpuFacts f;
  f.arch = "aarch64";
  adopt_arm_midrs(f, read_arm_midrs(SysfsRoot(kFixtures + "arm64/asahi_m1")));
  CpuIdentity id = identify(f);
  std::string note;
  EXPECT_EQ(choose_pin_cpu(-2, {0, 1, 2, 3, 4, 5, 6, 7}, id, note), 7);
  EXPECT_EQ(note, "");
  EXPECT_EQ(choose_pin_cpu(-2, {0, 1, 5}, id, note), 5);  // the last allowed performance core
  // No performance core allowed: pinned to an E core, saying so.
  EXPECT_EQ(choose_pin_cpu(-2, {0, 1, 2}, id, note), 2);
  EXPECT_NE(note.find("no Firestorm (P) core (CPUs 4,5,6,7)"), std::string::npos) << note;
  EXPECT_NE(note.find("a Icestorm (E) core"), std::string::npos) << note;
  // Pinned by hand to an E core: allowed, with what that means for the counters.
  EXPECT_EQ(choose_pin_cpu(1, {0, 1, 2, 3, 4, 5, 6, 7}, id, note), 1);
  EXPECT_NE(note.find("bound to apple_firestorm_pmu"), std::string::npos) << note;
  EXPECT_EQ(choose_pin_cpu(9, {0, 1}, id, note), -1);
  // One kind of core (x86 here): the last allowed CPU, as before.
  EXPECT_EQ(choose_pin_cpu(-2, {0, 1}, identify(cpuinfo("neoverse_v2.txt")), note), 1);
  EXPECT_EQ(note, "");
}

// The kernel's event list of a PMU in a fixture: event name -> code.
std::map<std::string, unsigned> sysfs_events(const std::string& machine, const std::string& pmu) {
  SysfsRoot root(kFixtures + "arm64/" + machine);
  std::map<std::string, unsigned> out;
  std::string dir = "/sys/bus/event_source/devices/" + pmu + "/events";
  for (const auto& e : root.list(dir)) {
    std::string v = root.read(dir + "/" + e);
    EXPECT_EQ(v.rfind("event=", 0), 0u) << v;
    out[e] = static_cast<unsigned>(parse_unsigned(v.substr(6), e));
  }
  return out;
}

unsigned raw_code(const std::string& perf_raw) { return static_cast<unsigned>(std::stoul(perf_raw.substr(std::string("perf_raw::r").size()), nullptr, 16)); }

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

TEST(Arm64Counters, NeoverseEventsAreTheOnesTheKernelLists) {
  // Every event a Neoverse source names is in the kernel's list for that core, with the same code
  // (the sysfs name is the event's name in lower case).
  for (auto [machine, source] : std::vector<std::pair<std::string, std::string>>{{"graviton2_neoverse_n1", "arm_neoverse_n1"},
                                                                                 {"graviton4_neoverse_v2", "arm_neoverse_v2"}}) {
    auto events = sysfs_events(machine, "armv8_pmuv3_0");
    const EventSource* src = MetricCatalog::builtin().source(source);
    ASSERT_NE(src, nullptr);
    ASSERT_FALSE(src->raw.empty());
    for (const auto& [name, raw] : src->raw) {
      std::string event = lower(name.substr(name.find("::") + 2));
      ASSERT_TRUE(events.count(event)) << machine << " lists no " << event;
      EXPECT_EQ(events.at(event), raw_code(raw)) << machine << ": " << name;
    }
  }
  // The nearest events the reasons name are in the kernel's lists too: INST_SPEC on N1, OP_SPEC,
  // OP_RETIRED and STALL_BACKEND_MEM on V2.
  EXPECT_EQ(sysfs_events("graviton2_neoverse_n1", "armv8_pmuv3_0").at("inst_spec"), 0x1bu);
  auto v2 = sysfs_events("graviton4_neoverse_v2", "armv8_pmuv3_0");
  EXPECT_EQ(v2.at("op_spec"), 0x3bu);
  EXPECT_EQ(v2.at("op_retired"), 0x3au);
  EXPECT_EQ(v2.at("stall_backend_mem"), 0x4005u);
  EXPECT_EQ(sysfs_events("graviton2_neoverse_n1", "armv8_pmuv3_0").count("op_spec"), 0u);
}

TEST(Arm64Counters, AppleCyclesAndInstructionsAreTheDriversSysfsEvents) {
  // Asahi's driver exports two events in sysfs; the catalog's numbers for them must be those, in
  // both clusters' PMUs. `perf list` shows both PMUs.
  const EventSource* src = MetricCatalog::builtin().source("apple_m1_linux");
  ASSERT_NE(src, nullptr);
  for (const char* pmu : {"apple_firestorm_pmu", "apple_icestorm_pmu"}) {
    auto events = sysfs_events("asahi_m1", pmu);
    EXPECT_EQ(events.at("cycles"), raw_code(src->find("cycles")->raw_inputs.at("value"))) << pmu;
    EXPECT_EQ(events.at("instructions"), raw_code(src->find("instructions")->raw_inputs.at("value"))) << pmu;
  }
  std::string list = read_text_file(kFixtures + "arm64/asahi_m1/perf_list.txt");
  for (const auto& e : CpuTable::builtin().entries())
    if (e.key == "apple-m1")
      for (const auto& [part, info] : e.part_info) EXPECT_NE(list.find(info.kernel_pmu + "/cycles/"), std::string::npos) << info.kernel_pmu;
  // Event numbers fit the driver's config:0-7.
  for (const auto& [name, raw] : src->raw) EXPECT_LE(raw_code(raw), 0xffu) << name;
}

TEST(Arm64Counters, EveryMetricHasItsEventOrWhyNotPerCore) {
  // In a plan for each arm64 core (a machine without a PMU), every hardware metric names the
  // core's event, or says why there is none and which event comes nearest.
  for (auto [file, source] : std::vector<std::pair<std::string, std::string>>{{"neoverse_n1_graviton2.txt", "arm_neoverse_n1"},
                                                                              {"neoverse_v1_graviton3.txt", "arm_neoverse_v1"},
                                                                              {"neoverse_n2.txt", "arm_neoverse_n2"},
                                                                              {"neoverse_v2.txt", "arm_neoverse_v2"},
                                                                              {"ampereone.txt", "arm_pmuv3_common"},
                                                                              {"apple_m1_asahi.txt", "apple_m1_linux"}}) {
    SCOPED_TRACE(file);
    const EventSource* src = MetricCatalog::builtin().source(source);
    ASSERT_NE(src, nullptr);
    for (const auto& metric : kHardware) {
      const MetricMapping* m = src->find(metric);
      ASSERT_NE(m, nullptr) << metric;
      if (!m->counted()) {
        EXPECT_NE(m->none_reason.find("nearest"), std::string::npos) << source << "/" << metric << ": " << m->none_reason;
      }
    }
    CpuIdentity id = identify(cpuinfo(file));
    BackendSet b;
    b.add(std::make_unique<testing::FakeBackend>("perf_event", std::map<std::string, double>{}));
    CounterPlan plan = plan_counters(MetricCatalog::builtin(), b, {"aarch64", "linux", "", id.catalog_source, "", ""});
    EXPECT_EQ(plan.pmu_source, source);
    for (const auto& metric : kHardware) {
      const auto* c = plan.selection(metric);
      ASSERT_NE(c, nullptr);
      EXPECT_TRUE(!c->native_event().empty() || !c->availability.reason.empty()) << metric;
    }
  }
  // Apple counts memory-order flushes directly; Neoverse does not, and says what comes nearest.
  BackendSet b;
  b.add(std::make_unique<testing::FakeBackend>("perf_event", std::map<std::string, double>{{"perf_raw::rc4", 1}, {"perf_raw::r02", 1}}));
  CounterPlan apple = plan_counters(MetricCatalog::builtin(), b, {"aarch64", "linux", "", "apple_m1_linux", "", ""});
  EXPECT_EQ(apple.encoding, EventEncoding::raw);
  EXPECT_TRUE(apple.selection("memory_order_flushes")->availability.available);
  EXPECT_EQ(apple.selection("memory_order_flushes")->native_event(), "perf_raw::rc4");
  EXPECT_EQ(apple.selection("pipeline_resyncs")->native_event(), "perf_raw::r84");
  CounterPlan v2 = plan_counters(MetricCatalog::builtin(), b, {"aarch64", "linux", "arm_v2", "arm_neoverse_v2", "", ""});
  EXPECT_EQ(v2.encoding, EventEncoding::libpfm4);
  EXPECT_EQ(v2.selection("cycles")->native_event(), "arm_v2::CPU_CYCLES");
  EXPECT_NE(v2.selection("memory_order_flushes")->availability.reason.find("OP_SPEC (0x3b) - OP_RETIRED (0x3a)"), std::string::npos)
      << v2.selection("memory_order_flushes")->availability.reason;
}

TEST(Arm64Counters, OneCatalogSourcePerCoreNoParallelLists) {
  // Every arm64 row of the CPU table names a source for the OS it runs; every Neoverse source names
  // a libpfm4 PMU Debian 12's libpfm4 4.13 has (pfmlib.h PFM_PMU_ARM_N1, _N2, _V1, _V2).
  const auto& cat = MetricCatalog::builtin();
  for (const auto& e : CpuTable::builtin().entries()) {
    if (e.parts.empty()) continue;
    const EventSource* s = cat.source(e.source);
    ASSERT_NE(s, nullptr) << e.key;
    EXPECT_EQ(s->arch, "aarch64") << e.key;
    EXPECT_TRUE(s->os.empty()) << e.key << ": a Linux row names a Linux source";
  }
  for (auto [source, pmu] : std::vector<std::pair<std::string, std::string>>{
           {"arm_neoverse_n1", "arm_n1"}, {"arm_neoverse_n2", "arm_n2"}, {"arm_neoverse_v1", "arm_v1"}, {"arm_neoverse_v2", "arm_v2"}})
    EXPECT_EQ(cat.source(source)->libpfm_pmus, std::vector<std::string>{pmu}) << source;
}

}  // namespace
}  // namespace dlab
