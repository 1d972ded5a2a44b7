// WASI's contract, call by call: results in guest memory, errno values for bad fds and
// out-of-bounds buffers, ENOSYS (with one note) for an import that is no WASI function, a link
// error for an import declared with another signature, and proc_exit as ProcExit. The fd table,
// preopens and the sandbox: wasi_fs_test.cc; blocking and poll_oneoff: wasi_poll_test.cc.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

#include <gtest/gtest.h>

#include "dispatchlab/interpreter/runtime.h"
#include "dispatchlab/interpreter/wasi.h"
#include "wat.h"

namespace dlab::wasm {
namespace {

std::string read_all(std::FILE* f) {
  std::rewind(f);
  std::string s;
  char buf[256];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
  return s;
}

class WasiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    out_ = std::tmpfile();
    err_ = std::tmpfile();
    options_.args = {"prog", "a1", "arg2"};
    options_.env = {"K=V"};
    options_.out = out_;
    options_.err = err_;
  }
  void TearDown() override {
    std::fclose(out_);
    std::fclose(err_);
  }
  Instance& load(const std::string& wat) {
    Module m = test_support::assemble(wat);
    register_wasi(rt_, m, options_);
    return rt_.instantiate(std::move(m));
  }
  uint32_t call(Instance& inst, const std::string& name, std::vector<Value> args = {}) {
    return static_cast<uint32_t>(rt_.invoke(inst.exports.at(name).func, args).at(0).lo);
  }
  static uint32_t u32_at(Instance& inst, uint32_t addr) {
    uint32_t v;
    std::memcpy(&v, inst.exports.at("memory").memory->data + addr, 4);
    return v;
  }

  Runtime rt_;
  WasiOptions options_;
  std::FILE* out_ = nullptr;
  std::FILE* err_ = nullptr;
};

TEST_F(WasiTest, ArgsAndEnvironArriveInGuestMemory) {
  auto& inst = load(R"((module
    (import "wasi_snapshot_preview1" "args_sizes_get" (func $sizes (param i32 i32) (result i32)))
    (import "wasi_snapshot_preview1" "args_get" (func $get (param i32 i32) (result i32)))
    (import "wasi_snapshot_preview1" "environ_sizes_get" (func $esizes (param i32 i32) (result i32)))
    (memory (export "memory") 1)
    (func (export "sizes") (result i32) (call $sizes (i32.const 0) (i32.const 4)))
    (func (export "get") (result i32) (call $get (i32.const 16) (i32.const 64)))
    (func (export "esizes") (result i32) (call $esizes (i32.const 8) (i32.const 12)))
    (func (export "oob") (result i32) (call $sizes (i32.const 65534) (i32.const 4)))))");
  EXPECT_EQ(call(inst, "sizes"), 0u);
  EXPECT_EQ(u32_at(inst, 0), 3u);                 // argc
  EXPECT_EQ(u32_at(inst, 4), 5u + 3u + 5u);       // "prog\0a1\0arg2\0"
  EXPECT_EQ(call(inst, "get"), 0u);
  EXPECT_EQ(u32_at(inst, 16), 64u);               // argv[0] points at the buffer
  EXPECT_EQ(u32_at(inst, 20), 69u);
  const char* mem = reinterpret_cast<const char*>(inst.exports.at("memory").memory->data);
  EXPECT_STREQ(mem + 69, "a1");
  EXPECT_STREQ(mem + u32_at(inst, 24), "arg2");
  EXPECT_EQ(call(inst, "esizes"), 0u);
  EXPECT_EQ(u32_at(inst, 8), 1u);
  EXPECT_EQ(u32_at(inst, 12), 4u);                // "K=V\0"
  EXPECT_EQ(call(inst, "oob"), 21u);              // EFAULT, and no write past the memory
}

TEST_F(WasiTest, FdWriteGathersIovecsAndRejectsBadFdsAndBuffers) {
  auto& inst = load(R"((module
    (import "wasi_snapshot_preview1" "fd_write" (func $w (param i32 i32 i32 i32) (result i32)))
    (memory (export "memory") 1)
    (data (i32.const 100) "hello, world\n")
    ;; two iovecs at 0: "hello" and ", world\n"
    (data (i32.const 0) "\64\00\00\00\05\00\00\00\69\00\00\00\08\00\00\00")
    (func (export "write") (param i32) (result i32) (call $w (local.get 0) (i32.const 0) (i32.const 2) (i32.const 32)))
    (func (export "bad_iovec") (result i32) (call $w (i32.const 1) (i32.const 65530) (i32.const 2) (i32.const 32)))))");
  EXPECT_EQ(call(inst, "write", {Value::i32(1)}), 0u);
  EXPECT_EQ(u32_at(inst, 32), 13u);  // bytes written
  EXPECT_EQ(read_all(out_), "hello, world\n");
  EXPECT_EQ(call(inst, "write", {Value::i32(2)}), 0u);
  EXPECT_EQ(read_all(err_), "hello, world\n");
  EXPECT_EQ(call(inst, "write", {Value::i32(7)}), 8u);  // EBADF
  EXPECT_EQ(call(inst, "bad_iovec"), 21u);              // EFAULT
}

