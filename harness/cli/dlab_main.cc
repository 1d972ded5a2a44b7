// dlab: the dispatchlab command line.
#include <fmt/format.h>

#include <exception>

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
  dlab::cli::add_schema_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    fmt::print(stderr, "dlab: error: {}\n", e.what());
    return 1;
  }
  return 0;
}
