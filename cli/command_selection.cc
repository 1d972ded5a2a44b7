// Which subcommands' options are built (cli/commands.h's command_selected).
#include <string>
#include <vector>

#include "cli/commands.h"
#include "dispatchlab/harness/command_record.h"

namespace dlab::cli {

bool command_selected(const CLI::App& cmd) {
  std::vector<std::string> path;  // from the top: "wasm", "bench"
  for (const CLI::App* a = &cmd; a->get_parent() != nullptr; a = a->get_parent()) path.insert(path.begin(), a->get_name());
  const std::vector<std::string>& argv = process_command().argv;
  if (argv.empty()) return true;  // no command line recorded (a test building the tree): all of it
  size_t after = 1;               // where the words after the parent's name begin
  for (const std::string& name : path) {
    bool any_word = false;
    size_t k = after;
    for (; k < argv.size() && argv[k] != "--"; ++k) {
      if (argv[k].starts_with('-')) continue;
      any_word = true;
      if (argv[k] == name) break;
    }
    if (k < argv.size() && argv[k] == name) {
      after = k + 1;
      continue;
    }
    // Named nowhere after its parent: not selected when another word is (a sibling, or an error
    // CLI11 reports as before); selected when none is (a help listing or a missing subcommand).
    return !any_word;
  }
  return true;
}

}  // namespace dlab::cli
