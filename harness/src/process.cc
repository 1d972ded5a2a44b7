#include "dispatchlab/harness/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "signal_cleanup.h"

extern char** environ;

namespace dlab {

std::string ProcessResult::describe(const std::string& program) const {
  if (!spawn_error.empty()) return fmt::format("cannot run {}: {}", program, spawn_error);
  if (timed_out) return fmt::format("{} did not finish within its time limit (killed)", program);
  if (output_overflow) return fmt::format("{} printed more than its output limit (killed)", program);
  if (signal) return fmt::format("{} was killed by signal {} ({})", program, signal, strsignal(signal));
  if (output_held_open && exit_code == 0)
    return fmt::format("{} exited, but a process it started still held its standard output 2 s later (not waited for; "
                       "it may still be running, outside its process group)",
                       program);
  return fmt::format("{} exited with status {}", program, exit_code);
}

namespace {

// The program's path as execvp would find it, resolved before fork so the child only calls
// async-signal-safe functions. "" when there is none (errno-style reason in `why`).
std::string resolve_program(const std::string& name, std::string& why) {
  auto runnable = [](const std::string& p) {
    struct stat st {};
    return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
  };
  if (name.find('/') != std::string::npos) {
    if (runnable(name)) return name;
    why = ::access(name.c_str(), F_OK) == 0 ? std::strerror(EACCES) : std::strerror(ENOENT);
    return "";
  }
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  for (size_t at = 0; at <= dirs.size();) {
    size_t end = dirs.find(':', at);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(at, end - at);
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (runnable(candidate)) return candidate;
    at = end + 1;
  }
  why = std::strerror(ENOENT);
  return "";
}

// The steps of the child between fork and exec, for the message of the one that failed.
enum ChildStep : int { kStepStdout, kStepPassFd, kStepStdin, kStepStderr, kStepChdir, kStepExec };

// "" for the exec itself (describe says "cannot run PROGRAM: ..."), else what the step was.
std::string describe_child_step(int step, const ProcessOptions& o) {
  switch (step) {
    case kStepStdout: return "standard output " + (o.stdout_file.empty() ? std::string("(a pipe or /dev/null)") : o.stdout_file) + ": ";
    case kStepPassFd: return fmt::format("passing descriptor {} as {}: ", o.pass_fd, o.pass_fd_as);
    case kStepStdin: return "standard input " + o.stdin_file + ": ";
    case kStepStderr: return "standard error " + (o.stderr_file.empty() ? std::string("/dev/null") : o.stderr_file) + ": ";
    case kStepChdir: return "working directory " + o.working_directory + ": ";
    default: return "";
  }
}

// Redirects `fd` to `file` in the child; false on failure.
bool redirect(int fd, const char* file, int flags) {
  int f = ::open(file, flags | O_CLOEXEC, 0644);
  if (f < 0) return false;
  bool ok = ::dup2(f, fd) >= 0;
  ::close(f);
  return ok;
}

// Kills the child (its group when it leads one) once `timeout` passes, unless stopped first.
class Watchdog {
 public:
  Watchdog(pid_t pid, bool group, double timeout_s) : pid_(pid), group_(group) {
    if (timeout_s <= 0) return;
    thread_ = std::thread([this, timeout_s] {
      std::unique_lock lock(m_);
      if (!cv_.wait_for(lock, std::chrono::duration<double>(timeout_s), [this] { return stopped_; })) {
        fired_ = true;
        kill_now();
      }
    });
  }
  ~Watchdog() { stop(); }
  // Called while the child is not yet reaped, so the pid cannot have been reused.
  void stop() {
    {
      std::lock_guard lock(m_);
      stopped_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  void kill_now() const { ::kill(group_ ? -pid_ : pid_, SIGKILL); }
  bool fired() const { return fired_; }

 private:
  pid_t pid_;
  bool group_;
  std::mutex m_;
  std::condition_variable cv_;
  bool stopped_ = false, fired_ = false;
  std::thread thread_;
};

}  // namespace

ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& o) {
  ProcessResult r;
  if (argv.empty()) {
    r.spawn_error = "empty argument vector";
    return r;
  }
  if (o.pass_fd >= 0 && o.pass_fd_as < 3) {
    r.spawn_error = "pass_fd_as must be 3 or above (0 to 2 are the standard streams)";
    return r;
  }
  std::string program = resolve_program(argv[0], r.spawn_error);
  if (program.empty()) return r;
  if (!o.working_directory.empty()) {
    struct stat st {};
    if (::stat(o.working_directory.c_str(), &st) != 0) {
      r.spawn_error = "working directory " + o.working_directory + ": " + std::strerror(errno);
      return r;
    }
    if (!S_ISDIR(st.st_mode)) {
      r.spawn_error = "working directory " + o.working_directory + ": not a folder";
      return r;
    }
  }
  if (!o.working_directory.empty() && program.front() != '/') {
    char* cwd = ::getcwd(nullptr, 0);  // before fork: the child changes directory, then execs this path
    if (!cwd) {
      r.spawn_error = std::string("getcwd: ") + std::strerror(errno);
      return r;
    }
    program = std::string(cwd) + "/" + program;
    std::free(cwd);
  }
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};  // err_pipe: exec's errno, if exec fails
  if ((o.capture_stdout && ::pipe2(out_pipe, O_CLOEXEC) != 0) || ::pipe2(err_pipe, O_CLOEXEC) != 0) {
    r.spawn_error = std::string("pipe: ") + std::strerror(errno);
    for (int fd : {out_pipe[0], out_pipe[1]})
      if (fd >= 0) ::close(fd);
    return r;
  }
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) {
    r.spawn_error = std::string("fork: ") + std::strerror(errno);
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]})
      if (fd >= 0) ::close(fd);
    return r;
  }
  if (pid == 0) {
    // The child: async-signal-safe calls only, then exec.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // dlab died before the line above took effect
    if (o.own_process_group) ::setpgid(0, 0);
    // Signals dlab ignores or handles are reset for the program.
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) ::signal(sig, SIG_DFL);
    bool ok = true;
    // Which step failed goes to the parent with its errno: a stdin file that is missing must not
    // read as a program that is.
    int step = kStepStdout;
    if (o.capture_stdout) ok = ::dup2(out_pipe[1], STDOUT_FILENO) >= 0;
    else if (!o.stdout_file.empty()) ok = redirect(STDOUT_FILENO, o.stdout_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC);
    else if (o.quiet) ok = redirect(STDOUT_FILENO, "/dev/null", O_WRONLY);
    int err_fd = err_pipe[1];
    if (o.pass_fd >= 0 && err_fd == o.pass_fd_as) err_fd = ::fcntl(err_fd, F_DUPFD_CLOEXEC, o.pass_fd_as + 1);  // not overwritten below
    if (ok) step = kStepPassFd;
    if (ok && o.pass_fd >= 0) {
      // dup2 onto itself keeps close-on-exec: cleared by hand then.
      if (o.pass_fd == o.pass_fd_as) ok = ::fcntl(o.pass_fd, F_SETFD, 0) == 0;
      else ok = ::dup2(o.pass_fd, o.pass_fd_as) >= 0;
    }
    if (ok) step = kStepStdin;
    if (ok && !o.stdin_file.empty()) ok = redirect(STDIN_FILENO, o.stdin_file.c_str(), O_RDONLY);
    if (ok) step = kStepStderr;
    if (ok && !o.stderr_file.empty()) ok = redirect(STDERR_FILENO, o.stderr_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC);
    else if (ok && o.quiet) ok = redirect(STDERR_FILENO, "/dev/null", O_WRONLY);
    if (ok) step = kStepChdir;
    if (ok && !o.working_directory.empty()) ok = ::chdir(o.working_directory.c_str()) == 0;
    if (ok) step = kStepExec;
    if (ok) ::execve(program.c_str(), args.data(), environ);
    int failure[2] = {step, errno};
    ssize_t ignored = ::write(err_fd, failure, sizeof failure);
    (void)ignored;
    ::_exit(127);
  }
  r.pid = static_cast<int>(pid);
  int group_slot = -1;
  if (o.own_process_group) {
    ::setpgid(pid, pid);  // also in the parent: no race with an early kill
    group_slot = internal::cleanup_add_group(pid);  // killed with its children if dlab is interrupted
  }
  ::close(err_pipe[1]);
  if (o.capture_stdout) ::close(out_pipe[1]);
  Watchdog watchdog(pid, o.own_process_group, o.timeout_s);
  if (o.capture_stdout) {
    // Read to EOF, but bounded: a process the program started can keep the pipe open after the
    // program has exited, even one that left its process group (`setsid sleep 600 &`), which no
    // kill of the group reaches. Once the program itself has exited, its output is read for
    // kHeldOpenGrace more, then no longer waited for (output_held_open says so).
    constexpr auto kHeldOpenGrace = std::chrono::seconds(2);
    std::optional<std::chrono::steady_clock::time_point> exited_at;
    char buf[4096];
    for (;;) {
      pollfd ready{out_pipe[0], POLLIN, 0};
      int polled = ::poll(&ready, 1, 100);
      if (polled < 0 && errno != EINTR) break;
      if (polled > 0) {
        ssize_t n = ::read(out_pipe[0], buf, sizeof buf);
        if (n > 0) {
          r.output.append(buf, static_cast<size_t>(n));
          if (o.max_output && r.output.size() > o.max_output) {
            r.output_overflow = true;
            r.output.resize(o.max_output);
            watchdog.kill_now();
            break;
          }
          continue;
        }
        if (n == 0 || errno != EINTR) break;  // EOF: every writer has closed it
        continue;
      }
      auto now = std::chrono::steady_clock::now();
      if (!exited_at) {
        siginfo_t info{};
        if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid) exited_at = now;
      } else if (now - *exited_at > kHeldOpenGrace) {
        r.output_held_open = true;
        break;
      }
    }
    ::close(out_pipe[0]);
  }
  // Wait without reaping first: the watchdog may still kill by pid until it is stopped.
  siginfo_t info{};
  while (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR) {
  }
  watchdog.stop();
  r.timed_out = watchdog.fired();
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      r.spawn_error = std::string("waitpid: ") + std::strerror(errno);
      ::close(err_pipe[0]);
      internal::cleanup_remove_group(group_slot);
      return r;
    }
  }
  int failure[2] = {0, 0};  // the child's step and errno, when it could not exec
  if (::read(err_pipe[0], failure, sizeof failure) == static_cast<ssize_t>(sizeof failure))
    r.spawn_error = describe_child_step(failure[0], o) + std::strerror(failure[1]);
  ::close(err_pipe[0]);
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  else if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  if (o.own_process_group) ::kill(-pid, SIGKILL);  // what the program left running in its group
  internal::cleanup_remove_group(group_slot);
  return r;
}

}  // namespace dlab
