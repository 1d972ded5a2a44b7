#include "dispatchlab/harness/cachegrind.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

namespace dlab {
namespace {

// This test binary is also the program the forked-pair tests count: with DLAB_TEST_COUNTED set
// ("pair:N", "once:N" or "fail:N") it runs a loop of known work before any test and ends.
void counted_work(uint64_t repetitions) {
  volatile uint64_t sink = 0;
  for (uint64_t i = 0; i < repetitions * 100000; ++i) sink = sink + i;
}
const bool kCountedProgram = [] {
  const char* what = std::getenv("DLAB_TEST_COUNTED");
  if (!what) return false;
  std::string w = what;
  uint64_t n = std::stoull(w.substr(w.find(':') + 1));
  if (w.rfind("pair:", 0) == 0) count_forked_pair(n, counted_work);
  if (w.rfind("fail:", 0) == 0)
    count_forked_pair(n, [n](uint64_t reps) {
      if (reps == n) throw std::runtime_error("the child fails");
      counted_work(reps);
    });
  counted_work(n);
  ::_exit(0);
}();

// Runs `f` with DLAB_TEST_COUNTED set for the programs it starts.
template <typename F>
auto with_counted(const std::string& what, F f) {
  ::setenv("DLAB_TEST_COUNTED", what.c_str(), 1);
  struct Unset {
    ~Unset() { ::unsetenv("DLAB_TEST_COUNTED"); }
  } unset;
  return f();
}

// The head of a real cachegrind.out (valgrind 3.19), shortened.
const char* kRecorded = R"(desc: I1 cache:         32768 B, 64 B, 8-way associative
desc: D1 cache:         32768 B, 64 B, 8-way associative
desc: LL cache:         8388608 B, 64 B, 16-way associative
cmd: ./dlab-model-exec --model stack --reps 2
events: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw Bc Bcm Bi Bim
fl=???
fn=0x0000000000001a40
0 3 1 1 1 1 1 0 0 0 0 0 0 0
summary: 1200 10 9 300 20 19 150 7 6 100 12 50 3
)";

TEST(Cachegrind, ParsesTheSummaryByEventName) {
  auto c = parse_cachegrind_out(kRecorded);
  EXPECT_EQ(c.at("Ir"), 1200u);
  EXPECT_EQ(c.at("Dr"), 300u);
  EXPECT_EQ(c.at("Dw"), 150u);
  EXPECT_EQ(c.at("Bcm"), 12u);
  EXPECT_EQ(c.at("Bim"), 3u);
}

TEST(Cachegrind, RejectsTruncatedOutput) {
  EXPECT_THROW(parse_cachegrind_out("summary: 1 2 3\n"), CounterError);
  EXPECT_THROW(parse_cachegrind_out("events: Ir Dr\nsummary: 5\n"), CounterError);
}

// Two functions, one of them under two files, with trailing zero counts left out as cachegrind does.
const char* kTwoFunctions = R"(events: Ir Dr Dw Bc Bcm Bi Bim
fl=a.cc
fn=dlab::wasm::(anonymous namespace)::h_i32_add(unsigned long const*, unsigned long*)
10 5 2 1
11 3 1 1 1 1
fn=op_i32_Add_rs
0 7 2
fl=b.cc
fn=dlab::wasm::(anonymous namespace)::h_i32_add(unsigned long const*, unsigned long*)
12 2 0 0 0 0 1 1
summary: 17 5 2 1 1 1 1
)";

TEST(Cachegrind, SplitsTheCountsByFunctionOverEveryFile) {
  auto f = parse_cachegrind_functions(kTwoFunctions);
  ASSERT_EQ(f.size(), 2u);
  const auto& add = f.at("dlab::wasm::(anonymous namespace)::h_i32_add(unsigned long const*, unsigned long*)");
  EXPECT_EQ(add.at("Ir"), 10u);
  EXPECT_EQ(add.at("Dr"), 3u);
  EXPECT_EQ(add.at("Bi"), 1u);
  EXPECT_EQ(add.at("Bim"), 1u);
  EXPECT_EQ(f.at("op_i32_Add_rs").at("Ir"), 7u);
  EXPECT_EQ(f.at("op_i32_Add_rs").at("Bim"), 0u);  // left out, so zero
}

