// energy_joules and energy_cores_joules end to end on recorded machines: which source the plan
// picks with the built-in catalog, joules per call in the summary rows, the scope in every row,
// and the exact reason where there is no RAPL. Only the last test touches this machine, and it
// holds whatever the machine has.
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "rapl_fixtures.h"

#include "dispatchlab/harness/counter_plan.h"
#include "dispatchlab/harness/meter.h"
#include "dispatchlab/harness/powercap.h"
#include "dispatchlab/harness/rapl_perf.h"
#include "dispatchlab/harness/result_rows.h"
#include "dispatchlab/harness/run_protocol.h"
#include "scripted_perf_cpu_events.h"

namespace dlab {
namespace {

using testing::PerfCpuScript;
using testing::ScriptedPerfCpuEvents;

std::string fixture(const std::string& name) { return testing::rapl_fixture(name); }

const HostCpu kHost{"x86_64", "linux", "", "generic", ""};

struct Machine {
  std::shared_ptr<PerfCpuScript> script = std::make_shared<PerfCpuScript>();
  BackendSet backends;
  CounterPlan plan;
  Machine(const std::string& name, int open_errno = 0, const HostCpu& host = kHost) {
    script->open_errno = open_errno;
    for (int cpu : {0, 96}) script->ramp[cpu] = {1000, uint64_t(1) << 31};  // 0.5 J per package between reads
    backends.add(std::make_unique<RaplPerfBackend>(fixture(name), std::make_unique<ScriptedPerfCpuEvents>(script)));
    backends.add(std::make_unique<PowercapBackend>(fixture(name)));
    plan = plan_counters(MetricCatalog::builtin(), backends, host);
  }
  const MetricCandidate& sel(const std::string& metric) const { return *plan.selection(metric); }
};

std::string vm_reason(const std::string& root) {
  return "perf_rapl: no RAPL PMU (" + root + "/sys/bus/event_source/devices/power absent: a VM or a CPU without RAPL); "
         "powercap: no RAPL powercap zone (" + root + "/sys/class/powercap absent: a VM, a CPU without RAPL, or no RAPL "
         "powercap driver loaded)";
}

TEST(EnergyPlan, IntelWithAPowerPmuUsesPerfForBothDomains) {
  Machine m("intel_adl_power_pmu");
  ASSERT_TRUE(m.sel("energy_joules").availability.available) << m.sel("energy_joules").availability.reason;
  EXPECT_EQ(m.sel("energy_joules").source->key, "rapl_perf");
  EXPECT_EQ(m.sel("energy_joules").native_event(), "power/energy-pkg/ [scope: package 0 (cpu 0)]");
  EXPECT_EQ(m.sel("energy_cores_joules").source->key, "rapl_perf");
  EXPECT_EQ(m.sel("energy_cores_joules").native_event(), "power/energy-cores/ [scope: core domain (PP0) of package 0 (cpu 0)]");
  // The caveat of an available energy metric says what it covers.
  const auto& why = m.sel("energy_joules").availability.reason;
  EXPECT_EQ(why.rfind("package scope: RAPL measures the whole package while the case runs", 0), 0u) << why;
  EXPECT_NE(why.find("package 0 (cpu 0); 2.3283064365386963e-10 joules per count"), std::string::npos) << why;
}

TEST(EnergyPlan, NotPermittedFallsBackToPowercap) {
  Machine m("intel_adl_power_pmu", EACCES);
  const auto& e = m.sel("energy_joules");
  ASSERT_TRUE(e.availability.available) << e.availability.reason;
  EXPECT_EQ(e.source->key, "rapl_powercap");
  EXPECT_EQ(e.native_event(), "powercap/package [scope: package-0 (intel-rapl:0)]");
  bool saw_perf = false;
  for (const auto& c : m.plan.candidates)
    if (c.metric->name == "energy_joules" && c.source && c.source->key == "rapl_perf") {
      saw_perf = true;
      EXPECT_EQ(c.availability.reason.rfind("not permitted: RAPL events are system-wide", 0), 0u) << c.availability.reason;
      EXPECT_NE(c.availability.reason.find("kernel.perf_event_paranoid <= 0 (it is 2) or CAP_PERFMON"), std::string::npos);
    }
  EXPECT_TRUE(saw_perf);
}

TEST(EnergyPlan, ZenSumsItsPackagesAndHasNoCoreDomain) {
  Machine m("zen4_genoa_2s_power_pmu");
  EXPECT_EQ(m.sel("energy_joules").source->key, "rapl_perf");
  EXPECT_EQ(m.sel("energy_joules").native_event(), "power/energy-pkg/ [scope: packages 0+1 summed (cpus 0,96)]");
  const auto& cores = m.sel("energy_cores_joules");
  EXPECT_FALSE(cores.availability.available);
  std::string root = fixture("zen4_genoa_2s_power_pmu");
  EXPECT_EQ(cores.availability.reason,
            "perf_rapl: the RAPL PMU has no energy-cores event (" + root +
                "/sys/bus/event_source/devices/power/events/energy-cores absent: AMD Zen and Intel server CPUs have no core "
                "domain in the power PMU); powercap: no RAPL powercap zone (" + root +
                "/sys/class/powercap absent: a VM, a CPU without RAPL, or no RAPL powercap driver loaded)");
  // Unavailable, the row still says the scope the catalog gives.
  EXPECT_EQ(cores.native_event(), "power/energy-cores/ [scope: package core domain (PP0)]");
}

TEST(EnergyPlan, PowercapOnly) {
  Machine m("powercap_only");
  EXPECT_EQ(m.sel("energy_joules").source->key, "rapl_powercap");
  EXPECT_EQ(m.sel("energy_cores_joules").source->key, "rapl_powercap");
  EXPECT_EQ(m.sel("energy_cores_joules").native_event(),
            "powercap/core [scope: core domain (PP0) of package-0 (intel-rapl:0:0)]");
}

TEST(EnergyPlan, AVmHasNoRaplAndSaysExactlyWhy) {
  // As on this development VM: no core PMU either, which is not the reason energy is missing.
  HostCpu vm = kHost;
  vm.no_pmu = "no hardware PMU: VM (KVMKVMKVM) exposes no counters to this guest";
  Machine m("vm_no_rapl", 0, vm);
  for (const char* metric : {"energy_joules", "energy_cores_joules"}) {
    const auto& e = m.sel(metric);
    EXPECT_FALSE(e.availability.available) << metric;
    EXPECT_EQ(e.availability.reason, vm_reason(fixture("vm_no_rapl"))) << metric;
  }
  // macOS's source is listed, as not for this OS, and is not part of the reason.
  bool saw_kperf = false;
  for (const auto& c : m.plan.candidates)
    if (c.metric->name == "energy_joules" && c.source && c.source->key == "apple_task_energy") {
      saw_kperf = true;
      EXPECT_EQ(c.availability.reason, "source apple_task_energy is for darwin only: not implemented on this OS (linux)");
      EXPECT_EQ(c.native_event(),
                "task_power_info_v2.task_energy [scope: task (this process's energy as the kernel attributes it, not the package's)]");
    }
  EXPECT_TRUE(saw_kperf);
  EXPECT_TRUE(m.script->log.empty());
}

RunResult run(Machine& m, const std::vector<std::string>& metrics, const std::vector<MeasuredCase>& measured) {
  Meter meter(m.plan, m.backends, metrics);
  RunProtocol p;
  p.pin_cpu = -1;
  p.warmup_rounds = 0;
  p.samples = 3;
  p.bootstrap.resamples = 50;
  return run_protocol(p, meter, measured);
}

TEST(EnergyRows, JoulesPerCallWithTheScopeInEveryRow) {
  Machine m("zen4_genoa_2s_power_pmu");
  std::vector<MeasuredCase> measured = {{"a", [] {}, 1000, "call", {}}};
  RunResult r = run(m, {"energy_joules", "energy_cores_joules"}, measured);
  ExperimentTables t = experiment_tables("run", "energy", r, measured, MachineFingerprint{});
  ASSERT_EQ(t.summary.size(), 2u);
  // 0.5 J per package per sample, two packages, 1000 calls.
  EXPECT_EQ(t.summary.at(0, "metric"), "energy_joules");
  EXPECT_EQ(t.summary.at(0, "unit"), "joules/call");
  EXPECT_EQ(t.summary.at(0, "median"), "0.001");
  EXPECT_EQ(t.summary.at(0, "backend"), "perf_rapl");
  EXPECT_EQ(t.summary.at(0, "native_event"), "power/energy-pkg/ [scope: packages 0+1 summed (cpus 0,96)]");
  EXPECT_EQ(t.summary.at(0, "unavailable_reason"), "");
  // The core domain: no value, the reason, and the scope all the same.
  EXPECT_EQ(t.summary.at(1, "median"), "");
  EXPECT_EQ(t.summary.at(1, "n"), "0");
  EXPECT_NE(t.summary.at(1, "unavailable_reason").find("no energy-cores event"), std::string::npos);
  EXPECT_EQ(t.summary.at(1, "native_event"), "power/energy-cores/ [scope: package core domain (PP0)]");
  for (size_t i = 0; i < t.samples.size(); ++i) {
    if (t.samples.at(i, "metric") != "energy_joules") continue;
    EXPECT_EQ(t.samples.at(i, "value"), "0.001");
    EXPECT_EQ(t.samples.at(i, "read_method"), "read(perf RAPL, per package)");
  }
  ResultTable counters = counters_table(m.plan);
  for (size_t i = 0; i < counters.size(); ++i)
    if (counters.at(i, "metric").rfind("energy", 0) == 0 && !counters.at(i, "native_event").empty())
      EXPECT_NE(counters.at(i, "native_event").find("[scope: "), std::string::npos) << counters.at(i, "native_event");
}

TEST(EnergyRows, AVmRowIsEmptyWithTheReasonNeverZero) {
  Machine m("vm_no_rapl");
  std::vector<MeasuredCase> measured = {{"a", [] {}, 10, "call", {}}};
  RunResult r = run(m, {"energy_joules"}, measured);
  ExperimentTables t = experiment_tables("run", "energy", r, measured, MachineFingerprint{});
  ASSERT_EQ(t.summary.size(), 1u);
  EXPECT_EQ(t.summary.at(0, "median"), "");
  EXPECT_EQ(t.summary.at(0, "n"), "0");
  EXPECT_EQ(t.summary.at(0, "unavailable_reason"), vm_reason(fixture("vm_no_rapl")));
  EXPECT_EQ(t.summary.at(0, "native_event"), "power/energy-pkg/ [scope: package]");
  for (size_t i = 0; i < t.samples.size(); ++i) EXPECT_EQ(t.samples.at(i, "value"), "");
}

TEST(EnergyRows, ASampleWithoutARaplUpdateHasNoValueAndSaysWhy) {
  Machine m("intel_adl_power_pmu");
  m.script->ramp[0] = {1000, 0};
  Meter meter(m.plan, m.backends, {"energy_joules"});
  auto v = meter.measure([] {});
  EXPECT_FALSE(v[0].value);
  EXPECT_EQ(v[0].reason, "power/energy-pkg/ did not update during the sample (RAPL updates about every millisecond: the "
                         "sample was too short to measure)");
}

TEST(EnergyPlan, ThisMachineMeasuresEnergyOrSaysWhyNeverZero) {
  // Whatever this machine is: a VM without RAPL (unavailable, with both sources' reasons), or a
  // machine with RAPL and the permission (a positive value, or no value with the reason).
  BackendSet b;
  b.add(std::make_unique<RaplPerfBackend>());
  b.add(std::make_unique<PowercapBackend>());
  CounterPlan plan = plan_counters(MetricCatalog::builtin(), b, this_host_cpu());
  for (const char* metric : {"energy_joules", "energy_cores_joules"}) {
    const auto& e = *plan.selection(metric);
    if (!e.availability.available) {
      EXPECT_NE(e.availability.reason.find("perf_rapl: "), std::string::npos) << e.availability.reason;
      EXPECT_NE(e.availability.reason.find("powercap: "), std::string::npos) << e.availability.reason;
      continue;
    }
    Meter meter(plan, b, {metric});
    auto v = meter.measure([] { std::this_thread::sleep_for(std::chrono::milliseconds(20)); });
    ASSERT_EQ(v.size(), 1u);
    if (v[0].value) EXPECT_GT(*v[0].value, 0) << metric;
    else EXPECT_FALSE(v[0].reason.empty()) << metric;
  }
}

}  // namespace
}  // namespace dlab
