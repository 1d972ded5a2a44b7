// Running another program from an argument vector (fork + execve), never through a shell, so no
// file name, directory or argument is ever interpreted as shell syntax. A child never outlives
// dlab: it is killed when dlab dies, however dlab dies (PR_SET_PDEATHSIG), and a time limit or an
// output cap ends it (and its own children, when it runs in a process group of its own).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace dlab {

struct ProcessOptions {
  std::string stdout_file;  // redirect stdout to this file (truncated); "" = inherit, unless captured
  std::string stderr_file;  // redirect stderr to this file (truncated); "" = inherit
  std::string stdin_file;   // the program's standard input from this file ("/dev/null"); "" = inherit
  // The program's current directory ("" = dlab's). The files above are opened before the change, so
  // a relative name is dlab's; a relative program path is made absolute first, for the same reason.
  std::string working_directory;
  bool capture_stdout = false;  // collect stdout into ProcessResult::output
  bool quiet = false;           // stdout and stderr to /dev/null unless redirected or captured
  double timeout_s = 0;         // > 0: killed (SIGKILL) after this many seconds; ProcessResult::timed_out
  size_t max_output = 0;        // > 0 with capture_stdout: killed once it has printed more than this
  bool own_process_group = false;  // the child leads a new process group; a kill ends the whole group
  // >= 0: this descriptor of dlab's is the program's descriptor `pass_fd_as` (3 or above), e.g. a
  // pipe's write end for a trace the program writes there (valgrind --log-fd=3) while dlab reads it
  // in another thread. dlab keeps its own copy: close it once run_process has returned.
  int pass_fd = -1;
  int pass_fd_as = 3;
};

struct ProcessResult {
  int exit_code = -1;     // the exit status; -1 when it did not exit normally
  int signal = 0;         // the signal that ended it, if one did
  std::string output;     // stdout, when captured
  std::string spawn_error;  // why it could not be started ("No such file or directory"), else ""
  int pid = 0;              // the program's process id, once forked (a program may name files by it)
  bool timed_out = false;        // killed at ProcessOptions::timeout_s
  bool output_overflow = false;  // killed past ProcessOptions::max_output
  // With capture_stdout: the program exited but something it started still held its stdout two
  // seconds later (a daemon, `setsid cmd &`); what it printed until then is `output`.
  bool output_held_open = false;

  bool ok() const { return spawn_error.empty() && exit_code == 0 && !timed_out && !output_overflow && !output_held_open; }
  // "exited with status 2", "was killed by signal 9", "cannot run valgrind: No such file or
  // directory", "did not finish within 10 s (killed)", "printed more than 1048576 bytes (killed)".
  std::string describe(const std::string& program) const;
};

ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& options = {});

}  // namespace dlab
