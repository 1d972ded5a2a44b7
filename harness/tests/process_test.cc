// Child processes get an argument vector: nothing in an argument is shell syntax.
#include "dispatchlab/harness/process.h"

#include <filesystem>

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

}  // namespace
}  // namespace dlab
