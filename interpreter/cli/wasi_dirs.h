// The WASI preopened directories of `dlab wasm run|profile` (and bench's command workloads):
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

// The preopens, each host folder checked to exist and be a folder (a CLI::ValidationError naming the
// option and the folder otherwise). GUEST defaults to HOST as written.
std::vector<wasm::WasiPreopen> wasi_preopens(const WasiDirs& dirs);

}  // namespace dlab::cli
