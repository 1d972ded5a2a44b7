#include "wasi_dirs.h"

#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "dispatchlab/harness/quote.h"

namespace dlab::cli {

namespace {

wasm::WasiPreopen preopen(const std::string& spec, bool writable) {
  const char* option = writable ? "--dir-rw" : "--dir";
  wasm::WasiPreopen p;
  p.writable = writable;
  const size_t sep = spec.find("::");
  p.host = sep == std::string::npos ? spec : spec.substr(0, sep);
  p.guest = sep == std::string::npos ? spec : spec.substr(sep + 2);
  if (spec.empty()) throw CLI::ValidationError(option, "an empty folder: give HOST (the guest sees it as HOST) or HOST::GUEST");
  if (p.host.empty()) throw CLI::ValidationError(option, fmt::format("{}: no host folder before '::'", quote_input(spec)));
  if (p.guest.empty()) throw CLI::ValidationError(option, fmt::format("{}: no guest name after '::' (give / or a name)", quote_input(spec)));
  std::error_code ec;
  if (!std::filesystem::is_directory(p.host, ec))
    throw CLI::ValidationError(option, fmt::format("{}: {}", p.host,
                                                   ec && ec != std::errc::no_such_file_or_directory ? ec.message()
                                                   : std::filesystem::exists(p.host, ec)             ? "not a folder"
                                                                                                     : "no such folder"));
  return p;
}

}  // namespace

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

std::vector<wasm::WasiPreopen> wasi_preopens(const WasiDirs& dirs) {
  std::vector<wasm::WasiPreopen> out;
  for (const auto& d : dirs.read_only) out.push_back(preopen(d, false));
  for (const auto& d : dirs.writable) out.push_back(preopen(d, true));
  return out;
}

}  // namespace dlab::cli
