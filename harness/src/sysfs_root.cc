#include "dispatchlab/harness/sysfs_root.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "dispatchlab/harness/quote.h"

namespace dlab {

SysfsError::SysfsError(std::string path, int err)
    : std::runtime_error(fmt::format("cannot read {}: {}", path, std::strerror(err))), path_(std::move(path)), err_(err) {}

SysfsRoot::SysfsRoot(std::string root) : root_(std::move(root)) {
  while (!root_.empty() && root_.back() == '/') root_.pop_back();
}

std::string SysfsRoot::path(const std::string& kernel_path) const { return root_ + kernel_path; }

bool SysfsRoot::exists(const std::string& kernel_path) const {
  struct stat st {};
  return ::stat(path(kernel_path).c_str(), &st) == 0;
}

std::string SysfsRoot::read(const std::string& kernel_path) const {
  std::string p = path(kernel_path);
  int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw SysfsError(p, errno);
  // Kernel attribute files are small (a page at most); a regular file is read whole.
  std::string text;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      throw SysfsError(p, err);
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > (1u << 20)) {
      ::close(fd);
      throw SysfsError(p, EFBIG);
    }
  }
  ::close(fd);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ' || text.back() == '\t')) text.pop_back();
  return text;
}

std::vector<std::string> SysfsRoot::list(const std::string& kernel_path) const {
  std::string p = path(kernel_path);
  DIR* d = ::opendir(p.c_str());
  if (!d) throw SysfsError(p, errno);
  std::vector<std::string> out;
  errno = 0;
  while (dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") out.push_back(n);
    errno = 0;
  }
  int err = errno;
  ::closedir(d);
  if (err != 0) throw SysfsError(p, err);
  std::sort(out.begin(), out.end());
  return out;
}

unsigned long long parse_unsigned(const std::string& text, const std::string& what) {
  bool hex = text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
  std::string digits = hex ? text.substr(2) : text;
  auto is_digit = [&](char ch) {
    auto c = static_cast<unsigned char>(ch);
    return hex ? std::isxdigit(c) != 0 : std::isdigit(c) != 0;
  };
  if (digits.empty() || !std::all_of(digits.begin(), digits.end(), is_digit))
    throw std::invalid_argument(fmt::format("{}: {} is not an unsigned number", what, quote_input(text)));
  errno = 0;
  unsigned long long v = std::strtoull(digits.c_str(), nullptr, hex ? 16 : 10);
  if (errno == ERANGE) throw std::invalid_argument(fmt::format("{}: {} is out of range", what, quote_input(text)));
  return v;
}

std::vector<int> parse_cpu_list(const std::string& text) {
  std::vector<int> cpus;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    std::string part = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    size_t dash = part.find('-');
    auto num = [&](const std::string& s) { return static_cast<int>(parse_unsigned(s, "CPU list " + quote_input(text))); };
    int lo = num(part.substr(0, dash)), hi = dash == std::string::npos ? lo : num(part.substr(dash + 1));
    if (hi < lo) throw std::invalid_argument(fmt::format("CPU list {}: range {} runs backwards", quote_input(text), escape_input(part)));
    for (int c = lo; c <= hi; ++c) cpus.push_back(c);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return cpus;
}

}  // namespace dlab