TEST_F(WasiTest, FdWriteChecksEveryBufferFirstAndReportsFailedWrites) {
  auto& inst = load(R"((module
    (import "wasi_snapshot_preview1" "fd_write" (func $w (param i32 i32 i32 i32) (result i32)))
    (memory (export "memory") 1)
    (data (i32.const 100) "hello")
    ;; a good iovec ("hello"), then one past the end of memory
    (data (i32.const 0) "\64\00\00\00\05\00\00\00\f0\ff\00\00\00\10\00\00")
    (data (i32.const 32) "\ff\ff\ff\ff")
    (func (export "good_then_bad") (result i32) (call $w (i32.const 1) (i32.const 0) (i32.const 2) (i32.const 32)))
    (func (export "good") (result i32) (call $w (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 32)))))");
  EXPECT_EQ(call(inst, "good_then_bad"), 21u);  // EFAULT, and nothing of the good buffer written
  EXPECT_EQ(u32_at(inst, 32), 0u);             // nwritten is set, to 0
  EXPECT_EQ(read_all(out_), "");
  // A stream that cannot be written (here: opened read-only, as a full disk or closed pipe fails):
  // the guest gets an errno, not "success".
  std::FILE* ro = std::fopen("/dev/null", "r");
  ASSERT_NE(ro, nullptr);
  options_.out = ro;
  EXPECT_NE(call(inst, "good"), 0u);
  options_.out = out_;
  std::fclose(ro);
}

// nwritten is a u32: a call gathering more than it can say writes at most Linux's one-call limit
// (2 GiB less a page) and says so. 65,536 iovecs naming the same 64 KiB (4 GiB) said 0 before the
// cap, and 65,537 said 65,536.
TEST_F(WasiTest, FdWriteOfMoreThanANwrittenCanSayWritesWhatItSays) {
  auto& inst = load(R"((module
    (import "wasi_snapshot_preview1" "fd_write" (func $w (param i32 i32 i32 i32) (result i32)))
    (memory (export "memory") 10)
    (func (export "gather") (param $n i32) (result i32)
      (local $i i32)
      (loop $l
        (i32.store (i32.add (i32.const 65536) (i32.shl (local.get $i) (i32.const 3))) (i32.const 0))
        (i32.store (i32.add (i32.const 65540) (i32.shl (local.get $i) (i32.const 3))) (i32.const 65536))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br_if $l (i32.lt_u (local.get $i) (local.get $n))))
      (call $w (i32.const 1) (i32.const 65536) (local.get $n) (i32.const 8)))))");
  std::FILE* sink = std::fopen("/dev/null", "w");
  ASSERT_NE(sink, nullptr);
  options_.out = sink;
  for (int32_t n : {65536, 65537}) {
    EXPECT_EQ(call(inst, "gather", {Value::i32(n)}), 0u) << n;
    EXPECT_EQ(u32_at(inst, 8), 0x7ffff000u) << n;
  }
  EXPECT_EQ(call(inst, "gather", {Value::i32(3)}), 0u);
  EXPECT_EQ(u32_at(inst, 8), 3u * 65536);
  options_.out = out_;
  std::fclose(sink);
}

TEST_F(WasiTest, ClocksRandomAndUnsupportedFunctions) {
  auto& inst = load(R"((module
    (import "wasi_snapshot_preview1" "clock_time_get" (func $t (param i32 i64 i32) (result i32)))
    (import "wasi_snapshot_preview1" "random_get" (func $r (param i32 i32) (result i32)))
    (import "wasi_snapshot_preview1" "path_open" (func $open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
    (import "wasi_snapshot_preview1" "not_in_preview1" (func $unknown (param i32) (result i32)))
    (memory (export "memory") 1)
    (func (export "time") (param i32) (result i32) (call $t (local.get 0) (i64.const 1) (i32.const 0)))
    (func (export "random") (result i32) (call $r (i32.const 64) (i32.const 32)))
    (func (export "open") (result i32)
      (call $open (i32.const 3) (i32.const 0) (i32.const 0) (i32.const 0) (i32.const 0) (i64.const 0) (i64.const 0) (i32.const 0) (i32.const 0)))
    (func (export "unknown") (result i32) (call $unknown (i32.const 0)))))");
  EXPECT_EQ(call(inst, "time", {Value::i32(1)}), 0u);  // monotonic
  uint64_t ns;
  std::memcpy(&ns, inst.exports.at("memory").memory->data, 8);
  EXPECT_GT(ns, 0u);
  EXPECT_EQ(call(inst, "time", {Value::i32(9)}), 28u);  // EINVAL: no such clock
  EXPECT_EQ(call(inst, "random"), 0u);
  const uint8_t* r = inst.exports.at("memory").memory->data + 64;
  EXPECT_FALSE(std::all_of(r, r + 32, [](uint8_t b) { return b == 0; }));  // 2^-256 to fail by chance
  EXPECT_EQ(call(inst, "open"), 8u);      // EBADF: no preopened directory 3
  EXPECT_EQ(call(inst, "unknown"), 52u);  // ENOSYS: no such WASI function
  EXPECT_EQ(call(inst, "unknown"), 52u);
  std::string note = read_all(err_);
  EXPECT_NE(note.find("not_in_preview1 is not supported"), std::string::npos);
  EXPECT_EQ(note.find("not_in_preview1", note.find("not_in_preview1") + 1), std::string::npos) << "noted once, not per call";
}

TEST_F(WasiTest, AnImportWithAnotherSignatureIsALinkError) {
  Module m = test_support::assemble(R"((module
    (import "wasi_snapshot_preview1" "fd_write" (func (param i32) (result i32)))))");
  try {
    register_wasi(rt_, m, options_);
    FAIL() << "accepted fd_write declared as (i32) -> i32";
  } catch (const LinkError& e) {
    EXPECT_NE(std::string(e.what()).find("iiii:i"), std::string::npos) << e.what();
  }
}

