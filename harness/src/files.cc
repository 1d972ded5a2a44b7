#include "dispatchlab/harness/files.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include <fmt/format.h>

namespace dlab {

namespace fs = std::filesystem;

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

namespace {

std::runtime_error read_failure(const std::string& path, const std::string& why) {
  return std::runtime_error("cannot read " + path + ": " + why);
}

struct FdCloser {
  int fd;
  ~FdCloser() { ::close(fd); }  // read-only: nothing a close could lose
};

// An input a user names, opened read-only once it is known to be a regular file; `st` its status.
int open_regular_input(const std::string& path, struct stat& st) {
  auto fail = [&](const std::string& why) { return read_failure(path, why); };
  // What it is, before it is opened: opening a device or a FIFO can have effects of its own.
  if (::stat(path.c_str(), &st) != 0) throw fail(errno == ENOENT ? std::string("no such file") : std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw fail("a directory, not a file");
  if (!S_ISREG(st.st_mode)) throw fail("not a regular file");
  // O_NONBLOCK: were the path swapped for a FIFO in between, fstat refuses it below instead of the
  // open blocking for a writer.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw fail(errno == ENOENT ? std::string("no such file") : std::strerror(errno));
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    std::string why = S_ISREG(st.st_mode) ? std::strerror(errno) : "not a regular file";
    ::close(fd);
    throw fail(why);
  }
  return fd;
}

// The rest of an open file, read to its end.
std::string read_to_end(int fd, const std::string& path, size_t size_hint) {
  std::string text;
  text.reserve(size_hint);
  char block[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, block, sizeof block);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw read_failure(path, std::strerror(errno));
    if (n == 0) break;
    text.append(block, static_cast<size_t>(n));
  }
  return text;
}

}  // namespace

MappedInputFile::MappedInputFile(const std::string& path) {
  struct stat st {};
  FdCloser closer{open_regular_input(path, st)};
  size_ = static_cast<size_t>(st.st_size);
  if (size_ == 0) {
    // Nothing to map (mmap refuses a length of 0), or a file whose size says nothing of its
    // content (/proc's): read, as read_input_file does.
    owned_ = read_to_end(closer.fd, path, 0);
    data_ = reinterpret_cast<const uint8_t*>(owned_.data());
    size_ = owned_.size();
    return;
  }
  void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, closer.fd, 0);
  if (p == MAP_FAILED) throw read_failure(path, std::strerror(errno));
  data_ = static_cast<const uint8_t*>(p);
  mapped_ = true;
}

MappedInputFile::~MappedInputFile() {
  if (mapped_) ::munmap(const_cast<uint8_t*>(data_), size_);
}

std::string read_input_file(const std::string& path) {
  // open/fstat/read rather than an ifstream: a stream constructs std::locale, whose first
  // construction installs every standard facet, a third of an empty module's start-up in
  // `dlab-run` (and its pages a share of the peak resident memory the pace table reports).
  struct stat st {};
  FdCloser closer{open_regular_input(path, st)};
  return read_to_end(closer.fd, path, static_cast<size_t>(st.st_size));
}

void write_all(int fd, const std::string& content, const std::string& what) {
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error(fmt::format("writing {} failed: {}", what, std::strerror(n < 0 ? errno : EIO)));
    done += static_cast<size_t>(n);
  }
}

void write_new_file(const std::string& path, const std::string& content, unsigned mode) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0) throw std::runtime_error(fmt::format("cannot create {}: {}", path, std::strerror(errno)));
  try {
    write_all(fd, content, path);
    // fsync: a full disk or an I/O error can show only here or at close; both are checked.
    if (::fsync(fd) != 0) throw std::runtime_error(fmt::format("writing {} failed: {}", path, std::strerror(errno)));
  } catch (...) {
    ::close(fd);
    ::unlink(path.c_str());
    throw;
  }
  if (::close(fd) != 0) {
    int err = errno;
    ::unlink(path.c_str());
    throw std::runtime_error(fmt::format("writing {} failed: {}", path, std::strerror(err)));
  }
}

