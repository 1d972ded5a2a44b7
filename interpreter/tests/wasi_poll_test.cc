// WASI's blocking calls: fd_read on stdin (WasiOptions::stdin_fd: a pipe, a file), poll_oneoff
// with clocks (relative and absolute) and fd readiness, waiting without spinning, and the
// deadline (WasiOptions::deadline_passed) waking a blocked guest to stop it with the trap
// "deadline reached". Also poll_oneoff's snapshot0 layout and the fixed-step clock.
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "wasi_fixture.h"

namespace dlab::wasm::wasi_test {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

double cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

uint64_t realtime_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

class WasiPoll : public WasiGuest {
 protected:
  void SetUp() override {
    WasiGuest::SetUp();
    ASSERT_EQ(::pipe(pipe_), 0);
    options_.stdin_fd = pipe_[0];
  }
  void TearDown() override {
    if (pipe_[1] >= 0) ::close(pipe_[1]);
    ::close(pipe_[0]);
    WasiGuest::TearDown();
  }
  void close_writer() {
    ::close(pipe_[1]);
    pipe_[1] = -1;
  }
  // A deadline `ms` from now.
  void deadline_in(int ms) {
    auto at = Clock::now() + std::chrono::milliseconds(ms);
    options_.deadline_passed = [at] { return Clock::now() >= at; };
  }
  // Subscription i of the array at kSubs (preview1: 48 bytes each).
  static constexpr uint32_t kSubs = 2048, kEvents = 3072;
  void clock_sub(uint32_t i, uint64_t userdata, uint32_t clock, uint64_t timeout, bool absolute) {
    uint32_t at = kSubs + 48 * i;
    std::memset(mem() + at, 0, 48);
    put_u64(at, userdata);
    mem()[at + 8] = 0;
    put_u32(at + 16, clock);
    put_u64(at + 24, timeout);
    mem()[at + 40] = absolute ? 1 : 0;
  }
  void fd_sub(uint32_t i, uint64_t userdata, uint8_t type, uint32_t fd) {
    uint32_t at = kSubs + 48 * i;
    std::memset(mem() + at, 0, 48);
    put_u64(at, userdata);
    mem()[at + 8] = type;
    put_u32(at + 16, fd);
  }
  uint32_t poll(uint32_t n) { return call("poll_oneoff", {kSubs, kEvents, n, 8}); }
  // Event i: userdata, errno, type, nbytes.
  uint64_t ev_userdata(uint32_t i) const { return u64_at(kEvents + 32 * i); }
  uint32_t ev_error(uint32_t i) const { return mem()[kEvents + 32 * i + 8] | mem()[kEvents + 32 * i + 9] << 8; }
  uint32_t ev_type(uint32_t i) const { return mem()[kEvents + 32 * i + 10]; }
  uint64_t ev_nbytes(uint32_t i) const { return u64_at(kEvents + 32 * i + 16); }

