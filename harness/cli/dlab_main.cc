// dlab: the dispatchlab command line.
#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>

#include "commands.h"

int main(int argc, char** argv) {
  CLI::App app{
      "dlab - interpreter-dispatch experiments on real microarchitectures.\n"
      "Every metric is counted (or explicitly estimated) on this machine; unavailable metrics are reported "
      "empty with their reason."};
  app.require_subcommand(1);
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
  } catch (const std::bad_alloc&) {
    fmt::print(stderr, "dlab: error: out of memory (a size or count too large for this machine?)\n");
    return 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "dlab: error: {}\n", e.what());
    return 1;
  }
  // Output that never reached its file (a full disk, a closed pipe) is a failure, not a success.
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    fmt::print(stderr, "dlab: error: cannot write standard output: {}\n", std::strerror(errno));
    return 1;
  }
  return 0;
}
