#include "wasi_dirs.h"

#include <stdexcept>

#include "wasi_command.h"

namespace dlab::cli {


void add_wasi_dir_options(CLI::App* app, WasiDirs& dirs) {
  app->add_option("--dir", dirs.read_only,
                  "HOST[::GUEST]: preopen the host folder HOST for the WASI program, read-only, as GUEST (default: HOST as "
                  "written; :: then / makes it the guest's root). Nothing outside it can be reached: not by .., an absolute "
                  "path, a symbolic link or a hard link. Repeat for more (fds 3, 4, ... in order)")
      ->allow_extra_args(false);
  app->add_option("--dir-rw", dirs.writable,
                  "HOST[::GUEST]: as --dir, and the program may create, write, rename and remove in it (after the --dir ones)")
      ->allow_extra_args(false);
}

void add_wasi_env_option(CLI::App* app, std::vector<std::string>& env) {
  app->add_option("--env", env, "KEY=VALUE for the program's environment (none by default; repeat for more)")
      ->allow_extra_args(false)
      ->check(CLI::Validator(
          [](std::string& s) {
            return wasi_env_entry_error(s);
          },
          "KEY=VALUE"));
}

std::vector<wasm::WasiPreopen> wasi_preopens(const WasiDirs& dirs) {
  std::vector<wasm::WasiPreopen> out;
  auto add = [&](const std::string& spec, bool writable) {
    try {
      out.push_back(parse_wasi_preopen(spec, writable));
    } catch (const std::invalid_argument& e) {
      throw CLI::ValidationError(writable ? "--dir-rw" : "--dir", e.what());
    }
  };
  for (const auto& d : dirs.read_only) add(d, false);
  for (const auto& d : dirs.writable) add(d, true);
  return out;
}

}  // namespace dlab::cli