  int pipe_[2] = {-1, -1};
};

TEST_F(WasiPoll, FdReadOnStdinReadsThePipeAndSeesItsEnd) {
  load();
  ASSERT_EQ(::write(pipe_[1], "hello", 5), 5);
  std::string got;
  EXPECT_EQ(read(0, got), 0u);
  EXPECT_EQ(got, "hello");
  close_writer();
  EXPECT_EQ(read(0, got), 0u);
  EXPECT_EQ(got, "");  // end of input
  EXPECT_EQ(call("fd_fdstat_get", {0, 0}), 0u);
  EXPECT_EQ(mem()[0], 2u);  // a character device: a pipe is no file to seek in
  EXPECT_EQ(write(0, "x"), kNotcapable);
}

TEST_F(WasiPoll, NonblockingStdinIsTheGuestsOwnNotTheHosts) {
  load();
  EXPECT_EQ(call("fd_fdstat_set_flags", {0, 4}), 0u);  // NONBLOCK
  std::string got;
  EXPECT_EQ(read(0, got), 6u);  // EAGAIN: nothing there, and no wait
  EXPECT_EQ(::fcntl(pipe_[0], F_GETFL) & O_NONBLOCK, 0) << "the host's stdin was changed";
  ASSERT_EQ(::write(pipe_[1], "x", 1), 1);
  EXPECT_EQ(read(0, got), 0u);
  EXPECT_EQ(got, "x");
  EXPECT_EQ(call("fd_fdstat_set_flags", {0, 2}), 58u);  // ENOTSUP: DSYNC cannot be set on an open file
}

TEST_F(WasiPoll, StdinFromAFileIsAFile) {
  int fd = ::open((root() / "file.txt").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  options_.stdin_fd = fd;
  load();
  std::string got;
  EXPECT_EQ(read(0, got, 3), 0u);
  EXPECT_EQ(got, "ins");
  EXPECT_EQ(call("fd_fdstat_get", {0, 0}), 0u);
  EXPECT_EQ(mem()[0], 4u);
  EXPECT_EQ(call("fd_close", {0}), 0u);  // the guest's fd 0 goes; the host's fd stays open
  EXPECT_EQ(::fcntl(fd, F_GETFD), 0);
  ::close(fd);
}

TEST_F(WasiPoll, ABlockedReadReturnsWhenBytesArrive) {
  deadline_in(60000);  // set, far off: the read waits in slices, and returns with the bytes
  load();
  // t0 before the writer starts: its 50 ms sleep begins after t0 whatever thread start-up
  // costs (under qemu creating a thread can return well after the thread began sleeping).
  auto t0 = Clock::now();
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    (void)::write(pipe_[1], "late", 4);
  });
  std::string got;
  EXPECT_EQ(read(0, got), 0u);
  writer.join();
  EXPECT_EQ(got, "late");
  EXPECT_GE(ms_since(t0), 49.9);
}

TEST_F(WasiPoll, ABlockedReadStopsAtTheDeadline) {
  load();
  auto t0 = Clock::now();  // before the deadline is set, so the 80 ms lower bound is exact
  deadline_in(80);         // after load(): the deadline is asked at each call
  double cpu0 = cpu_ms();
  std::string got;
  try {
    read(0, got);
    FAIL() << "fd_read returned with no input and the deadline passed";
  } catch (const Trap& t) {
    EXPECT_STREQ(t.what(), "deadline reached");
  }
  double took = ms_since(t0);
  EXPECT_GE(took, 79.9);
  EXPECT_LT(took, 1000) << "woke too late for the deadline";
  EXPECT_LT(cpu_ms() - cpu0, 40) << "spun while blocked";
}

TEST_F(WasiPoll, ARelativeClockSleepsWithoutSpinning) {
  load();
  clock_sub(0, 0xabc, 1, 150'000'000, false);  // monotonic, 150 ms
  auto t0 = Clock::now();
  double cpu0 = cpu_ms();
  ASSERT_EQ(poll(1), 0u);
  EXPECT_GE(ms_since(t0), 145);
  EXPECT_LT(cpu_ms() - cpu0, 40) << "spun while sleeping";
  EXPECT_EQ(u32_at(8), 1u);
  EXPECT_EQ(ev_userdata(0), 0xabcu);
  EXPECT_EQ(ev_error(0), 0u);
  EXPECT_EQ(ev_type(0), 0u);
}

TEST_F(WasiPoll, AnAbsoluteClockWakesAtItsTime) {
  load();
  auto t0 = Clock::now();  // before the wake time is read off the clock
  clock_sub(0, 1, 0, realtime_ns() + 60'000'000, true);  // realtime, 60 ms from now
  clock_sub(1, 2, 1, 5'000'000'000, false);              // and a later one that does not fire
  ASSERT_EQ(poll(2), 0u);
  EXPECT_GE(ms_since(t0), 50);
  EXPECT_LT(ms_since(t0), 2000);
  ASSERT_EQ(u32_at(8), 1u);
  EXPECT_EQ(ev_userdata(0), 1u);
  clock_sub(0, 3, 0, 1, true);  // long past: at once
  ASSERT_EQ(poll(1), 0u);
  EXPECT_EQ(ev_userdata(0), 3u);
}

TEST_F(WasiPoll, StdinReadinessEndsTheWaitBeforeTheClock) {
  load();
  fd_sub(0, 10, 1, 0);                              // stdin readable
  clock_sub(1, 11, 1, 10'000'000'000ull, false);    // or 10 s
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(40));
    (void)::write(pipe_[1], "abc", 3);
  });
  auto t0 = Clock::now();
  ASSERT_EQ(poll(2), 0u);
  writer.join();
  EXPECT_LT(ms_since(t0), 5000);
  ASSERT_EQ(u32_at(8), 1u);
  EXPECT_EQ(ev_userdata(0), 10u);
  EXPECT_EQ(ev_type(0), 1u);
  EXPECT_EQ(ev_error(0), 0u);
  EXPECT_EQ(ev_nbytes(0), 3u);
}

