// WASI preview1 (module "wasi_snapshot_preview1"), and the same functions under its predecessor
// "wasi_unstable" (snapshot0) with that ABI's differences: every preview1 function, for C and
// Rust programs built for wasm32-wasi(p1). fds 0-2 are the standard streams (stdin a host fd,
// stdout/stderr WasiOptions' streams); 3, 4, ... the preopened directories, in which files and
// directories are opened, listed, renamed, linked and removed beneath the preopen only (no path
// reaches outside it: see docs/interpreter/runtime.md "WASI"). Errors are preview1 errno values, never a
// trap, but for a blocked call past WasiOptions::deadline_passed ("deadline reached").
#pragma once

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "dispatchlab/interpreter/runtime.h"

namespace dlab::wasm {

// A host directory the guest sees as a preopened directory fd (3, 4, ... in WasiOptions order).
struct WasiPreopen {
  std::string host;   // a host directory
  std::string guest;  // the name the guest sees (fd_prestat_dir_name), e.g. "/" or "."
  // Read-only unless set: every call that would change the tree under it (path_open with O_CREAT,
  // O_TRUNC or write rights, path_create_directory, rename, link, symlink, unlink, set_size,
  // set_times, fd_write/pwrite/allocate on its files) answers ENOTCAPABLE (76), the errno
  // preview1 gives for a right the fd does not have: a read-only preopen has no write rights.
  bool writable = false;
};

struct WasiOptions {
  std::vector<std::string> args;  // argv, argv[0] included
  std::vector<std::string> env;   // "KEY=VALUE"
  std::FILE* out = stdout;
  std::FILE* err = stderr;
  // A fixed-step clock (`--clock fixed:NS`): every clock_time_get, of any clock, reads NS
  // nanoseconds later than the one before (the first reads NS), and clock_res_get says NS. A
  // program that sizes its work by the clock (CoreMark does) then runs the same iterations in
  // every engine, and its cost is measured from outside. 0: the host's real clocks.
  uint64_t fixed_clock_step_ns = 0;
  mutable uint64_t fixed_clock_now_ns = 0;  // the fixed clock's last reading
  std::vector<WasiPreopen> preopens;          // guest fds 3, 4, ... in this order
  int stdin_fd = 0;                           // the host fd guest fd 0 reads from (-1: none, EBADF)
  // Blocking calls (fd_read on stdin/a pipe, poll_oneoff) wake at least every ~10 ms to ask this
  // and, once it answers true, stop the guest with the trap "deadline reached". Null: no deadline.
  std::function<bool()> deadline_passed;
};

// "real" -> 0; "fixed:NS" (NS in 1..10^12) -> NS. Throws std::invalid_argument saying what is wrong.
uint64_t parse_clock(const std::string& text);
// "real" or "fixed:NS": what a result row records.
std::string clock_name(uint64_t fixed_step_ns);

inline constexpr const char* kWasiModule = "wasi_snapshot_preview1";
inline constexpr const char* kWasiUnstableModule = "wasi_unstable";

// Registers kWasiModule (and kWasiUnstableModule when `module` imports from it) in `rt` with the
// functions `module` imports from them (a name that is no WASI function gets an ENOSYS stub of
// its type). The fd table is this registration's own: opening the preopens happens here (throws
// std::invalid_argument naming one that cannot be opened). `options` must outlive the runtime.
void register_wasi(Runtime& rt, const Module& module, const WasiOptions& options);

}  // namespace dlab::wasm
