// Subcommands of the dlab CLI; each file adds one to the app.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "dispatchlab/harness/fingerprint.h"
#include "dispatchlab/harness/result_writer.h"
#include "dispatchlab/harness/run_protocol.h"
#include "dispatchlab/harness/tsc.h"
#include "dispatchlab/predictors/llvm_mca.h"

namespace dlab::cli {

// Whether the command line names this subcommand (its name after its parent's, options skipped),
// or names none below its parent: each add_*_command builds its options and callback only then.
// CLI11 builds the whole tree before parsing: every option of every command took an empty module's
// run 1.95 of its 6.3 million instructions (callgrind, in CLI::App::add_option), and building only
// the named command's took its page faults from 366 to 288 (a 2-vCPU Zen 5 guest).
bool command_selected(const CLI::App& cmd);

void add_machine_command(CLI::App& app);
void add_counters_command(CLI::App& app);
void add_calibrate_command(CLI::App& app);
void add_schema_command(CLI::App& app);
void add_knee_command(CLI::App& app);
void add_new_run_command(CLI::App& app);
void add_fleet_command(CLI::App& app);  // hands over to analysis/dispatchlab_analysis/fleet.py
void add_models_command(CLI::App& app);  // models/cli/models_command.cc
void add_probes_command(CLI::App& app);  // probes/cli/probes_command.cc
void add_wasm_command(CLI::App& app);    // interpreter/cli/wasm_command.cc
void add_wasm_bench_command(CLI::App& wasm_cmd);  // interpreter/cli/wasm_bench_command.cc
void add_wasm_programs_command(CLI::App& wasm_cmd);  // interpreter/cli/wasm_programs_command.cc

// Thrown to end dlab with this status when the reason is already printed (a child program that
// said why it refused): main returns it without a message of its own.
struct ExitStatus {
  int status;
};

// Where a command writes its result files: an existing run directory (--run-dir, how the steps of
// `just rfc` share one run) or a new one under a results root (--results).
struct RunDirectoryOptions {
  std::string run_dir;
  std::string results_root;
  void add_to(CLI::App* cmd, const std::string& default_root);
  // nullopt when neither option asks for files. Opens or creates the directory and checks that
  // `files` can be written there, so a command calls it before measuring, never after.
  std::optional<RunDirectory> resolve(const MachineFingerprint& machine, const std::vector<std::string>& files) const;
};

// A command that fails removes the run directories it created (--results) that still hold only
// their fingerprint (machine.json): no empty run is left behind. dlab's main calls it on failure.
void discard_created_run_directories_without_results();

// "a,b,,c" -> {"a", "b", "c"}: the comma-separated lists of every command's options.
std::vector<std::string> split_commas(const std::string& s);
// This dlab's own path (/proc/self/exe): what a command starts again as a child, or traces.
std::string self_executable();
// "node  run.mjs {module}" -> {"node", "run.mjs", "{module}"}: a command given as one option, split
// on blanks into an argument vector (no shell, no quoting).
std::vector<std::string> split_blanks(const std::string& s);

// A comma-separated choice from `valid` for `option`: "all" is every name, and so is "" where
// `empty_means_all`; in a list, "all" is every name not given before it ("vec,all": vec first, as
// the baseline, then the rest). An unknown or repeated name is a CLI::ValidationError that lists
// the valid ones.
std::vector<std::string> choose_from(const std::string& s, const std::vector<std::string>& valid, const std::string& option,
                                     bool empty_means_all = true);

// The message for a wrong command line (the root app's CLI11 failure_message), one line: CLI11's
// own, escaped, except that a value out of an option's range or not of its type says which
// option, the value given, and what is allowed ("--samples: 'abc' is not an integer in
// 1..100000"), so every CLI::Range check reads that way without a validator of its own.
std::string command_line_error(const CLI::App* app, const CLI::Error& e);

// A renamed option's old name (`old_name`, e.g. "--variants" for --placements): hidden from the help,
// refused with an error that names the new one (harness/cli/renamed_option.cc).
void refuse_renamed_option(CLI::App* cmd, const std::string& old_name, const std::string& new_name);

// --samples, --warmup and --pin, writing into `protocol`.
void add_protocol_options(CLI::App* cmd, RunProtocol& protocol, const std::string& samples_help = "measured rounds");
// --name's check where it names an experiment's files in a run directory (<name>.summary.csv ...):
// lower-case letters, digits and '_', 1 to 40 of them, so no name leaves the folder.
CLI::Validator experiment_name_validator();

// --quick's protocol: 5 samples and 1 warm-up round, unless --samples / --warmup were given.
void apply_quick_protocol(const CLI::App* cmd, RunProtocol& protocol);

// The machine fingerprint with this process's TSC calibration (done once, about half a second).
const MachineFingerprint& this_machine();

// --ideal-mcpu of every command that predicts (models, wasm bench, wasm profile): the ideal
// bound's CPU for llvm-mca-19, one text for all; `for_what` ends its help (which cases get a bound).
CLI::Option* add_ideal_mcpu_option(CLI::App* cmd, std::string& target, const std::string& for_what);
// The value resolved against this machine's row of the CPU table (predictors::resolve_mca_cpu);
// CLI::ValidationError naming --ideal-mcpu when llvm-mca refuses it or it is empty.
predictors::McaCpu resolve_ideal_mcpu(const std::string& asked);

}  // namespace dlab::cli
