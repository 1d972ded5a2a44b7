#include "host/wasi_abi.h"

#include <cerrno>

namespace dlab::wasm::wasi_impl {

uint32_t errno_from_host(int err) {
  if (err == 0) return kSuccess;
  switch (err) {
    case E2BIG: return 1;
    case EACCES: return 2;
    case EADDRINUSE: return 3;
    case EADDRNOTAVAIL: return 4;
    case EAFNOSUPPORT: return 5;
    case EAGAIN: return 6;  // EWOULDBLOCK too
    case EALREADY: return 7;
    case EBADF: return 8;
    case EBADMSG: return 9;
    case EBUSY: return 10;
    case ECANCELED: return 11;
    case ECHILD: return 12;
    case ECONNABORTED: return 13;
    case ECONNREFUSED: return 14;
    case ECONNRESET: return 15;
    case EDEADLK: return 16;
    case EDESTADDRREQ: return 17;
    case EDOM: return 18;
    case EDQUOT: return 19;
    case EEXIST: return 20;
    case EFAULT: return 21;
    case EFBIG: return 22;
    case EHOSTUNREACH: return 23;
    case EIDRM: return 24;
    case EILSEQ: return 25;
    case EINPROGRESS: return 26;
    case EINTR: return 27;
    case EINVAL: return 28;
    case EIO: return 29;
    case EISCONN: return 30;
    case EISDIR: return 31;
    case ELOOP: return 32;
    case EMFILE: return 33;
    case EMLINK: return 34;
    case EMSGSIZE: return 35;
    case EMULTIHOP: return 36;
    case ENAMETOOLONG: return 37;
    case ENETDOWN: return 38;
    case ENETRESET: return 39;
    case ENETUNREACH: return 40;
    case ENFILE: return 41;
    case ENOBUFS: return 42;
    case ENODEV: return 43;
    case ENOENT: return 44;
    case ENOEXEC: return 45;
    case ENOLCK: return 46;
    case ENOLINK: return 47;
    case ENOMEM: return 48;
    case ENOMSG: return 49;
    case ENOPROTOOPT: return 50;
    case ENOSPC: return 51;
    case ENOSYS: return 52;
    case ENOTCONN: return 53;
    case ENOTDIR: return 54;
    case ENOTEMPTY: return 55;
    case ENOTRECOVERABLE: return 56;
    case ENOTSOCK: return 57;
    case EOPNOTSUPP: return 58;  // ENOTSUP too
    case ENOTTY: return 59;
    case ENXIO: return 60;
    case EOVERFLOW: return 61;
    case EOWNERDEAD: return 62;
    case EPERM: return 63;
    case EPIPE: return 64;
    case EPROTO: return 65;
    case EPROTONOSUPPORT: return 66;
    case EPROTOTYPE: return 67;
    case ERANGE: return 68;
    case EROFS: return 69;
    case ESPIPE: return 70;
    case ESRCH: return 71;
    case ESTALE: return 72;
    case ETIMEDOUT: return 73;
    case ETXTBSY: return 74;
    case EXDEV: return 75;
    default: return kIo;
  }
}

uint8_t filetype_of_mode(mode_t mode) {
  switch (mode & S_IFMT) {
    case S_IFBLK: return kFtBlockDevice;
    case S_IFCHR: return kFtCharacterDevice;
    case S_IFDIR: return kFtDirectory;
    case S_IFREG: return kFtRegularFile;
    case S_IFSOCK: return kFtSocketStream;
    case S_IFLNK: return kFtSymbolicLink;
    default: return kFtUnknown;  // FIFOs too: preview1 has no type for them
  }
}

uint32_t Guest::path(uint32_t addr, uint32_t len, std::string& out) const {
  if (!ok(addr, len)) return kFault;
  out.assign(reinterpret_cast<const char*>(at(addr)), len);
  if (out.find('\0') != std::string::npos) return kInval;
  return kSuccess;
}

namespace {
uint64_t ns_of(const timespec& t) { return static_cast<uint64_t>(t.tv_sec) * 1000000000ull + static_cast<uint64_t>(t.tv_nsec); }
}  // namespace

uint32_t write_filestat(const Guest& g, uint32_t addr, const struct stat& st, Abi abi, uint8_t filetype) {
  const uint32_t size = abi == Abi::kPreview1 ? 64 : 56;
  if (!g.ok(addr, size)) return kFault;
  std::memset(g.at(addr), 0, size);
  g.put_u64(addr + 0, static_cast<uint64_t>(st.st_dev));
  g.put_u64(addr + 8, static_cast<uint64_t>(st.st_ino));
  g.put_u8(addr + 16, filetype);
  uint32_t at = addr + 24;
  if (abi == Abi::kPreview1) {
    g.put_u64(addr + 24, static_cast<uint64_t>(st.st_nlink));
    at = addr + 32;
  } else {
    g.put_u32(addr + 20, static_cast<uint32_t>(st.st_nlink));
  }
  g.put_u64(at, static_cast<uint64_t>(st.st_size));
  g.put_u64(at + 8, ns_of(st.st_atim));
  g.put_u64(at + 16, ns_of(st.st_mtim));
  g.put_u64(at + 24, ns_of(st.st_ctim));
  return kSuccess;
}

}  // namespace dlab::wasm::wasi_impl
