// The WASI host functions by group, each file adding its own to the table register_wasi links
// from: wasi_fd_calls.cc (fd_*), wasi_path_calls.cc (path_*), wasi_poll.cc (poll_oneoff,
// sched_yield, sock_*, proc_raise), wasi.cc (args, environ, clocks, random, proc_exit).
// Internal to src/host/wasi*.cc.
#pragma once

#include <time.h>

#include <map>
#include <string>

#include "host/wasi_abi.h"
#include "host/wasi_fd_table.h"

namespace dlab::wasm::wasi_impl {

using Impl = void (*)(HostCall&, WasiState&, Abi);
struct Entry {
  const char* signature;  // "ii:i" = (i32, i32) -> i32 errno; l = i64
  Impl impl;
};
using CallTable = std::map<std::string, Entry>;

void add_fd_calls(CallTable& t);
void add_path_calls(CallTable& t);
void add_poll_calls(CallTable& t);

// Blocks until the host fd `host` has bytes to read (or is at end or an error), without spinning:
// poll(2), in slices of at most 10 ms while a deadline is set, checking it between them (a Trap
// "deadline reached" when it has passed). Returns at once for a regular file.
void wait_readable(WasiState& s, int host);

// fd_/path_filestat_set_times' (atim, mtim, fstflags) as utimensat's times; kInval for a time
// both given and "now", or an unknown flag.
uint32_t make_times(uint64_t atim, uint64_t mtim, uint32_t flags, timespec ts[2]);

// The wall clock (CLOCK_REALTIME, ...) of a preview1 clock id; false for an unknown id.
bool host_clock(uint32_t id, clockid_t& out);

}  // namespace dlab::wasm::wasi_impl
