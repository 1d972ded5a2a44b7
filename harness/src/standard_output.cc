#include "dispatchlab/harness/standard_output.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include <fmt/format.h>

namespace dlab::standard_output {

namespace {

std::atomic<int> first_error{0};  // the errno of the first failed write to descriptor 1
bool closed_at_start = false;     // descriptor 1 was closed when dlab started (`>&-`)

// The stdio stream's writer: every byte to descriptor 1, retrying short writes; a failure is
// remembered and handed back as stdio expects (fewer bytes than asked, errno set).
ssize_t write_out(void*, const char* buf, size_t size) {
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::write(STDOUT_FILENO, buf + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = n < 0 ? errno : EIO;
      int none = 0;
      first_error.compare_exchange_strong(none, err);
      errno = err;
      return static_cast<ssize_t>(done);
    }
    done += static_cast<size_t>(n);
  }
  return static_cast<ssize_t>(size);
}

// A closed descriptor 1 is taken by /dev/null opened read-only: the number stays reserved, and a
// write to it fails with EBADF, as it would have on the closed descriptor.
void reserve_closed_descriptor() {
  if (::fcntl(STDOUT_FILENO, F_GETFD) >= 0 || errno != EBADF) return;
  closed_at_start = true;
  int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null >= 0 && null != STDOUT_FILENO) {
    ::dup2(null, STDOUT_FILENO);  // dup2's copy has no FD_CLOEXEC: children inherit it, as they would the closed one
    ::close(null);
  } else if (null == STDOUT_FILENO) {
    ::fcntl(STDOUT_FILENO, F_SETFD, 0);
  }
}

}  // namespace

void reserve_standard_descriptors() noexcept {
  for (int fd : {STDIN_FILENO, STDERR_FILENO})
    if (::fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
      int null = ::open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
      if (null >= 0 && null != fd) {
        ::dup2(null, fd);
        ::close(null);
      }
    }
}

void install() {
  ::signal(SIGPIPE, SIG_IGN);
  reserve_closed_descriptor();
  cookie_io_functions_t io{};
  io.write = write_out;
  std::FILE* out = ::fopencookie(nullptr, "w", io);
  if (!out) return;  // out of memory at start-up: stdout stays glibc's own (checked at exit all the same)
  // The buffering glibc would give descriptor 1: by line on a terminal, in blocks otherwise.
  std::setvbuf(out, nullptr, ::isatty(STDOUT_FILENO) ? _IOLBF : _IOFBF, BUFSIZ);
  std::fflush(stdout);
  stdout = out;  // glibc's stdout is an ordinary variable; printf, fmt::print and fwrite(stdout) read it
}

int flush_and_check() {
  errno = 0;
  if (std::fflush(stdout) != 0 && first_error.load() == 0) first_error = errno ? errno : EIO;
  if (std::ferror(stdout) && first_error.load() == 0) first_error = EIO;  // a failure of a writer not our own
  return first_error.load();
}

std::string failure_message(int err) {
  if (err == EPIPE)
    return "dlab: error: output closed: the reader of standard output quit before dlab finished writing (Broken pipe); "
           "the output is incomplete\n";
  if (err == EBADF && closed_at_start)
    return "dlab: error: cannot write standard output: it is closed (>&-); nothing was written (use >/dev/null to discard it)\n";
  return fmt::format("dlab: error: cannot write standard output: {}; the output is incomplete\n", std::strerror(err));
}

void write_stderr(const std::string& text) noexcept {
  const char* p = text.data();
  size_t left = text.size();
  while (left > 0) {
    ssize_t n = ::write(STDERR_FILENO, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    p += n;
    left -= static_cast<size_t>(n);
  }
}

}  // namespace dlab::standard_output
