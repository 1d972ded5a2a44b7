// A hostile guest for WASI's unit tests: a module that imports WASI functions and exports each
// as a thin wrapper, so that a test drives any call with any arguments (bad paths, fds, rights,
// pointers), as a guest could. Strings go into its memory with put(); results come back from it
// with u32_at/u64_at. A temporary tree (root/ preopened, outside/ beside it) is made per test.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "dispatchlab/interpreter/runtime.h"
#include "dispatchlab/interpreter/wasi.h"
#include "wat.h"

namespace dlab::wasm::wasi_test {

// preview1 signatures: i = i32, l = i64; after ':' the result (errno) if any.
struct Import {
  const char* name;
  const char* sig;
};
inline const std::vector<Import>& all_imports() {
  static const std::vector<Import> v = {
      {"fd_read", "iiii:i"},           {"fd_pread", "iiili:i"},          {"fd_write", "iiii:i"},
      {"fd_pwrite", "iiili:i"},        {"fd_seek", "ilii:i"},            {"fd_tell", "ii:i"},
      {"fd_close", "i:i"},             {"fd_renumber", "ii:i"},          {"fd_sync", "i:i"},
      {"fd_datasync", "i:i"},          {"fd_advise", "illi:i"},          {"fd_allocate", "ill:i"},
      {"fd_fdstat_get", "ii:i"},       {"fd_fdstat_set_flags", "ii:i"},  {"fd_fdstat_set_rights", "ill:i"},
      {"fd_filestat_get", "ii:i"},     {"fd_filestat_set_size", "il:i"}, {"fd_filestat_set_times", "illi:i"},
      {"fd_prestat_get", "ii:i"},      {"fd_prestat_dir_name", "iii:i"}, {"fd_readdir", "iiili:i"},
      {"path_open", "iiiiillii:i"},    {"path_create_directory", "iii:i"}, {"path_filestat_get", "iiiii:i"},
      {"path_filestat_set_times", "iiiilli:i"}, {"path_link", "iiiiiii:i"}, {"path_readlink", "iiiiii:i"},
      {"path_remove_directory", "iii:i"}, {"path_rename", "iiiiii:i"},  {"path_symlink", "iiiii:i"},
      {"path_unlink_file", "iii:i"},   {"poll_oneoff", "iiii:i"},        {"sched_yield", ":i"},
      {"proc_raise", "i:i"},           {"sock_accept", "iii:i"},         {"sock_recv", "iiiiii:i"},
      {"sock_send", "iiiii:i"},        {"sock_shutdown", "ii:i"},
  };
  return v;
}

// The driver module: every import of `module_name`, re-exported through a wrapper.
inline std::string driver_wat(const char* module_name) {
  std::ostringstream w, funcs;
  w << "(module\n";
  for (const Import& im : all_imports()) {
    std::string params, results, args;
    std::string sig = im.sig;
    size_t colon = sig.find(':');
    for (size_t i = 0; i < colon; ++i) {
      params += sig[i] == 'l' ? " i64" : " i32";
      args += fmt::format(" (local.get {})", i);
    }
    if (colon + 1 < sig.size()) results = " (result i32)";
    w << fmt::format("  (import \"{}\" \"{}\" (func ${} (param{}){}))\n", module_name, im.name, im.name, params, results);
    funcs << fmt::format("  (func (export \"{}\") (param{}){} (call ${}{}))\n", im.name, params, results, im.name, args);
  }
  w << funcs.str() << "  (memory (export \"memory\") 4))\n";
  return w.str();
}

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}
inline void spit(const std::filesystem::path& p, const std::string& s) { std::ofstream(p, std::ios::binary) << s; }

class WasiGuest : public ::testing::Test {
 protected:
  static constexpr uint32_t kScratch = 4096;  // strings from put() go here and up

