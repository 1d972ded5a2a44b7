// The CPU table (harness/catalog/cpus.json) names, for some CPUs, the simulated predictor rows they
// are closest to: every name must be a row of the tables here, of the role it is named for, or the
// report's cycle model would charge a row that does not exist.
#include <gtest/gtest.h>

#include <string>

#include "dispatchlab/harness/cpu_identity.h"
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

}  // namespace
}  // namespace dlab::predictors
