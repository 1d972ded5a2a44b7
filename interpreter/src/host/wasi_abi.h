// WASI preview1's ABI as the host functions see it: errno values, rights, flags, file types,
// the layouts that differ between wasi_snapshot_preview1 and wasi_unstable (snapshot0), and
// bounds-checked access to guest memory. Internal to src/host/wasi*.cc.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "dispatchlab/interpreter/runtime.h"

namespace dlab::wasm::wasi_impl {

// errno (preview1 and snapshot0 share the numbering)
enum : uint32_t {
  kSuccess = 0, k2big = 1, kAcces = 2, kAgain = 6, kBadf = 8, kBusy = 10, kExist = 20, kFault = 21, kFbig = 22,
  kIlseq = 25, kIntr = 27, kInval = 28, kIo = 29, kIsdir = 31, kLoop = 32, kMfile = 33, kNametoolong = 37,
  kNoent = 44, kNomem = 48, kNospc = 51, kNosys = 52, kNotdir = 54, kNotempty = 55, kNotsock = 57, kNotsup = 58,
  kNotty = 59, kOverflow = 61, kPerm = 63, kPipe = 64, kRofs = 69, kSpipe = 70, kXdev = 75, kNotcapable = 76,
};

// The host's errno as WASI's (one table for every call; unknown ones are EIO).
uint32_t errno_from_host(int err);

// rights
enum : uint64_t {
  kFdDatasync = 1ull << 0, kFdRead = 1ull << 1, kFdSeek = 1ull << 2, kFdFdstatSetFlags = 1ull << 3,
  kFdSync = 1ull << 4, kFdTell = 1ull << 5, kFdWrite = 1ull << 6, kFdAdvise = 1ull << 7, kFdAllocate = 1ull << 8,
  kPathCreateDirectory = 1ull << 9, kPathCreateFile = 1ull << 10, kPathLinkSource = 1ull << 11,
  kPathLinkTarget = 1ull << 12, kPathOpen = 1ull << 13, kFdReaddir = 1ull << 14, kPathReadlink = 1ull << 15,
  kPathRenameSource = 1ull << 16, kPathRenameTarget = 1ull << 17, kPathFilestatGet = 1ull << 18,
  kPathFilestatSetSize = 1ull << 19, kPathFilestatSetTimes = 1ull << 20, kFdFilestatGet = 1ull << 21,
  kFdFilestatSetSize = 1ull << 22, kFdFilestatSetTimes = 1ull << 23, kPathSymlink = 1ull << 24,
  kPathRemoveDirectory = 1ull << 25, kPathUnlinkFile = 1ull << 26, kPollFdReadwrite = 1ull << 27,
  kSockShutdown = 1ull << 28, kSockAccept = 1ull << 29,
  kAllRights = (1ull << 30) - 1,
};
// What a directory fd can have (no read/write/seek of bytes), and a file (no path_* or readdir).
inline constexpr uint64_t kDirRights = kPathCreateDirectory | kPathCreateFile | kPathLinkSource | kPathLinkTarget |
                                       kPathOpen | kFdReaddir | kPathReadlink | kPathRenameSource | kPathRenameTarget |
                                       kPathFilestatGet | kPathFilestatSetSize | kPathFilestatSetTimes |
                                       kFdFilestatGet | kFdFilestatSetTimes | kPathSymlink | kPathRemoveDirectory |
                                       kPathUnlinkFile | kFdFdstatSetFlags | kFdSync | kFdDatasync | kFdAdvise |
                                       kPollFdReadwrite;
inline constexpr uint64_t kFileRights = kFdDatasync | kFdRead | kFdSeek | kFdFdstatSetFlags | kFdSync | kFdTell |
                                        kFdWrite | kFdAdvise | kFdAllocate | kFdFilestatGet | kFdFilestatSetSize |
                                        kFdFilestatSetTimes | kPollFdReadwrite;
// The rights that change the tree or a file's bytes, sizes or times: no fd under a read-only
// preopen may use them, whatever its rights say (FdEntry::read_only; link source too: a hard link
// made elsewhere would make the file writable there).
inline constexpr uint64_t kModifyingRights = kFdDatasync | kFdWrite | kFdAllocate | kPathCreateDirectory |
                                             kPathCreateFile | kPathLinkSource | kPathLinkTarget |
                                             kPathRenameSource | kPathRenameTarget | kPathFilestatSetSize |
                                             kPathFilestatSetTimes | kFdFilestatSetSize | kFdFilestatSetTimes |
                                             kPathSymlink | kPathRemoveDirectory | kPathUnlinkFile;
// The right that makes path_open open a file for writing: fd_write's. wasi-libc and Go both ask for
// it for O_WRONLY and O_RDWR and for no read-only open; the size-changing rights are no sign of a
// write (Go's read-only open asks for fd_filestat_set_size: a rule on them refused every Go program's
// reads under a read-only preopen, and opened its reads for writing elsewhere). An fd opened without
// it that has them fails where the host refuses (ftruncate of a read-only descriptor).
inline constexpr uint64_t kWriteRights = kFdWrite;

// filetype
enum : uint8_t {
  kFtUnknown = 0, kFtBlockDevice = 1, kFtCharacterDevice = 2, kFtDirectory = 3, kFtRegularFile = 4,
  kFtSocketDgram = 5, kFtSocketStream = 6, kFtSymbolicLink = 7,
};
uint8_t filetype_of_mode(mode_t mode);

// clockid
enum : uint32_t { kClockRealtime = 0, kClockMonotonic = 1, kClockProcessCputime = 2, kClockThreadCputime = 3 };

// fdflags, oflags, lookupflags, fstflags
enum : uint16_t { kFdflagAppend = 1, kFdflagDsync = 2, kFdflagNonblock = 4, kFdflagRsync = 8, kFdflagSync = 16 };
enum : uint16_t { kOflagCreat = 1, kOflagDirectory = 2, kOflagExcl = 4, kOflagTrunc = 8 };
enum : uint32_t { kLookupSymlinkFollow = 1 };
enum : uint16_t { kFstAtim = 1, kFstAtimNow = 2, kFstMtim = 4, kFstMtimNow = 8 };

// Which of the two module names a host function was registered under: they differ in fd_seek's
// whence values, filestat's layout (nlink u32 in snapshot0) and poll_oneoff's subscription layout.
enum class Abi { kPreview1, kUnstable };

// Guest memory access with the bounds check every host function needs.
struct Guest {
  MemoryInst* mem;
  bool ok(uint64_t addr, uint64_t len) const { return mem && addr + len <= mem->bytes; }
  uint8_t* at(uint64_t addr) const { return mem->data + addr; }
  uint16_t u16(uint64_t addr) const {
    uint16_t v;
    std::memcpy(&v, at(addr), 2);
    return v;
  }
  uint32_t u32(uint64_t addr) const {
    uint32_t v;
    std::memcpy(&v, at(addr), 4);
    return v;
  }
  uint64_t u64(uint64_t addr) const {
    uint64_t v;
    std::memcpy(&v, at(addr), 8);
    return v;
  }
  void put_u8(uint64_t addr, uint8_t v) const { *at(addr) = v; }
  void put_u16(uint64_t addr, uint16_t v) const { std::memcpy(at(addr), &v, 2); }
  void put_u32(uint64_t addr, uint32_t v) const { std::memcpy(at(addr), &v, 4); }
  void put_u64(uint64_t addr, uint64_t v) const { std::memcpy(at(addr), &v, 8); }
  // A path or symlink text: kFault out of bounds, kInval with a NUL inside (the host would stop
  // there and name another file), else kSuccess with `out` set.
  uint32_t path(uint32_t addr, uint32_t len, std::string& out) const;
};

// filestat: 64 bytes in preview1, 56 in snapshot0 (nlink u32). kFault if it does not fit.
uint32_t write_filestat(const Guest& g, uint32_t addr, const struct stat& st, Abi abi, uint8_t filetype);

inline uint32_t arg32(const HostCall& hc, int i) { return static_cast<uint32_t>(hc.slots[i]); }
inline uint64_t arg64(const HostCall& hc, int i) { return hc.slots[i]; }
inline void set(HostCall& hc, uint32_t err) { hc.slots[0] = err; }

}  // namespace dlab::wasm::wasi_impl
