// The guest's file descriptors: one table per registered instance (WasiState, held by its host
// functions), each fd a host fd (or one of WasiOptions' stdout/stderr streams) with its file
// type, fdflags and preview1 rights (base: what calls on it may do; inheriting: what an fd
// opened through it may get). Internal to src/host/wasi*.cc.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "dispatchlab/interpreter/wasi.h"
#include "host/wasi_abi.h"

namespace dlab::wasm::wasi_impl {

// fd_readdir's listing of a directory, taken when the guest reads from cookie 0: entry i has
// cookie i, its d_next is i + 1.
struct DirEntryInfo {
  std::string name;
  uint64_t ino = 0;
  uint8_t type = kFtUnknown;
};

struct FdEntry {
  int host = -1;      // the host fd (-1: a stream with no fd)
  bool owned = true;  // closed when the entry goes (not the host's stdin, nor a stream)
  int stream = 0;     // 1: writes go to WasiOptions::out, 2: to WasiOptions::err (read at each call)
  uint8_t filetype = kFtUnknown;
  uint16_t fdflags = 0;
  uint64_t base = 0, inheriting = 0;
  // Under a read-only preopen (--dir): no call may use kModifyingRights, whatever base says.
  // Read-only is this flag, not missing rights, because a preopen passes on every right as
  // inheriting: wasi-libc of the wasi_unstable era checked a preopen's inheriting rights itself
  // and could open nothing under one that lacked some.
  bool read_only = false;
  // The base rights calls may use, and what fd_fdstat_get reports: base less kModifyingRights when
  // read_only (the inheriting rights stay every bit, what that libc checked).
  uint64_t usable_base() const { return read_only ? base & ~kModifyingRights : base; }
  bool preopen = false;
  std::string preopen_name;  // fd_prestat_dir_name
  std::vector<DirEntryInfo> listing;

  FdEntry() = default;
  FdEntry(const FdEntry&) = delete;
  FdEntry& operator=(const FdEntry&) = delete;
  ~FdEntry();
};

class FdTable {
 public:
  // The entry of `fd` if it exists and has every right in `rights` (none of kModifyingRights
  // when it is read_only); else null with `err` EBADF (no such fd) or ENOTCAPABLE (a right missing).
  FdEntry* get(uint32_t fd, uint64_t rights, uint32_t& err);
  FdEntry* find(uint32_t fd);
  // The lowest free number; kMfile past kMaxFds open fds (the entry is then dropped, closing it).
  uint32_t insert(std::unique_ptr<FdEntry> e, uint32_t& fd);
  void put(uint32_t fd, std::unique_ptr<FdEntry> e) { fds_[fd] = std::move(e); }
  bool close(uint32_t fd);
  uint32_t renumber(uint32_t from, uint32_t to);

  static constexpr size_t kMaxFds = 16384;

 private:
  std::map<uint32_t, std::unique_ptr<FdEntry>> fds_;
};

// What one registered instance's WASI functions share.
struct WasiState {
  explicit WasiState(const WasiOptions& o) : options(o) {}
  const WasiOptions& options;
  FdTable fds;
  std::set<std::string> warned;  // unsupported functions already noted on stderr
  // Throws Trap("deadline reached") once WasiOptions::deadline_passed says so.
  void check_deadline() const;
  bool has_deadline() const { return static_cast<bool>(options.deadline_passed); }
};

// fds 0-2 and the preopens (3, 4, ...). Throws std::invalid_argument naming a preopen's host
// directory that cannot be opened.
void populate(WasiState& s);

}  // namespace dlab::wasm::wasi_impl
