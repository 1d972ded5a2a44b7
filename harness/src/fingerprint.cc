#include "dispatchlab/harness/fingerprint.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <array>
#include <cstdio>

#include <fmt/format.h>

#include "build_info.h"
#include "dispatchlab/harness/files.h"
#include "dispatchlab/harness/counter_plan.h"
#include "dispatchlab/harness/metric_catalog.h"
#include "dispatchlab/harness/perf_event_backend.h"
#include "platform.h"

namespace dlab {

namespace {

// Runs a command and returns its first output line, or nullopt if it failed.
std::optional<std::string> first_line_of(const std::string& cmd) {
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return std::nullopt;
  std::array<char, 512> buf{};
  std::string out;
  if (fgets(buf.data(), buf.size(), p)) out = buf.data();
  int rc = pclose(p);
  if (rc != 0) return std::nullopt;
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

std::string git_commit_of(const std::string& dir) {
  // The commit is read when the program runs, not when it was built, from the source tree the
  // binary was built from; a tree with uncommitted changes is marked so its numbers are not
  // mistaken for the commit's.
  auto head = first_line_of(fmt::format("git -C {} rev-parse HEAD 2>/dev/null", shell_quote(dir)));
  if (!head || head->empty()) return "unknown (no git checkout at " + dir + ")";
  auto dirty = first_line_of(fmt::format("git -C {} status --porcelain --untracked-files=no 2>/dev/null | head -n1", shell_quote(dir)));
  return *head + (dirty && !dirty->empty() ? "+dirty" : "");
}

std::string slug(std::string s) {
  std::string out;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c))) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    else if (!out.empty() && out.back() != '-') out += '-';
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out;
}

}  // namespace

BuildInfo BuildInfo::of_this_binary() {
  return {DLAB_COMPILER, DLAB_BUILD_TYPE, DLAB_PRESET, DLAB_CXX_FLAGS, git_commit_of(DLAB_SOURCE_DIR)};
}

std::string MachineFingerprint::cpu_slug() const {
  std::string micro = pmu.empty() ? arch : pmu;
  auto part = [](int v) { return v < 0 ? std::string("unknown") : std::to_string(v); };
  return slug(fmt::format("{}-{}-{}", micro, part(cpu_family), part(cpu_model)));
}

nlohmann::json MachineFingerprint::to_json() const {
  auto known = [](int v) { return v < 0 ? nlohmann::json(nullptr) : nlohmann::json(v); };
  return {
      {"arch", arch},
      {"cpu", {{"vendor", cpu_vendor}, {"family", known(cpu_family)}, {"model", known(cpu_model)}, {"stepping", known(cpu_stepping)}, {"name", cpu_name}}},
      {"microarchitecture", {{"libpfm_pmu", pmu}, {"description", pmu_description}, {"catalog_source", catalog_source}}},
      {"logical_cpus", logical_cpus},
      {"kernel", kernel},
      {"virtualization", {{"is_vm", is_vm}, {"hypervisor", hypervisor}, {"kernel_core_pmu", kernel_core_pmu}}},
      {"perf_event_paranoid", perf_event_paranoid ? nlohmann::json(*perf_event_paranoid) : nlohmann::json(nullptr)},
      {"clocksource", clocksource},
      {"tsc",
       {{"counter", tsc.counter},
        {"hz", tsc.tsc_hz},
        {"invariant", tsc.invariant},
        {"core_cycles_per_tick_estimate", tsc.core_cycles_per_tick},
        {"core_cycles_per_tick_min", tsc.core_cycles_per_tick_min},
        {"core_cycles_per_tick_max", tsc.core_cycles_per_tick_max},
        {"method", tsc.method}}},
      {"build",
       {{"compiler", build.compiler},
        {"build_type", build.build_type},
        {"preset", build.preset},
        {"cxx_flags", build.cxx_flags},
        {"git_commit", build.git_commit}}},
      {"cpu_slug", cpu_slug()},
  };
}

MachineFingerprint collect_fingerprint(const TscCalibration& tsc) {
  MachineFingerprint f;
  utsname u;
  uname(&u);
  f.arch = u.machine;
  f.kernel = fmt::format("{} {} {}", u.sysname, u.release, u.version);
  f.cpu_vendor = platform::cpuinfo_field("vendor_id").value_or(platform::cpuinfo_field("CPU implementer").value_or(""));
  auto num = [](const std::string& key) {
    auto v = platform::cpuinfo_field(key);
    if (!v) return -1;
    try {
      return std::stoi(*v, nullptr, 0);
    } catch (...) {
      return -1;
    }
  };
  f.cpu_family = num("cpu family");
  f.cpu_model = num("model");
  f.cpu_stepping = num("stepping");
  if (f.arch == "aarch64") {  // arm64 /proc/cpuinfo: implementer / part / variant
    f.cpu_family = num("CPU architecture");
    f.cpu_model = num("CPU part");
    f.cpu_stepping = num("CPU variant");
  }
  f.cpu_name = platform::cpuinfo_field("model name").value_or("");
  auto pmu = detect_core_pmu();
  f.pmu = pmu.name;
  f.pmu_description = pmu.description;
  HostCpu host{f.arch, "linux", f.pmu, f.cpu_family, f.cpu_model};
  if (const EventSource* s = MetricCatalog::builtin().pmu_source_for(host.arch, host.libpfm_pmu, host.family, host.model))
    f.catalog_source = s->key;
  f.logical_cpus = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  f.is_vm = platform::running_under_hypervisor();
  f.hypervisor = platform::hypervisor_signature();
  f.kernel_core_pmu = platform::kernel_has_core_pmu();
  f.perf_event_paranoid = platform::perf_event_paranoid();
  f.clocksource = platform::read_file_trimmed("/sys/devices/system/clocksource/clocksource0/current_clocksource").value_or("");
  f.tsc = tsc;
  f.build = BuildInfo::of_this_binary();
  return f;
}

}  // namespace dlab
