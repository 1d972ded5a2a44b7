// Sandboxed path resolution: every path a guest names is resolved beneath a directory fd it
// holds, never outside it: absolute paths, `..` past the start, and symlinks leading out
// (absolute ones, or relative ones climbing out, created by the guest or not) are refused with
// ENOTCAPABLE. The kernel does it where it can (openat2 with RESOLVE_BENEATH: no window between
// a check and the use); else a walk component by component from held directory fds with
// O_NOFOLLOW, expanding symlinks itself (at most 40, then ELOOP). Internal to src/host/wasi*.cc.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace dlab::wasm::wasi_impl {

// An fd that closes itself.
class HostFd {
 public:
  HostFd() = default;
  explicit HostFd(int fd, bool owned = true) : fd_(fd), owned_(owned) {}
  HostFd(HostFd&& o) noexcept : fd_(o.fd_), owned_(o.owned_) { o.fd_ = -1; }
  HostFd& operator=(HostFd&& o) noexcept;
  HostFd(const HostFd&) = delete;
  HostFd& operator=(const HostFd&) = delete;
  ~HostFd();
  int get() const { return fd_; }
  int release() {
    int f = fd_;
    fd_ = -1;
    return f;
  }

 private:
  int fd_ = -1;
  bool owned_ = true;
};

// Opens `path` beneath the directory `dirfd` with open(2) `flags` (O_CLOEXEC added; O_NOFOLLOW
// unless `follow`: the last component's symlink is then not followed) and `mode` for O_CREAT.
// Returns kSuccess with `out` set, or the WASI errno.
uint32_t open_beneath(int dirfd, const std::string& path, int flags, mode_t mode, bool follow, HostFd& out);

// For calls on a path's last component (mkdir, unlink, rmdir, rename, link, symlink, readlink):
// the directory holding it, opened beneath `dirfd` (or `dirfd` itself), and the component's name
// as the *at call takes it (trailing slashes kept: the kernel's rules for them then apply). A
// last component of `.` or `..` is checked to stay beneath `dirfd` too.
struct ParentDir {
  HostFd fd;
  std::string name;
};
uint32_t resolve_parent(int dirfd, const std::string& path, ParentDir& out);

// Tests: resolve by walking, as on a kernel without openat2.
void force_component_walk(bool on);

}  // namespace dlab::wasm::wasi_impl
