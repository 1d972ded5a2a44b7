// dlab: the dispatchlab command line.
#include <fmt/format.h>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <system_error>

#include "cli/commands.h"
#include "dispatchlab/harness/command_record.h"
#include "dispatchlab/harness/standard_output.h"

namespace {

// True when `e` is the failed write to standard output itself (fmt::print throws a system_error
// with the write's errno): check_standard_output says that once, in its own words.
bool failed_writing_stdout(const std::exception& e) {
  const auto* se = dynamic_cast<const std::system_error*>(&e);
  int err = dlab::standard_output::flush_and_check();
  return se && err != 0 && se->code().value() == err;
}

// Output that never reached its reader (a full disk, a closed descriptor, a reader that quit) is
// a failure, never a silent success: said in one line, and a success becomes exit status 1.
int check_standard_output(int status) noexcept {
  int err = dlab::standard_output::flush_and_check();
  if (err == 0) return status;
  try {
    dlab::standard_output::write_stderr(dlab::standard_output::failure_message(err));
  } catch (...) {  // (formatting the line ran out of memory: the status still says)
  }
  return status == 0 ? 1 : status;
}

int run(int argc, char** argv) {
  dlab::set_process_command(dlab::CommandRecord::of_process(argc, argv));
  CLI::App app{
      "dlab - interpreter-dispatch experiments on real microarchitectures.\n"
      "Every metric is counted (or explicitly estimated) on this machine; unavailable metrics are reported "
      "empty with their reason."};
  app.require_subcommand(1);
  app.failure_message(dlab::cli::command_line_error);
  dlab::cli::add_machine_command(app);
  dlab::cli::add_counters_command(app);
  dlab::cli::add_calibrate_command(app);
  dlab::cli::add_models_command(app);
  dlab::cli::add_probes_command(app);
  dlab::cli::add_wasm_command(app);
  dlab::cli::add_knee_command(app);
  dlab::cli::add_new_run_command(app);
  dlab::cli::add_fleet_command(app);
  dlab::cli::add_schema_command(app);
  // Exit status, for scripts: 0 done; 1 the command failed (a file, a measurement, bad data, a
  // write that did not reach its file); 2 the command line is wrong (nothing was run).
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  } catch (const dlab::cli::ExitStatus& e) {
    if (e.status != 0) dlab::cli::discard_created_run_directories_without_results();
    return e.status;
  } catch (const std::bad_alloc&) {
    dlab::standard_output::write_stderr("dlab: error: out of memory (a size or count too large for this machine?)\n");
    dlab::cli::discard_created_run_directories_without_results();
    return 1;
  } catch (const std::exception& e) {
    if (!failed_writing_stdout(e)) dlab::standard_output::write_stderr(std::string("dlab: error: ") + e.what() + "\n");
    dlab::cli::discard_created_run_directories_without_results();
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  dlab::standard_output::reserve_standard_descriptors();
  dlab::standard_output::install();
  dlab::standard_output::route_cout();
  int status = 1;
  try {
    status = run(argc, argv);
  } catch (...) {
    // Only a failure while reporting a failure (CLI11 printing usage to a broken stream) lands here.
    dlab::standard_output::write_stderr("dlab: error: the error could not be reported\n");
  }
  return check_standard_output(status);
}
