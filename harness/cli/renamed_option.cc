// Renamed options. "Variant" was both a measured case and a stack placement (one meaning per
// word): --variant(s) became --placement(s) and --mode-variants --mode-placements on 2026-12-07,
// read for one release with a warning, and refused since (CHANGELOG). A script still passing the
// old name gets an error that names the new one, not CLI11's "argument not expected".
#include <fmt/format.h>

#include "cli/commands.h"

namespace dlab::cli {

// The option's own callback, not `each`: it runs for the bare name too (`each` runs per value, and
// `--variants` alone has none, so it was taken and ignored).
void refuse_renamed_option(CLI::App* cmd, const std::string& old_name, const std::string& new_name) {
  cmd->add_option(
         old_name,
         [old_name, new_name](const CLI::results_t&) -> bool {
           throw CLI::ValidationError(old_name, fmt::format("was renamed {} (\"variant\" meant two things): use {}", new_name, new_name));
         },
         fmt::format("renamed {}", new_name))
      ->group("")  // not in the help: a new user never learns it
      ->allow_extra_args(false)
      ->expected(0, 1);
}

}  // namespace dlab::cli
