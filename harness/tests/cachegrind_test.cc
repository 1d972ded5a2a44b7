#include "dispatchlab/harness/cachegrind.h"

#include <gtest/gtest.h>

namespace dlab {
namespace {

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

}  // namespace
}  // namespace dlab
