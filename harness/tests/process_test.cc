// Child processes get an argument vector: nothing in an argument is shell syntax.
#include "dispatchlab/harness/process.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "dispatchlab/harness/files.h"

namespace dlab {
namespace {

TEST(Process, ArgumentsAreNeverShellSyntax) {
  namespace fs = std::filesystem;
  fs::path marker = fs::temp_directory_path() / "dlab-process-test-INJECTED";
  fs::remove(marker);
  std::string hostile = "a';touch " + marker.string() + ";'$(touch " + marker.string() + ")";
  ProcessOptions po;
  po.capture_stdout = true;
  ProcessResult r = run_process({"echo", hostile}, po);
  EXPECT_TRUE(r.ok()) << r.describe("echo");
  EXPECT_EQ(r.output, hostile + "\n");
  EXPECT_FALSE(fs::exists(marker));
}

// pass_fd: a pipe's write end becomes the program's descriptor 3 (what `dlab models --predict` gives
// valgrind for its trace), close-on-exec or not, while stdout is captured apart.
TEST(Process, PassesADescriptorAsTheProgramsThird) {
  int p[2];
  ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
  ProcessOptions po;
  po.capture_stdout = true;
  po.pass_fd = p[1];
  ProcessResult r = run_process({"sh", "-c", "echo trace >&3; echo out"}, po);
  ::close(p[1]);
  char buf[64] = {};
  ssize_t n = ::read(p[0], buf, sizeof buf - 1);
  ::close(p[0]);
  EXPECT_TRUE(r.ok()) << r.describe("sh");
  EXPECT_EQ(r.output, "out\n");
  ASSERT_GT(n, 0);
  EXPECT_EQ(std::string(buf, static_cast<size_t>(n)), "trace\n");
  ProcessOptions low;
  low.pass_fd = 0;
  low.pass_fd_as = 1;  // the standard streams are not for this
  EXPECT_FALSE(run_process({"true"}, low).spawn_error.empty());
}

TEST(Process, ReportsExitStatusSignalsAndSpawnFailures) {
  EXPECT_EQ(run_process({"false"}).exit_code, 1);
  EXPECT_EQ(run_process({"false"}).describe("false"), "false exited with status 1");
  ProcessResult missing = run_process({"/nonexistent/dlab-no-such-program"});
  EXPECT_FALSE(missing.ok());
  EXPECT_NE(missing.describe("x").find("cannot run x: No such file or directory"), std::string::npos);
  ProcessResult killed = run_process({"sh", "-c", "kill -9 $$"});
  EXPECT_EQ(killed.signal, 9);
  EXPECT_FALSE(run_process({}).ok());
}

TEST(Process, RedirectsStdoutAndStderrToFiles) {
  namespace fs = std::filesystem;
  fs::path out = fs::temp_directory_path() / "dlab-process-test.out", err = fs::temp_directory_path() / "dlab-process-test.err";
  ProcessOptions po;
  po.stdout_file = out.string();
  po.stderr_file = err.string();
  EXPECT_TRUE(run_process({"sh", "-c", "echo out; echo err >&2"}, po).ok());
  EXPECT_EQ(read_text_file(out.string()), "out\n");
  EXPECT_EQ(read_text_file(err.string()), "err\n");
  fs::remove(out);
  fs::remove(err);
}

// working_directory: the program runs there; a relative program path and the redirected files are
// dlab's (resolved before the change), and a step that fails before exec says which it was.
TEST(Process, RunsInAWorkingDirectoryWithDlabsPathsResolvedFirst) {
  namespace fs = std::filesystem;
  const fs::path base = fs::temp_directory_path() / ("dlab-process-wd-" + std::to_string(::getpid()));
  fs::create_directories(base / "work");
  fs::create_directories(base / "bin");
  {
    std::FILE* f = std::fopen((base / "bin" / "where").c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("#!/bin/sh\npwd\ncat\n", f);
    std::fclose(f);
    fs::permissions(base / "bin" / "where", fs::perms::owner_all);
  }
  {
    std::FILE* f = std::fopen((base / "input.txt").c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("from stdin\n", f);
    std::fclose(f);
  }
  const fs::path before = fs::current_path();
  fs::current_path(base);  // relative names below are this folder's, not the child's
  ProcessOptions po;
  po.capture_stdout = true;
  po.working_directory = (base / "work").string();
  po.stdin_file = "input.txt";
  ProcessResult r = run_process({"bin/where"}, po);
  EXPECT_TRUE(r.ok()) << r.describe("bin/where");
  EXPECT_EQ(r.output, fs::canonical(base / "work").string() + "\nfrom stdin\n");
  po.stdin_file = "missing.txt";
  r = run_process({"bin/where"}, po);
  EXPECT_EQ(r.describe("where"), "cannot run where: standard input missing.txt: No such file or directory");
  po.stdin_file = "";
  po.working_directory = (base / "nowhere").string();
  r = run_process({"bin/where"}, po);
  EXPECT_NE(r.describe("where").find("working directory " + po.working_directory), std::string::npos) << r.describe("where");
  fs::current_path(before);
  fs::remove_all(base);
}

}  // namespace
}  // namespace dlab
