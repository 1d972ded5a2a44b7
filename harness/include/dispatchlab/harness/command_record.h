// The command that made a result, recorded in every result sidecar so that anyone can re-take the
// numbers: the argument vector as the process received it, the working directory it ran in, and
// the recipe step that started it (`just rfc`'s runner sets DLAB_RECIPE and DLAB_RECIPE_STEP in
// each step's environment; a command typed by hand has neither, and the sidecar says so).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace dlab {

struct CommandRecord {
  std::vector<std::string> argv;
  std::string working_directory;  // empty when getcwd failed (the sidecar then says so)
  std::string recipe;             // DLAB_RECIPE: rfc, models, flushes, pace; empty by hand
  std::string recipe_step;        // DLAB_RECIPE_STEP: the step of tools/experiments.toml

  // From main()'s arguments and this process's environment and working directory.
  static CommandRecord of_process(int argc, const char* const* argv);
  nlohmann::json to_json() const;
};

// Set once by main() before any command runs; read by every sidecar (result_rows.h's sidecar_json).
void set_process_command(CommandRecord record);
// The record set by main(), or an empty one (argv []) in a program that never set it, such as a
// unit test: the sidecar then says that the command was not recorded, never a made-up one.
const CommandRecord& process_command();

}  // namespace dlab
