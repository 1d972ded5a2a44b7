#include "dispatchlab/harness/temp_dir.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "dispatchlab/harness/files.h"
#include "signal_cleanup.h"

namespace dlab {

TempDir::TempDir(const std::string& purpose) {
  const char* tmp = std::getenv("TMPDIR");
  std::string base = tmp && *tmp ? tmp : "/tmp";
  std::string templ = fmt::format("{}/dlab-{}-XXXXXX", base, purpose);
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data()))
    throw std::runtime_error(fmt::format("cannot create a scratch folder {}: {} (set TMPDIR to a writable folder)", templ,
                                         std::strerror(errno)));
  path_ = buf.data();
  slot_ = internal::cleanup_add_dir(path_.c_str());
}

TempDir::~TempDir() {
  internal::cleanup_remove_dir(slot_);
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::filesystem::path TempDir::write(const std::string& name, const std::string& content) const {
  auto p = file(name);
  write_new_file(p.string(), content, 0600);
  return p;
}

}  // namespace dlab
