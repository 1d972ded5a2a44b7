#include "dispatchlab/harness/process.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

extern char** environ;

namespace dlab {

std::string ProcessResult::describe(const std::string& program) const {
  if (!spawn_error.empty()) return fmt::format("cannot run {}: {}", program, spawn_error);
  if (signal) return fmt::format("{} was killed by signal {} ({})", program, signal, strsignal(signal));
  return fmt::format("{} exited with status {}", program, exit_code);
}

namespace {

// posix_spawn_file_actions_t, destroyed on every path out.
class FileActions {
 public:
  FileActions() { posix_spawn_file_actions_init(&fa_); }
  ~FileActions() { posix_spawn_file_actions_destroy(&fa_); }
  posix_spawn_file_actions_t* get() { return &fa_; }

 private:
  posix_spawn_file_actions_t fa_;
};

}  // namespace

ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& o) {
  ProcessResult r;
  if (argv.empty()) {
    r.spawn_error = "empty argument vector";
    return r;
  }
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  FileActions fa;
  int pipe_fds[2] = {-1, -1};
  if (o.capture_stdout) {
    if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
      r.spawn_error = std::string("pipe: ") + std::strerror(errno);
      return r;
    }
    posix_spawn_file_actions_adddup2(fa.get(), pipe_fds[1], STDOUT_FILENO);
  } else if (!o.stdout_file.empty()) {
    posix_spawn_file_actions_addopen(fa.get(), STDOUT_FILENO, o.stdout_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  } else if (o.quiet) {
    posix_spawn_file_actions_addopen(fa.get(), STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  }
  if (!o.stderr_file.empty())
    posix_spawn_file_actions_addopen(fa.get(), STDERR_FILENO, o.stderr_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  else if (o.quiet)
    posix_spawn_file_actions_addopen(fa.get(), STDERR_FILENO, "/dev/null", O_WRONLY, 0);

  pid_t pid = 0;
  int rc = posix_spawnp(&pid, args[0], fa.get(), nullptr, args.data(), environ);
  if (o.capture_stdout) close(pipe_fds[1]);
  if (rc != 0) {
    if (o.capture_stdout) close(pipe_fds[0]);
    r.spawn_error = std::strerror(rc);
    return r;
  }
  if (o.capture_stdout) {
    char buf[4096];
    for (;;) {
      ssize_t n = read(pipe_fds[0], buf, sizeof buf);
      if (n > 0) r.output.append(buf, static_cast<size_t>(n));
      else if (n == 0 || errno != EINTR) break;
    }
    close(pipe_fds[0]);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      r.spawn_error = std::string("waitpid: ") + std::strerror(errno);
      return r;
    }
  }
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  else if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  return r;
}

}  // namespace dlab