namespace {

// A device or FIFO is written into, as a shell redirection would: nothing is created or renamed.
void write_into_stream(const std::string& path, const std::string& content) {
  // Links followed (/dev/stdout is one), and what was opened checked to be a stream: a path
  // swapped for a link to a regular file since it was classified is refused, not written.
  int fd = ::open(path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
  struct stat opened {};
  if (::fstat(fd, &opened) != 0 || !(S_ISCHR(opened.st_mode) || S_ISFIFO(opened.st_mode))) {
    ::close(fd);
    throw std::runtime_error(fmt::format("{} is no longer a character device or a pipe: not written", path));
  }
  try {
    write_all(fd, content, path);
  } catch (...) {
    ::close(fd);
    throw;
  }
  if (::close(fd) != 0) throw std::runtime_error(fmt::format("writing {} failed: {}", path, std::strerror(errno)));
}

// A new output's directory must be there: said by what is wrong with it (missing, not a directory),
// naming it, so the fix is plain (create it, or name another).
void check_output_directory(const std::string& path) {
  fs::path parent = fs::path(path).parent_path();
  if (parent.empty()) return;
  struct stat st {};
  if (::stat(parent.c_str(), &st) != 0) {
    if (errno == ENOENT)
      throw std::runtime_error(fmt::format("cannot write {}: the directory {} does not exist (create it first)", path, parent.string()));
    throw std::runtime_error(fmt::format("cannot write {}: directory {}: {}", path, parent.string(), std::strerror(errno)));
  }
  if (!S_ISDIR(st.st_mode)) throw std::runtime_error(fmt::format("cannot write {}: {} is not a directory", path, parent.string()));
}

// What is at an output's path: nothing, a regular file that may be replaced, or a stream (a
// character device or FIFO) to write into. Everything else is refused with the reason.
enum class OutputTarget { kNew, kRegular, kStream };

OutputTarget classify_output(const std::string& path, ExistingFile existing, const std::string& force_hint) {
  if (path.empty()) throw std::runtime_error("an output needs a file name");
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    // ENOTDIR: a file where the directory should be, which check_output_directory names.
    if (errno != ENOENT && errno != ENOTDIR) throw std::runtime_error(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
    check_output_directory(path);
    return OutputTarget::kNew;
  }
  if (S_ISLNK(st.st_mode)) {
    // A link to a stream (`/dev/stdout`, `/dev/fd/N`: links to /proc/self/fd/N) is written into,
    // as the stream itself is; a link to anything else is refused, so a planted link can never
    // redirect a write into a file.
    struct stat target {};
    if (::stat(path.c_str(), &target) == 0 && (S_ISCHR(target.st_mode) || S_ISFIFO(target.st_mode))) return OutputTarget::kStream;
    throw std::runtime_error(fmt::format("{} is a symbolic link: outputs never write through links (name the file itself; "
                                         "a link to a character device or a pipe, as /dev/stdout, is written into)",
                                         path));
  }
  if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) return OutputTarget::kStream;
  if (S_ISDIR(st.st_mode)) throw std::runtime_error(fmt::format("{} is a directory: give a file name", path));
  if (!S_ISREG(st.st_mode)) throw std::runtime_error(fmt::format("{} is not a regular file: refused as an output", path));
  if (existing == ExistingFile::kRefuse)
    throw std::runtime_error(fmt::format("{} exists: not replaced{}", path,
                                         force_hint.empty() ? std::string() : " (give " + force_hint + " to replace it)"));
  return OutputTarget::kRegular;
}

}  // namespace

void check_output_file(const std::string& path, ExistingFile existing, const std::string& force_hint) {
  classify_output(path, existing, force_hint);
}

void write_output_file(const std::string& path, const std::string& content, ExistingFile existing, const std::string& force_hint) {
  OutputTarget what = classify_output(path, existing, force_hint);
  if (what == OutputTarget::kStream) return write_into_stream(path, content);
  fs::path target(path);
  fs::path dir = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  fs::path tmp = dir / fmt::format(".{}.tmp.{}", target.filename().string(), ::getpid());
  write_new_file(tmp.string(), content);
  // A new file is linked (link(2) fails if something appeared at the path meanwhile); a
  // replacement is renamed over the regular file checked above.
  int rc = what == OutputTarget::kRegular ? ::rename(tmp.c_str(), target.c_str()) : ::link(tmp.c_str(), target.c_str());
  int err = errno;
  ::unlink(tmp.c_str());
  if (rc != 0) throw std::runtime_error(fmt::format("cannot create {}: {}", path, std::strerror(err)));
}

}  // namespace dlab
