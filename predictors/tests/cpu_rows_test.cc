// The CPU table (harness/catalog/cpus.json) names, for some CPUs, the simulated predictor rows they
// are closest to: every name must be a row of the tables here, of the role it is named for, or the
// report's cycle model would charge a row that does not exist.
#include <gtest/gtest.h>

#include <string>

#include "dispatchlab/harness/cpu_identity.h"
#include "dispatchlab/harness/process.h"
#include "dispatchlab/harness/temp_dir.h"
#include "dispatchlab/predictors/branch_predictor_table.h"
#include "dispatchlab/predictors/predictor_table.h"

namespace dlab::predictors {
namespace {

const BranchPredictorRow* branch_row(const std::string& name) {
  for (const auto& r : branch_predictors())
    if (r.name == name) return &r;
  return nullptr;
}

bool memory_row(const std::string& name) {
  for (const auto& r : memory_dependence_predictors())
    if (r.name == name) return true;
  return false;
}

TEST(CpuRows, EveryNamedPredictorIsARowOfItsRole) {
  int named = 0;
  for (const auto* entries : {&CpuTable::builtin().entries(), &CpuTable::builtin().feature_classes()})
    for (const auto& e : *entries)
      for (const auto& [role, row] : e.predictors) {
        if (role == "why") continue;
        ++named;
        if (role == "indirect") {
          const BranchPredictorRow* r = branch_row(row);
          ASSERT_NE(r, nullptr) << e.key << ": " << row << " is not a branch predictor row";
          EXPECT_TRUE(r->make_indirect) << e.key << ": " << row << " predicts no indirect targets";
        } else if (role == "conditional") {
          const BranchPredictorRow* r = branch_row(row);
          ASSERT_NE(r, nullptr) << e.key << ": " << row;
          EXPECT_TRUE(r->make_direction) << e.key << ": " << row << " predicts no directions";
        } else if (role == "memory") {
          EXPECT_TRUE(memory_row(row)) << e.key << ": " << row << " is not a memory-dependence row";
        } else {
          ADD_FAILURE() << e.key << ": unknown predictor role '" << role << "' (indirect, conditional, memory)";
        }
      }
  EXPECT_GE(named, 3);  // zen3, zen4, zen5 name their indirect rows
}

TEST(CpuRows, APredictorsFieldWithoutWhyIsRefused) {
  const std::string table = R"({"calibration": {"tolerance": 0.1, "x86_64": {"primary": "mul", "cross_check": "add_reg", "latency": {"mul": 3, "add_reg": 1}},
                                             "aarch64": {"primary": "mul", "cross_check": "add_reg", "latency": {"mul": 3, "add_reg": 1}}},
    "cpus": [{"key": "z", "name": "Z", "vendor": "AuthenticAMD", "family": 25, "models": [1], "source": "generic",
              "predictors": {"indirect": "ittage_zen4"}}]})";
  try {
    CpuTable::from_json_text(table, "t.json");
    FAIL() << "accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("says why"), std::string::npos) << e.what();
  }
}

// Every CPU row names llvm-mca's CPU for the ideal bound and whose scheduling model LLVM 19 gives it
// (predictors/llvm_mca.h: `--ideal-mcpu native` takes it): each name must be one llvm-mca-19 takes
// for the row's architecture, and the borrowed models the issue names are said (Zen 5 gets Zen 4's,
// every Apple core Cyclone's; both checked against llvm-mca's output, identical for each pair).
TEST(CpuRows, EveryLlvmMcaNameIsOneLlvmMcaTakes) {
  TempDir dir("cpu-rows");
  const std::string x86 = dir.write("x86.s", "add %rax, %rax\n").string(), arm = dir.write("arm.s", "add x0, x0, x1\n").string();
  ProcessOptions probe;
  probe.quiet = true;
  probe.timeout_s = 30;
  const bool have_mca = run_process({"llvm-mca-19", "--version"}, probe).ok();
  int named = 0;
  for (const auto& e : CpuTable::builtin().entries()) {
    EXPECT_FALSE(e.llvm_mcpu.empty()) << e.key << " names no llvm-mca CPU";
    if (e.llvm_mcpu.empty()) continue;
    ++named;
    EXPECT_FALSE(e.llvm_model.empty()) << e.key;
    if (e.key == "zen5") EXPECT_NE(e.llvm_model.find("Zen 4's"), std::string::npos) << e.llvm_model;
    if (e.key.starts_with("apple-")) EXPECT_NE(e.llvm_model.find("Cyclone's"), std::string::npos) << e.key << ": " << e.llvm_model;
    if (!have_mca) continue;
    const bool is_x86 = e.vendor == "GenuineIntel" || e.vendor == "AuthenticAMD";
    std::vector<std::string> argv{"llvm-mca-19", "-mcpu=" + e.llvm_mcpu};
    if (!is_x86) argv.push_back("-mtriple=aarch64");
    argv.push_back(is_x86 ? x86 : arm);
    EXPECT_TRUE(run_process(argv, probe).ok()) << e.key << ": llvm-mca-19 refuses -mcpu=" << e.llvm_mcpu;
  }
  EXPECT_GE(named, 30);
}

TEST(CpuRows, AnLlvmMcaFieldWithoutItsModelIsRefused) {
  const std::string table = R"({"calibration": {"tolerance": 0.1, "x86_64": {"primary": "mul", "cross_check": "add_reg", "latency": {"mul": 3, "add_reg": 1}},
                                             "aarch64": {"primary": "mul", "cross_check": "add_reg", "latency": {"mul": 3, "add_reg": 1}}},
    "cpus": [{"key": "z", "name": "Z", "vendor": "AuthenticAMD", "family": 25, "models": [1], "source": "generic",
              "llvm_mca": {"mcpu": "znver3"}}]})";
  try {
    CpuTable::from_json_text(table, "t.json");
    FAIL() << "accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("'llvm_mca' must be"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dlab::predictors
