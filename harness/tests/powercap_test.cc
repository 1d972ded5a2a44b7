// The powercap RAPL backend on recorded sysfs trees (harness/tests/fixtures/rapl/), and on copies
// of them whose energy_uj the test moves between the start and the end of a sample.
#include "dispatchlab/harness/powercap.h"

#include <cerrno>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "rapl_fixtures.h"

#include "dispatchlab/harness/temp_dir.h"

namespace dlab {
namespace {

namespace fs = std::filesystem;

std::string fixture(const std::string& name) { return testing::rapl_fixture(name); }

void put(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream out(file, std::ios::trunc);
  out << text << "\n";
  ASSERT_TRUE(out.good()) << file;
}

TEST(PowercapDomain, PackageAndCoreZonesByName) {
  SysfsRoot root(fixture("intel_adl_power_pmu"));
  auto pkg = find_powercap_domain(root, "powercap/package");
  ASSERT_TRUE(pkg.reason.empty()) << pkg.reason;
  ASSERT_EQ(pkg.zones.size(), 1u);  // intel-rapl:1 is psys, not a package
  EXPECT_EQ(pkg.zones[0].id, "intel-rapl:0");
  EXPECT_EQ(pkg.zones[0].max_energy_range_uj, 262143328850u);
  EXPECT_EQ(pkg.scope(), "package-0 (intel-rapl:0)");
  auto core = find_powercap_domain(root, "powercap/core");
  ASSERT_TRUE(core.reason.empty()) << core.reason;
  ASSERT_EQ(core.zones.size(), 1u);  // intel-rapl:0:1 is uncore
  EXPECT_EQ(core.scope(), "core domain (PP0) of package-0 (intel-rapl:0:0)");
}

TEST(PowercapDomain, AbsentInAVm) {
  auto d = find_powercap_domain(SysfsRoot(fixture("vm_no_rapl")), "powercap/package");
  EXPECT_TRUE(d.zones.empty());
  EXPECT_EQ(d.reason, "no RAPL powercap zone (" + fixture("vm_no_rapl") +
                          "/sys/class/powercap absent: a VM, a CPU without RAPL, or no RAPL powercap driver loaded)");
}

TEST(PowercapDomain, AnyRaplControlTypeAndSeveralPackagesSummed) {
  TempDir t("powercap-test");
  fs::path c = t.path() / "sys/class/powercap";
  for (int p = 0; p < 2; ++p) {
    put(c / ("amd-rapl:" + std::to_string(p)) / "name", "package-" + std::to_string(p));
    put(c / ("amd-rapl:" + std::to_string(p)) / "energy_uj", "100");
    put(c / ("amd-rapl:" + std::to_string(p)) / "max_energy_range_uj", "65532610987");
  }
  put(c / "dtpm/name", "dtpm");  // not a RAPL zone: ignored
  auto d = find_powercap_domain(SysfsRoot(t.path().string()), "powercap/package");
  ASSERT_TRUE(d.reason.empty()) << d.reason;
  EXPECT_EQ(d.scope(), "package-0+package-1 summed (amd-rapl:0, amd-rapl:1)");
  auto core = find_powercap_domain(SysfsRoot(t.path().string()), "powercap/core");
  EXPECT_EQ(core.reason, "no RAPL core zone (a subzone named 'core') under amd-rapl:0, amd-rapl:1 in " + c.string() +
                             ": this CPU reports no core domain");
}

TEST(PowercapDelta, HandlesTheWrapAtTheRange) {
  EXPECT_EQ(powercap_delta_uj(100, 350, 1000), 250u);
  EXPECT_EQ(powercap_delta_uj(900, 50, 1000), 150u);  // 100 up to the range, then 50
  EXPECT_EQ(powercap_delta_uj(7, 7, 1000), 0u);
}

TEST(PowercapBackend, MicrojoulesAcrossAWrapAreJoules) {
  TempDir t("powercap-test");
  fs::copy(fixture("powercap_only"), t.path(), fs::copy_options::recursive);
  PowercapBackend b(t.path().string());
  Availability a = b.probe("powercap/package");
  ASSERT_TRUE(a.available) << a.reason;
  EXPECT_EQ(a.reason, "package-0 (intel-rapl:0); energy_uj in microjoules, intel-rapl:0 wraps at 262143328850 uJ");
  auto g = b.open_group({"powercap/package", "powercap/core"});
  g->start();  // package at 262142000000 uJ, 1328850 uJ below its range; core at 1000000
  put(t.path() / "sys/class/powercap/intel-rapl:0/energy_uj", "500000");
  put(t.path() / "sys/class/powercap/intel-rapl:0:0/energy_uj", "1250000");
  g->stop();
  auto r = g->read();
  ASSERT_EQ(r.size(), 2u);
  ASSERT_TRUE(r[0].value && r[1].value);
  EXPECT_EQ(r[0].raw, 1328850u + 500000u);
  EXPECT_DOUBLE_EQ(*r[0].value, 1.82885);
  EXPECT_DOUBLE_EQ(*r[1].value, 0.25);
  EXPECT_EQ(g->read_method(), "read(energy_uj)");
  // A sample in which the counter did not move has no value, never 0 J.
  g->start();
  g->stop();
  r = g->read();
  EXPECT_FALSE(r[0].value);
  EXPECT_NE(r[0].no_value_reason.find("did not change during the sample"), std::string::npos);
}

TEST(PowercapBackend, EveryReadIsCheckedAndNamesItsFile) {
  TempDir t("powercap-test");
  fs::copy(fixture("powercap_only"), t.path(), fs::copy_options::recursive);
  fs::path energy = t.path() / "sys/class/powercap/intel-rapl:0/energy_uj";
  fs::remove(energy);
  fs::create_directory(energy);  // read(2) fails with EISDIR, even for root
  Availability a = PowercapBackend(t.path().string()).probe("powercap/package");
  EXPECT_FALSE(a.available);
  EXPECT_EQ(a.reason, "cannot read " + energy.string() + ": Is a directory");
  put(t.path() / "sys/class/powercap/intel-rapl:0/max_energy_range_uj", "lots");
  a = PowercapBackend(t.path().string()).probe("powercap/package");
  EXPECT_NE(a.reason.find("max_energy_range_uj: 'lots' is not an unsigned number"), std::string::npos) << a.reason;
  // Not root on Linux 5.10 and later (cannot be produced here: the tests may run as root).
  EXPECT_EQ(explain_energy_read_error(SysfsError("/sys/class/powercap/intel-rapl:0/energy_uj", EACCES)),
            "cannot read /sys/class/powercap/intel-rapl:0/energy_uj: Permission denied (energy_uj is readable by root "
            "only since Linux 5.10, the PLATYPUS fix CVE-2020-8694: run as root)");
}

}  // namespace
}  // namespace dlab
