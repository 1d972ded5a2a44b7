// The perf_event RAPL backend: each event opened once per package on the CPU the power PMU names
// for it, read at the start and the end of a sample; the package counts are summed and scaled
// to joules.
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "dispatchlab/harness/rapl_perf.h"

namespace dlab {

namespace {

class KernelPerfCpuEvents final : public PerfCpuEvents {
 public:
  int open(uint32_t type, uint64_t config, int cpu) override {
    perf_event_attr attr;
    std::memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = type;
    attr.config = config;
    // Counting from the open on: RAPL counters are free-running and read as differences. No
    // exclude_* bits: the power PMU rejects them.
    long fd = syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
    return fd < 0 ? -errno : static_cast<int>(fd);
  }
  uint64_t read(int fd) override {
    uint64_t v = 0;
    ssize_t n = ::read(fd, &v, sizeof v);
    if (n < 0) throw CounterError(fmt::format("read(perf RAPL event): {}", std::strerror(errno)));
    if (n != sizeof v) throw CounterError(fmt::format("read(perf RAPL event): {} bytes, not {}", n, sizeof v));
    return v;
  }
  void close(int fd) override { ::close(fd); }
};

class RaplPerfGroup final : public CounterGroup {
 public:
  RaplPerfGroup(std::shared_ptr<PerfCpuEvents> kernel, std::vector<RaplPerfEvent> events, const SysfsRoot& root)
      : kernel_(std::move(kernel)), events_(std::move(events)) {
    for (const auto& ev : events_) {
      fds_.emplace_back();
      for (int cpu : ev.cpus) {
        int fd = kernel_->open(ev.type, ev.config, cpu);
        if (fd < 0) {
          close_all();
          throw CounterError(explain_rapl_open_error(-fd, ev, cpu, root));
        }
        fds_.back().push_back(fd);
      }
    }
  }
  ~RaplPerfGroup() override { close_all(); }

  void start() override { begin_ = snapshot(); }
  void stop() override { end_ = snapshot(); }

  std::vector<CounterReading> read() override {
    if (begin_.size() != events_.size() || end_.size() != events_.size())
      throw CounterError("perf RAPL group read before start() and stop()");
    std::vector<CounterReading> out(events_.size());
    for (size_t i = 0; i < events_.size(); ++i) {
      uint64_t counts = 0;
      for (size_t k = 0; k < begin_[i].size(); ++k) counts += end_[i][k] - begin_[i][k];  // 64-bit: no wrap in practice
      CounterReading& r = out[i];
      r.raw = counts;
      if (counts == 0) {
        // RAPL updates about once a millisecond: no update is not "no energy".
        r.no_value_reason = fmt::format("{} did not update during the sample (RAPL updates about every millisecond: "
                                        "the sample was too short to measure)", events_[i].native);
      } else {
        r.value = static_cast<double>(counts) * events_[i].joules_per_count;
      }
    }
    return out;
  }
  std::string read_method() const override { return "read(perf RAPL, per package)"; }

 private:
  std::vector<std::vector<uint64_t>> snapshot() {
    std::vector<std::vector<uint64_t>> s(fds_.size());
    for (size_t i = 0; i < fds_.size(); ++i)
      for (int fd : fds_[i]) s[i].push_back(kernel_->read(fd));
    return s;
  }
  void close_all() {
    for (auto& per_event : fds_)
      for (int fd : per_event) kernel_->close(fd);
    fds_.clear();
  }

  std::shared_ptr<PerfCpuEvents> kernel_;
  std::vector<RaplPerfEvent> events_;
  std::vector<std::vector<int>> fds_;  // per event, per package
  std::vector<std::vector<uint64_t>> begin_, end_;
};

}  // namespace

std::unique_ptr<PerfCpuEvents> kernel_perf_cpu_events() { return std::make_unique<KernelPerfCpuEvents>(); }

std::string explain_rapl_open_error(int err, const RaplPerfEvent& ev, int cpu, const SysfsRoot& root) {
  std::string what = fmt::format("perf_event_open({} type {} config {:#x}, pid -1, cpu {}): {} ({})", ev.native, ev.type,
                                 ev.config, cpu, std::strerror(err), err);
  if (err == EACCES || err == EPERM) {
    std::string paranoid;
    try {
      paranoid = "it is " + root.read("/proc/sys/kernel/perf_event_paranoid");
    } catch (const SysfsError& e) {
      paranoid = e.what();
    }
    return fmt::format("not permitted: RAPL events are system-wide (pid -1, bound to a CPU of the package), which needs "
                       "kernel.perf_event_paranoid <= 0 ({}) or CAP_PERFMON (root); {}", paranoid, what);
  }
  if (err == EINVAL) return "the kernel rejected this RAPL event (EINVAL); " + what;
  return what;
}

RaplPerfBackend::RaplPerfBackend(std::string sysfs_root, std::unique_ptr<PerfCpuEvents> kernel)
    : root_(std::move(sysfs_root)), kernel_(kernel ? std::move(kernel) : kernel_perf_cpu_events()) {}

Availability RaplPerfBackend::probe(const std::string& native_event) {
  RaplPerfLookup found = find_rapl_perf_event(root_, native_event);
  if (!found.event) return Availability::no(found.reason);
  try {
    RaplPerfGroup g(kernel_, {*found.event}, root_);
  } catch (const CounterError& e) {
    return Availability::no(e.what());
  }
  return Availability::yes(fmt::format("{}; {} joules per count", found.event->scope(), found.event->joules_per_count));
}

std::unique_ptr<CounterGroup> RaplPerfBackend::open_group(const std::vector<std::string>& native_events) {
  if (native_events.empty()) throw CounterError("empty perf RAPL group");
  std::vector<RaplPerfEvent> events;
  for (const auto& n : native_events) {
    RaplPerfLookup found = find_rapl_perf_event(root_, n);
    if (!found.event) throw CounterError(found.reason);
    events.push_back(*found.event);
  }
  return std::make_unique<RaplPerfGroup>(kernel_, std::move(events), root_);
}

std::string RaplPerfBackend::scope(const std::string& native_event) {
  RaplPerfLookup found = find_rapl_perf_event(root_, native_event);
  return found.event ? found.event->scope() : "";
}

}  // namespace dlab
