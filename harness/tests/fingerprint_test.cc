#include "dispatchlab/harness/fingerprint.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace dlab
