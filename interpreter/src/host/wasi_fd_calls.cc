// fd_*: reading, writing, seeking, stat, flags, rights, preopens and directory listings on the
// guest's fds (wasi_fd_table.h). Every call checks its right first (ENOTCAPABLE without it) and
// every guest buffer before touching the host (EFAULT with nothing done).
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <vector>

#include "host/wasi_calls.h"

namespace dlab::wasm::wasi_impl {

namespace {

// At most this many bytes in one call: Linux's own limit for one read or write (MAX_RW_COUNT,
// 2 GiB less a page), as other runtimes cap it. nread/nwritten is a u32: without a cap, 65,536
// iovecs naming the same 64 KiB (4 GiB gathered) reported 0 bytes written, and 65,537 reported 65,536.
constexpr uint64_t kMaxTransfer = 0x7ffff000;

// The guest's iovec array (buf u32, len u32) as host iovecs, every buffer checked first. At
// most 2^20 of them (16 MiB of host iovecs, whatever count a guest names) and kMaxTransfer bytes:
// past that the call reads or writes less, which its nread/nwritten says, as readv's callers expect.
uint32_t gather(const Guest& g, uint32_t iovs, uint32_t n, std::vector<iovec>& out) {
  if (!g.ok(iovs, 8ull * n)) return kFault;
  n = std::min<uint32_t>(n, 1u << 20);
  out.clear();
  uint64_t total = 0;
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t buf = g.u32(iovs + 8 * i), len = g.u32(iovs + 8 * i + 4);
    if (!g.ok(buf, len)) return kFault;
    uint64_t take = std::min<uint64_t>(len, kMaxTransfer - total);
    if (take > 0 || len == 0) out.push_back(iovec{g.at(buf), static_cast<size_t>(take)});
    total += take;
  }
  return kSuccess;
}

// readv/writev/preadv/pwritev over any number of iovecs: IOV_MAX at a time, on while each
// batch is done in full (a short one ends it, as one call would have). -1 with errno, or bytes.
template <typename Op>
ssize_t batched(const std::vector<iovec>& iov, Op op) {
  ssize_t total = 0;
  for (size_t at = 0; at < iov.size() || (iov.empty() && at == 0); at += IOV_MAX) {
    size_t n = std::min<size_t>(IOV_MAX, iov.size() - at);
    size_t want = 0;
    for (size_t i = 0; i < n; ++i) want += iov[at + i].iov_len;
    ssize_t r;
    do r = op(iov.data() + at, static_cast<int>(n), total);
    while (r < 0 && errno == EINTR);
    if (r < 0) return total > 0 ? total : -1;
    total += r;
    if (static_cast<size_t>(r) < want || iov.empty()) break;
  }
  return total;
}

std::FILE* stream_of(const WasiState& s, const FdEntry& e) { return e.stream == 1 ? s.options.out : s.options.err; }

// The guest asked for O_NONBLOCK on an fd the host shares with others (stdin): the flag is
// emulated (set on the host it would change the terminal's file for the shell too).
bool would_block(const FdEntry& e) {
  if (!(e.fdflags & kFdflagNonblock) || e.owned) return false;
  pollfd p{e.host, POLLIN, 0};
  return ::poll(&p, 1, 0) == 0;
}

void fd_read(HostCall& hc, WasiState& s, Abi) {
  Guest g{hc.memory};
  uint32_t err;
  FdEntry* e = s.fds.get(arg32(hc, 0), kFdRead, err);
  if (!e) return set(hc, err);
  uint32_t nread = arg32(hc, 3);
  std::vector<iovec> iov;
  if (uint32_t f = gather(g, arg32(hc, 1), arg32(hc, 2), iov)) return set(hc, f);
  if (!g.ok(nread, 4)) return set(hc, kFault);
  if (e->filetype == kFtDirectory) return set(hc, kIsdir);
  if (would_block(*e)) return set(hc, kAgain);
  // Nothing asked for is nothing to wait for: readv returns 0 at once, as without a deadline
  // (a zero-length read on a pipe under --deadline used to wait for data, or the deadline).
  size_t wanted = 0;
  for (const iovec& v : iov) wanted += v.iov_len;
  for (;;) {
    if (e->filetype != kFtRegularFile && s.has_deadline() && wanted > 0) wait_readable(s, e->host);
    ssize_t n = batched(iov, [&](const iovec* v, int c, ssize_t) { return ::readv(e->host, v, c); });
    if (n >= 0) {
      g.put_u32(nread, static_cast<uint32_t>(n));
      return set(hc, kSuccess);
    }
    if (errno != EINTR) return set(hc, errno_from_host(errno));
    s.check_deadline();
  }
}

void fd_pread(HostCall& hc, WasiState& s, Abi) {
  Guest g{hc.memory};
  uint32_t err;
  FdEntry* e = s.fds.get(arg32(hc, 0), kFdRead | kFdSeek, err);
  if (!e) return set(hc, err);
  uint64_t offset = arg64(hc, 3);
  uint32_t nread = arg32(hc, 4);
  std::vector<iovec> iov;
  if (uint32_t f = gather(g, arg32(hc, 1), arg32(hc, 2), iov)) return set(hc, f);
  if (!g.ok(nread, 4)) return set(hc, kFault);
  if (e->filetype == kFtDirectory) return set(hc, kIsdir);
  if (offset > static_cast<uint64_t>(INT64_MAX)) return set(hc, kInval);
  ssize_t n;
  n = batched(iov, [&](const iovec* v, int c, ssize_t done) { return ::preadv(e->host, v, c, static_cast<off_t>(offset) + done); });
  if (n < 0) return set(hc, errno_from_host(errno));
  g.put_u32(nread, static_cast<uint32_t>(n));
  set(hc, kSuccess);
}

// stdout/stderr: through the stream, flushed, so the guest learns of a full disk or closed pipe.
uint32_t write_stream(std::FILE* f, const std::vector<iovec>& iov, uint64_t& total) {
  total = 0;
  if (!f) return kBadf;
  for (const iovec& v : iov) total += std::fwrite(v.iov_base, 1, v.iov_len, f);
  errno = 0;
  if (std::fflush(f) != 0 || std::ferror(f)) {
    int err = errno;
    std::clearerr(f);
    return err ? errno_from_host(err) : kIo;
  }
  return kSuccess;
}

void fd_write(HostCall& hc, WasiState& s, Abi) {
  Guest g{hc.memory};
  uint32_t err;
  FdEntry* e = s.fds.get(arg32(hc, 0), kFdWrite, err);
  if (!e) return set(hc, err);
  uint32_t written = arg32(hc, 3);
  std::vector<iovec> iov;
  if (!g.ok(written, 4)) return set(hc, kFault);
  // Every buffer is checked before anything is written, as writev(2) does: a bad one is EFAULT
  // with nothing written, not a half-done write.
  if (uint32_t f = gather(g, arg32(hc, 1), arg32(hc, 2), iov)) {
    g.put_u32(written, 0);
    return set(hc, f);
  }
  if (e->stream) {
    uint64_t total;
    uint32_t r = write_stream(stream_of(s, *e), iov, total);
    g.put_u32(written, static_cast<uint32_t>(total));
    return set(hc, r);
  }
  if (e->filetype == kFtDirectory) return set(hc, kIsdir);
  ssize_t n;
  n = batched(iov, [&](const iovec* v, int c, ssize_t) { return ::writev(e->host, v, c); });
  if (n < 0) return set(hc, errno_from_host(errno));
  g.put_u32(written, static_cast<uint32_t>(n));
  set(hc, kSuccess);
}

void fd_pwrite(HostCall& hc, WasiState& s, Abi) {
  Guest g{hc.memory};
  uint32_t err;
  FdEntry* e = s.fds.get(arg32(hc, 0), kFdWrite | kFdSeek, err);
  if (!e) return set(hc, err);
  uint64_t offset = arg64(hc, 3);
  uint32_t written = arg32(hc, 4);
  std::vector<iovec> iov;
  if (uint32_t f = gather(g, arg32(hc, 1), arg32(hc, 2), iov)) return set(hc, f);
  if (!g.ok(written, 4)) return set(hc, kFault);
  if (e->stream) return set(hc, kSpipe);
  if (e->filetype == kFtDirectory) return set(hc, kIsdir);
  if (offset > static_cast<uint64_t>(INT64_MAX)) return set(hc, kInval);
  ssize_t n;
  n = batched(iov, [&](const iovec* v, int c, ssize_t done) { return ::pwritev(e->host, v, c, static_cast<off_t>(offset) + done); });
  if (n < 0) return set(hc, errno_from_host(errno));
  g.put_u32(written, static_cast<uint32_t>(n));
  set(hc, kSuccess);
}

void fd_seek(HostCall& hc, WasiState& s, Abi abi) {
  Guest g{hc.memory};
  uint32_t fd = arg32(hc, 0), whence = arg32(hc, 2) & 0xff, out = arg32(hc, 3);
  int64_t offset = static_cast<int64_t>(arg64(hc, 1));
  FdEntry* e = s.fds.find(fd);
  if (!e) return set(hc, kBadf);
  // The standard streams, as before they had rights: not seekable.
  if (e->filetype == kFtCharacterDevice && !(e->base & kFdSeek)) return set(hc, kSpipe);
  // Telling where one is needs only fd_tell.
  uint64_t need = offset == 0 && whence == (abi == Abi::kPreview1 ? 1u : 0u) ? kFdTell : kFdSeek;
  if ((e->base & need) != need && (e->base & kFdSeek) == 0) return set(hc, kNotcapable);
  int w;
  if (abi == Abi::kPreview1) w = whence == 0 ? SEEK_SET : whence == 1 ? SEEK_CUR : whence == 2 ? SEEK_END : -1;
  else w = whence == 0 ? SEEK_CUR : whence == 1 ? SEEK_END : whence == 2 ? SEEK_SET : -1;  // snapshot0's order
  if (w < 0) return set(hc, kInval);
  if (!g.ok(out, 8)) return set(hc, kFault);
  if (e->filetype == kFtDirectory) return set(hc, kIsdir);
  off_t r = ::lseek(e->host, static_cast<off_t>(offset), w);
  if (r < 0) return set(hc, errno_from_host(errno));
  g.put_u64(out, static_cast<uint64_t>(r));
  set(hc, kSuccess);
}

void fd_tell(HostCall& hc, WasiState& s, Abi) {
  Guest g{hc.memory};
  uint32_t err;
  FdEntry* e = s.fds.get(arg32(hc, 0), kFdTell, err);
  if (!e) return set(hc, err);
  if (!g.ok(arg32(hc, 1), 8)) return set(hc, kFault);
  if (e->filetype == kFtDirectory) return set(hc, kIsdir);
  off_t r = ::lseek(e->host, 0, SEEK_CUR);
  if (r < 0) return set(hc, errno_from_host(errno));
  g.put_u64(arg32(hc, 1), static_cast<uint64_t>(r));
  set(hc, kSuccess);
}

void fd_close(HostCall& hc, WasiState& s, Abi) { set(hc, s.fds.close(arg32(hc, 0)) ? kSuccess : kBadf); }
void fd_renumber(HostCall& hc, WasiState& s, Abi) { set(hc, s.fds.renumber(arg32(hc, 0), arg32(hc, 1))); }

void sync_call(HostCall& hc, WasiState& s, uint64_t right, int (*fn)(int)) {
  uint32_t err;
  FdEntry* e = s.fds.get(arg32(hc, 0), right, err);
  if (!e) return set(hc, err);
  if (e->stream) {
    std::FILE* f = stream_of(s, *e);
    return set(hc, f && std::fflush(f) == 0 ? kSuccess : kIo);
  }
  set(hc, fn(e->host) == 0 ? kSuccess : errno_from_host(errno));
}
void fd_sync(HostCall& hc, WasiState& s, Abi) { sync_call(hc, s, kFdSync, ::fsync); }
void fd_datasync(HostCall& hc, WasiState& s, Abi) { sync_call(hc, s, kFdDatasync, ::fdatasync); }

void fd_advise(HostCall& hc, WasiState& s, Abi) {
  uint32_t err;
  FdEntry* e = s.fds.get(arg32(hc, 0), kFdAdvise, err);
  if (!e) return set(hc, err);
  uint64_t offset = arg64(hc, 1), len = arg64(hc, 2);
  static const int advice[] = {POSIX_FADV_NORMAL, POSIX_FADV_SEQUENTIAL, POSIX_FADV_RANDOM, POSIX_FADV_WILLNEED, POSIX_FADV_DONTNEED, POSIX_FADV_NOREUSE};
  uint32_t a = arg32(hc, 3) & 0xff;
  if (a > 5 || offset > static_cast<uint64_t>(INT64_MAX) || len > static_cast<uint64_t>(INT64_MAX)) return set(hc, kInval);
  if (e->stream) return set(hc, kSpipe);
  int r = ::posix_fadvise(e->host, static_cast<off_t>(offset), static_cast<off_t>(len), advice[a]);
  set(hc, errno_from_host(r));
}

void fd_allocate(HostCall& hc, WasiState& s, Abi) {
  uint32_t err;
  FdEntry* e = s.fds.get(arg32(hc, 0), kFdAllocate, err);
  if (!e) return set(hc, err);
  uint64_t offset = arg64(hc, 1), len = arg64(hc, 2);
  if (offset > static_cast<uint64_t>(INT64_MAX) || len > static_cast<uint64_t>(INT64_MAX) - offset) return set(hc, kInval);
  if (e->stream) return set(hc, kSpipe);
  if (e->filetype == kFtDirectory) return set(hc, kIsdir);
  int r;
  do r = ::posix_fallocate(e->host, static_cast<off_t>(offset), static_cast<off_t>(len));
  while (r == EINTR);
  set(hc, errno_from_host(r));
}

void fd_fdstat_get(HostCall& hc, WasiState& s, Abi) {
  Guest g{hc.memory};
  FdEntry* e = s.fds.find(arg32(hc, 0));
  if (!e) return set(hc, kBadf);
  uint32_t out = arg32(hc, 1);
  if (!g.ok(out, 24)) return set(hc, kFault);
  std::memset(g.at(out), 0, 24);
  g.put_u8(out, e->filetype);
  g.put_u16(out + 2, e->fdflags);
  g.put_u64(out + 8, e->usable_base());
  g.put_u64(out + 16, e->inheriting);
  set(hc, kSuccess);
}

void fd_fdstat_set_flags(HostCall& hc, WasiState& s, Abi) {
  uint32_t err;
  FdEntry* e = s.fds.get(arg32(hc, 0), kFdFdstatSetFlags, err);
  if (!e) return set(hc, err);
  uint32_t flags = arg32(hc, 1) & 0xffff;
  if (flags & ~0x1fu) return set(hc, kInval);
  constexpr uint16_t kSyncFlags = kFdflagDsync | kFdflagRsync | kFdflagSync;
  // Linux cannot change O_SYNC/O_DSYNC on an open file (F_SETFL ignores them).
  if ((flags & kSyncFlags) != (e->fdflags & kSyncFlags)) return set(hc, kNotsup);
  if (e->owned && e->host >= 0) {
    int fl = ::fcntl(e->host, F_GETFL);
    if (fl < 0) return set(hc, errno_from_host(errno));
    fl = (fl & ~(O_APPEND | O_NONBLOCK)) | (flags & kFdflagAppend ? O_APPEND : 0) | (flags & kFdflagNonblock ? O_NONBLOCK : 0);
    if (::fcntl(e->host, F_SETFL, fl) < 0) return set(hc, errno_from_host(errno));
  }
  e->fdflags = static_cast<uint16_t>(flags);
  set(hc, kSuccess);
}

void fd_fdstat_set_rights(HostCall& hc, WasiState& s, Abi) {
  FdEntry* e = s.fds.find(arg32(hc, 0));
  if (!e) return set(hc, kBadf);
  uint64_t base = arg64(hc, 1), inheriting = arg64(hc, 2);
  // Rights only narrow: an fd never gains one back.
  if ((base & ~e->usable_base()) || (inheriting & ~e->inheriting)) return set(hc, kNotcapable);
  e->base = base;
  e->inheriting = inheriting;
  set(hc, kSuccess);
}

void fd_filestat_get(HostCall& hc, WasiState& s, Abi abi) {
  Guest g{hc.memory};
  uint32_t err;
  FdEntry* e = s.fds.get(arg32(hc, 0), kFdFilestatGet, err);
  if (!e) return set(hc, err);
  struct stat st{};
  if (e->host >= 0 && ::fstat(e->host, &st) != 0) return set(hc, errno_from_host(errno));
  set(hc, write_filestat(g, arg32(hc, 1), st, abi, e->filetype));
}

void fd_filestat_set_size(HostCall& hc, WasiState& s, Abi) {
  uint32_t err;
  FdEntry* e = s.fds.get(arg32(hc, 0), kFdFilestatSetSize, err);
  if (!e) return set(hc, err);
  uint64_t size = arg64(hc, 1);
  if (size > static_cast<uint64_t>(INT64_MAX)) return set(hc, kInval);
  if (e->stream) return set(hc, kInval);
  int r;
  do r = ::ftruncate(e->host, static_cast<off_t>(size));
  while (r < 0 && errno == EINTR);
  set(hc, r == 0 ? kSuccess : errno_from_host(errno));
}

void fd_filestat_set_times(HostCall& hc, WasiState& s, Abi) {
  uint32_t err;
  FdEntry* e = s.fds.get(arg32(hc, 0), kFdFilestatSetTimes, err);
  if (!e) return set(hc, err);
  timespec ts[2];
  if (uint32_t bad = make_times(arg64(hc, 1), arg64(hc, 2), arg32(hc, 3), ts)) return set(hc, bad);
  if (e->host < 0) return set(hc, kBadf);
  set(hc, ::futimens(e->host, ts) == 0 ? kSuccess : errno_from_host(errno));
}

void fd_prestat_get(HostCall& hc, WasiState& s, Abi) {
  Guest g{hc.memory};
  FdEntry* e = s.fds.find(arg32(hc, 0));
  if (!e || !e->preopen) return set(hc, kBadf);  // what ends wasi-libc's scan of the preopens
  uint32_t out = arg32(hc, 1);
  if (!g.ok(out, 8)) return set(hc, kFault);
  g.put_u32(out, 0);  // tag 0: a directory
  g.put_u32(out + 4, static_cast<uint32_t>(e->preopen_name.size()));
  set(hc, kSuccess);
}

void fd_prestat_dir_name(HostCall& hc, WasiState& s, Abi) {
  Guest g{hc.memory};
  FdEntry* e = s.fds.find(arg32(hc, 0));
  if (!e || !e->preopen) return set(hc, kBadf);
  uint32_t buf = arg32(hc, 1), len = arg32(hc, 2);
  if (len < e->preopen_name.size()) return set(hc, kNametoolong);
  if (!g.ok(buf, e->preopen_name.size())) return set(hc, kFault);
  std::memcpy(g.at(buf), e->preopen_name.data(), e->preopen_name.size());
  set(hc, kSuccess);
}

uint8_t type_of_dirent(int dir, const char* name, unsigned char d_type) {
  switch (d_type) {
    case DT_BLK: return kFtBlockDevice;
    case DT_CHR: return kFtCharacterDevice;
    case DT_DIR: return kFtDirectory;
    case DT_REG: return kFtRegularFile;
    case DT_LNK: return kFtSymbolicLink;
    case DT_SOCK: return kFtSocketStream;
    case DT_FIFO: return kFtUnknown;
    default: {
      struct stat st{};
      return ::fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0 ? filetype_of_mode(st.st_mode) : kFtUnknown;
    }
  }
}

// The whole listing of a directory fd, from its start ("." and ".." included).
uint32_t list_directory(int fd, std::vector<DirEntryInfo>& out) {
  out.clear();
  if (::lseek(fd, 0, SEEK_SET) < 0) return errno_from_host(errno);
  alignas(8) char buf[16384];
  for (;;) {
    long n = ::syscall(SYS_getdents64, fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno_from_host(errno);
    }
    if (n == 0) return kSuccess;
    for (long at = 0; at < n;) {
      const auto* d = reinterpret_cast<const dirent64*>(buf + at);
      out.push_back(DirEntryInfo{d->d_name, static_cast<uint64_t>(d->d_ino), type_of_dirent(fd, d->d_name, d->d_type)});
      at += d->d_reclen;
    }
  }
}

void fd_readdir(HostCall& hc, WasiState& s, Abi) {
  Guest g{hc.memory};
  uint32_t err;
  FdEntry* e = s.fds.get(arg32(hc, 0), kFdReaddir, err);
  if (!e) return set(hc, err);
  uint32_t buf = arg32(hc, 1), len = arg32(hc, 2), used_ptr = arg32(hc, 4);
  uint64_t cookie = arg64(hc, 3);
  if (!g.ok(buf, len) || !g.ok(used_ptr, 4)) return set(hc, kFault);
  if (e->filetype != kFtDirectory) return set(hc, kNotdir);
  // Cookie 0 lists the directory afresh; later cookies page through that listing.
  if (cookie == 0 || e->listing.empty())
    if (uint32_t r = list_directory(e->host, e->listing)) return set(hc, r);
  uint32_t used = 0;
  for (uint64_t i = cookie; i < e->listing.size() && used < len; ++i) {
    const DirEntryInfo& d = e->listing[i];
    uint8_t rec[24] = {};
    uint64_t next = i + 1;
    uint32_t namlen = static_cast<uint32_t>(d.name.size());
    std::memcpy(rec, &next, 8);
    std::memcpy(rec + 8, &d.ino, 8);
    std::memcpy(rec + 16, &namlen, 4);
    rec[20] = d.type;
    // An entry that does not fit is cut off at the buffer's end: the guest sees bufused == its
    // length and reads again from the last whole entry's d_next.
    uint32_t n = std::min<uint32_t>(24, len - used);
    std::memcpy(g.at(buf + used), rec, n);
    used += n;
    n = std::min<uint32_t>(namlen, len - used);
    std::memcpy(g.at(buf + used), d.name.data(), n);
    used += n;
  }
  g.put_u32(used_ptr, used);
  set(hc, kSuccess);
}

}  // namespace

