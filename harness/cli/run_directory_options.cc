#include <chrono>
#include <fmt/format.h>

#include "commands.h"
#include "dispatchlab/harness/counter_plan.h"

namespace dlab::cli {

void RunDirectoryOptions::add_to(CLI::App* cmd, const std::string& default_root) {
  results_root = default_root;
  cmd->add_option("--run-dir", run_dir, "write into this existing run directory (from `dlab new-run`)");
  cmd->add_option("--results", results_root,
                  "create a new run directory <ROOT>/<cpu>/<timestamp>-<commit>/ and write there")
      ->capture_default_str();
}

std::optional<RunDirectory> RunDirectoryOptions::resolve(const MachineFingerprint& machine) const {
  if (!run_dir.empty()) return RunDirectory::open(run_dir);
  if (results_root.empty()) return std::nullopt;
  return RunDirectory::create(results_root, machine.cpu_slug(), machine.build.git_commit, std::chrono::system_clock::now());
}

const MachineFingerprint& this_machine() {
  static const MachineFingerprint m = collect_fingerprint(process_tsc_calibration());
  return m;
}

void add_new_run_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("new-run", "create a new, empty run directory and print its path");
  auto root = std::make_shared<std::string>("results");
  cmd->add_option("--results", *root, "results root")->capture_default_str();
  cmd->callback([root] {
    const auto& m = this_machine();
    auto dir = RunDirectory::create(*root, m.cpu_slug(), m.build.git_commit, std::chrono::system_clock::now());
    dir.write("machine.json", m.to_json().dump(2) + "\n");
    fmt::print("{}\n", dir.path().string());
  });
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

void add_protocol_options(CLI::App* cmd, RunProtocol& protocol, const std::string& samples_help) {
  cmd->add_option("--samples", protocol.samples, samples_help)->capture_default_str();
  cmd->add_option("--warmup", protocol.warmup_rounds, "warm-up rounds")->capture_default_str();
  cmd->add_option("--pin", protocol.pin_cpu, "CPU to pin to (-1: none, -2: last allowed CPU)")->capture_default_str();
}

void apply_quick_protocol(const CLI::App* cmd, RunProtocol& protocol) {
  if (!cmd->count("--samples")) protocol.samples = 5;
  if (!cmd->count("--warmup")) protocol.warmup_rounds = 1;
}

}  // namespace dlab::cli
