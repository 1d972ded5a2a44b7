// `dlab fleet INVENTORY`: the RFC table from many machines. Ansible does the remote work
// (fleet/playbook.yml); the Python analysis package drives it and merges the results
// (analysis/dispatchlab_analysis/fleet.py), so this command only hands over to it.
#include <filesystem>

#include <fmt/format.h>

#include "cli/commands.h"
#include "build_info.h"
#include "dispatchlab/harness/process.h"

namespace dlab::cli {

void add_fleet_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("fleet",
                                 "run a job (default: ./tools/bootstrap && just rfc) on every host of an Ansible inventory over "
                                 "SSH, bring each host's run directories back into results/ and write results/fleet/<id>/report.md");
  if (!command_selected(*cmd)) return;  // its options only when the command line names it
  struct Options {
    std::string inventory, job, commit = "HEAD", results;
    int forks = 16;
  };
  auto o = std::make_shared<Options>();
  cmd->add_option("inventory", o->inventory, "Ansible inventory (INI or YAML; see the README)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--job", o->job, "command each host runs in its checkout (default: ./tools/bootstrap && just rfc)");
  cmd->add_option("--commit", o->commit, "commit each host runs (a git archive of it)")->capture_default_str();
  cmd->add_option("--results", o->results, "results root (default: the checkout's results/)");
  cmd->add_option("--forks", o->forks, "hosts run at once (1..1000)")->check(CLI::Range(1, 1000))->capture_default_str();
  cmd->callback([o, cmd] {
    std::filesystem::path python = std::filesystem::path(DLAB_SOURCE_DIR) / ".venv" / "bin" / "python";
    if (!std::filesystem::exists(python))
      throw std::runtime_error(python.string() + " not found: run ./tools/bootstrap (it makes the venv the fleet runs in)");
    // Values travel as --opt=VALUE, so one that starts with '-' stays a value, and a value given
    // empty is handed over (and refused there) rather than dropped; the inventory comes after --.
    std::vector<std::string> argv = {python.string(), "-m", "dispatchlab_analysis.fleet", "--commit=" + o->commit,
                                     "--forks=" + std::to_string(o->forks)};
    if (cmd->count("--job")) argv.push_back("--job=" + o->job);
    if (cmd->count("--results")) argv.push_back("--results=" + o->results);
    argv.insert(argv.end(), {"--", o->inventory});
    ProcessResult r = run_process(argv);
    if (!r.spawn_error.empty()) throw std::runtime_error(r.describe("the fleet driver"));
    // The driver said why (a refused command line is 2, a failed fleet 1): its status is dlab's.
    if (r.exit_code == 2) throw ExitStatus{2};
    if (!r.ok()) throw std::runtime_error("the fleet did not complete on every host (see above)");
  });
}

}  // namespace dlab::cli
