#include "dispatchlab/harness/result_writer.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <sys/resource.h>
#include <unistd.h>

#include <csignal>

#include <gtest/gtest.h>

namespace dlab {
namespace {

namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) {
  fs::path p = fs::temp_directory_path() / ("dlab_test_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(ResultTable, RoundTripsThroughCsvIncludingAwkwardText) {
  ResultTable t(result_table("counters"));
  t.add({{"metric", "cycles"}, {"available", "0"}, {"reason", "no hardware PMU: VM, \"KVM\"\nsecond line"}});
  t.add({{"metric", "task_clock"}, {"available", "1"}, {"native_event", "perf::TASK-CLOCK"}});
  std::string csv = t.to_csv();
  ResultTable back = ResultTable::from_csv(result_table("counters"), csv);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back.at(0, "reason"), "no hardware PMU: VM, \"KVM\"\nsecond line");
  EXPECT_EQ(back.at(0, "backend"), "");  // absent columns are empty, never a made-up default
  EXPECT_EQ(back.at(1, "native_event"), "perf::TASK-CLOCK");
  EXPECT_EQ(back.to_csv(), csv);
}

TEST(ResultTable, RejectsUnknownColumnsAndForeignHeaders) {
  ResultTable t(result_table("counters"));
  EXPECT_THROW(t.add({{"not_a_column", "x"}}), std::invalid_argument);
  EXPECT_THROW(ResultTable::from_csv(result_table("counters"), "a,b\n1,2\n"), std::invalid_argument);
  ResultTable ok(result_table("counters"));
  ok.add({{"metric", "m"}});
  std::string bad = ok.to_csv() + "only,three,fields\n";
  EXPECT_THROW(ResultTable::from_csv(result_table("counters"), bad), std::invalid_argument);
}

// Issue 32 item 10: a spreadsheet's byte-order mark is not part of the first column's name.
TEST(CsvRecords, SkipABomAtTheStart) {
  auto r = parse_csv_records("\xEF\xBB\xBFx,y\n1,2\n");
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0][0], "x");
  EXPECT_EQ(parse_csv_records("x,\xEF\xBB\xBFy\n")[0][1], "\xEF\xBB\xBFy");  // only at the start
}

TEST(WriteFileAtomically, WritesAndNeverOverwrites) {
  fs::path dir = fresh_dir("atomic");
  write_file_atomically(dir / "a.csv", "first\n");
  EXPECT_EQ(slurp(dir / "a.csv"), "first\n");
  EXPECT_THROW(write_file_atomically(dir / "a.csv", "second\n"), std::runtime_error);
  EXPECT_EQ(slurp(dir / "a.csv"), "first\n");
  for (const auto& e : fs::directory_iterator(dir))  // no temporary file is left behind
    EXPECT_EQ(e.path().filename(), "a.csv");
  fs::remove_all(dir);
}

TEST(RunDirectory, NamesByCpuTimeAndCommitAndNeverReuses) {
  fs::path root = fresh_dir("runs");
  auto when = std::chrono::system_clock::from_time_t(1796000000);  // 2026-11-30T00:53:20Z
  RunDirectory a = RunDirectory::create(root, "icx-6-106", "0123456789abcdef0123", when, "{}\n");
  RunDirectory b = RunDirectory::create(root, "icx-6-106", "0123456789abcdef0123", when, "{}\n");
  RunDirectory c = RunDirectory::create(root, "icx-6-106", "0123456789abcdef0123+dirty", when, "{}\n");
  EXPECT_EQ(a.path().parent_path(), root / "icx-6-106");
  EXPECT_EQ(a.run_id(), "20261130T005320Z-0123456789ab");
  EXPECT_EQ(b.run_id(), "20261130T005320Z-0123456789ab-2");
  EXPECT_EQ(c.run_id(), "20261130T005320Z-0123456789ab-dirty");
  // No commit: the name says why, and a checkout git refused is never "nogit" (issue 32 item 11).
  RunDirectory n = RunDirectory::create(root, "icx-6-106", "unknown (no git checkout at /x)", when, "{}\n");
  RunDirectory g = RunDirectory::create(root, "icx-6-106", "unknown (git refused to read /x: detected dubious ownership)", when, "{}\n");
  EXPECT_EQ(n.run_id(), "20261130T005320Z-nogit");
  EXPECT_EQ(g.run_id(), "20261130T005320Z-gitrefused");
  a.write("x.json", "{}\n");
  EXPECT_THROW(a.write("x.json", "{}\n"), std::runtime_error);
  EXPECT_THROW(RunDirectory::open(root / "missing"), std::runtime_error);
  // Every run directory holds its fingerprint from the moment it has a name; no staging is left.
  EXPECT_EQ(slurp(a.path() / "machine.json"), "{}\n");
  for (const auto& e : fs::directory_iterator(root / "icx-6-106")) EXPECT_NE(e.path().filename().string()[0], '.');
  EXPECT_THROW(a.check_can_write({"x.json"}), std::runtime_error);
  EXPECT_NO_THROW(a.check_can_write({"y.json"}));
  EXPECT_THROW(RunDirectory::create("", "icx-6-106", "0123", when, "{}\n"), std::runtime_error);
  fs::remove_all(root);
}

TEST(ResultFiles, ASetAppearsWholeOrNotAtAll) {
  fs::path dir = fresh_dir("set");
  write_file_atomically(dir / "e.json", "old\n");
  // One of the set exists: refused before anything is written.
  EXPECT_THROW(write_files_atomically(dir, {{"e.samples.csv", "s\n"}, {"e.summary.csv", "m\n"}, {"e.json", "new\n"}}),
               std::runtime_error);
  EXPECT_FALSE(fs::exists(dir / "e.samples.csv"));
  EXPECT_FALSE(fs::exists(dir / "e.summary.csv"));
  EXPECT_EQ(slurp(dir / "e.json"), "old\n");
  write_files_atomically(dir, {{"f.samples.csv", "s\n"}, {"f.json", "j\n"}});
  EXPECT_EQ(slurp(dir / "f.samples.csv"), "s\n");
  EXPECT_EQ(slurp(dir / "f.json"), "j\n");
  for (const auto& e : fs::directory_iterator(dir)) EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos);
  fs::remove_all(dir);
}

TEST(ResultFiles, AFailedWriteIsAnErrorWithItsReasonAndLeavesNothing) {
  // A file-size limit makes write(2) fail part-way (EFBIG), as a full disk does (ENOSPC): the
  // error names the file and the reason, and neither the target nor a temporary is left.
  fs::path dir = fresh_dir("full");
  rlimit old{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
  auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit small = old;
  small.rlim_cur = 16;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  std::string error;
  try {
    write_files_atomically(dir, {{"h.samples.csv", std::string(4096, 'x')}, {"h.json", "{}"}});
  } catch (const std::runtime_error& e) {
    error = e.what();
  }
  setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_NE(error.find("writing"), std::string::npos) << error;
  EXPECT_NE(error.find("File too large"), std::string::npos) << error;
  EXPECT_TRUE(fs::is_empty(dir));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace dlab
