#include "dispatchlab/harness/perf_event_backend.h"

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include <fmt/format.h>
#include <perfmon/pfmlib_perf_event.h>

#include "dispatchlab/harness/cpu_identity.h"
#include "platform.h"
#include "shared_library.h"
#include "dispatchlab/harness/quote.h"

namespace dlab {

namespace {

// The four libpfm4 functions dlab calls, bound when first needed (shared_library.h says why).
// DLAB_LIBPFM_SONAME is the library the build found (CMakeLists.txt).
struct Libpfm {
  SharedLibrary library{DLAB_LIBPFM_SONAME};
  decltype(&::pfm_initialize) initialize = nullptr;
  decltype(&::pfm_strerror) strerror = nullptr;
  decltype(&::pfm_get_pmu_info) get_pmu_info = nullptr;
  decltype(&::pfm_get_os_event_encoding) get_os_event_encoding = nullptr;
  Libpfm() {
    library.bind(initialize, "pfm_initialize");
    library.bind(strerror, "pfm_strerror");
    library.bind(get_pmu_info, "pfm_get_pmu_info");
    library.bind(get_os_event_encoding, "pfm_get_os_event_encoding");
  }
};

const Libpfm& libpfm() {
  static const Libpfm l;
  return l;
}

}  // namespace

void ensure_libpfm_initialized() {
  const Libpfm& pfm = libpfm();
  if (!pfm.library.error().empty())
    throw CounterError(fmt::format("libpfm4 is not usable: {} (Debian: apt-get install libpfm4)", pfm.library.error()));
  static std::once_flag once;
  static int result = PFM_SUCCESS;
  std::call_once(once, [&pfm] {
    // Without this libpfm4 encodes only the PMU it detected; with it, any PMU compiled in for this
    // architecture encodes, which is what lets one catalog serve every CPU of an architecture.
    setenv("LIBPFM_ENCODE_INACTIVE", "1", 0);
    result = pfm.initialize();
  });
  if (result != PFM_SUCCESS) throw CounterError(fmt::format("libpfm4 failed to initialise: {}", pfm.strerror(result)));
}

DetectedPmu detect_core_pmu() {
  ensure_libpfm_initialized();
  pfm_pmu_info_t info;
  for (int p = 0; p < PFM_PMU_MAX; ++p) {
    std::memset(&info, 0, sizeof info);
    info.size = sizeof info;
    if (libpfm().get_pmu_info(static_cast<pfm_pmu_t>(p), &info) != PFM_SUCCESS) continue;
    // is_present means "detected from CPUID" (or forced); with ENCODE_INACTIVE the other PMUs are
    // still usable for encoding but are not this CPU.
    if (info.is_present && info.type == PFM_PMU_TYPE_CORE && std::strcmp(info.name, "ix86arch") != 0)
      return {info.name, info.desc ? info.desc : ""};
  }
  return {};
}

void PerfEventBackend::encode(const std::string& native_event, perf_event_attr& attr) {
  ensure_libpfm_initialized();
  std::memset(&attr, 0, sizeof attr);
  pfm_perf_encode_arg_t arg;
  std::memset(&arg, 0, sizeof arg);
  arg.size = sizeof arg;
  arg.attr = &attr;
  // PFM_PLM3: user space only. The measured code is user-space dispatch; excluding the kernel
  // keeps timer interrupts and page-fault handling out of per-dispatch counts, and works at
  // perf_event_paranoid=2.
  int r = libpfm().get_os_event_encoding(native_event.c_str(), PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg);
  if (r != PFM_SUCCESS)
    throw CounterError(fmt::format("libpfm4 cannot encode {}: {}", quote_input(native_event), libpfm().strerror(r)));
  attr.size = sizeof attr;
  // On a heterogeneous chip the kernel needs raw and generic hardware events bound to the PMU of
  // the cores measurements run on: cpu_core on hybrid Intel; on arm64 the one cpus.json names for
  // the performance cores' MIDR part (apple_firestorm_pmu on an M1 under Asahi).
  static const std::string bound = [] {
    if (platform::sysfs_pmu_type("cpu_core")) return std::string("cpu_core");
    std::string pmu = this_cpu_identity().measuring_kernel_pmu();
    return !pmu.empty() && platform::sysfs_pmu_type(pmu) ? pmu : std::string();
  }();
  if (!bound.empty()) {
    if (auto core = platform::sysfs_pmu_type(bound)) {
      if (attr.type == PERF_TYPE_RAW) attr.type = *core;
      else if (attr.type == PERF_TYPE_HARDWARE) attr.config |= static_cast<uint64_t>(*core) << 32;
    }
    // Asahi's Apple PMU driver refuses events that count in guests (m1_pmu_set_event_filter:
    // "ARM performance counters do not support mode exclusion" unless exclude_guest).
    if (bound.starts_with("apple_")) attr.exclude_guest = 1;
  }
}

std::string explain_perf_open_error(int err, const std::string& event, bool hardware_event) {
  std::string what = fmt::format("perf_event_open({}): {} ({})", event, std::strerror(err), err);
  if (hardware_event && (err == ENOENT || err == EOPNOTSUPP || err == ENODEV)) {
    std::string no_pmu = platform::no_core_pmu_reason();
    if (!no_pmu.empty()) return no_pmu + "; " + what;
  }
  if (err == EACCES || err == EPERM) {
    auto p = platform::perf_event_paranoid();
    return fmt::format("not permitted: kernel.perf_event_paranoid={} (as root: sysctl kernel.perf_event_paranoid=1, "
                       "or run with CAP_PERFMON); {}", p ? std::to_string(*p) : "?", what);
  }
  if (err == EINVAL) return "the kernel rejected this encoding for this CPU (EINVAL); " + what;
  if (err == EBUSY) return "counters busy (another tool such as the NMI watchdog holds them); " + what;
  return what;
}

namespace {

long sys_perf_event_open(perf_event_attr* attr, pid_t pid, int cpu, int group_fd, unsigned long flags) {
  return syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags);
}

bool is_hardware(const perf_event_attr& a) { return a.type != PERF_TYPE_SOFTWARE && a.type != PERF_TYPE_TRACEPOINT; }

constexpr uint64_t kReadFormat =
    PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID;

#if defined(__x86_64__)
// User-space counter reads: the kernel publishes in the mmap page which hardware counter holds the
// event (index) and an offset; reading with rdpmc avoids a system call per sample. The seqlock
// loop follows the protocol documented in linux/perf_event.h.
bool rdpmc_read(const perf_event_mmap_page* pc, uint64_t& value) {
  uint32_t seq;
  uint64_t count;
  do {
    seq = pc->lock;
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    uint32_t idx = pc->index;
    if (!pc->cap_user_rdpmc || idx == 0) return false;
    count = pc->offset;
    uint32_t lo, hi;
    asm volatile("rdpmc" : "=a"(lo), "=d"(hi) : "c"(idx - 1));
    int64_t pmc = (static_cast<uint64_t>(hi) << 32) | lo;
    unsigned width = pc->pmc_width;
    pmc <<= 64 - width;  // sign-extend the counter's width
    pmc >>= 64 - width;
    count += pmc;
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
  } while (pc->lock != seq);
  value = count;
  return true;
}
#endif

class PerfEventGroup final : public CounterGroup {
 public:
  explicit PerfEventGroup(const std::vector<std::string>& events) {
    for (size_t i = 0; i < events.size(); ++i) {
      perf_event_attr attr;
      PerfEventBackend::encode(events[i], attr);
      attr.read_format = kReadFormat;
      attr.disabled = i == 0 ? 1 : 0;  // members follow the leader
      int group_fd = fds_.empty() ? -1 : fds_.front();
      long fd = sys_perf_event_open(&attr, 0, -1, group_fd, PERF_FLAG_FD_CLOEXEC);
      if (fd < 0) {
        int err = errno;
        close_all();
        throw CounterError(explain_perf_open_error(err, events[i], is_hardware(attr)));
      }
      fds_.push_back(static_cast<int>(fd));
      uint64_t id = 0;
      if (ioctl(static_cast<int>(fd), PERF_EVENT_IOC_ID, &id) != 0) {
        int err = errno;
        close_all();
        throw CounterError(fmt::format("PERF_EVENT_IOC_ID failed: {}", std::strerror(err)));
      }
      ids_.push_back(id);
    }
    map_for_rdpmc();
    // The index in the mmap page is only meaningful while the event is enabled, so probe once.
    ioctl(fds_.front(), PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
    enable_rdpmc_if_possible();
    ioctl(fds_.front(), PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
  }

  ~PerfEventGroup() override { close_all(); }

  // Boundaries: with rdpmc the counters are sampled in user space right inside the measured
  // region (no system call between the region and the read); the group read after stop() still
  // runs, to see whether the group was multiplexed, in which case its scaled values are used.
  void start() override {
    ioctl(fds_.front(), PERF_EVENT_IOC_RESET, PERF_IOC_FLAG_GROUP);
    // RESET zeroes the counts but not time_enabled/time_running, which keep accumulating over the
    // group's life; read them while disabled (they do not move) so each sample scales by its own
    // times, not by the history of earlier samples.
    auto base = read_buffer();
    base_enabled_ = base.size() > 2 ? base[1] : 0;
    base_running_ = base.size() > 2 ? base[2] : 0;
    ioctl(fds_.front(), PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
    rdpmc_valid_ = use_rdpmc_ && snapshot(begin_);
  }
  void stop() override {
    if (rdpmc_valid_) rdpmc_valid_ = snapshot(end_);
    ioctl(fds_.front(), PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
  }

  std::vector<CounterReading> read() override {
    auto buf = read_buffer();
    if (buf.size() > 2) {
      buf[1] -= base_enabled_;
      buf[2] -= base_running_;
    }
    auto readings = parse_perf_group_read(buf, ids_);
    bool whole_time = !readings.empty() && readings.front().running_fraction == 1.0;
    last_method_ = "read(PERF_FORMAT_GROUP)";
    if (rdpmc_valid_ && whole_time) {
      for (size_t i = 0; i < readings.size(); ++i) {
        readings[i].raw = end_[i] - begin_[i];
        readings[i].value = static_cast<double>(readings[i].raw);
      }
      last_method_ = "rdpmc";
    }
    return readings;
  }
  std::string read_method() const override { return last_method_; }

  void enable_rdpmc_if_possible() { use_rdpmc_ = rdpmc_availability().available; }

  // Whether every event of the group can be read with rdpmc right now, and why not.
  Availability rdpmc_availability() const {
#if defined(__x86_64__)
    if (pages_.size() != fds_.size()) return Availability::no("mmap of the perf page failed");
    for (auto* p : pages_) {
      auto* pc = static_cast<const perf_event_mmap_page*>(p);
      if (!pc->cap_user_rdpmc) return Availability::no("kernel disallows user rdpmc (/sys/devices/cpu/rdpmc)");
      if (pc->index == 0) return Availability::no("event is not on a hardware counter (software event or not scheduled)");
    }
    return Availability::yes();
#else
    return Availability::no("user-space counter reads are implemented for x86-64 only");
#endif
  }

 private:
  void map_for_rdpmc() {
    long page = sysconf(_SC_PAGESIZE);
    for (int fd : fds_) {
      void* p = mmap(nullptr, static_cast<size_t>(page), PROT_READ, MAP_SHARED, fd, 0);
      if (p == MAP_FAILED) {
        unmap_all();
        return;
      }
      pages_.push_back(p);
    }
  }
  void unmap_all() {
    long page = sysconf(_SC_PAGESIZE);
    for (void* p : pages_) munmap(p, static_cast<size_t>(page));
    pages_.clear();
  }
  void close_all() {
    unmap_all();
    for (int fd : fds_) ::close(fd);
    fds_.clear();
  }

  std::vector<uint64_t> read_buffer() {
    std::vector<uint64_t> buf(3 + 2 * fds_.size());
    ssize_t n = ::read(fds_.front(), buf.data(), buf.size() * sizeof(uint64_t));
    if (n < 0) throw CounterError(fmt::format("read(perf group): {}", std::strerror(errno)));
    buf.resize(static_cast<size_t>(n) / sizeof(uint64_t));
    return buf;
  }

  bool snapshot(std::vector<uint64_t>& out) {
#if defined(__x86_64__)
    out.resize(pages_.size());
    for (size_t i = 0; i < pages_.size(); ++i)
      if (!rdpmc_read(static_cast<const perf_event_mmap_page*>(pages_[i]), out[i])) return false;
    return true;
#else
    return false;
#endif
  }

  std::vector<int> fds_;
  std::vector<uint64_t> ids_;
  std::vector<void*> pages_;
  bool use_rdpmc_ = false;
  bool rdpmc_valid_ = false;
  std::vector<uint64_t> begin_, end_;
  uint64_t base_enabled_ = 0, base_running_ = 0;
  std::string last_method_ = "read(PERF_FORMAT_GROUP)";
};

}  // namespace

std::vector<CounterReading> parse_perf_group_read(std::span<const uint64_t> buffer, std::span<const uint64_t> ids) {
  if (buffer.size() < 3) throw CounterError("perf group read: short buffer");
  uint64_t nr = buffer[0];
  if (nr != ids.size()) throw CounterError(fmt::format("perf group read: {} values for {} events", nr, ids.size()));
  if (buffer.size() < 3 + 2 * nr) throw CounterError("perf group read: buffer shorter than its count");
  uint64_t enabled = buffer[1], running = buffer[2];
  std::vector<CounterReading> out(ids.size());
  std::vector<bool> seen(ids.size(), false);
  for (uint64_t i = 0; i < nr; ++i) {
    uint64_t value = buffer[3 + 2 * i], id = buffer[4 + 2 * i];
    size_t slot = ids.size();
    for (size_t k = 0; k < ids.size(); ++k)
      if (ids[k] == id) slot = k;
    if (slot == ids.size() || seen[slot]) throw CounterError(fmt::format("perf group read: unexpected id {}", id));
    seen[slot] = true;
    CounterReading& r = out[slot];
    r.raw = value;
    r.time_enabled_ns = enabled;
    r.time_running_ns = running;
    if (running == 0) {
      r.running_fraction = 0;
      r.value.reset();  // never scheduled on a counter: no measurement
    } else {
      r.running_fraction = enabled ? static_cast<double>(running) / static_cast<double>(enabled) : 1.0;
      // A group is scheduled as a unit, so one scale factor applies to all of its members.
      r.value = running < enabled ? static_cast<double>(value) * static_cast<double>(enabled) / static_cast<double>(running)
                                  : static_cast<double>(value);
    }
  }
  return out;
}

PerfEventBackend::PerfEventBackend() { ensure_libpfm_initialized(); }

Availability PerfEventBackend::probe(const std::string& native_event) {
  try {
    PerfEventGroup g({native_event});
    return Availability::yes();
  } catch (const CounterError& e) {
    return Availability::no(e.what());
  }
}

std::unique_ptr<CounterGroup> PerfEventBackend::open_group(const std::vector<std::string>& native_events) {
  if (native_events.empty()) throw CounterError("empty perf_event group");
  return std::make_unique<PerfEventGroup>(native_events);
}

}  // namespace dlab