uint32_t make_times(uint64_t atim, uint64_t mtim, uint32_t flags, timespec ts[2]) {
  if (flags & ~0xfu) return kInval;
  if ((flags & kFstAtim) && (flags & kFstAtimNow)) return kInval;
  if ((flags & kFstMtim) && (flags & kFstMtimNow)) return kInval;
  auto one = [](uint64_t ns, bool given, bool now, timespec& t) {
    if (now) t = timespec{0, UTIME_NOW};
    else if (given) t = timespec{static_cast<time_t>(ns / 1000000000ull), static_cast<long>(ns % 1000000000ull)};
    else t = timespec{0, UTIME_OMIT};
  };
  one(atim, flags & kFstAtim, flags & kFstAtimNow, ts[0]);
  one(mtim, flags & kFstMtim, flags & kFstMtimNow, ts[1]);
  return kSuccess;
}

void add_fd_calls(CallTable& t) {
  t["fd_read"] = {"iiii:i", fd_read};
  t["fd_pread"] = {"iiili:i", fd_pread};
  t["fd_write"] = {"iiii:i", fd_write};
  t["fd_pwrite"] = {"iiili:i", fd_pwrite};
  t["fd_seek"] = {"ilii:i", fd_seek};
  t["fd_tell"] = {"ii:i", fd_tell};
  t["fd_close"] = {"i:i", fd_close};
  t["fd_renumber"] = {"ii:i", fd_renumber};
  t["fd_sync"] = {"i:i", fd_sync};
  t["fd_datasync"] = {"i:i", fd_datasync};
  t["fd_advise"] = {"illi:i", fd_advise};
  t["fd_allocate"] = {"ill:i", fd_allocate};
  t["fd_fdstat_get"] = {"ii:i", fd_fdstat_get};
  t["fd_fdstat_set_flags"] = {"ii:i", fd_fdstat_set_flags};
  t["fd_fdstat_set_rights"] = {"ill:i", fd_fdstat_set_rights};
  t["fd_filestat_get"] = {"ii:i", fd_filestat_get};
  t["fd_filestat_set_size"] = {"il:i", fd_filestat_set_size};
  t["fd_filestat_set_times"] = {"illi:i", fd_filestat_set_times};
  t["fd_prestat_get"] = {"ii:i", fd_prestat_get};
  t["fd_prestat_dir_name"] = {"iii:i", fd_prestat_dir_name};
  t["fd_readdir"] = {"iiili:i", fd_readdir};
}

}  // namespace dlab::wasm::wasi_impl
