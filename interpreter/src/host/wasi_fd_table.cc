#include "host/wasi_fd_table.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

namespace dlab::wasm::wasi_impl {

FdEntry::~FdEntry() {
  if (owned && host >= 0) ::close(host);  // nothing to tell anyone about a failed close here
}

FdEntry* FdTable::find(uint32_t fd) {
  auto it = fds_.find(fd);
  return it == fds_.end() ? nullptr : it->second.get();
}

FdEntry* FdTable::get(uint32_t fd, uint64_t rights, uint32_t& err) {
  FdEntry* e = find(fd);
  if (!e) {
    err = kBadf;
    return nullptr;
  }
  if ((e->usable_base() & rights) != rights) {
    err = kNotcapable;
    return nullptr;
  }
  err = kSuccess;
  return e;
}

uint32_t FdTable::insert(std::unique_ptr<FdEntry> e, uint32_t& fd) {
  if (fds_.size() >= kMaxFds) return kMfile;
  uint32_t n = 0;
  for (const auto& [k, v] : fds_) {  // ascending: the first gap
    if (k != n) break;
    ++n;
  }
  fds_[n] = std::move(e);
  fd = n;
  return kSuccess;
}

bool FdTable::close(uint32_t fd) { return fds_.erase(fd) == 1; }

uint32_t FdTable::renumber(uint32_t from, uint32_t to) {
  auto f = fds_.find(from);
  auto t = fds_.find(to);
  if (f == fds_.end() || t == fds_.end()) return kBadf;
  if (from == to) return kSuccess;
  t->second = std::move(f->second);  // the old `to` entry closes here
  fds_.erase(f);
  return kSuccess;
}

void WasiState::check_deadline() const {
  if (options.deadline_passed && options.deadline_passed()) throw Trap("deadline reached");
}

namespace {

std::unique_ptr<FdEntry> stdin_entry(int host) {
  auto e = std::make_unique<FdEntry>();
  e->host = host;
  e->owned = false;
  struct stat st{};
  uint8_t type = ::fstat(host, &st) == 0 ? filetype_of_mode(st.st_mode) : kFtCharacterDevice;
  if (type == kFtRegularFile) {
    // `< file`: a file the guest may seek in, but never write.
    e->filetype = kFtRegularFile;
    e->base = kFdRead | kFdSeek | kFdTell | kFdFilestatGet | kFdAdvise | kPollFdReadwrite | kFdFdstatSetFlags;
  } else {
    // A terminal, pipe, socket or /dev/null: a character device without seek or tell rights
    // (what wasi-libc's isatty looks for).
    e->filetype = kFtCharacterDevice;
    e->base = kFdRead | kFdFilestatGet | kPollFdReadwrite | kFdFdstatSetFlags;
  }
  return e;
}

std::unique_ptr<FdEntry> stream_entry(int which, std::FILE* f) {
  auto e = std::make_unique<FdEntry>();
  e->stream = which;
  e->owned = false;
  e->host = f ? ::fileno(f) : -1;  // for poll and fstat only; writes go through the stream
  e->filetype = kFtCharacterDevice;  // no seek/tell rights: wasi-libc line-buffers it as a tty
  e->base = kFdWrite | kFdFilestatGet | kPollFdReadwrite | kFdFdstatSetFlags | kFdSync | kFdDatasync;
  return e;
}

}  // namespace

void populate(WasiState& s) {
  const WasiOptions& o = s.options;
  if (o.stdin_fd >= 0) s.fds.put(0, stdin_entry(o.stdin_fd));
  s.fds.put(1, stream_entry(1, o.out));
  s.fds.put(2, stream_entry(2, o.err));
  uint32_t fd = 3;
  for (const WasiPreopen& p : o.preopens) {
    int host = ::open(p.host.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (host < 0) throw std::invalid_argument(fmt::format("cannot open the directory {} for the guest: {}", p.host, std::strerror(errno)));
    auto e = std::make_unique<FdEntry>();
    e->host = host;
    e->filetype = kFtDirectory;
    e->preopen = true;
    e->preopen_name = p.guest;
    // A directory's rights as base, and every right as inheriting, all 64 bits, read-only or
    // not: wasi-libc of the wasi_unstable era compared what it would ask for (its `max`: every bit
    // but the ones the access mode contradicts) with a preopen's inheriting rights itself, and
    // opened nothing under one that lacked some (wasm3 grants every bit). --dir's read-only is
    // the flag, checked at every call.
    e->base = kDirRights;
    e->inheriting = ~uint64_t{0};
    e->read_only = !p.writable;
    s.fds.put(fd++, std::move(e));
  }
}

}  // namespace dlab::wasm::wasi_impl
