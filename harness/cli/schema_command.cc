#include <fmt/format.h>

#include "cli/commands.h"
#include "dispatchlab/harness/result_schema.h"

namespace dlab::cli {

void add_schema_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("schema", "print the result-file schema (Markdown by default)");
  if (!command_selected(*cmd)) return;  // its options only when the command line names it
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "print JSON");
  cmd->callback([json] { fmt::print("{}", *json ? schema_json().dump(2) + "\n" : schema_markdown()); });
}

}  // namespace dlab::cli
