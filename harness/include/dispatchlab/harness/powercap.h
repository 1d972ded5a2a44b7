// RAPL energy through the powercap sysfs interface: /sys/class/powercap/<type>-rapl:<N> zones
// ("intel-rapl:0", named "package-0"; the kernel uses the intel-rapl naming on AMD Zen too, and
// any "<x>-rapl" control type is read the same way) and their core subzones ("intel-rapl:0:0",
// named "core"). energy_uj counts microjoules and wraps at max_energy_range_uj. Since Linux 5.10
// (the PLATYPUS fix, CVE-2020-8694) energy_uj is readable by root only.
// Catalog events: "powercap/package" (every package zone, summed) and "powercap/core".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dispatchlab/harness/counter_backend.h"
#include "dispatchlab/harness/sysfs_root.h"

namespace dlab {

struct PowercapZone {
  std::string id;    // "intel-rapl:0"
  std::string name;  // "package-0", "core"
  std::string package;  // the package zone's name: "package-0" (for a core zone, its parent's)
  std::string dir;   // "/sys/class/powercap/intel-rapl:0" (a kernel path, read through the root)
  uint64_t max_energy_range_uj = 0;
  std::string energy_file() const { return dir + "/energy_uj"; }
};

// The zones of a domain ("package" or "core"), or why there are none.
struct PowercapDomain {
  std::string native;  // "powercap/package"
  std::vector<PowercapZone> zones;
  std::string reason;  // non-empty: no zone, and why
  // "package-0 (intel-rapl:0)", "package-0+package-1 summed (intel-rapl:0, intel-rapl:1)",
  // "core domain (PP0) of package-0 (intel-rapl:0:0)".
  std::string scope() const;
};
PowercapDomain find_powercap_domain(const SysfsRoot& root, const std::string& native_event);

// Microjoules between two readings of one zone: a reading below the first means the counter
// wrapped once at max_energy_range_uj. (More than one wrap in a sample cannot be seen: at 100 W
// a 262 kJ range wraps every 44 minutes.)
uint64_t powercap_delta_uj(uint64_t begin, uint64_t end, uint64_t max_energy_range_uj);

// Reads energy_uj; throws CounterError with explain_energy_read_error's words.
uint64_t read_energy_uj(const SysfsRoot& root, const PowercapZone& zone);
// "cannot read <path>: <reason>", and for EACCES/EPERM that energy_uj is root only.
std::string explain_energy_read_error(const SysfsError& e);

class PowercapBackend final : public CounterBackend {
 public:
  explicit PowercapBackend(std::string sysfs_root = "/") : root_(std::move(sysfs_root)) {}
  std::string name() const override { return "powercap"; }
  Availability probe(const std::string& native_event) override;
  std::unique_ptr<CounterGroup> open_group(const std::vector<std::string>& native_events) override;
  std::string scope(const std::string& native_event) override;

 private:
  SysfsRoot root_;
};

}  // namespace dlab
