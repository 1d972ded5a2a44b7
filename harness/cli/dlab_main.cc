// dlab: the dispatchlab command line.
#include <fmt/format.h>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <string>

#include "commands.h"

namespace {

// An error message must never be a second failure: with stderr closed or full, fmt::print would
// throw inside the handler of the first error (and abort). This writes what it can and gives up
// quietly; the exit status carries the failure either way.
void print_error(const std::string& text) noexcept {
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

// A closed standard descriptor would be reused by the next open(2): a result file would become
// "stderr" and receive the progress lines. Such a descriptor is pointed at /dev/null first.
void reserve_standard_descriptors() noexcept {
  for (int fd = 0; fd <= 2; ++fd)
    if (::fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
      int null = ::open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
      if (null >= 0 && null != fd) {
        ::dup2(null, fd);
        ::close(null);
      }
    }
}

int run(int argc, char** argv) {
  CLI::App app{
      "dlab - interpreter-dispatch experiments on real microarchitectures.\n"
      "Every metric is counted (or explicitly estimated) on this machine; unavailable metrics are reported "
      "empty with their reason."};
  app.require_subcommand(1);
  dlab::cli::add_machine_command(app);
  dlab::cli::add_counters_command(app);
  dlab::cli::add_calibrate_command(app);
  dlab::cli::add_models_command(app);
  dlab::cli::add_probes_command(app);
  dlab::cli::add_wasm_command(app);
  dlab::cli::add_knee_command(app);
  dlab::cli::add_new_run_command(app);
  dlab::cli::add_fleet_command(app);
  dlab::cli::add_schema_command(app);
  // Exit status, for scripts: 0 done; 1 the command failed (a file, a measurement, bad data, a
  // write that did not reach its file); 2 the command line is wrong (nothing was run).
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  } catch (const dlab::cli::ExitStatus& e) {
    return e.status;
  } catch (const std::bad_alloc&) {
    print_error("dlab: error: out of memory (a size or count too large for this machine?)\n");
    return 1;
  } catch (const std::exception& e) {
    print_error(std::string("dlab: error: ") + e.what() + "\n");
    return 1;
  }
  // Output that never reached its file (a full disk, a closed pipe) is a failure, not a success.
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    print_error(std::string("dlab: error: cannot write standard output: ") + std::strerror(errno) + "\n");
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  reserve_standard_descriptors();
  try {
    return run(argc, argv);
  } catch (...) {
    // Only a failure while reporting a failure (CLI11 printing usage to a broken stream) lands here.
    print_error("dlab: error: the error could not be reported\n");
    return 1;
  }
}
