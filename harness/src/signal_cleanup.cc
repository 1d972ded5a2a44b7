#include "signal_cleanup.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <mutex>

namespace dlab::internal {

namespace {

constexpr int kSlots = 64;
struct DirSlot {
  std::atomic<bool> claimed{false};  // taken (threads claim slots with a CAS)
  std::atomic<bool> ready{false};    // `path` is complete: the handler may act on it
  char path[PATH_MAX];
};
struct GroupSlot {
  std::atomic<pid_t> pgid{0};  // 0: free
};
DirSlot g_dirs[kSlots];
GroupSlot g_groups[kSlots];
constexpr int kSignals[3] = {SIGINT, SIGTERM, SIGHUP};
struct sigaction g_previous[3];

// Removes the files directly inside `dir` (scratch folders hold no subfolders) and `dir`.
void remove_flat_dir(const char* dir) {
  int fd = ::open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0) {
    alignas(8) char buf[4096];
    for (;;) {
      long n = ::syscall(SYS_getdents64, fd, buf, sizeof buf);
      if (n <= 0) break;
      for (long at = 0; at < n;) {
        auto* d = reinterpret_cast<struct dirent64*>(buf + at);
        if (std::strcmp(d->d_name, ".") != 0 && std::strcmp(d->d_name, "..") != 0) ::unlinkat(fd, d->d_name, 0);
        at += d->d_reclen;
      }
    }
    ::close(fd);
  }
  ::rmdir(dir);
}

void on_signal(int sig) {
  for (auto& g : g_groups)
    if (pid_t p = g.pgid.load(); p > 0) ::kill(-p, SIGKILL);
  for (auto& d : g_dirs)
    if (d.ready.load()) remove_flat_dir(d.path);
  for (int i = 0; i < 3; ++i)
    if (kSignals[i] == sig) ::sigaction(sig, &g_previous[i], nullptr);
  ::raise(sig);
}

void install_handlers_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int i = 0; i < 3; ++i) {
      struct sigaction sa {};
      sa.sa_handler = on_signal;
      sigemptyset(&sa.sa_mask);
      ::sigaction(kSignals[i], nullptr, &g_previous[i]);
      if (g_previous[i].sa_handler == SIG_IGN) continue;  // a signal the process ignores (nohup) stays ignored
      ::sigaction(kSignals[i], &sa, nullptr);
    }
  });
}

}  // namespace

int cleanup_add_dir(const char* path) {
  install_handlers_once();
  size_t len = std::strlen(path);
  if (len >= PATH_MAX) return -1;
  for (int i = 0; i < kSlots; ++i) {
    bool expected = false;
    if (g_dirs[i].claimed.compare_exchange_strong(expected, true)) {
      std::memcpy(g_dirs[i].path, path, len + 1);
      g_dirs[i].ready.store(true);
      return i;
    }
  }
  return -1;
}

void cleanup_remove_dir(int slot) {
  if (slot < 0) return;
  g_dirs[slot].ready.store(false);
  g_dirs[slot].claimed.store(false);
}

int cleanup_add_group(pid_t pgid) {
  install_handlers_once();
  for (int i = 0; i < kSlots; ++i) {
    pid_t expected = 0;
    if (g_groups[i].pgid.compare_exchange_strong(expected, pgid)) return i;
  }
  return -1;
}

void cleanup_remove_group(int slot) {
  if (slot >= 0) g_groups[slot].pgid.store(0);
}

}  // namespace dlab::internal
