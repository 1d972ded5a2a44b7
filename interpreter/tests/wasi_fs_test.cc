// WASI's files and directories through the guest's fd table: preopens, path_open and the fd
// calls, directory listings, rename/link/symlink/unlink, rights that only narrow, read-only
// preopens, the wasi_unstable ABI's differences, and a hostile guest trying every way out of its
// preopen (.., absolute paths, symlinks it finds or makes, hard links, narrowed rights, and
// renames racing with its lookups), with the kernel's openat2 and with the component walk used
// where the kernel lacks it. A file outside the preopen must stay unread and untouched.
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <set>
#include <thread>

#include "wasi_fixture.h"
#include "host/wasi_path.h"

namespace dlab::wasm::wasi_test {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kFdRead = 1ull << 1, kFdSeek = 1ull << 2, kFdTell = 1ull << 5, kFdWrite = 1ull << 6, kPathOpen = 1ull << 13,
                   kFdReaddir = 1ull << 14, kFdFilestatGet = 1ull << 21;
constexpr uint32_t kCreat = 1, kDirectory = 2, kExcl = 4, kTrunc = 8;

using WasiFs = WasiGuest;

TEST_F(WasiFs, PreopensAreFdsFromThreeInOrderAndTheScanEndsWithEbadf) {
  fs::create_directories(outside() / "data");
  options_.preopens.push_back({(outside() / "data").string(), "data", false});
  load();
  EXPECT_EQ(call("fd_prestat_get", {3, 0}), 0u);
  EXPECT_EQ(u32_at(0), 0u);  // a directory
  EXPECT_EQ(u32_at(4), 1u);  // "/"
  EXPECT_EQ(call("fd_prestat_dir_name", {3, 16, 1}), 0u);
  EXPECT_EQ(std::string(reinterpret_cast<char*>(mem() + 16), 1), "/");
  EXPECT_EQ(call("fd_prestat_get", {4, 0}), 0u);
  EXPECT_EQ(u32_at(4), 4u);
  EXPECT_EQ(call("fd_prestat_dir_name", {4, 16, 3}), 37u);  // ENAMETOOLONG: the buffer is short
  EXPECT_EQ(call("fd_prestat_dir_name", {4, 16, 8}), 0u);
  EXPECT_EQ(std::string(reinterpret_cast<char*>(mem() + 16), 4), "data");
  EXPECT_EQ(call("fd_prestat_get", {5, 0}), kBadf);
  EXPECT_EQ(call("fd_prestat_get", {1, 0}), kBadf);  // open, but no preopen
  EXPECT_EQ(call("fd_fdstat_get", {0, 0}), kBadf);   // stdin_fd -1: no fd 0
  EXPECT_EQ(call("fd_fdstat_get", {3, 0}), 0u);
  EXPECT_EQ(mem()[0], 3u);  // directory
  // A preopen has a directory's base rights and passes on every right, all 64 bits, read-only or
  // not (wasi-libc of the wasi_unstable era checked them before opening): --dir's read-only is
  // enforced at each call (AReadOnlyPreopenChangesNothing).
  EXPECT_EQ(u64_at(8) & (kFdRead | kFdWrite | kFdSeek), 0u);
  EXPECT_EQ(u64_at(16), ~uint64_t{0});
  EXPECT_EQ(call("fd_fdstat_get", {4, 0}), 0u);
  EXPECT_EQ(u64_at(16), ~uint64_t{0}) << "a read-only preopen passes on every right too";
}

TEST_F(WasiFs, FilesOpenReadSeekWriteAndStat) {
  load();
  uint32_t fd;
  ASSERT_EQ(open(3, "file.txt", fd, 0, kFdRead | kFdSeek | kFdTell | kFdFilestatGet), 0u);
  EXPECT_EQ(fd, 0u);  // the lowest free number: no stdin here
  std::string got;
  EXPECT_EQ(read(fd, got), 0u);
  EXPECT_EQ(got, "inside");
  EXPECT_EQ(call("fd_seek", {fd, static_cast<uint64_t>(-4), 1, 8}), 0u);  // CUR
  EXPECT_EQ(u64_at(8), 2u);
  EXPECT_EQ(call("fd_seek", {fd, static_cast<uint64_t>(-10), 1, 8}), kInval);
  EXPECT_EQ(call("fd_seek", {fd, 0, 3, 8}), kInval);  // no such whence
  EXPECT_EQ(call("fd_tell", {fd, 8}), 0u);
  EXPECT_EQ(u64_at(8), 2u);
  EXPECT_EQ(read(fd, got), 0u);
  EXPECT_EQ(got, "side");
  EXPECT_EQ(call("fd_filestat_get", {fd, 256}), 0u);
  EXPECT_EQ(mem()[256 + 16], 4u);     // regular file
  EXPECT_EQ(u64_at(256 + 24), 1u);    // nlink
  EXPECT_EQ(u64_at(256 + 32), 6u);    // size
  EXPECT_EQ(write(fd, "x"), kNotcapable);  // opened without fd_write
  EXPECT_EQ(call("fd_close", {fd}), 0u);
  EXPECT_EQ(call("fd_close", {fd}), kBadf);

  ASSERT_EQ(open(3, "sub/new.txt", fd, kCreat | kExcl, kFdRead | kFdWrite | kFdSeek | (1ull << 22) | (1ull << 8)), 0u);
  EXPECT_EQ(write(fd, "hello"), 0u);
  EXPECT_EQ(u32_at(520), 5u);
  uint32_t p = put("J");
  put_u32(512, p);
  put_u32(516, 1);
  EXPECT_EQ(call("fd_pwrite", {fd, 512, 1, 0, 520}), 0u);
  EXPECT_EQ(call("fd_filestat_set_size", {fd, 3}), 0u);
  EXPECT_EQ(slurp(root() / "sub/new.txt"), "Jel");
  EXPECT_EQ(call("fd_allocate", {fd, 0, 10}), 0u);
  EXPECT_EQ(fs::file_size(root() / "sub/new.txt"), 10u);
  uint32_t again;
  EXPECT_EQ(open(3, "sub/new.txt", again, kCreat | kExcl), kExist);
  EXPECT_EQ(open(3, "sub/missing.txt", again), kNoent);
  EXPECT_EQ(open(3, "file.txt/", again), kNotdir);
  EXPECT_EQ(open(3, "file.txt", again, kDirectory), kNotdir);
  EXPECT_EQ(open(3, "sub", again, kDirectory, kFdRead | kFdWrite), kIsdir);
  EXPECT_EQ(open(fd, "x", again), kNotdir);  // a file is no directory to open in
  EXPECT_EQ(open(3, std::string("file.txt\0.evil", 14), again), kInval);  // a NUL inside
  EXPECT_EQ(call("fd_read", {fd, 4 * 65536 - 8, 2, 520}), 21u);  // EFAULT: iovecs past the memory
}

TEST_F(WasiFs, ReaddirListsEveryEntryAcrossSmallBuffers) {
  for (int i = 0; i < 40; ++i) spit(root() / "sub" / fmt::format("f{:02}", i), "");
  load();
  uint32_t dir;
  ASSERT_EQ(open(3, "sub", dir, kDirectory, kFdReaddir | kFdFilestatGet), 0u);
  std::set<std::string> names;
  uint64_t cookie = 0;
  for (int rounds = 0; rounds < 1000; ++rounds) {
    constexpr uint32_t kBuf = 8192, kLen = 100;  // room for 2-3 entries a call
    ASSERT_EQ(call("fd_readdir", {dir, kBuf, kLen, cookie, 8}), 0u);
    uint32_t used = u32_at(8), at = 0;
    while (at + 24 <= used) {
      uint32_t namlen = u32_at(kBuf + at + 16);
      if (at + 24 + namlen > used) break;  // cut off: read again from the last whole entry
      names.insert(std::string(reinterpret_cast<char*>(mem() + kBuf + at + 24), namlen));
      cookie = u64_at(kBuf + at);
      at += 24 + namlen;
    }
    if (used < kLen) break;
  }
  EXPECT_EQ(names.size(), 42u);  // 40 files, "." and ".."
  EXPECT_TRUE(names.count(".") && names.count("..") && names.count("f39"));
  EXPECT_EQ(call("fd_readdir", {3, 8192, 100, 0, 8}), 0u);  // the preopen lists too
  EXPECT_EQ(call("fd_readdir", {1, 8192, 100, 0, 8}), kNotcapable);
}

TEST_F(WasiFs, TreeCallsFollowPosixErrnos) {
  load();
  EXPECT_EQ(on_path("path_create_directory", 3, "d"), 0u);
  EXPECT_EQ(on_path("path_create_directory", 3, "d"), kExist);
  EXPECT_TRUE(fs::is_directory(root() / "d"));
  spit(root() / "d/f", "1");
  EXPECT_EQ(on_path("path_remove_directory", 3, "d"), kNotempty);
  EXPECT_EQ(on_path("path_unlink_file", 3, "d"), kIsdir);
  EXPECT_EQ(on_path("path_unlink_file", 3, "d/f/"), kNotdir);
  EXPECT_EQ(on_path("path_remove_directory", 3, "d/f"), kNotdir);
  EXPECT_EQ(rename(3, "d/f", 3, "g"), 0u);
  EXPECT_EQ(slurp(root() / "g"), "1");
  EXPECT_EQ(rename(3, "d/", 3, "e"), 0u);  // a directory with a trailing slash
  EXPECT_EQ(link(3, "g", 3, "e/h"), 0u);
  EXPECT_EQ(fs::hard_link_count(root() / "g"), 2u);
  EXPECT_EQ(link(3, "e", 3, "e2"), 63u);  // EPERM: no hard links to directories
  EXPECT_EQ(link(3, "g", 3, "e/h"), kExist);
  EXPECT_EQ(symlink("g", 3, "s"), 0u);
  uint32_t p = put("s");
  EXPECT_EQ(call("path_readlink", {3, p, 1, 1024, 64, 8}), 0u);
  EXPECT_EQ(u32_at(8), 1u);
  EXPECT_EQ(mem()[1024], 'g');
  EXPECT_EQ(call("path_readlink", {3, p, 1, 1024, 0, 8}), kInval);  // what readlink(2) says
  EXPECT_EQ(stat(3, "s", false), 0u);
  EXPECT_EQ(mem()[256 + 16], 7u);  // symlink
  EXPECT_EQ(stat(3, "s", true), 0u);
  EXPECT_EQ(mem()[256 + 16], 4u);  // its target, a file
  uint32_t fd;
  EXPECT_EQ(open(3, "s", fd, 0, kFdRead, kAll, false), kLoop);  // not followed
  EXPECT_EQ(symlink("loop", 3, "loop"), 0u);
  EXPECT_EQ(open(3, "loop", fd), kLoop);
  EXPECT_EQ(on_path("path_unlink_file", 3, "s"), 0u);
  EXPECT_TRUE(fs::exists(root() / "g"));
  // path_filestat_set_times: the times given, "now", and both at once refused.
  p = put("g");
  EXPECT_EQ(call("path_filestat_set_times", {3, 1, p, 1, 1000000000ull * 1000, 1000000000ull * 2000, 1 | 4}), 0u);
  EXPECT_EQ(stat(3, "g"), 0u);
  EXPECT_EQ(u64_at(256 + 40), 1000000000ull * 1000);  // atim
  EXPECT_EQ(u64_at(256 + 48), 1000000000ull * 2000);  // mtim
  EXPECT_EQ(call("path_filestat_set_times", {3, 1, p, 1, 0, 0, 4 | 8}), kInval);
}

TEST_F(WasiFs, RightsOnlyNarrowAndACallWithoutItsRightIsNotcapable) {
  load();
  uint32_t fd;
  ASSERT_EQ(open(3, "file.txt", fd, 0, kFdRead | kFdSeek), 0u);
  EXPECT_EQ(call("fd_fdstat_set_rights", {fd, kFdSeek, 0}), 0u);
  std::string got;
  EXPECT_EQ(read(fd, got), kNotcapable);
  EXPECT_EQ(call("fd_fdstat_set_rights", {fd, kFdSeek | kFdRead, 0}), kNotcapable);  // never regained
  EXPECT_EQ(call("fd_tell", {fd, 8}), kNotcapable);
  // A directory passes on no more than its inheriting rights.
  uint32_t dir;
  ASSERT_EQ(open(3, "sub", dir, kDirectory, kAll & ~(kFdRead | kFdWrite | kFdSeek | (1ull << 8) | (1ull << 22)), kFdSeek), 0u);
  EXPECT_EQ(open(dir, "x", fd, 0, kFdRead, 0), kNotcapable);
  EXPECT_EQ(open(dir, "x", fd, kCreat, kFdSeek, 0), 0u);
  ASSERT_EQ(call("fd_fdstat_get", {dir, 0}), 0u);
  EXPECT_EQ(call("fd_fdstat_set_rights", {dir, u64_at(8) & ~kPathOpen, 0}), 0u);
  EXPECT_EQ(open(dir, "x", fd, 0, 0), kNotcapable);
  // A file opened with a directory's rights keeps only the ones a file has, and the other way.
  ASSERT_EQ(open(3, "file.txt", fd, 0, kFdRead | kFdReaddir | kPathOpen), 0u);
  EXPECT_EQ(call("fd_fdstat_get", {fd, 0}), 0u);
  EXPECT_EQ(u64_at(8), kFdRead);
}

TEST_F(WasiFs, AReadOnlyPreopenChangesNothing) {
  options_.preopens[0].writable = false;
  load();
  // It reports the rights its calls may use: path_open, no path_create_file; every bit passed on.
  EXPECT_EQ(call("fd_fdstat_get", {3, 0}), 0u);
  EXPECT_NE(u64_at(8) & (1ull << 13), 0u);
  EXPECT_EQ(u64_at(8) & (1ull << 10), 0u);
  EXPECT_EQ(u64_at(16), ~uint64_t{0});
  EXPECT_EQ(call("fd_fdstat_set_rights", {3, (1ull << 13) | (1ull << 10), 0}), kNotcapable);
  uint32_t fd;
  EXPECT_EQ(open(3, "new.txt", fd, kCreat, 0, 0), kNotcapable);
  EXPECT_EQ(open(3, "file.txt", fd, kTrunc, 0, 0), kNotcapable);
  EXPECT_EQ(open(3, "file.txt", fd, 0, kFdWrite, 0), kNotcapable);
  EXPECT_EQ(on_path("path_create_directory", 3, "d"), kNotcapable);
  EXPECT_EQ(on_path("path_unlink_file", 3, "file.txt"), kNotcapable);
  EXPECT_EQ(on_path("path_remove_directory", 3, "sub"), kNotcapable);
  EXPECT_EQ(rename(3, "file.txt", 3, "moved.txt"), kNotcapable);
  EXPECT_EQ(symlink("file.txt", 3, "s"), kNotcapable);
  EXPECT_EQ(link(3, "file.txt", 3, "l"), kNotcapable);
  uint32_t p = put("file.txt");
  EXPECT_EQ(call("path_filestat_set_times", {3, 1, p, 8, 0, 0, 2 | 8}), kNotcapable);
  // The size- and time-changing rights without fd_write: a read, which opens with them dropped.
  ASSERT_EQ(open(3, "file.txt", fd, 0, kFdRead | (1ull << 22) | (1ull << 23) | (1ull << 8)), 0u);
  EXPECT_EQ(call("fd_fdstat_get", {fd, 0}), 0u);
  EXPECT_EQ(u64_at(8), kFdRead);
  EXPECT_EQ(call("fd_filestat_set_size", {fd, 0}), kNotcapable);
  ASSERT_EQ(open(3, "file.txt", fd, 0, kFdRead, 0), 0u);
  std::string got;
  EXPECT_EQ(read(fd, got), 0u);
  EXPECT_EQ(got, "inside");
  EXPECT_EQ(write(fd, "x"), kNotcapable);
  // wasi-libc's read open asks for every right but the write ones (its openat's `max`, masked by
  // the directory's inheriting rights, here all): it opens, and the changing rights are dropped.
  constexpr uint64_t kLibcReadMax = ~((1ull << 0) | kFdWrite | (1ull << 8) | (1ull << 22));
  ASSERT_EQ(open(3, "file.txt", fd, 0, kLibcReadMax, ~uint64_t{0}), 0u);
  EXPECT_EQ(call("fd_fdstat_get", {fd, 0}), 0u);
  EXPECT_EQ(u64_at(8) & ((1ull << 23) | kFdWrite), 0u) << "no set_times, no write";
  EXPECT_NE(u64_at(8) & kFdRead, 0u);
  EXPECT_EQ(u64_at(16) & ((1ull << 10) | (1ull << 26)), 0u) << "inheriting: no create, no unlink";
  EXPECT_EQ(call("fd_filestat_set_times", {fd, 0, 0, 2 | 8}), kNotcapable);
  EXPECT_EQ(write(fd, "x"), kNotcapable);
  // A folder opened under it is read-only too, whatever it asks for.
  uint32_t sub;
  ASSERT_EQ(open(3, "sub", sub, kDirectory, kLibcReadMax, ~uint64_t{0}), 0u);
  EXPECT_EQ(open(sub, "n.txt", fd, kCreat, 0, 0), kNotcapable);
  EXPECT_EQ(on_path("path_create_directory", sub, "d"), kNotcapable);
  EXPECT_EQ(slurp(root() / "file.txt"), "inside");
  EXPECT_EQ(std::distance(fs::directory_iterator(root()), fs::directory_iterator()), 2);  // file.txt, sub
}

// Go's os.Open (syscall/fs_wasip1.go, Go 1.21 on): base every file right but fd_datasync,
// fd_write, fd_allocate and path_filestat_set_size (fd_filestat_set_size stays in), inheriting every
// file right. A read-only open all the same, under a read-only preopen and a writable one.
constexpr uint64_t kGoFileRights = (1ull << 28) - 1;  // fd_datasync (bit 0) to poll_fd_readwrite (27)
constexpr uint64_t kGoReadOnly = kGoFileRights & ~((1ull << 0) | (1ull << 6) | (1ull << 8) | (1ull << 19));

class WasiFsGo : public WasiFs {
 protected:
  // file.txt opened as Go opens it for reading: it reads, and fd_write is refused before the host is asked.
  uint32_t open_as_go_reads(bool writable_preopen) {
    options_.preopens[0].writable = writable_preopen;
    load();
    uint32_t fd = 0;
    EXPECT_EQ(open(3, "file.txt", fd, 0, kGoReadOnly, kGoFileRights), 0u);
    std::string got;
    EXPECT_EQ(read(fd, got), 0u);
    EXPECT_EQ(got, "inside");
    EXPECT_EQ(write(fd, "x"), kNotcapable);
    return fd;
  }
};

TEST_F(WasiFsGo, ReadOnlyOpenReadsUnderAReadOnlyPreopen) {
  open_as_go_reads(false);
  EXPECT_EQ(slurp(root() / "file.txt"), "inside");
}

TEST_F(WasiFsGo, ReadOnlyOpenUnderAWritablePreopenOpensTheHostFileForReading) {
  uint32_t fd = open_as_go_reads(true);
  // It keeps fd_filestat_set_size, but the host file is open for reading only (opened for writing,
  // as the old rule did, a file of mode 0400 would have been EACCES for any user but root), so the
  // host refuses the truncation and the file is as it was.
  EXPECT_NE(call("fd_filestat_set_size", {fd, 0}), 0u);
  EXPECT_EQ(slurp(root() / "file.txt"), "inside");
}

TEST_F(WasiFs, RenumberMovesAnFdOverAnOpenOneAndStdioCanBeClosed) {
  load();
  uint32_t a, b;
  ASSERT_EQ(open(3, "file.txt", a, 0, kFdRead), 0u);
  ASSERT_EQ(open(3, "sub", b, kDirectory, 0), 0u);
  EXPECT_EQ(call("fd_renumber", {a, 99}), kBadf);  // the target must be open
  EXPECT_EQ(call("fd_renumber", {a, b}), 0u);
  EXPECT_EQ(call("fd_fdstat_get", {a, 0}), kBadf);
  std::string got;
  EXPECT_EQ(read(b, got), 0u);
  EXPECT_EQ(got, "inside");
  EXPECT_EQ(call("fd_renumber", {3, b}), 0u);  // a preopen can be moved and closed
  EXPECT_EQ(call("fd_prestat_get", {b, 0}), 0u);
  EXPECT_EQ(call("fd_close", {1}), 0u);
  EXPECT_EQ(write(1, "x"), kBadf);
  EXPECT_EQ(write(2, "to stderr"), 0u);
}

TEST_F(WasiFs, WasiUnstableHasItsOwnWhenceAndFilestatLayout) {
  load("wasi_unstable");
  uint32_t fd;
  ASSERT_EQ(open(3, "file.txt", fd, 0, kFdRead | kFdSeek | kFdTell | kFdFilestatGet), 0u);
  EXPECT_EQ(call("fd_seek", {fd, 2, 2, 8}), 0u);  // snapshot0's SET is 2
  EXPECT_EQ(u64_at(8), 2u);
  EXPECT_EQ(call("fd_seek", {fd, 1, 0, 8}), 0u);  // CUR is 0
  EXPECT_EQ(u64_at(8), 3u);
  EXPECT_EQ(call("fd_seek", {fd, static_cast<uint64_t>(-1), 1, 8}), 0u);  // END is 1
  EXPECT_EQ(u64_at(8), 5u);
  std::memset(mem() + 256, 0xee, 64);
  EXPECT_EQ(call("fd_filestat_get", {fd, 256}), 0u);
  EXPECT_EQ(mem()[256 + 16], 4u);
  EXPECT_EQ(u32_at(256 + 20), 1u);   // nlink, u32
  EXPECT_EQ(u64_at(256 + 24), 6u);   // size
  EXPECT_EQ(mem()[256 + 56], 0xee);  // 56 bytes, not 64
  EXPECT_EQ(stat(3, "file.txt"), 0u);
  EXPECT_EQ(u64_at(256 + 24), 6u);
}

TEST_F(WasiFs, NoSocketsNoSignals) {
  load();
  EXPECT_EQ(call("sock_shutdown", {1, 1}), kNotsock);
  EXPECT_EQ(call("sock_shutdown", {77, 1}), kBadf);
  EXPECT_EQ(call("sock_recv", {3, 0, 0, 0, 8, 12}), kNotsock);
  EXPECT_EQ(call("sock_send", {1, 0, 0, 0, 8}), kNotsock);
  EXPECT_EQ(call("sock_accept", {3, 0, 8}), kNotsock);
  EXPECT_EQ(call("proc_raise", {6}), kNosys);
  EXPECT_EQ(call("sched_yield", {}), 0u);
}

// --- a hostile guest, with openat2 (false) and with the component walk (true) ---

class WasiEscape : public WasiGuest, public ::testing::WithParamInterface<bool> {
 protected:
  void SetUp() override {
    WasiGuest::SetUp();
    wasi_impl::force_component_walk(GetParam());
    // What the host put in the tree: symlinks out, absolute and relative, to a file and a dir.
    fs::create_symlink(outside() / "secret.txt", root() / "abs_link");
    fs::create_symlink("../outside/secret.txt", root() / "rel_link");
    fs::create_symlink("../../outside", root() / "sub/dir_link");
  }
  void TearDown() override {
    wasi_impl::force_component_walk(false);
    EXPECT_EQ(slurp(outside() / "secret.txt"), "secret") << "the file outside was changed";
    EXPECT_EQ(std::distance(fs::directory_iterator(outside()), fs::directory_iterator()), 1) << "something was made outside";
    WasiGuest::TearDown();
  }
  // Every way of opening `path` to read or write: each must fail with `want`.
  void refused(const std::string& path, uint32_t want = kNotcapable) {
    uint32_t fd;
    for (uint32_t oflags : {0u, kCreat, kTrunc, kCreat | kTrunc})
      for (uint64_t rights : {kFdRead, kFdWrite})
        EXPECT_EQ(open(3, path, fd, oflags, rights), want) << path << " oflags " << oflags << " rights " << rights;
    EXPECT_EQ(stat(3, path), want) << path;
  }
};

TEST_P(WasiEscape, DotDotCannotClimbOutOfThePreopen) {
  load();
  refused("../outside/secret.txt");
  refused("sub/../../outside/secret.txt");
  refused("sub/./../sub/../..");
  refused("..");
  EXPECT_EQ(on_path("path_create_directory", 3, "../outside/made"), kNotcapable);
  EXPECT_EQ(on_path("path_unlink_file", 3, "../outside/secret.txt"), kNotcapable);
  EXPECT_EQ(on_path("path_remove_directory", 3, "sub/../../outside"), kNotcapable);
  EXPECT_EQ(rename(3, "../outside/secret.txt", 3, "stolen"), kNotcapable);
  EXPECT_EQ(rename(3, "file.txt", 3, "../outside/secret.txt"), kNotcapable);
  EXPECT_EQ(symlink("x", 3, "../outside/made"), kNotcapable);
  uint32_t p = put("..");
  EXPECT_EQ(call("path_filestat_set_times", {3, 0, p, 2, 0, 0, 2 | 8}), kNotcapable);
  EXPECT_EQ(call("path_readlink", {3, p, 2, 1024, 64, 8}), kNotcapable);
  // Inside is fine, however it is spelled.
  uint32_t fd;
  EXPECT_EQ(open(3, "sub/..//./file.txt", fd, 0, kFdRead), 0u);
  // A subdirectory's fd is no way up either: its paths resolve beneath it.
  uint32_t dir;
  ASSERT_EQ(open(3, "sub", dir, kDirectory, kAll & ~(kFdRead | kFdWrite | kFdSeek | (1ull << 8) | (1ull << 22))), 0u);
  EXPECT_EQ(open(dir, "../file.txt", fd, 0, kFdRead), kNotcapable);
}

TEST_P(WasiEscape, AbsolutePathsAreRefused) {
  load();
  refused((outside() / "secret.txt").string());
  refused("/file.txt");
  refused("/");
  EXPECT_EQ(on_path("path_create_directory", 3, (outside() / "made").string()), kNotcapable);
  EXPECT_EQ(on_path("path_unlink_file", 3, (outside() / "secret.txt").string()), kNotcapable);
  EXPECT_EQ(link(3, (outside() / "secret.txt").string(), 3, "stolen"), kNotcapable);
}

TEST_P(WasiEscape, SymlinksInTheTreeThatPointOutAreNotFollowed) {
  load();
  refused("abs_link");
  refused("rel_link");
  refused("sub/dir_link/secret.txt");
  uint32_t fd;
  EXPECT_EQ(open(3, "sub/dir_link/", fd, 0, 0, 0, false), kNotcapable);  // a trailing slash follows
  EXPECT_EQ(stat(3, "sub/dir_link/", false), kNotcapable);
  EXPECT_EQ(open(3, "abs_link", fd, 0, kFdRead, kAll, false), kLoop);  // not followed: the link itself
  EXPECT_EQ(stat(3, "abs_link", false), 0u);
  EXPECT_EQ(mem()[256 + 16], 7u);
  EXPECT_EQ(on_path("path_create_directory", 3, "sub/dir_link/made"), kNotcapable);
  EXPECT_EQ(on_path("path_unlink_file", 3, "sub/dir_link/secret.txt"), kNotcapable);
  EXPECT_EQ(rename(3, "sub/dir_link/secret.txt", 3, "stolen"), kNotcapable);
  uint32_t p = put("sub/dir_link/");
  EXPECT_EQ(call("path_readlink", {3, p, 13, 1024, 64, 8}), kNotcapable);  // a trailing slash would follow
  p = put("rel_link");
  EXPECT_EQ(call("path_filestat_set_times", {3, 1, p, 8, 0, 0, 2 | 8}), kNotcapable);
  // The links themselves may be read and removed: that touches nothing outside.
  EXPECT_EQ(call("path_readlink", {3, p, 8, 1024, 64, 8}), 0u);
  EXPECT_EQ(on_path("path_unlink_file", 3, "rel_link"), 0u);
}

TEST_P(WasiEscape, SymlinksTheGuestMakesCannotLeadOut) {
  load();
  EXPECT_EQ(symlink((outside() / "secret.txt").string(), 3, "mine_abs"), kNotcapable);  // absolute: not made
  EXPECT_FALSE(fs::is_symlink(root() / "mine_abs"));
  ASSERT_EQ(symlink("../outside/secret.txt", 3, "mine"), 0u);  // made, and never followed out
  ASSERT_EQ(symlink("sub/../../outside", 3, "mine_dir"), 0u);
  ASSERT_EQ(symlink("chain2", 3, "chain1"), 0u);
  ASSERT_EQ(symlink("mine", 3, "chain2"), 0u);
  refused("mine");
  refused("mine_dir/secret.txt");
  refused("chain1");
  EXPECT_EQ(link(3, "mine", 3, "hard", true), kNotcapable);  // linking what the symlink names
  EXPECT_EQ(on_path("path_create_directory", 3, "mine_dir/made"), kNotcapable);
  // A symlink inside, through guest-made links, works.
  ASSERT_EQ(symlink("sub/../file.txt", 3, "ok"), 0u);
  uint32_t fd;
  EXPECT_EQ(open(3, "ok", fd, 0, kFdRead), 0u);
}

TEST_P(WasiEscape, HardLinksCannotReachOut) {
  fs::create_directories(outside() / "ro");
  options_.preopens.push_back({(outside() / "ro").string(), "ro", false});
  spit(outside() / "ro/kept.txt", "kept");
  load();
  EXPECT_EQ(link(3, "../outside/secret.txt", 3, "stolen"), kNotcapable);
  EXPECT_EQ(link(3, "rel_link", 3, "stolen", true), kNotcapable);
  EXPECT_EQ(link(3, "sub/dir_link/secret.txt", 3, "stolen"), kNotcapable);
  EXPECT_EQ(link(3, "file.txt", 3, "../outside/planted"), kNotcapable);
  // Out of a read-only preopen into a writable one: it would make the file writable there.
  EXPECT_EQ(link(4, "kept.txt", 3, "kept_here"), kNotcapable);
  EXPECT_FALSE(fs::exists(root() / "stolen"));
  EXPECT_FALSE(fs::exists(root() / "kept_here"));
  // A hard link made without following links the symlink itself: harmless.
  EXPECT_EQ(link(3, "rel_link", 3, "link_copy"), 0u);
  EXPECT_TRUE(fs::is_symlink(root() / "link_copy"));
  refused("link_copy");
  fs::remove(outside() / "ro/kept.txt");
  fs::remove(outside() / "ro");
}

TEST_P(WasiEscape, RenamesRacingWithTheGuestsLookupsNeverLeadOut) {
  // The host swaps root/race between a directory and a symlink out, as fast as it can, while the
  // guest opens race/secret.txt again and again: it reads the one inside or gets an error.
  fs::create_directories(root() / "race");
  spit(root() / "race/secret.txt", "inside-race");
  load();
  std::atomic<bool> stop{false};
  std::string race = (root() / "race").string(), real = (root() / "race_real").string();
  std::thread swapper([&] {
    while (!stop) {
      if (::rename(race.c_str(), real.c_str()) != 0) continue;
      (void)::symlink("../outside", race.c_str());
      std::this_thread::yield();
      (void)::unlink(race.c_str());
      (void)::rename(real.c_str(), race.c_str());
    }
  });
  int opened = 0, refused_count = 0;
  std::string leaked;
  bool leak = false;
  const uint32_t path = put("race/secret.txt");
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(400);
  while (std::chrono::steady_clock::now() < until) {
    uint32_t e = call("path_open", {3, 1, path, 15, 0, kFdRead, 0, 0, 0});
    if (e == 0) {
      uint32_t fd = u32_at(0);
      std::string got;
      read(fd, got);
      call("fd_close", {fd});
      if (got != "inside-race") {
        leak = true;
        leaked = got;
        break;
      }
      ++opened;
    } else {
      ++refused_count;
    }
  }
  stop = true;
  swapper.join();
  EXPECT_FALSE(leak) << "read '" << leaked << "' through race/secret.txt";
  EXPECT_GT(opened + refused_count, 100);
}

INSTANTIATE_TEST_SUITE_P(WasiSandbox, WasiEscape, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& i) { return i.param ? "walk" : "openat2"; });

}  // namespace
}  // namespace dlab::wasm::wasi_test
