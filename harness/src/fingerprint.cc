#include "dispatchlab/harness/fingerprint.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <array>
#include <cstdio>

#include <fmt/format.h>

#include "build_info.h"
#include "dispatchlab/harness/files.h"
#include "dispatchlab/harness/process.h"
#include "dispatchlab/harness/quote.h"
#include "dispatchlab/harness/temp_dir.h"
#include "dispatchlab/harness/counter_plan.h"
#include "dispatchlab/harness/metric_catalog.h"
#include "dispatchlab/harness/perf_event_backend.h"
#include "platform.h"

namespace dlab {

namespace {

// What one git command said: its first output line, or (when it failed) the first line of its
// error, "fatal: " taken off.
struct GitAnswer {
  bool ok = false;
  std::string line;
};

std::string first_line(const std::string& text) {
  std::string out = text.substr(0, text.find('\n'));
  while (!out.empty() && out.back() == '\r') out.pop_back();
  return out;
}

GitAnswer run_git(const std::string& dir, std::vector<std::string> args) {
  args.insert(args.begin(), {"git", "-C", dir});
  // git's stderr goes to a private scratch file: when git refuses, its reason is what we report.
  std::optional<TempDir> scratch;
  try {
    scratch.emplace("git");
  } catch (const std::runtime_error&) {
  }
  ProcessOptions po;
  po.capture_stdout = true;
  po.stderr_file = scratch ? scratch->file("stderr").string() : "/dev/null";
  ProcessResult r = run_process(args, po);
  if (r.ok()) return {true, first_line(r.output)};
  if (!r.spawn_error.empty()) return {false, r.describe("git")};
  std::string why = scratch ? first_line(read_text_file(po.stderr_file)) : "";
  if (why.starts_with("fatal: ")) why.erase(0, 7);
  return {false, why.empty() ? r.describe("git") : why};
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

std::string git_commit_of(const std::string& dir) {
  // The commit is read when the program runs, not when it was built, from the source tree the
  // binary was built from; a tree with uncommitted changes is marked so its numbers are not
  // mistaken for the commit's.
  GitAnswer head = run_git(dir, {"rev-parse", "HEAD"});
  if (!head.ok) {
    if (head.line.starts_with("cannot run git")) return "unknown (" + head.line + ")";  // kGitMissing
    if (head.line.starts_with("not a git repository")) return fmt::format("{} at {})", kNoGitCheckout, dir);
    if (head.line.starts_with("cannot change to"))  // the tree was moved or removed since the build
      return fmt::format("{} at {}: {})", kNoGitCheckout, dir, escape_input(head.line));
    // Git is there and so is (most likely) a checkout, but git would not read it: another
    // owner's folder ("detected dubious ownership"), a damaged repository. Never "no checkout".
    std::string hint = head.line.find("dubious ownership") != std::string::npos
                           ? fmt::format("; `git config --global --add safe.directory {}` allows it", dir)
                           : "";
    return fmt::format("{} to read {}: {}{})", kGitRefused, dir, escape_input(head.line), hint);
  }
  if (head.line.empty()) return fmt::format("{} at {})", kNoGitCheckout, dir);
  GitAnswer dirty = run_git(dir, {"status", "--porcelain", "--untracked-files=no"});
  return head.line + (dirty.ok && !dirty.line.empty() ? "+dirty" : "");
}

std::string commit_for_run_name(const std::string& git_commit) {
  if (git_commit.starts_with(kGitRefused)) return "gitrefused";
  if (git_commit.starts_with(kGitMissing)) return "gitmissing";
  std::string commit = git_commit.substr(0, std::min<size_t>(12, git_commit.find_first_of(" +")));
  if (commit.empty() || commit == "unknown") return "nogit";
  return git_commit.find("+dirty") != std::string::npos ? commit + "-dirty" : commit;
}

BuildInfo BuildInfo::of_this_binary() {
  return {DLAB_COMPILER, DLAB_BUILD_TYPE, DLAB_PRESET, DLAB_CXX_FLAGS, git_commit_of(DLAB_SOURCE_DIR)};
}

nlohmann::json tsc_calibration_json(const TscCalibration& tsc) {
  auto opt = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  nlohmann::json chains = nlohmann::json::array();
  for (const auto& c : tsc.chains)
    chains.push_back({{"chain", c.chain},
                      {"instruction", c.instruction},
                      {"latency_cycles", opt(c.latency_cycles)},
                      {"ticks_per_op", c.ticks_per_op},
                      {"cycles_per_tick", opt(c.cycles_per_tick)},
                      {"cycles_per_tick_min", opt(c.cycles_per_tick_min)},
                      {"cycles_per_tick_max", opt(c.cycles_per_tick_max)},
                      {"trials", c.trials}});
  return {{"counter", tsc.counter},
          {"hz", tsc.tsc_hz},
          {"invariant", tsc.invariant},
          {"core_cycles_per_tick_estimate", opt(tsc.core_cycles_per_tick)},
          {"estimate_refused", tsc.refused},
          {"cross_check", {{"tolerance", tsc.tolerance}, {"attempts", tsc.attempts}, {"chains", chains}}},
          {"method", tsc.method}};
}

nlohmann::json core_kinds_json(const CpuIdentity& id) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& k : id.core_kinds)
    out.push_back({{"core", k.core}, {"kind", k.kind}, {"cpus", k.cpus}, {"midr", k.midr}, {"kernel_pmu", k.kernel_pmu}});
  return out;
}

std::string MachineFingerprint::cpu_slug() const {
  std::string micro = identity.key.empty() ? arch : identity.key;
  auto part = [](int v) { return v < 0 ? std::string("unknown") : std::to_string(v); };
  return slug(fmt::format("{}-{}-{}{}", micro, part(cpu_family), part(cpu_model), emulation.emulated ? "-emulated" : ""));
}

nlohmann::json MachineFingerprint::to_json() const {
  auto known = [](int v) { return v < 0 ? nlohmann::json(nullptr) : nlohmann::json(v); };
  return {
      {"arch", arch},
      {"cpu", {{"vendor", cpu_vendor}, {"family", known(cpu_family)}, {"model", known(cpu_model)}, {"stepping", known(cpu_stepping)}, {"name", cpu_name}}},
      {"microarchitecture",
       {{"name", identity.name},
        {"key", identity.key},
        {"cores", identity.cores},
        {"core_kinds", core_kinds_json(identity)},
        {"systems", identity.systems},
        {"predictors", identity.predictors},
        {"llvm_mca", identity.llvm_mcpu.empty() ? nlohmann::json::object()
                                                : nlohmann::json{{"mcpu", identity.llvm_mcpu}, {"model", identity.llvm_model}}},
        {"matched_by", identity.matched_by},
        {"note", identity.note},
        {"catalog_source", identity.catalog_source},
        {"event_encoding", event_encoding},
        {"libpfm_pmu", pmu},
        {"description", pmu_description}}},
      {"logical_cpus", logical_cpus},
      {"kernel", kernel},
      {"virtualization", {{"is_vm", is_vm}, {"hypervisor", hypervisor}, {"kernel_core_pmu", kernel_core_pmu}}},
      {"emulation", emulation.to_json()},
      {"perf_event_paranoid", perf_event_paranoid ? nlohmann::json(*perf_event_paranoid) : nlohmann::json(nullptr)},
      {"clocksource", clocksource},
      {"tsc", tsc_calibration_json(tsc)},
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
  f.identity = this_cpu_identity();
  if (const EventSource* s = MetricCatalog::builtin().source(f.identity.catalog_source))
    f.event_encoding = to_string(s->encoding_for(f.pmu));
  f.logical_cpus = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  f.is_vm = platform::running_under_hypervisor();
  f.hypervisor = platform::hypervisor_signature();
  f.emulation = this_process_emulation();
  f.kernel_core_pmu = platform::kernel_has_core_pmu();
  f.perf_event_paranoid = platform::perf_event_paranoid();
  f.clocksource = platform::read_file_trimmed("/sys/devices/system/clocksource/clocksource0/current_clocksource").value_or("");
  f.tsc = tsc;
  f.build = BuildInfo::of_this_binary();
  return f;
}

}  // namespace dlab
