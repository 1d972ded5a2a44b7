// A private scratch folder for files handed to other programs (wat2wasm, wast2json, valgrind,
// clang): made by mkdtemp(3) under $TMPDIR with mode 0700, so its name cannot be predicted and no
// other user can plant a link in it; the files this process writes there are created with O_EXCL
// and O_NOFOLLOW. It is removed with everything in it when the object goes, and also when the
// process is ended by SIGINT, SIGTERM or SIGHUP (a handler removes every live scratch folder,
// then lets the signal take its default course), so an interrupted run leaves nothing behind.
#pragma once

#include <filesystem>
#include <string>

namespace dlab {

class TempDir {
 public:
  // $TMPDIR/dlab-<purpose>-XXXXXX (or /tmp). Throws std::runtime_error when it cannot be made.
  explicit TempDir(const std::string& purpose);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  // A path inside, for a file another program will write.
  std::filesystem::path file(const std::string& name) const { return path_ / name; }
  // Creates `name` inside with `content` (never an existing file, never through a link).
  std::filesystem::path write(const std::string& name, const std::string& content) const;

 private:
  std::filesystem::path path_;
  int slot_ = -1;  // its place in the signal handler's list
};

}  // namespace dlab
