#include <sched.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "commands.h"
#include "dispatchlab/harness/counter_plan.h"

namespace dlab::cli {

const CLI::Validator& non_empty_path() {
  static const CLI::Validator v(
      [](std::string& s) { return s.empty() ? std::string("needs a directory (use --no-save to write nothing)") : std::string(); },
      "DIR");
  return v;
}

void RunDirectoryOptions::add_to(CLI::App* cmd, const std::string& default_root) {
  results_root = default_root;
  auto* rd = cmd->add_option("--run-dir", run_dir, "write into this existing run directory (from `dlab new-run`)")
                 ->check(non_empty_path());
  auto* rr = cmd->add_option("--results", results_root,
                             "create a new run directory <ROOT>/<cpu>/<timestamp>-<commit>/ and write there")
                 ->check(non_empty_path())
                 ->capture_default_str();
  rd->excludes(rr);
  // "print only, write no files" and a place to write them contradict each other: refused, never
  // silently resolved one way.
  if (auto* no_save = cmd->get_option_no_throw("--no-save")) {
    rd->excludes(no_save);
    rr->excludes(no_save);
  }
}

std::optional<RunDirectory> RunDirectoryOptions::resolve(const MachineFingerprint& machine,
                                                         const std::vector<std::string>& files) const {
  std::optional<RunDirectory> dir;
  if (!run_dir.empty()) dir = RunDirectory::open(run_dir);
  else if (!results_root.empty())
    dir = RunDirectory::create(results_root, machine.cpu_slug(), machine.build.git_commit, std::chrono::system_clock::now(),
                               machine.to_json().dump(2) + "\n");
  if (dir) dir->check_can_write(files);
  return dir;
}

const MachineFingerprint& this_machine() {
  static const MachineFingerprint m = collect_fingerprint(process_tsc_calibration());
  return m;
}

void add_new_run_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("new-run", "create a new, empty run directory and print its path");
  auto root = std::make_shared<std::string>("results");
  cmd->add_option("--results", *root, "results root")->check(non_empty_path())->capture_default_str();
  cmd->callback([root] {
    const auto& m = this_machine();
    auto dir = RunDirectory::create(*root, m.cpu_slug(), m.build.git_commit, std::chrono::system_clock::now(),
                                    m.to_json().dump(2) + "\n");
    fmt::print("{}\n", dir.path().string());
  });
}

std::vector<std::string> choose_from(const std::string& s, const std::vector<std::string>& valid, const std::string& option,
                                     bool empty_means_all) {
  if (empty_means_all && (s.empty() || s == "all")) return valid;
  std::vector<std::string> out;
  for (const auto& x : split_commas(s)) {
    if (std::find(valid.begin(), valid.end(), x) == valid.end())
      throw CLI::ValidationError(option, fmt::format("unknown '{}' (valid: {})", x, fmt::join(valid, ", ")));
    if (std::find(out.begin(), out.end(), x) != out.end())
      throw CLI::ValidationError(option, fmt::format("'{}' is listed twice", x));
    out.push_back(x);
  }
  if (out.empty()) throw CLI::ValidationError(option, "needs at least one value");
  return out;
}

std::vector<std::string> split_blanks(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == ' ' || c == '\t') {
      if (!cur.empty()) out.push_back(std::move(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  size_t b = 0;
  while (b <= s.size()) {
    size_t e = s.find(',', b);
    if (e == std::string::npos) e = s.size();
    if (e > b) out.push_back(s.substr(b, e - b));
    b = e + 1;
  }
  return out;
}

namespace {

// --pin: -1, -2, or a CPU this process may run on; asked for explicitly, anything else is an error
// rather than a run that is silently not pinned.
const CLI::Validator& pinnable_cpu() {
  static const CLI::Validator v(
      [](std::string& s) -> std::string {
        int cpu = 0;
        auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), cpu);
        if (ec != std::errc() || end != s.data() + s.size()) return "'" + s + "' is not a CPU number";
        if (cpu == -1 || cpu == -2) return "";
        cpu_set_t allowed;
        CPU_ZERO(&allowed);
        if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return std::string("sched_getaffinity: ") + std::strerror(errno);
        std::vector<int> cpus;
        for (int c = 0; c < CPU_SETSIZE; ++c)
          if (CPU_ISSET(c, &allowed)) cpus.push_back(c);
        if (cpu >= 0 && cpu < CPU_SETSIZE && CPU_ISSET(cpu, &allowed)) return "";
        return fmt::format("CPU {} is not one this process may run on (allowed: {}; -1 no pinning, -2 the last allowed)", cpu,
                           fmt::join(cpus, ", "));
      },
      "CPU");
  return v;
}

}  // namespace

void add_protocol_options(CLI::App* cmd, RunProtocol& protocol, const std::string& samples_help) {
  cmd->add_option("--samples", protocol.samples, samples_help + " (1..100000)")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cmd->add_option("--warmup", protocol.warmup_rounds, "warm-up rounds (0..10000)")->check(CLI::Range(0, 10000))->capture_default_str();
  cmd->add_option("--pin", protocol.pin_cpu, "CPU to pin to (-1: none, -2: last allowed CPU)")
      ->check(pinnable_cpu())
      ->capture_default_str();
}

void apply_quick_protocol(const CLI::App* cmd, RunProtocol& protocol) {
  if (!cmd->count("--samples")) protocol.samples = 5;
  if (!cmd->count("--warmup")) protocol.warmup_rounds = 1;
}

}  // namespace dlab::cli