TEST(Cachegrind, RefusesCountsOutsideAFunctionOrBeyondTheEvents) {
  EXPECT_THROW(parse_cachegrind_functions("events: Ir\n3 4\n"), CounterError);
  EXPECT_THROW(parse_cachegrind_functions("events: Ir\nfn=f\n3 4 5\n"), CounterError);
  EXPECT_THROW(parse_cachegrind_functions("fn=f\n3 4\n"), CounterError);  // no events: line before the counts
  EXPECT_THROW(parse_cachegrind_functions("events: Ir Dr\nfn=f\n3 4 x\n"), CounterError);
}

TEST(Cachegrind, FunctionDifferenceKeepsWhatTheRepetitionsRan) {
  CachegrindFunctions once = {{"setup", {{"Ir", 500}}}, {"h_add", {{"Ir", 40}}}};
  CachegrindFunctions twice = {{"setup", {{"Ir", 500}}}, {"h_add", {{"Ir", 80}}}, {"h_mul", {{"Ir", 6}}}};
  auto d = difference(twice, once);
  EXPECT_EQ(d.size(), 2u);  // setup's difference is zero: left out
  EXPECT_EQ(d.at("h_add").at("Ir"), 40);
  EXPECT_EQ(d.at("h_mul").at("Ir"), 6);
  once["child_exit"] = {{"Ir", 8}};  // ran only in the N run: negative, so the rows still add up
  EXPECT_EQ(difference(twice, once).at("child_exit").at("Ir"), -8);
}

TEST(Cachegrind, DifferenceRemovesTheFixedCost) {
  CachegrindCounts once = {{"Ir", 1000}, {"Dr", 400}}, twice = {{"Ir", 1700}, {"Dr", 600}};
  auto d = difference(twice, once);
  EXPECT_EQ(d.at("Ir"), 700);
  EXPECT_EQ(d.at("Dr"), 200);
  EXPECT_EQ(difference(once, twice).at("Ir"), -700);  // simulated misses can shrink; kept signed
  EXPECT_THROW(difference({{"Ir", 1}, {"Dw", 1}}, once), CounterError);
}

TEST(Cachegrind, CountsARealProcess) {
  ValgrindBackend vg;
  Availability a = vg.probe("Ir");
  if (!a.available) GTEST_SKIP() << a.reason;  // bootstrap installs valgrind; say so if it is missing
  auto small = run_cachegrind({"/bin/true"});
  EXPECT_GT(small.at("Ir"), 1000u);
  EXPECT_FALSE(vg.in_process());
  EXPECT_THROW(vg.open_group({"Ir"}), CounterError);
  EXPECT_FALSE(vg.probe("Nonsense").available);
}

// One valgrind start-up for both counts: the difference is N repetitions' work, as it is from two
// processes, but for what the forked parent and child do apart (fork's two return paths, the
// parent's wait): at most a few thousand instructions.
TEST(Cachegrind, AForkedPairCountsWhatTwoProcessesCount) {
  if (!ValgrindBackend().probe("Ir").available) GTEST_SKIP() << "valgrind is not installed (./tools/bootstrap installs it)";
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  CachegrindPair pair = with_counted("pair:3", [&] { return run_cachegrind_pair({self}); });
  CachegrindCounts once = with_counted("once:3", [&] { return run_cachegrind({self}); });
  CachegrindCounts twice = with_counted("once:6", [&] { return run_cachegrind({self}); });
  const int64_t forked = difference(pair.twice, pair.once).at("Ir"), apart = difference(twice, once).at("Ir");
  EXPECT_GT(apart, 3 * 100000);  // at least an instruction per iteration
  EXPECT_LT(std::llabs(forked - apart), 5000) << "forked " << forked << ", two processes " << apart;
}

TEST(Cachegrind, AForkedPairFailsWhenTheChildFailsOrTheProgramDoesNotFork) {
  if (!ValgrindBackend().probe("Ir").available) GTEST_SKIP() << "valgrind is not installed (./tools/bootstrap installs it)";
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  EXPECT_THROW(with_counted("fail:1", [&] { return run_cachegrind_pair({self}); }), CounterError);
  try {
    with_counted("once:1", [&] { return run_cachegrind_pair({self}); });
    ADD_FAILURE() << "a program that does not fork was counted as a pair";
  } catch (const CounterError& e) {
    EXPECT_NE(std::string(e.what()).find("count_forked_pair"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dlab