TEST_F(WasiTest, ProcExitEndsTheProgramWithItsStatus) {
  auto& inst = load(R"((module
    (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
    (func (export "_start") (call $exit (i32.const 7)) unreachable)))");
  try {
    rt_.invoke(inst.exports.at("_start").func, {});
    FAIL() << "proc_exit returned";
  } catch (const ProcExit& e) {
    EXPECT_EQ(e.code(), 7);
  }
}

TEST_F(WasiTest, AFixedStepClockAdvancesByItsStepOnEveryRead) {
  options_.fixed_clock_step_ns = 1000;
  auto& inst = load(R"((module
    (import "wasi_snapshot_preview1" "clock_time_get" (func $t (param i32 i64 i32) (result i32)))
    (import "wasi_snapshot_preview1" "clock_res_get" (func $r (param i32 i32) (result i32)))
    (memory (export "memory") 1)
    (func (export "time") (param i32) (result i32) (call $t (local.get 0) (i64.const 1) (i32.const 0)))
    (func (export "res") (result i32) (call $r (i32.const 1) (i32.const 8)))))");
  auto ns_at = [&](uint32_t addr) {
    uint64_t ns;
    std::memcpy(&ns, inst.exports.at("memory").memory->data + addr, 8);
    return ns;
  };
  // Every clock, the same sequence: 1000, 2000, 3000 ns.
  for (uint32_t clock : {0u, 1u, 2u}) {
    EXPECT_EQ(call(inst, "time", {Value::i32(clock)}), 0u);
    EXPECT_EQ(ns_at(0), 1000u * (clock + 1));
  }
  EXPECT_EQ(call(inst, "res"), 0u);
  EXPECT_EQ(ns_at(8), 1000u);
  EXPECT_EQ(call(inst, "time", {Value::i32(9)}), 28u);  // EINVAL still: no such clock
}

TEST_F(WasiTest, AFixedStepClockNeverWrapsItTrapsSayingWhy) {
  // Near 2^64 ns: one more step fits, the next would wrap to a reading earlier than the last.
  options_.fixed_clock_step_ns = 1000000000000;
  options_.fixed_clock_now_ns = UINT64_MAX - 1500000000000;
  auto& inst = load(R"((module
    (import "wasi_snapshot_preview1" "clock_time_get" (func $t (param i32 i64 i32) (result i32)))
    (memory (export "memory") 1)
    (func (export "time") (result i32) (call $t (i32.const 1) (i64.const 1) (i32.const 0)))))");
  EXPECT_EQ(call(inst, "time"), 0u);
  uint64_t ns;
  std::memcpy(&ns, inst.exports.at("memory").memory->data, 8);
  EXPECT_EQ(ns, UINT64_MAX - 500000000000);
  try {
    call(inst, "time");
    FAIL() << "the fixed clock wrapped";
  } catch (const Trap& e) {
    EXPECT_STREQ(e.what(), "the fixed clock (--clock fixed:1000000000000) would pass 2^64 ns at this read: give a smaller step");
  }
  std::memcpy(&ns, inst.exports.at("memory").memory->data, 8);
  EXPECT_EQ(ns, UINT64_MAX - 500000000000);  // never written backwards
}

TEST(WasiClock, ParsesRealAndFixedStrictly) {
  EXPECT_EQ(parse_clock("real"), 0u);
  EXPECT_EQ(parse_clock("fixed:250"), 250u);
  EXPECT_EQ(clock_name(250), "fixed:250");
  EXPECT_EQ(clock_name(0), "real");
  for (const char* bad : {"fixed:", "fixed:0", "fixed:-1", "fixed:1x", "fixed:1000000000001", "Real", "fixed 5"})
    EXPECT_THROW(parse_clock(bad), std::invalid_argument) << bad;
}

}  // namespace
}  // namespace dlab::wasm
