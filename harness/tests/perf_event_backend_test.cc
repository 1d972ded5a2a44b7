// perf_event paths that can be exercised without a PMU: software events through the same group
// code as hardware ones, the failure reason for hardware events, and parsing of recorded reads.
#include "dispatchlab/harness/perf_event_backend.h"

#include <linux/perf_event.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <gtest/gtest.h>

#include "platform.h"

namespace dlab {
namespace {

TEST(PerfEventGroupRead, ParsesValuesByIdInOpenOrder) {
  // A recorded read of a 2-event group: nr, enabled, running, then (value, id) pairs in the
  // kernel's order, which need not be the open order.
  const uint64_t buf[] = {2, 1000, 1000, 777, 42, 555, 41};
  const uint64_t ids[] = {41, 42};
  auto r = parse_perf_group_read(buf, ids);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].raw, 555u);
  EXPECT_EQ(r[1].raw, 777u);
  EXPECT_DOUBLE_EQ(*r[0].value, 555);
  EXPECT_DOUBLE_EQ(r[0].running_fraction, 1.0);
}

TEST(PerfEventGroupRead, ScalesMultiplexedCounts) {
  // Counted for a quarter of the enabled time: the estimate is 4x the raw count.
  const uint64_t buf[] = {1, 4000, 1000, 250, 7};
  const uint64_t ids[] = {7};
  auto r = parse_perf_group_read(buf, ids);
  EXPECT_DOUBLE_EQ(*r[0].value, 1000);
  EXPECT_DOUBLE_EQ(r[0].running_fraction, 0.25);
  EXPECT_EQ(r[0].time_enabled_ns, 4000u);
  EXPECT_EQ(r[0].time_running_ns, 1000u);
}

TEST(PerfEventGroupRead, NeverScheduledIsNoValueNotZero) {
  const uint64_t buf[] = {1, 4000, 0, 0, 7};
  const uint64_t ids[] = {7};
  auto r = parse_perf_group_read(buf, ids);
  EXPECT_FALSE(r[0].value.has_value());
  EXPECT_EQ(r[0].running_fraction, 0);
}

TEST(PerfEventGroupRead, RejectsInconsistentBuffers) {
  const uint64_t ids[] = {1, 2};
  const uint64_t short_buf[] = {2, 10, 10, 5, 1};
  EXPECT_THROW(parse_perf_group_read(short_buf, ids), CounterError);
  const uint64_t wrong_nr[] = {1, 10, 10, 5, 1};
  EXPECT_THROW(parse_perf_group_read(wrong_nr, ids), CounterError);
  const uint64_t unknown_id[] = {2, 10, 10, 5, 1, 6, 99};
  EXPECT_THROW(parse_perf_group_read(unknown_id, ids), CounterError);
}

