// Reads kernel files (/sys, /proc) through a root folder: "/" on a machine, a recorded fixture
// (harness/tests/fixtures/rapl/...) in a test, so code that reads the machine is tested on
// machines it is not. Every read is checked; a failure names the file and the system's reason.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace dlab {

// A read that failed: `what()` is "cannot read <path>: <reason>", `err` the errno behind it.
class SysfsError : public std::runtime_error {
 public:
  SysfsError(std::string path, int err);
  const std::string& path() const { return path_; }
  int err() const { return err_; }

 private:
  std::string path_;
  int err_;
};

class SysfsRoot {
 public:
  explicit SysfsRoot(std::string root = "/");
  // The real path of an absolute kernel path: "/sys/x" or "<root>/sys/x"; what messages name.
  std::string path(const std::string& kernel_path) const;
  bool exists(const std::string& kernel_path) const;
  // The file's text without trailing whitespace. Throws SysfsError.
  std::string read(const std::string& kernel_path) const;
  // The entries of a directory (no "." or ".."), sorted. Throws SysfsError.
  std::vector<std::string> list(const std::string& kernel_path) const;

 private:
  std::string root_;  // without a trailing '/'; "" for "/"
};

// A kernel CPU list ("0", "0,28", "0-3,8"), as in cpumask files. Throws std::invalid_argument.
std::vector<int> parse_cpu_list(const std::string& text);
// An unsigned decimal or 0x-hex number, all of `text`. Throws std::invalid_argument naming `what`.
unsigned long long parse_unsigned(const std::string& text, const std::string& what);

}  // namespace dlab
