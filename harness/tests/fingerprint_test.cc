#include "dispatchlab/harness/fingerprint.h"

#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include <gtest/gtest.h>

#include "dispatchlab/harness/process.h"
#include "dispatchlab/harness/temp_dir.h"
#include "platform.h"

namespace dlab {
namespace {

TEST(Fingerprint, DescribesThisMachine) {
  TscCalibration tsc = calibrate_tsc(this_cpu_identity());
  MachineFingerprint f = collect_fingerprint(tsc);
  EXPECT_FALSE(f.arch.empty());
  EXPECT_FALSE(f.kernel.empty());
  EXPECT_GT(f.logical_cpus, 0);
  EXPECT_EQ(f.is_vm, platform::running_under_hypervisor());
  EXPECT_EQ(f.kernel_core_pmu, platform::kernel_has_core_pmu());
  EXPECT_DOUBLE_EQ(f.tsc.tsc_hz, tsc.tsc_hz);
  if (f.arch == "x86_64") {
    EXPECT_EQ(f.cpu_vendor, platform::cpuinfo_field("vendor_id").value_or("?"));
    EXPECT_GE(f.cpu_family, 6);
    EXPECT_GE(f.cpu_model, 0);
  }
  EXPECT_NE(f.build.compiler.find("Clang"), std::string::npos);
  EXPECT_FALSE(f.build.git_commit.empty());
  // The directory name is filesystem-safe.
  for (char c : f.cpu_slug()) EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c)) || c == '-') << f.cpu_slug();
  auto j = f.to_json();
  EXPECT_EQ(j["cpu"]["family"], f.cpu_family);
  EXPECT_EQ(j["virtualization"]["is_vm"], f.is_vm);
  EXPECT_EQ(j["build"]["git_commit"], f.build.git_commit);
}

// git run in `dir` with a HOME that has no configuration (no safe.directory exception).
ProcessResult git_in(const std::filesystem::path& dir, std::vector<std::string> args) {
  args.insert(args.begin(), {"git", "-C", dir.string(), "-c", "user.name=t", "-c", "user.email=t@example.invalid"});
  ProcessOptions po;
  po.quiet = true;
  return run_process(args, po);
}

// Sets HOME to an empty folder for one test, so the tester's own git configuration (a
// safe.directory = * there) cannot change what git says.
class EmptyHome {
 public:
  EmptyHome() : home_("home") {
    if (const char* h = std::getenv("HOME")) old_ = h;
    ::setenv("HOME", home_.path().c_str(), 1);
  }
  ~EmptyHome() { ::setenv("HOME", old_.c_str(), 1); }

 private:
  TempDir home_;
  std::string old_;
};

TEST(GitCommit, AFolderWithoutGitIsNoCheckout) {
  EmptyHome home;
  TempDir dir("nogit");
  std::string c = git_commit_of(dir.path().string());
  EXPECT_TRUE(c.starts_with(kNoGitCheckout)) << c;
  EXPECT_EQ(commit_for_run_name(c), "nogit");
}

TEST(GitCommit, ACheckoutIsItsCommit) {
  EmptyHome home;
  TempDir dir("git");
  ASSERT_TRUE(git_in(dir.path(), {"init", "-q"}).ok());
  ASSERT_TRUE(git_in(dir.path(), {"commit", "-q", "--allow-empty", "-m", "x"}).ok());
  std::string c = git_commit_of(dir.path().string());
  ASSERT_EQ(c.size(), 40u) << c;
  EXPECT_EQ(commit_for_run_name(c), c.substr(0, 12));
}

// Issue 32 item 11: a checkout owned by another user is refused by git ("detected dubious
// ownership"); that is said with git's reason, and never reads as a folder without git.
TEST(GitCommit, ACheckoutGitRefusesSaysSoAndWhy) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root, to give the checkout to another user";
  EmptyHome home;
  TempDir dir("gitrefused");
  ASSERT_TRUE(git_in(dir.path(), {"init", "-q"}).ok());
  ASSERT_TRUE(git_in(dir.path(), {"commit", "-q", "--allow-empty", "-m", "x"}).ok());
  const passwd* nobody = ::getpwnam("nobody");
  ASSERT_NE(nobody, nullptr);
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir.path()))
    ASSERT_EQ(::lchown(e.path().c_str(), nobody->pw_uid, nobody->pw_gid), 0);
  ASSERT_EQ(::chown(dir.path().c_str(), nobody->pw_uid, nobody->pw_gid), 0);
  std::string c = git_commit_of(dir.path().string());
  EXPECT_TRUE(c.starts_with(kGitRefused)) << c;
  EXPECT_NE(c.find("detected dubious ownership"), std::string::npos) << c;
  EXPECT_NE(c.find("safe.directory"), std::string::npos) << c;
  EXPECT_EQ(c.find("no git checkout"), std::string::npos) << c;
  EXPECT_EQ(commit_for_run_name(c), "gitrefused");
}

TEST(GitCommit, RunNamesSayWhyThereIsNoCommit) {
  EXPECT_EQ(commit_for_run_name("0123456789abcdef0123"), "0123456789ab");
  EXPECT_EQ(commit_for_run_name("0123456789abcdef0123+dirty"), "0123456789ab-dirty");
  EXPECT_EQ(commit_for_run_name("unknown (no git checkout at /x)"), "nogit");
  EXPECT_EQ(commit_for_run_name("unknown (git refused to read /x: detected dubious ownership in repository at '/x')"), "gitrefused");
  EXPECT_EQ(commit_for_run_name("unknown (cannot run git: No such file or directory)"), "gitmissing");
  EXPECT_EQ(commit_for_run_name(""), "nogit");
}

}  // namespace
}  // namespace dlab
