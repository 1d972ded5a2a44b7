// Renamed options: the old name read for one release, with a warning, then removed (CHANGELOG
// says when). One meaning per word: "variant" was both a measured case and a stack placement.
#include <fmt/format.h>

#include <cstdio>

#include "cli/commands.h"

namespace dlab::cli {

CLI::Option* add_old_option_name(CLI::App* cmd, CLI::Option* current, const std::string& old_name, std::string& target) {
  std::string new_name = current->get_name();
  auto* old = cmd->add_option(old_name, target, fmt::format("the old name of {} (one more release, then removed)", new_name))
                  ->group("")  // not in the help: a new user never learns it
                  ->each([old_name, new_name](const std::string&) {
                    fmt::print(stderr, "dlab: warning: {} is the old name of {}, read for one more release: use {}\n", old_name,
                               new_name, new_name);
                  });
  old->excludes(current);
  return old;
}

}  // namespace dlab::cli
