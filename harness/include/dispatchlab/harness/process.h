// Running another program from an argument vector (posix_spawnp), never through a shell, so no
// file name, directory or argument is ever interpreted as shell syntax.
#pragma once

#include <string>
#include <vector>

namespace dlab {

struct ProcessOptions {
  std::string stdout_file;  // redirect stdout to this file (truncated); "" = inherit, unless captured
  std::string stderr_file;  // redirect stderr to this file (truncated); "" = inherit
  bool capture_stdout = false;  // collect stdout into ProcessResult::output
  bool quiet = false;           // stdout and stderr to /dev/null unless redirected or captured
};

struct ProcessResult {
  int exit_code = -1;     // the exit status; -1 when it did not exit normally
  int signal = 0;         // the signal that ended it, if one did
  std::string output;     // stdout, when captured
  std::string spawn_error;  // why it could not be started ("No such file or directory"), else ""

  bool ok() const { return spawn_error.empty() && exit_code == 0; }
  // "exit 2", "killed by signal 9", "cannot run valgrind: No such file or directory".
  std::string describe(const std::string& program) const;
};

ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& options = {});

}  // namespace dlab