TEST_F(WasiPoll, WritableStreamsAndBadFdsAnswerAtOnce) {
  load();
  fd_sub(0, 1, 2, 1);   // stdout writable
  fd_sub(1, 2, 1, 99);  // no such fd
  fd_sub(2, 3, 1, 0);   // stdin: nothing to read
  ASSERT_EQ(poll(3), 0u);
  ASSERT_EQ(u32_at(8), 2u);
  EXPECT_EQ(ev_userdata(0), 1u);
  EXPECT_EQ(ev_error(0), 0u);
  EXPECT_EQ(ev_userdata(1), 2u);
  EXPECT_EQ(ev_error(1), kBadf);
  EXPECT_EQ(call("poll_oneoff", {kSubs, kEvents, 0, 8}), kInval);  // no subscriptions
  EXPECT_EQ(call("poll_oneoff", {kSubs, kEvents, 1u << 20, 8}), 48u);  // ENOMEM: more than 2^16
  EXPECT_EQ(call("poll_oneoff", {kSubs, 4 * 65536 - 16, 3, 8}), 21u);  // EFAULT: no room for the events
  mem()[kSubs + 8] = 9;                                             // no such event type
  EXPECT_EQ(poll(1), kInval);
}

TEST_F(WasiPoll, APollWithNothingDueStopsAtTheDeadline) {
  load();
  deadline_in(60);  // after load(): the deadline is asked at each call
  fd_sub(0, 1, 1, 0);                            // stdin, which stays empty
  clock_sub(1, 2, 1, 60'000'000'000ull, false);  // a minute
  auto t0 = Clock::now();
  try {
    poll(2);
    FAIL() << "poll_oneoff returned";
  } catch (const Trap& t) {
    EXPECT_STREQ(t.what(), "deadline reached");
  }
  EXPECT_LT(ms_since(t0), 1000);
}

TEST_F(WasiPoll, WasiUnstableSubscriptionsHaveTheirOwnLayout) {
  load("wasi_unstable");
  // snapshot0: userdata @0, tag @8, identifier u64 @16, clock id u32 @24, timeout @32,
  // precision @40, flags u16 @48; 56 bytes.
  std::memset(mem() + kSubs, 0, 56);
  put_u64(kSubs, 77);
  put_u32(kSubs + 24, 1);
  put_u64(kSubs + 32, 30'000'000);
  auto t0 = Clock::now();
  ASSERT_EQ(poll(1), 0u);
  EXPECT_GE(ms_since(t0), 25);
  ASSERT_EQ(u32_at(8), 1u);
  EXPECT_EQ(ev_userdata(0), 77u);
  EXPECT_EQ(ev_error(0), 0u);
}

TEST_F(WasiPoll, UnderAFixedClockASleepTakesNoTimeAndMovesTheClock) {
  options_.fixed_clock_step_ns = 1000;
  load();
  clock_sub(0, 5, 1, 3'600'000'000'000ull, false);  // an hour
  auto t0 = Clock::now();
  ASSERT_EQ(poll(1), 0u);
  EXPECT_LT(ms_since(t0), 1000);
  EXPECT_EQ(ev_userdata(0), 5u);
  EXPECT_EQ(options_.fixed_clock_now_ns, 3'600'000'000'000ull);
}

}  // namespace
}  // namespace dlab::wasm::wasi_test
