// Files a user names on the command line: inputs read whole (what other programs such as
// valgrind, clang or wast2json wrote, too), and outputs written by one rule for every command.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace dlab {

// The whole file as text; "" when it cannot be read (callers say what was expected).
std::string read_text_file(const std::string& path);
// The whole file, for inputs a user names: throws std::runtime_error("cannot read <path>: <why>")
// when it is missing, not a regular file (a device such as /dev/zero would be read until memory
// runs out), or unreadable.
std::string read_input_file(const std::string& path);

// The same file (the same checks and errors), mapped read-only instead of read: its bytes are the
// page cache's, nothing copied. For a large input read once and let go (a module of tens of
// megabytes, whose copy was a third of `dlab-run`'s start-up). While it is held, another process
// rewriting the file in place may show through, and truncating it makes a read past the new end
// a SIGBUS: hold it only for a first reading (the decoder copies what the module keeps). A file
// whose size is 0 (an empty one, or /proc's) is read instead.
class MappedInputFile {
 public:
  explicit MappedInputFile(const std::string& path);
  ~MappedInputFile();
  MappedInputFile(const MappedInputFile&) = delete;
  MappedInputFile& operator=(const MappedInputFile&) = delete;
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  bool mapped_ = false;
  std::string owned_;  // what was read instead, when the size said 0
};

// What an output may do to a regular file already at its path.
enum class ExistingFile {
  kRefuse,   // the default for a file a user names: never destroyed without being asked
  kReplace,  // asked for (--force), or a file the command owns (the probes' tables)
};

// Writes an output a user named (--json, --out, --csv): the one rule of every command.
//   - a symbolic link is refused: an output never writes through a link to somewhere else;
//   - a character device or FIFO (/dev/null, /dev/stdout, a pipe) is written into, never replaced;
//     other non-regular files (directories, block devices, sockets) are refused;
//   - an existing regular file is refused unless `existing` is kReplace (`force_hint` names the
//     option that asks, e.g. "--force");
//   - otherwise the content goes to a temporary in the same folder (created with O_EXCL and
//     O_NOFOLLOW; every write, fsync and close checked) and is then linked (new file) or renamed
//     (replacement) into place, so a reader never sees half a file.
// Throws std::runtime_error naming the path and the reason.
void write_output_file(const std::string& path, const std::string& content, ExistingFile existing,
                       const std::string& force_hint = "");

// The checks of write_output_file without writing: a command calls it before it measures or
// runs anything, so a refused output costs nothing.
void check_output_file(const std::string& path, ExistingFile existing, const std::string& force_hint = "");

// Creates `path` (never an existing file, never through a link: O_EXCL | O_NOFOLLOW) holding
// `content`, every write, the fsync and the close checked; on failure nothing is left there.
void write_new_file(const std::string& path, const std::string& content, unsigned mode = 0644);

// Writes all of `content` to an open descriptor, retrying short writes; throws with `what` and
// the system's reason.
void write_all(int fd, const std::string& content, const std::string& what);

}  // namespace dlab
