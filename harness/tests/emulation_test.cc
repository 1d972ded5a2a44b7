// Emulation is never a measurement: detection on recorded views of processes under qemu-user (one
// captured for real), qemu-system TCG, FEX-Emu, box64 and Rosetta (harness/tests/fixtures/emulation),
// and what follows from it: no cycle estimate, every hardware metric unavailable with the reason,
// every result row marked, the results folder kept apart.
#include "dispatchlab/harness/emulation.h"

#include <cstdlib>

#include <gtest/gtest.h>

#include "dispatchlab/harness/counter_plan.h"
#include "dispatchlab/harness/fingerprint.h"
#include "dispatchlab/harness/metric_catalog.h"
#include "dispatchlab/harness/result_rows.h"
#include "dispatchlab/harness/run_protocol.h"
#include "dispatchlab/harness/tsc.h"
#include "fake_backend.h"

namespace dlab {
namespace {

EmulationView fixture(const std::string& name, const std::string& arch) {
  return EmulationView::recorded(std::string(DLAB_TEST_SOURCE_DIR) + "/harness/tests/fixtures/emulation/" + name, arch);
}

std::vector<std::string> methods(const Emulation& e, bool decisive_only = true) {
  std::vector<std::string> out;
  for (const auto& ev : e.evidence)
    if (!decisive_only || ev.decisive) out.push_back(ev.method);
  return out;
}

bool has(const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); }

TEST(Emulation, NativeKvmGuestIsNotEmulated) {
  // Captured on the development VM: a hypervisor (KVM) is not an emulator.
  Emulation e = detect_emulation(fixture("native_x86_kvm", "x86_64"));
  EXPECT_FALSE(e.emulated) << e.reason();
  EXPECT_TRUE(e.evidence.empty()) << e.evidence.front().detail;
  EXPECT_EQ(e.reason(), "");
  EXPECT_EQ(e.row_label(), "");
}

TEST(Emulation, QemuUserX86OnX86IsFoundFiveWays) {
  // Captured under qemu-x86_64-static 7.2 on the same VM.
  Emulation e = detect_emulation(fixture("qemu_user_x86_64", "x86_64"));
  ASSERT_TRUE(e.emulated);
  EXPECT_EQ(e.emulator, "qemu-user");
  auto d = methods(e);
  for (const char* m : {"hypervisor-leaf", "cpuid-brand", "cpuid-vs-cpuinfo", "comm", "maps"}) EXPECT_TRUE(has(d, m)) << m;
  auto all = methods(e, false);
  EXPECT_EQ(std::count(all.begin(), all.end(), "auxv"), 2);  // no vDSO; AT_BASE at 0x4002806000
  EXPECT_EQ(e.reason().rfind("emulated: qemu-user (", 0), 0u) << e.reason();
  EXPECT_NE(e.reason().find("found by hypervisor-leaf, cpuid-brand, cpuid-vs-cpuinfo, comm, maps;"), std::string::npos) << e.reason();
  std::string cpuid_detail;
  for (const auto& ev : e.evidence)
    if (ev.method == "cpuid-vs-cpuinfo") cpuid_detail = ev.detail;
  EXPECT_NE(cpuid_detail.find("AuthenticAMD 15:107"), std::string::npos) << cpuid_detail;
  EXPECT_NE(cpuid_detail.find("GenuineIntel 6:167"), std::string::npos) << cpuid_detail;
  EXPECT_EQ(e.row_label().rfind("qemu-user (hypervisor-leaf", 0), 0u) << e.row_label();
  auto j = e.to_json();
  EXPECT_EQ(j["emulated"], true);
  EXPECT_EQ(j["emulator"], "qemu-user");
  EXPECT_EQ(j["evidence"].size(), e.evidence.size());
}

TEST(Emulation, QemuUserArm64OnX86) {
  Emulation e = detect_emulation(fixture("qemu_user_aarch64_on_x86", "aarch64"));
  ASSERT_TRUE(e.emulated);
  EXPECT_EQ(e.emulator, "qemu-user");
  auto d = methods(e);
  for (const char* m : {"kernel-arch", "cpuinfo-arch", "midr", "comm"}) EXPECT_TRUE(has(d, m)) << m;
  EXPECT_NE(e.evidence.front().detail.find("the kernel is x86_64"), std::string::npos) << e.evidence.front().detail;
  // The same process seen as an x86-64 binary would not be a foreign architecture.
  Emulation as_x86 = detect_emulation(fixture("qemu_user_aarch64_on_x86", "x86_64"));
  EXPECT_FALSE(has(methods(as_x86), "kernel-arch"));
}

TEST(Emulation, QemuSystemTcgIsAWholeMachine) {
  Emulation e = detect_emulation(fixture("qemu_system_tcg_x86", "x86_64"));
  ASSERT_TRUE(e.emulated);
  EXPECT_EQ(e.emulator, "qemu-system (TCG)");
  EXPECT_EQ(methods(e), (std::vector<std::string>{"hypervisor-leaf", "cpuid-brand"}));
}

TEST(Emulation, FexBox64AndRosettaAreNamed) {
  Emulation fex = detect_emulation(fixture("fex_on_arm64", "x86_64"));
  ASSERT_TRUE(fex.emulated);
  EXPECT_EQ(fex.emulator, "FEX-Emu");
  for (const char* m : {"kernel-arch", "cpuinfo-arch", "hypervisor-leaf", "maps"}) EXPECT_TRUE(has(methods(fex), m)) << m;
  EXPECT_TRUE(has(methods(fex, false), "environment"));

  Emulation box = detect_emulation(fixture("box64_on_arm64", "x86_64"));
  ASSERT_TRUE(box.emulated);
  EXPECT_EQ(box.emulator, "box64");
  EXPECT_TRUE(has(methods(box), "cpuid-brand"));
  EXPECT_TRUE(has(methods(box), "maps"));

  Emulation rosetta = detect_emulation(fixture("rosetta_linux_vm", "x86_64"));
  ASSERT_TRUE(rosetta.emulated);
  EXPECT_EQ(rosetta.emulator, "Rosetta 2");
  EXPECT_TRUE(has(methods(rosetta), "maps"));
  EXPECT_TRUE(has(methods(rosetta, false), "binfmt"));
}

TEST(Emulation, NativeArm64ReadsItsOwnMidr) {
  EmulationView v = fixture("native_neoverse_v2", "aarch64");
  Emulation e = detect_emulation(v);
  EXPECT_FALSE(e.emulated) << e.reason();
  EXPECT_TRUE(e.evidence.empty());
  // A MIDR the kernel's cores do not have: something answers the read itself.
  v.executed.midr = 0x411fd0c0;  // Neoverse N1
  Emulation other = detect_emulation(v);
  EXPECT_TRUE(other.emulated);
  EXPECT_EQ(methods(other), (std::vector<std::string>{"midr"}));
  EXPECT_EQ(other.emulator, "an emulator or binary translator");
}

TEST(Emulation, OneSupportingSignAloneIsNotEnough) {
  // A native kernel booted with vdso=0 has no AT_SYSINFO_EHDR; that alone is no emulator.
  EmulationView v = fixture("native_x86_kvm", "x86_64");
  v.auxv.erase("AT_SYSINFO_EHDR");
  Emulation e = detect_emulation(v);
  EXPECT_FALSE(e.emulated);
  ASSERT_EQ(e.evidence.size(), 1u);
  EXPECT_FALSE(e.evidence[0].decisive);
  // Nor is a box64 variable set in a native shell; the two together are.
  v.environment["BOX64_LOG"] = "1";
  EXPECT_TRUE(detect_emulation(v).emulated);
}

TEST(Emulation, AuxvTextIsParsedAsLdShowAuxvPrintsIt) {
  auto a = parse_auxv_text("AT_SYSINFO_EHDR:      0x7f8cbb58b000\nAT_PAGESZ:            4096\nAT_??? (0x1b): 0x1c\nAT_EXECFN:            /bin/true\n");
  EXPECT_EQ(a.size(), 3u);
  EXPECT_EQ(a.at("AT_SYSINFO_EHDR"), "0x7f8cbb58b000");
  EXPECT_EQ(a.at("AT_EXECFN"), "/bin/true");
}

Emulation qemu_user() { return detect_emulation(fixture("qemu_user_x86_64", "x86_64")); }

TEST(Emulation, NoCycleEstimateUnderEmulation) {
  Emulation e = qemu_user();
  CpuIdentity id = this_cpu_identity();
  TscCalibration c = calibrate_tsc(id, &e);
  EXPECT_FALSE(c.core_cycles_per_tick.has_value());
  EXPECT_TRUE(c.chains.empty()) << "no chain is timed under a translator";
  EXPECT_EQ(c.refused.rfind("emulated: qemu-user (", 0), 0u) << c.refused;
  EXPECT_GT(c.tsc_hz, 0);
  // ... so the estimated metric is unavailable with that reason.
  BackendSet b;
  b.add(std::make_unique<TscBackend>(c));
  CounterPlan plan = plan_counters(MetricCatalog::builtin(), b, {"x86_64", "linux", "", "generic", "", e.reason()});
  const auto* est = plan.selection("cycles_tsc_estimate");
  EXPECT_FALSE(est->availability.available);
  EXPECT_EQ(est->availability.reason.rfind("tsc: emulated: qemu-user (", 0), 0u) << est->availability.reason;
  EXPECT_TRUE(plan.selection("tsc_ticks")->availability.available);
}

TEST(Emulation, EveryHardwareMetricIsUnavailableWithTheReason) {
  // Even where the events would open (a host PMU seen through qemu-user's syscalls), a translator's
  // counts are of its own work.
  Emulation e = qemu_user();
  BackendSet b;
  b.add(std::make_unique<testing::FakeBackend>(
      "perf_event", std::map<std::string, double>{{"perf_raw::r003c", 1}, {"perf_raw::r00c0", 1}, {"perf::TASK-CLOCK", 1}}));
  b.add(std::make_unique<testing::FakeBackend>("papi", std::map<std::string, double>{{"PAPI_TOT_CYC", 1}}));
  CounterPlan plan = plan_counters(MetricCatalog::builtin(), b, {"x86_64", "linux", "", "intel_spr", "", e.reason()});
  for (const char* m : {"cycles", "instructions", "branch_mispredicts", "memory_order_flushes", "backend_bound"}) {
    const auto* c = plan.selection(m);
    EXPECT_FALSE(c->availability.available) << m;
    EXPECT_EQ(c->availability.reason.rfind("emulated: qemu-user", 0), 0u) << m << ": " << c->availability.reason;
    EXPECT_NE(c->availability.reason.find("count its work"), std::string::npos) << c->availability.reason;
  }
  EXPECT_TRUE(plan.selection("task_clock")->availability.available);  // the process's own time, still marked emulated in rows
  // Natively the same backends count.
  CounterPlan native = plan_counters(MetricCatalog::builtin(), b, {"x86_64", "linux", "", "intel_spr", "", ""});
  EXPECT_TRUE(native.selection("cycles")->availability.available);
}

TEST(Emulation, EveryResultRowSaysItWasEmulatedAndTheFolderIsKeptApart) {
  MachineFingerprint m;
  m.arch = "x86_64";
  m.identity.key = "spr-class";
  m.cpu_family = 6;
  m.cpu_model = 167;
  m.emulation = qemu_user();
  EXPECT_EQ(m.cpu_slug(), "spr-class-6-167-emulated");
  EXPECT_EQ(m.to_json()["emulation"]["emulator"], "qemu-user");
  RunResult r;
  r.metrics.push_back({"task_clock", "ns", "perf_event", "perf::TASK-CLOCK", false, Availability::yes(), ""});
  MetricValue one;
  one.value = 1.0;
  r.cases.push_back({"a", {{one}}});
  std::vector<MeasuredCase> vs{{"a", [] {}}};
  auto t = experiment_tables("run", "exp", r, vs, m);
  ASSERT_EQ(t.summary.size(), 1u);
  EXPECT_EQ(t.summary.at(0, "emulated"), m.emulation.row_label());
  MachineFingerprint native = m;
  native.emulation = {};
  EXPECT_EQ(native.cpu_slug(), "spr-class-6-167");
  EXPECT_EQ(experiment_tables("run", "exp", r, vs, native).summary.at(0, "emulated"), "");
}

TEST(ThisProcess, IsWhatTheTestRunExpects) {
  // ctest sets DLAB_EXPECT_EMULATED: "no" for the native run, "qemu-user" for the run of this test
  // binary under qemu-x86_64-static (harness.emulation_under_qemu_user) or under the cross build's
  // emulator.
  const Emulation& e = this_process_emulation();
  const char* expect = std::getenv("DLAB_EXPECT_EMULATED");
  if (!expect) GTEST_SKIP() << "DLAB_EXPECT_EMULATED not set; detected: " << (e.emulated ? e.reason() : "native");
  if (std::string(expect) == "no") {
    // A whole machine under qemu-system TCG is a fact of the machine the suite runs on, not a fault.
    if (e.emulated && e.emulator == "qemu-system (TCG)") GTEST_SKIP() << "this machine is emulated: " << e.reason();
    EXPECT_FALSE(e.emulated) << e.reason();
  } else {
    ASSERT_TRUE(e.emulated) << "expected " << expect;
    EXPECT_EQ(e.emulator, expect) << e.reason();
    EXPECT_FALSE(process_tsc_calibration().core_cycles_per_tick.has_value());
    EXPECT_EQ(process_tsc_calibration().refused.rfind("emulated: ", 0), 0u) << process_tsc_calibration().refused;
    EXPECT_EQ(this_host_cpu().emulated, e.reason());
  }
}

}  // namespace
}  // namespace dlab