TEST(PerfEventBackend, SoftwareGroupCountsPageFaultsOfTouchedPages) {
  PerfEventBackend perf;
  auto group = perf.open_group({"perf::PAGE-FAULTS", "perf::CPU-MIGRATIONS"});
  const size_t pages = 64;
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  char* mem = static_cast<char*>(mmap(nullptr, pages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(mem, MAP_FAILED);
  group->start();
  for (size_t i = 0; i < pages; ++i) mem[i * page] = 1;  // first touch of each page faults
  group->stop();
  auto r = group->read();
  munmap(mem, pages * page);
  ASSERT_EQ(r.size(), 2u);
  ASSERT_TRUE(r[0].value.has_value());
  EXPECT_GE(*r[0].value, static_cast<double>(pages));
  ASSERT_TRUE(r[1].value.has_value());
  EXPECT_GE(*r[1].value, 0);                       // a count, possibly none, but measured
  EXPECT_GT(r[0].time_enabled_ns, 0u);             // scaling fields were read back
  EXPECT_GT(r[0].time_running_ns, 0u);
  EXPECT_LE(r[0].time_running_ns, r[0].time_enabled_ns);
  EXPECT_EQ(group->read_method(), "read(PERF_FORMAT_GROUP)");  // software events have no rdpmc index
}

TEST(PerfEventBackend, StartResetsCounts) {
  PerfEventBackend perf;
  auto group = perf.open_group({"perf::PAGE-FAULTS"});
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  char* mem = static_cast<char*>(mmap(nullptr, 32 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  group->start();
  for (size_t i = 0; i < 32; ++i) mem[i * page] = 1;
  group->stop();
  double first = *group->read()[0].value;
  group->start();  // pages are now mapped: touching them again does not fault
  for (size_t i = 0; i < 32; ++i) mem[i * page] = 2;
  group->stop();
  double second = *group->read()[0].value;
  munmap(mem, 32 * page);
  EXPECT_GE(first, 32);
  EXPECT_LT(second, 32);
}

TEST(PerfEventBackend, TaskClockLeaderCountsEachSampleWithItsOwnTimes) {
  // As a group *member*, task-clock reads 0 after the group has been disabled and re-enabled (seen
  // on Linux 6.x), which is why Meter opens every metric as its own group. As a leader it counts
  // each sample, and the enabled time of one sample must not include earlier samples.
  PerfEventBackend perf;
  auto group = perf.open_group({"perf::TASK-CLOCK"});
  std::vector<CounterReading> samples;
  for (int k = 0; k < 3; ++k) {
    group->start();
    volatile double x = 0;
    for (int i = 0; i < 2'000'000; ++i) x = x + i;
    group->stop();
    samples.push_back(group->read()[0]);
  }
  for (const auto& r : samples) {
    ASSERT_TRUE(r.value.has_value());
    EXPECT_GT(*r.value, 0);
    EXPECT_LE(*r.value, static_cast<double>(r.time_enabled_ns) * 1.01);  // on-CPU time fits in enabled time
  }
  EXPECT_LT(samples[2].time_enabled_ns, 2 * samples[0].time_enabled_ns + 5'000'000);
}

TEST(PerfEventBackend, HardwareEventsCountOnlyWhereTheKernelHasAPmu) {
  PerfEventBackend perf;
  Availability a = perf.probe("perf::CYCLES");
  if (platform::kernel_has_core_pmu()) {
    // With a PMU the event either opens or fails for a stated, non-PMU reason (paranoid, busy).
    if (!a.available) EXPECT_EQ(a.reason.find("no hardware PMU"), std::string::npos) << a.reason;
    return;
  }
  EXPECT_FALSE(a.available);
  EXPECT_NE(a.reason.find("no hardware PMU"), std::string::npos) << a.reason;
  if (platform::running_under_hypervisor()) EXPECT_NE(a.reason.find("VM"), std::string::npos) << a.reason;
  EXPECT_THROW(perf.open_group({"perf::CYCLES"}), CounterError);
}

TEST(PerfEventBackend, ExplainsPermissionAndEncodingErrors) {
  EXPECT_NE(explain_perf_open_error(EACCES, "x", true).find("perf_event_paranoid"), std::string::npos);
  EXPECT_NE(explain_perf_open_error(EINVAL, "x", true).find("EINVAL"), std::string::npos);
  EXPECT_THROW(
      {
        perf_event_attr attr;
        PerfEventBackend::encode("skl::NO_SUCH_EVENT", attr);
      },
      CounterError);
}

TEST(PerfEventBackend, EncodesForUserSpaceOnly) {
  perf_event_attr attr;
  PerfEventBackend::encode("perf::TASK-CLOCK", attr);
  EXPECT_EQ(attr.type, static_cast<uint32_t>(PERF_TYPE_SOFTWARE));
  EXPECT_EQ(attr.config, static_cast<uint64_t>(PERF_COUNT_SW_TASK_CLOCK));
  EXPECT_EQ(attr.exclude_kernel, 1u);
  EXPECT_EQ(attr.exclude_user, 0u);
}

}  // namespace
}  // namespace dlab