  void SetUp() override {
    namespace fs = std::filesystem;
    tmp_ = fs::temp_directory_path() / fmt::format("dlab-wasi-{}-{}", getpid(), ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(tmp_);
    fs::create_directories(root() / "sub");
    fs::create_directories(outside());
    spit(root() / "file.txt", "inside");
    spit(outside() / "secret.txt", "secret");
    out_ = std::tmpfile();
    err_ = std::tmpfile();
    options_.out = out_;
    options_.err = err_;
    options_.stdin_fd = -1;
    options_.preopens = {{root().string(), "/", true}};
  }
  void TearDown() override {
    std::fclose(out_);
    std::fclose(err_);
    std::error_code ec;
    std::filesystem::permissions(tmp_, std::filesystem::perms::all, ec);
    std::filesystem::remove_all(tmp_, ec);
  }
  std::filesystem::path root() const { return tmp_ / "root"; }
  std::filesystem::path outside() const { return tmp_ / "outside"; }

  Instance& load(const char* module_name = kWasiModule) {
    Module m = test_support::assemble(driver_wat(module_name));
    register_wasi(rt_, m, options_);
    inst_ = &rt_.instantiate(std::move(m));
    next_ = kScratch;
    return *inst_;
  }
  uint8_t* mem() const { return inst_->exports.at("memory").memory->data; }
  uint32_t u32_at(uint32_t a) const {
    uint32_t v;
    std::memcpy(&v, mem() + a, 4);
    return v;
  }
  uint64_t u64_at(uint32_t a) const {
    uint64_t v;
    std::memcpy(&v, mem() + a, 8);
    return v;
  }
  void put_u32(uint32_t a, uint32_t v) { std::memcpy(mem() + a, &v, 4); }
  void put_u64(uint32_t a, uint64_t v) { std::memcpy(mem() + a, &v, 8); }
  // Copies `s` into guest memory; its address (its length is s.size()).
  uint32_t put(const std::string& s) {
    uint32_t at = next_;
    std::memcpy(mem() + at, s.data(), s.size());
    next_ += static_cast<uint32_t>(s.size() + 8) & ~7u;
    return at;
  }
  // Calls the WASI function `name` with `args` (i32s and i64s as the signature says).
  uint32_t call(const char* name, std::vector<uint64_t> args) {
    std::string sig;
    for (const Import& im : all_imports())
      if (std::string(im.name) == name) sig = im.sig;
    std::vector<Value> vals;
    for (size_t i = 0; i < args.size(); ++i) vals.push_back(sig[i] == 'l' ? Value::i64(args[i]) : Value::i32(static_cast<uint32_t>(args[i])));
    auto r = rt_.invoke(inst_->exports.at(name).func, vals);
    return r.empty() ? 0 : static_cast<uint32_t>(r.at(0).lo);
  }

  // path_open(dir, path) with the given oflags/rights; the errno, and the fd in `fd`.
  uint32_t open(uint32_t dir, const std::string& path, uint32_t& fd, uint32_t oflags = 0, uint64_t base = kAll, uint64_t inheriting = kAll,
                bool follow = true, uint32_t fdflags = 0) {
    uint32_t p = put(path);
    uint32_t e = call("path_open", {dir, follow ? 1u : 0u, p, path.size(), oflags, base, inheriting, fdflags, 0});
    fd = e ? UINT32_MAX : u32_at(0);
    return e;
  }
  // A call of (dir, path) -> errno: path_create_directory, path_unlink_file, path_remove_directory.
  uint32_t on_path(const char* name, uint32_t dir, const std::string& path) {
    uint32_t p = put(path);
    return call(name, {dir, p, path.size()});
  }
  uint32_t symlink(const std::string& target, uint32_t dir, const std::string& path) {
    uint32_t t = put(target), p = put(path);
    return call("path_symlink", {t, target.size(), dir, p, path.size()});
  }
  uint32_t rename(uint32_t d1, const std::string& a, uint32_t d2, const std::string& b) {
    uint32_t pa = put(a), pb = put(b);
    return call("path_rename", {d1, pa, a.size(), d2, pb, b.size()});
  }
  uint32_t link(uint32_t d1, const std::string& a, uint32_t d2, const std::string& b, bool follow = false) {
    uint32_t pa = put(a), pb = put(b);
    return call("path_link", {d1, follow ? 1u : 0u, pa, a.size(), d2, pb, b.size()});
  }
  // path_filestat_get into address 256 (filestat: dev, ino, filetype @16, ..., size @32).
  uint32_t stat(uint32_t dir, const std::string& path, bool follow = true) {
    uint32_t p = put(path);
    return call("path_filestat_get", {dir, follow ? 1u : 0u, p, path.size(), 256});
  }
  // fd_read of up to `n` bytes into `got`.
  uint32_t read(uint32_t fd, std::string& got, uint32_t n = 64) {
    put_u32(512, 1024);
    put_u32(516, n);
    uint32_t e = call("fd_read", {fd, 512, 1, 520});
    got = e ? "" : std::string(reinterpret_cast<const char*>(mem() + 1024), u32_at(520));
    return e;
  }
  uint32_t write(uint32_t fd, const std::string& s) {
    uint32_t p = put(s);
    put_u32(512, p);
    put_u32(516, static_cast<uint32_t>(s.size()));
    return call("fd_write", {fd, 512, 1, 520});
  }

  static constexpr uint64_t kAll = (1ull << 30) - 1;
  // errno
  static constexpr uint32_t kBadf = 8, kExist = 20, kInval = 28, kIsdir = 31, kLoop = 32, kNoent = 44, kNotdir = 54,
                            kNotempty = 55, kNotsock = 57, kNosys = 52, kSpipe = 70, kNotcapable = 76;

  std::filesystem::path tmp_;
  Runtime rt_;
  WasiOptions options_;
  Instance* inst_ = nullptr;
  uint32_t next_ = kScratch;
  std::FILE* out_ = nullptr;
  std::FILE* err_ = nullptr;
};

}  // namespace dlab::wasm::wasi_test
