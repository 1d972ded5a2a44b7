#include "host/wasi_path.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <deque>
#include <vector>

#include "host/wasi_abi.h"

namespace dlab::wasm::wasi_impl {

HostFd& HostFd::operator=(HostFd&& o) noexcept {
  if (this != &o) {
    if (owned_ && fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    owned_ = o.owned_;
    o.fd_ = -1;
  }
  return *this;
}

HostFd::~HostFd() {
  if (owned_ && fd_ >= 0) ::close(fd_);
}

namespace {

// 1: openat2 works here, 0: not yet known, -1: the kernel (or a seccomp filter) lacks it.
std::atomic<int> openat2_state{0};
std::atomic<bool> walk_forced{false};

constexpr int kMaxSymlinks = 40;  // Linux's limit too

// A path's components; "" (from "//") dropped, "." and ".." kept.
void split_into(const std::string& path, std::deque<std::string>& out, bool front) {
  std::vector<std::string> parts;
  size_t i = 0;
  while (i <= path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string::npos) j = path.size();
    if (j > i) parts.push_back(path.substr(i, j - i));
    i = j + 1;
  }
  if (front) out.insert(out.begin(), parts.begin(), parts.end());
  else out.insert(out.end(), parts.begin(), parts.end());
}

// The target of the symlink `name` in `dir`; false when it is not a symlink (or is gone).
bool read_link(int dir, const std::string& name, std::string& target) {
  std::vector<char> buf(256);
  for (;;) {
    ssize_t n = ::readlinkat(dir, name.c_str(), buf.data(), buf.size());
    if (n < 0) return false;
    if (static_cast<size_t>(n) < buf.size()) {
      target.assign(buf.data(), static_cast<size_t>(n));
      return true;
    }
    if (buf.size() >= (1u << 20)) return false;
    buf.resize(buf.size() * 2);
  }
}

uint32_t walk(int dirfd, const std::string& path, int flags, mode_t mode, bool follow, HostFd& out) {
  std::vector<HostFd> stack;  // the directories passed through; [0] is dirfd (borrowed)
  stack.emplace_back(dirfd, false);
  std::deque<std::string> comps;
  split_into(path, comps, false);
  const bool trailing_slash = !path.empty() && path.back() == '/';
  int links = 0, retries = 0;
  auto open_final = [&](int at, const char* name, int f) -> uint32_t {
    int fd = ::openat(at, name, f, mode);
    if (fd < 0) return errno_from_host(errno);
    out = HostFd(fd);
    return kSuccess;
  };
  const int final_flags = flags | O_CLOEXEC | O_NOFOLLOW | (trailing_slash ? O_DIRECTORY : 0);
  for (;;) {
    int cur = stack.back().get();
    if (comps.empty()) return open_final(cur, ".", final_flags);  // "." or "a/.."
    std::string c = std::move(comps.front());
    comps.pop_front();
    const bool last = comps.empty();
    if (c == "." || c == "..") {
      if (c == "..") {
        if (stack.size() == 1) return kNotcapable;  // above the directory it started in
        stack.pop_back();
      }
      if (last) return open_final(stack.back().get(), ".", final_flags);
      continue;
    }
    auto expand = [&](const std::string& target) -> uint32_t {
      if (++links > kMaxSymlinks) return kLoop;
      if (!target.empty() && target[0] == '/') return kNotcapable;  // absolute: out of the sandbox
      split_into(target, comps, true);
      return kSuccess;
    };
    std::string target;
    if (!last) {
      int fd = ::openat(cur, c.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd >= 0) {
        stack.emplace_back(fd);
        continue;
      }
      int err = errno;
      if ((err == ENOTDIR || err == ELOOP) && read_link(cur, c, target)) {
        if (uint32_t e = expand(target)) return e;
        continue;
      }
      return errno_from_host(err);
    }
    const bool follow_last = follow || trailing_slash;  // a trailing slash follows, as in POSIX
    if (follow_last && read_link(cur, c, target)) {
      if (uint32_t e = expand(target)) return e;
      continue;
    }
    int fd = ::openat(cur, c.c_str(), final_flags, mode);
    if (fd >= 0) {
      out = HostFd(fd);
      return kSuccess;
    }
    int err = errno;
    // Replaced by a symlink between the readlink and the open: look again (a few times).
    if (follow_last && err == ELOOP && ++retries < 4) {
      comps.push_front(c);
      continue;
    }
    return errno_from_host(err);
  }
}

}  // namespace

void force_component_walk(bool on) { walk_forced = on; }

uint32_t open_beneath(int dirfd, const std::string& path, int flags, mode_t mode, bool follow, HostFd& out) {
  if (path.empty()) return kNoent;
  if (path[0] == '/') return kNotcapable;
  if (!walk_forced && openat2_state.load() >= 0) {
    open_how how{};
    how.flags = static_cast<uint64_t>(flags | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW));
    how.mode = (flags & O_CREAT) || (flags & __O_TMPFILE) == __O_TMPFILE ? mode : 0;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
    for (int attempt = 0;; ++attempt) {
      long fd = ::syscall(SYS_openat2, dirfd, path.c_str(), &how, sizeof how);
      if (fd >= 0) {
        openat2_state = 1;
        out = HostFd(static_cast<int>(fd));
        return kSuccess;
      }
      int err = errno;
      // A rename or mount raced with the resolution (the kernel refuses rather than guess): again.
      if ((err == EAGAIN || err == EINTR) && attempt < 16) continue;
      if (err == ENOSYS || (err == EPERM && openat2_state.load() == 0)) {
        openat2_state = -1;  // no openat2 here: walk from now on
        break;
      }
      if (err == EXDEV) return kNotcapable;  // the path (or a symlink in it) leads out
      return errno_from_host(err);
    }
  }
  return walk(dirfd, path, flags, mode, follow, out);
}

uint32_t resolve_parent(int dirfd, const std::string& path, ParentDir& out) {
  if (path.empty()) return kNoent;
  if (path[0] == '/') return kNotcapable;
  size_t end = path.find_last_not_of('/');  // not npos: the path does not start with '/'
  size_t slash = path.rfind('/', end);
  size_t start = slash == std::string::npos ? 0 : slash + 1;
  std::string dir = path.substr(0, start), base = path.substr(start, end + 1 - start);
  if (dir.empty()) {
    out.fd = HostFd(dirfd, false);
  } else if (uint32_t e = open_beneath(dirfd, dir, O_PATH | O_DIRECTORY, 0, true, out.fd)) {
    return e;
  }
  if (base == "." || base == "..") {
    // The call will name the parent's "." or "..": it must still be beneath dirfd.
    HostFd check;
    if (uint32_t e = open_beneath(dirfd, path, O_PATH | O_DIRECTORY, 0, true, check)) return e;
  }
  out.name = path.substr(start);
  return kSuccess;
}

}  // namespace dlab::wasm::wasi_impl
