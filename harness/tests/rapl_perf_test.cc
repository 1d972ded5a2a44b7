// The perf_event RAPL backend on recorded sysfs trees (harness/tests/fixtures/rapl/) with
// scripted system calls: nothing here reads this machine.
#include "dispatchlab/harness/rapl_perf.h"

#include <cerrno>

#include <gtest/gtest.h>

#include "rapl_fixtures.h"

#include "scripted_perf_cpu_events.h"

namespace dlab {
namespace {

using testing::PerfCpuScript;
using testing::ScriptedPerfCpuEvents;

std::string fixture(const std::string& name) { return testing::rapl_fixture(name); }

constexpr double kTwoToThe32 = 4294967296.0;

TEST(RaplPerfEvent, IntelPackageEventFromSysfs) {
  SysfsRoot root(fixture("intel_adl_power_pmu"));
  auto found = find_rapl_perf_event(root, "power/energy-pkg/");
  ASSERT_TRUE(found.event) << found.reason;
  EXPECT_EQ(found.event->type, 14u);
  EXPECT_EQ(found.event->config, 0x02u);
  EXPECT_EQ(found.event->joules_per_count, 1 / kTwoToThe32);  // 2.3283064365386962890625e-10 exactly
  EXPECT_EQ(found.event->cpus, std::vector<int>{0});
  EXPECT_EQ(found.event->scope(), "package 0 (cpu 0)");
  auto cores = find_rapl_perf_event(root, "power/energy-cores/");
  ASSERT_TRUE(cores.event) << cores.reason;
  EXPECT_EQ(cores.event->config, 0x01u);
  EXPECT_EQ(cores.event->scope(), "core domain (PP0) of package 0 (cpu 0)");
}

TEST(RaplPerfEvent, ZenHasPackageEnergyOnlyOnEveryPackage) {
  SysfsRoot root(fixture("zen4_genoa_2s_power_pmu"));
  auto pkg = find_rapl_perf_event(root, "power/energy-pkg/");
  ASSERT_TRUE(pkg.event) << pkg.reason;
  EXPECT_EQ(pkg.event->type, 11u);
  EXPECT_EQ(pkg.event->cpus, (std::vector<int>{0, 96}));
  EXPECT_EQ(pkg.event->scope(), "packages 0+1 summed (cpus 0,96)");
  auto cores = find_rapl_perf_event(root, "power/energy-cores/");
  EXPECT_FALSE(cores.event);
  EXPECT_EQ(cores.reason, "the RAPL PMU has no energy-cores event (" + fixture("zen4_genoa_2s_power_pmu") +
                              "/sys/bus/event_source/devices/power/events/energy-cores absent: AMD Zen and Intel server "
                              "CPUs have no core domain in the power PMU)");
}

TEST(RaplPerfEvent, NoPowerPmuInAVm) {
  auto found = find_rapl_perf_event(SysfsRoot(fixture("vm_no_rapl")), "power/energy-pkg/");
  EXPECT_FALSE(found.event);
  EXPECT_EQ(found.reason, "no RAPL PMU (" + fixture("vm_no_rapl") +
                              "/sys/bus/event_source/devices/power absent: a VM or a CPU without RAPL)");
  // On a machine the path is the kernel's own.
  EXPECT_EQ(SysfsRoot("/").path("/sys/bus/event_source/devices/power"), "/sys/bus/event_source/devices/power");
}

TEST(RaplPerfEvent, ReportsTheFileThatIsWrong) {
  EXPECT_NE(find_rapl_perf_event(SysfsRoot(fixture("intel_adl_power_pmu")), "cpu/cycles/").reason.find("not a power PMU event"),
            std::string::npos);
  EXPECT_EQ(parse_cpu_list("0-2,8"), (std::vector<int>{0, 1, 2, 8}));
  EXPECT_THROW(parse_cpu_list("3-1"), std::invalid_argument);
  EXPECT_THROW(parse_cpu_list("a"), std::invalid_argument);
  EXPECT_EQ(parse_unsigned("0x1f", "t"), 31u);
  EXPECT_THROW(parse_unsigned("12x", "t"), std::invalid_argument);
}

TEST(RaplPerfBackend, CountsTimesTheScaleAreJoules) {
  auto script = std::make_shared<PerfCpuScript>();
  script->ramp[0] = {1000, 3 * (uint64_t(1) << 32)};  // 3 J between two reads
  RaplPerfBackend b(fixture("intel_adl_power_pmu"), std::make_unique<ScriptedPerfCpuEvents>(script));
  Availability a = b.probe("power/energy-pkg/");
  ASSERT_TRUE(a.available) << a.reason;
  EXPECT_EQ(a.reason, "package 0 (cpu 0); 2.3283064365386963e-10 joules per count");
  EXPECT_EQ(b.scope("power/energy-pkg/"), "package 0 (cpu 0)");
  auto g = b.open_group({"power/energy-pkg/"});
  EXPECT_EQ(script->log.back(), "open 14 0x2 cpu 0");  // system-wide: bound to the package's CPU
  g->start();
  g->stop();
  auto r = g->read();
  ASSERT_EQ(r.size(), 1u);
  ASSERT_TRUE(r[0].value);
  EXPECT_DOUBLE_EQ(*r[0].value, 3.0);
  EXPECT_EQ(r[0].raw, 3 * (uint64_t(1) << 32));
  EXPECT_EQ(g->read_method(), "read(perf RAPL, per package)");
  g.reset();
  EXPECT_EQ(script->open_fds, 0);
}

TEST(RaplPerfBackend, SumsThePackages) {
  auto script = std::make_shared<PerfCpuScript>();
  script->ramp[0] = {0, 2 * (uint64_t(1) << 32)};  // package 0: 2 J
  script->ramp[96] = {5, uint64_t(1) << 32};       // package 1: 1 J
  RaplPerfBackend b(fixture("zen4_genoa_2s_power_pmu"), std::make_unique<ScriptedPerfCpuEvents>(script));
  auto g = b.open_group({"power/energy-pkg/"});
  g->start();
  g->stop();
  EXPECT_DOUBLE_EQ(*g->read()[0].value, 3.0);
  EXPECT_EQ(b.scope("power/energy-pkg/"), "packages 0+1 summed (cpus 0,96)");
}

TEST(RaplPerfBackend, NoUpdateIsNoValueNotZero) {
  auto script = std::make_shared<PerfCpuScript>();
  script->ramp[0] = {1000, 0};
  RaplPerfBackend b(fixture("intel_adl_power_pmu"), std::make_unique<ScriptedPerfCpuEvents>(script));
  auto g = b.open_group({"power/energy-pkg/"});
  g->start();
  g->stop();
  auto r = g->read();
  EXPECT_FALSE(r[0].value);
  EXPECT_NE(r[0].no_value_reason.find("did not update during the sample"), std::string::npos) << r[0].no_value_reason;
}

TEST(RaplPerfBackend, PermissionDeniedNamesParanoidAndCapPerfmon) {
  auto script = std::make_shared<PerfCpuScript>();
  script->open_errno = EACCES;
  RaplPerfBackend b(fixture("intel_adl_power_pmu"), std::make_unique<ScriptedPerfCpuEvents>(script));
  Availability a = b.probe("power/energy-pkg/");
  EXPECT_FALSE(a.available);
  EXPECT_EQ(a.reason,
            "not permitted: RAPL events are system-wide (pid -1, bound to a CPU of the package), which needs "
            "kernel.perf_event_paranoid <= 0 (it is 2) or CAP_PERFMON (root); perf_event_open(power/energy-pkg/ type 14 "
            "config 0x2, pid -1, cpu 0): Permission denied (13)");
  EXPECT_THROW(b.open_group({"power/energy-pkg/"}), CounterError);
  // The scope is known even where the event cannot be opened.
  EXPECT_EQ(b.scope("power/energy-pkg/"), "package 0 (cpu 0)");
}

TEST(RaplPerfBackend, AVmHasNoEventAndNoScope) {
  auto script = std::make_shared<PerfCpuScript>();
  RaplPerfBackend b(fixture("vm_no_rapl"), std::make_unique<ScriptedPerfCpuEvents>(script));
  EXPECT_FALSE(b.probe("power/energy-pkg/").available);
  EXPECT_EQ(b.scope("power/energy-pkg/"), "");
  EXPECT_TRUE(script->log.empty());  // nothing was opened
}

}  // namespace
}  // namespace dlab
