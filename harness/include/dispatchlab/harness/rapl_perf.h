// RAPL energy through perf_event's dynamic "power" PMU (Intel, and AMD Zen from Linux 5.8):
// /sys/bus/event_source/devices/power/{type, cpumask, format/*, events/energy-pkg, .scale, .unit}.
// The events are per package and system-wide: each is opened bound to one CPU of its package
// (pid -1, cpu N: the PMU's cpumask lists one per package), which needs
// kernel.perf_event_paranoid <= 0 or CAP_PERFMON. Counts times the .scale file are joules.
// Catalog events are written the way perf writes them: "power/energy-pkg/", "power/energy-cores/".
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dispatchlab/harness/counter_backend.h"
#include "dispatchlab/harness/sysfs_root.h"

namespace dlab {

// One RAPL event of this machine, as sysfs describes it.
struct RaplPerfEvent {
  std::string native;       // "power/energy-pkg/"
  std::string name;         // "energy-pkg"
  uint32_t type = 0;        // the power PMU's perf_event type
  uint64_t config = 0;      // from events/<name> through format/*
  double joules_per_count = 0;  // events/<name>.scale (its .unit must say Joules)
  std::vector<int> cpus;    // the PMU's cpumask: one CPU per package
  std::vector<std::string> packages;  // physical_package_id of each CPU
  // "package 0 (cpu 0)", "packages 0+1 summed (cpus 0,96)"; the core domain says so.
  std::string scope() const;
};

// The event, or why this machine has none ("no RAPL PMU (... absent: a VM or a CPU without RAPL)").
struct RaplPerfLookup {
  std::optional<RaplPerfEvent> event;
  std::string reason;
};
RaplPerfLookup find_rapl_perf_event(const SysfsRoot& root, const std::string& native_event);

// The system calls the backend makes, so a test can play a recorded machine.
class PerfCpuEvents {
 public:
  virtual ~PerfCpuEvents() = default;
  // perf_event_open(type/config, pid -1, cpu): the fd, or -errno.
  virtual int open(uint32_t type, uint64_t config, int cpu) = 0;
  // The event's count. Throws CounterError with the reason.
  virtual uint64_t read(int fd) = 0;
  virtual void close(int fd) = 0;
};
std::unique_ptr<PerfCpuEvents> kernel_perf_cpu_events();

// Why a RAPL event did not open, in words a user can act on: EACCES/EPERM name
// perf_event_paranoid (read under `root`) and CAP_PERFMON.
std::string explain_rapl_open_error(int err, const RaplPerfEvent& ev, int cpu, const SysfsRoot& root);

class RaplPerfBackend final : public CounterBackend {
 public:
  explicit RaplPerfBackend(std::string sysfs_root = "/", std::unique_ptr<PerfCpuEvents> kernel = nullptr);
  std::string name() const override { return "perf_rapl"; }
  Availability probe(const std::string& native_event) override;
  std::unique_ptr<CounterGroup> open_group(const std::vector<std::string>& native_events) override;
  std::string scope(const std::string& native_event) override;

 private:
  SysfsRoot root_;
  std::shared_ptr<PerfCpuEvents> kernel_;
};

}  // namespace dlab
