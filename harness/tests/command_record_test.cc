#include "dispatchlab/harness/command_record.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "dispatchlab/harness/fingerprint.h"
#include "dispatchlab/harness/result_rows.h"

namespace dlab {
namespace {

TEST(CommandRecord, TakesTheArgumentVectorAndTheRecipeStepFromTheEnvironment) {
  ::setenv("DLAB_RECIPE", "rfc", 1);
  ::setenv("DLAB_RECIPE_STEP", "models_simulated", 1);
  const char* argv[] = {"dlab", "models", "--predict", "all", "--run-dir", "a dir with blanks"};
  CommandRecord r = CommandRecord::of_process(6, argv);
  ::unsetenv("DLAB_RECIPE");
  ::unsetenv("DLAB_RECIPE_STEP");
  EXPECT_EQ(r.argv, (std::vector<std::string>{"dlab", "models", "--predict", "all", "--run-dir", "a dir with blanks"}));
  EXPECT_FALSE(r.working_directory.empty());
  auto j = r.to_json();
  EXPECT_EQ(j.at("recipe"), "rfc");
  EXPECT_EQ(j.at("recipe_step"), "models_simulated");
  EXPECT_EQ(j.at("argv").size(), 6u);
  EXPECT_EQ(j.at("note"), "step models_simulated of `just rfc`");
}

TEST(CommandRecord, ByHandHasNoRecipeAndSaysSo) {
  ::unsetenv("DLAB_RECIPE");
  ::unsetenv("DLAB_RECIPE_STEP");
  const char* argv[] = {"dlab", "counters"};
  auto j = CommandRecord::of_process(2, argv).to_json();
  EXPECT_EQ(j.at("recipe"), "");
  EXPECT_NE(j.at("note").get<std::string>().find("by hand"), std::string::npos);
}

// A sidecar written by a program that never recorded its command says so; one that did carries it.
TEST(CommandRecord, EverySidecarCarriesTheProcessCommand) {
  MachineFingerprint m;
  auto unrecorded = sidecar_json("run", m, nullptr, {});
  EXPECT_TRUE(unrecorded.at("command").at("argv").empty());
  EXPECT_NE(unrecorded.at("command").at("note").get<std::string>().find("not recorded"), std::string::npos);
  const char* argv[] = {"dlab", "counters", "--run-dir", "r"};
  set_process_command(CommandRecord::of_process(4, argv));
  auto recorded = sidecar_json("run", m, nullptr, {});
  EXPECT_EQ(recorded.at("command").at("argv").at(1), "counters");
  set_process_command({});
}

}  // namespace
}  // namespace dlab
