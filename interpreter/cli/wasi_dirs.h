// The WASI options of `dlab wasm run|profile`, `dlab-run` (and bench's command workloads): the
// environment (--env), and the preopened directories:
// `--dir HOST[::GUEST]` (read-only) and `--dir-rw HOST[::GUEST]` (the guest may change the tree),
// repeatable, spelled as wasmtime spells them. The guest sees them as fds 3, 4, ...: the --dir ones
// in the order given, then the --dir-rw ones.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "dispatchlab/interpreter/wasi.h"

namespace dlab::cli {

struct WasiDirs {
  std::vector<std::string> read_only, writable;
};

void add_wasi_dir_options(CLI::App* app, WasiDirs& dirs);

// --env KEY=VALUE, repeatable: the program's environment (empty unless given).
void add_wasi_env_option(CLI::App* app, std::vector<std::string>& env);

// The preopens, each host folder checked to exist and be a folder (a CLI::ValidationError naming the
// option and the folder otherwise). GUEST defaults to HOST as written.
std::vector<wasm::WasiPreopen> wasi_preopens(const WasiDirs& dirs);

}  // namespace dlab::cli
