// path_*: calls naming a path relative to a directory fd the guest holds, resolved beneath it
// (wasi_path.h). The directory fd needs the call's right (ENOTCAPABLE), and an fd opened
// through it gets no right its inheriting rights lack.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include <fmt/format.h>

#include "host/wasi_calls.h"
#include "host/wasi_path.h"

namespace dlab::wasm::wasi_impl {

namespace {

// The directory fd a path call names, with `rights`: EBADF, ENOTDIR (a file), ENOTCAPABLE.
FdEntry* dir_fd(WasiState& s, uint32_t fd, uint64_t rights, uint32_t& err) {
  FdEntry* e = s.fds.find(fd);
  if (!e) {
    err = kBadf;
    return nullptr;
  }
  if (e->filetype != kFtDirectory) {
    err = kNotdir;
    return nullptr;
  }
  return s.fds.get(fd, rights, err);
}

bool trailing_slash(const std::string& p) { return !p.empty() && p.back() == '/'; }

uint32_t host_result(int r) { return r == 0 ? kSuccess : errno_from_host(errno); }

void path_open(HostCall& hc, WasiState& s, Abi) {
  Guest g{hc.memory};
  uint32_t dirflags = arg32(hc, 1), oflags = arg32(hc, 4) & 0xffff, fdflags = arg32(hc, 7) & 0xffff, out = arg32(hc, 8);
  uint64_t base = arg64(hc, 5), inheriting = arg64(hc, 6);
  uint64_t need = kPathOpen | (oflags & kOflagCreat ? kPathCreateFile : 0) | (oflags & kOflagTrunc ? kPathFilestatSetSize : 0);
  uint32_t err;
  FdEntry* dir = dir_fd(s, arg32(hc, 0), need, err);
  if (!dir) return set(hc, err);
  if ((oflags & ~0xfu) || (fdflags & ~0x1fu)) return set(hc, kInval);
  // Under a read-only preopen a write is refused; the other changing rights are dropped, not
  // refused: wasi-libc asks for every right the directory passes on but the write ones for a read
  // (its openat's `max`), which would otherwise refuse every open there.
  if (dir->read_only) {
    if (base & kWriteRights) return set(hc, kNotcapable);
    base &= ~kModifyingRights;
    inheriting &= ~kModifyingRights;
  }
  // No more than the directory passes on.
  if ((base & ~dir->inheriting) || (inheriting & ~dir->inheriting)) return set(hc, kNotcapable);
  std::string path;
  if (uint32_t e = g.path(arg32(hc, 2), arg32(hc, 3), path)) return set(hc, e);
  if (!g.ok(out, 4)) return set(hc, kFault);

  // The access mode the rights need (as wasi-libc asks for them: write rights for O_WRONLY).
  bool write = base & kWriteRights;
  bool read = base & (kFdRead | kFdReaddir);
  int flags = (write ? (read ? O_RDWR : O_WRONLY) : O_RDONLY) | O_NOCTTY;
  if (oflags & kOflagCreat) flags |= O_CREAT;
  if (oflags & kOflagExcl) flags |= O_EXCL;
  if (oflags & kOflagTrunc) flags |= O_TRUNC;
  if (oflags & kOflagDirectory) flags |= O_DIRECTORY;
  if (fdflags & kFdflagAppend) flags |= O_APPEND;
  if (fdflags & kFdflagDsync) flags |= O_DSYNC;
  if (fdflags & kFdflagSync) flags |= O_SYNC;
  if (fdflags & kFdflagRsync) flags |= O_RSYNC;
  // Opened non-blocking always (a FIFO without a writer would block the open itself, past any
  // deadline), then made blocking again unless the guest asked otherwise.
  HostFd fd;
  if (uint32_t e = open_beneath(dir->host, path, flags | O_NONBLOCK, 0666, dirflags & kLookupSymlinkFollow, fd)) return set(hc, e);
  if (!(fdflags & kFdflagNonblock)) {
    int fl = ::fcntl(fd.get(), F_GETFL);
    if (fl < 0 || ::fcntl(fd.get(), F_SETFL, fl & ~O_NONBLOCK) < 0) return set(hc, errno_from_host(errno));
  }
  struct stat st{};
  if (::fstat(fd.get(), &st) != 0) return set(hc, errno_from_host(errno));
  auto e = std::make_unique<FdEntry>();
  e->filetype = filetype_of_mode(st.st_mode);
  e->fdflags = static_cast<uint16_t>(fdflags);
  e->base = base & (e->filetype == kFtDirectory ? kDirRights : kFileRights);  // what applies to it
  e->inheriting = inheriting;
  e->read_only = dir->read_only;
  e->host = fd.release();
  uint32_t guest_fd;
  if (uint32_t r = s.fds.insert(std::move(e), guest_fd)) return set(hc, r);
  g.put_u32(out, guest_fd);
  set(hc, kSuccess);
}

// The path argument at slots (at, at + 1) resolved to its parent directory, for a call on the
// last component.
uint32_t parent_of(HostCall& hc, const FdEntry& dir, int at, std::string& path, ParentDir& p) {
  Guest g{hc.memory};
  if (uint32_t e = g.path(arg32(hc, at), arg32(hc, at + 1), path)) return e;
  return resolve_parent(dir.host, path, p);
}

void path_create_directory(HostCall& hc, WasiState& s, Abi) {
  uint32_t err;
  FdEntry* dir = dir_fd(s, arg32(hc, 0), kPathCreateDirectory, err);
  if (!dir) return set(hc, err);
  std::string path;
  ParentDir p;
  if (uint32_t e = parent_of(hc, *dir, 1, path, p)) return set(hc, e);
  set(hc, host_result(::mkdirat(p.fd.get(), p.name.c_str(), 0777)));
}

void path_filestat_get(HostCall& hc, WasiState& s, Abi abi) {
  Guest g{hc.memory};
  uint32_t err;
  FdEntry* dir = dir_fd(s, arg32(hc, 0), kPathFilestatGet, err);
  if (!dir) return set(hc, err);
  std::string path;
  if (uint32_t e = g.path(arg32(hc, 2), arg32(hc, 3), path)) return set(hc, e);
  HostFd fd;
  if (uint32_t e = open_beneath(dir->host, path, O_PATH, 0, arg32(hc, 1) & kLookupSymlinkFollow, fd)) return set(hc, e);
  struct stat st{};
  if (::fstat(fd.get(), &st) != 0) return set(hc, errno_from_host(errno));
  set(hc, write_filestat(g, arg32(hc, 4), st, abi, filetype_of_mode(st.st_mode)));
}

void path_filestat_set_times(HostCall& hc, WasiState& s, Abi) {
  Guest g{hc.memory};
  uint32_t err;
  FdEntry* dir = dir_fd(s, arg32(hc, 0), kPathFilestatSetTimes, err);
  if (!dir) return set(hc, err);
  timespec ts[2];
  if (uint32_t bad = make_times(arg64(hc, 4), arg64(hc, 5), arg32(hc, 6), ts)) return set(hc, bad);
  std::string path;
  if (uint32_t e = g.path(arg32(hc, 2), arg32(hc, 3), path)) return set(hc, e);
  HostFd fd;
  if (uint32_t e = open_beneath(dir->host, path, O_PATH, 0, arg32(hc, 1) & kLookupSymlinkFollow, fd)) return set(hc, e);
  // The file the O_PATH fd holds (a symlink itself when not followed), by AT_EMPTY_PATH.
  set(hc, host_result(::utimensat(fd.get(), "", ts, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW)));
}

void path_link(HostCall& hc, WasiState& s, Abi) {
  Guest g{hc.memory};
  uint32_t err;
  FdEntry* from = dir_fd(s, arg32(hc, 0), kPathLinkSource, err);
  if (!from) return set(hc, err);
  FdEntry* to = dir_fd(s, arg32(hc, 4), kPathLinkTarget, err);
  if (!to) return set(hc, err);
  std::string old_path, new_path;
  if (uint32_t e = g.path(arg32(hc, 2), arg32(hc, 3), old_path)) return set(hc, e);
  ParentDir np;
  if (uint32_t e = parent_of(hc, *to, 5, new_path, np)) return set(hc, e);
  if ((arg32(hc, 1) & kLookupSymlinkFollow) || trailing_slash(old_path)) {
    // The source is resolved beneath its directory (following symlinks, as asked or as a
    // trailing slash does), then linked by its /proc/self/fd name: never a file outside.
    HostFd src;
    if (uint32_t e = open_beneath(from->host, old_path, O_PATH, 0, true, src)) return set(hc, e);
    if (trailing_slash(old_path)) return set(hc, kPerm);  // it resolved, so it is a directory
    std::string proc = fmt::format("/proc/self/fd/{}", src.get());
    return set(hc, host_result(::linkat(AT_FDCWD, proc.c_str(), np.fd.get(), np.name.c_str(), AT_SYMLINK_FOLLOW)));
  }
  ParentDir op;
  if (uint32_t e = resolve_parent(from->host, old_path, op)) return set(hc, e);
  set(hc, host_result(::linkat(op.fd.get(), op.name.c_str(), np.fd.get(), np.name.c_str(), 0)));
}

void path_readlink(HostCall& hc, WasiState& s, Abi) {
  Guest g{hc.memory};
  uint32_t err;
  FdEntry* dir = dir_fd(s, arg32(hc, 0), kPathReadlink, err);
  if (!dir) return set(hc, err);
  uint32_t buf = arg32(hc, 3), len = arg32(hc, 4), used = arg32(hc, 5);
  if (!g.ok(buf, len) || !g.ok(used, 4)) return set(hc, kFault);
  std::string path;
  ParentDir p;
  if (uint32_t e = parent_of(hc, *dir, 1, path, p)) return set(hc, e);
  if (trailing_slash(path)) {
    // readlink("x/") would follow x: resolve it in the sandbox instead; it names a directory.
    HostFd t;
    if (uint32_t e = open_beneath(dir->host, path, O_PATH, 0, true, t)) return set(hc, e);
    return set(hc, kInval);
  }
  if (len == 0) return set(hc, kInval);  // as readlink(2) says of an empty buffer
  ssize_t n = ::readlinkat(p.fd.get(), p.name.c_str(), reinterpret_cast<char*>(g.at(buf)), len);
  if (n < 0) return set(hc, errno_from_host(errno));
  g.put_u32(used, static_cast<uint32_t>(n));  // cut to the buffer, as readlink(2) does
  set(hc, kSuccess);
}

void path_remove_directory(HostCall& hc, WasiState& s, Abi) {
  uint32_t err;
  FdEntry* dir = dir_fd(s, arg32(hc, 0), kPathRemoveDirectory, err);
  if (!dir) return set(hc, err);
  std::string path;
  ParentDir p;
  if (uint32_t e = parent_of(hc, *dir, 1, path, p)) return set(hc, e);
  set(hc, host_result(::unlinkat(p.fd.get(), p.name.c_str(), AT_REMOVEDIR)));
}

void path_rename(HostCall& hc, WasiState& s, Abi) {
  uint32_t err;
  FdEntry* from = dir_fd(s, arg32(hc, 0), kPathRenameSource, err);
  if (!from) return set(hc, err);
  FdEntry* to = dir_fd(s, arg32(hc, 3), kPathRenameTarget, err);
  if (!to) return set(hc, err);
  std::string old_path, new_path;
  ParentDir op, np;
  if (uint32_t e = parent_of(hc, *from, 1, old_path, op)) return set(hc, e);
  if (uint32_t e = parent_of(hc, *to, 4, new_path, np)) return set(hc, e);
  set(hc, host_result(::renameat(op.fd.get(), op.name.c_str(), np.fd.get(), np.name.c_str())));
}

void path_symlink(HostCall& hc, WasiState& s, Abi) {
  Guest g{hc.memory};
  uint32_t err;
  FdEntry* dir = dir_fd(s, arg32(hc, 2), kPathSymlink, err);
  if (!dir) return set(hc, err);
  std::string target, path;
  if (uint32_t e = g.path(arg32(hc, 0), arg32(hc, 1), target)) return set(hc, e);
  // An absolute target can only lead out of the sandbox: refused. (A relative one climbing out
  // is made, and refused wherever it is followed.)
  if (!target.empty() && target[0] == '/') return set(hc, kNotcapable);
  ParentDir p;
  if (uint32_t e = parent_of(hc, *dir, 3, path, p)) return set(hc, e);
  set(hc, host_result(::symlinkat(target.c_str(), p.fd.get(), p.name.c_str())));
}

void path_unlink_file(HostCall& hc, WasiState& s, Abi) {
  uint32_t err;
  FdEntry* dir = dir_fd(s, arg32(hc, 0), kPathUnlinkFile, err);
  if (!dir) return set(hc, err);
  std::string path;
  ParentDir p;
  if (uint32_t e = parent_of(hc, *dir, 1, path, p)) return set(hc, e);
  set(hc, host_result(::unlinkat(p.fd.get(), p.name.c_str(), 0)));
}

}  // namespace

void add_path_calls(CallTable& t) {
  t["path_open"] = {"iiiiillii:i", path_open};
  t["path_create_directory"] = {"iii:i", path_create_directory};
  t["path_filestat_get"] = {"iiiii:i", path_filestat_get};
  t["path_filestat_set_times"] = {"iiiilli:i", path_filestat_set_times};
  t["path_link"] = {"iiiiiii:i", path_link};
  t["path_readlink"] = {"iiiiii:i", path_readlink};
  t["path_remove_directory"] = {"iii:i", path_remove_directory};
  t["path_rename"] = {"iiiiii:i", path_rename};
  t["path_symlink"] = {"iiiii:i", path_symlink};
  t["path_unlink_file"] = {"iii:i", path_unlink_file};
}

}  // namespace dlab::wasm::wasi_impl
