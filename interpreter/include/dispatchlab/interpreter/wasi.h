// A WASI preview1 subset (module "wasi_snapshot_preview1"), enough for C programs built with
// `clang-19 --target=wasm32-wasi` against Debian's wasi-libc: args, environ, clocks, random,
// fd_write to stdout/stderr, fd_fdstat_get/fd_close/fd_seek on the standard streams, proc_exit,
// sched_yield. There are no preopened directories (fd_prestat_get answers EBADF, which ends
// wasi-libc's scan). Every other preview1 function links and returns ENOSYS, with one note on
// stderr the first time it is called.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "dispatchlab/interpreter/runtime.h"

namespace dlab::wasm {

struct WasiOptions {
  std::vector<std::string> args;  // argv, argv[0] included
  std::vector<std::string> env;   // "KEY=VALUE"
  std::FILE* out = stdout;
  std::FILE* err = stderr;
};

inline constexpr const char* kWasiModule = "wasi_snapshot_preview1";

// Registers kWasiModule in `rt` with the functions `module` imports from it (so unimplemented ones
// get an ENOSYS stub of the right type). `options` must outlive the runtime.
void register_wasi(Runtime& rt, const Module& module, const WasiOptions& options);

}  // namespace dlab::wasm
