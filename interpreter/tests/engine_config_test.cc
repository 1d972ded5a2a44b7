// EngineConfig: every engine of engines.def, with every lowering, survives the trip through its
// command-line arguments and result-row columns, and says why when it cannot run.
#include <gtest/gtest.h>

#include <map>

#include "dispatchlab/interpreter/engine_config.h"
#include "dispatchlab/interpreter/runtime.h"

namespace dlab::wasm {
namespace {

TEST(EngineConfig, EveryEngineRoundTripsThroughItsArgumentsAndColumns) {
  ASSERT_FALSE(engine_configs().empty());
  for (EngineConfig e : engine_configs())
    for (Lowering l : lowerings())
      for (Ir ir : irs()) {
        e.lowering = l;
        e.lowering.ir = ir;
        SCOPED_TRACE(e.name());
        EXPECT_NE(e.engine_name(), "");
        std::vector<std::string> argv = e.argv();
        ASSERT_EQ(argv.size(), 12u);
        std::map<std::string, std::string> options;
        for (size_t i = 0; i + 1 < argv.size(); i += 2) options[argv[i]] = argv[i + 1];
        std::string error;
        auto back = EngineConfig::parse(options["--dispatch"], options["--placement"], options["--budget"], options["--bounds"],
                                        options["--lowering"], options["--ir"], &error);
        ASSERT_TRUE(back) << error;
        EXPECT_EQ(*back, e);
        auto params = e.params();
        ASSERT_EQ(params.size(), 6u);
        for (const auto& [key, value] : params) EXPECT_EQ(options["--" + key], value) << key;
      }
}

TEST(EngineConfig, TheDispatchRowsDescribeConventionsAndBudgetsForTheProbesAndTheHelp) {
  EXPECT_STREQ(dispatch_convention(Dispatch::kTail), "default");
  EXPECT_STREQ(dispatch_convention(Dispatch::kTailPreserveNone), "preserve_none");
  EXPECT_STREQ(dispatch_convention(Dispatch::kSwitch), "default");
  std::string help = budget_help();
  for (Budget b : budgets()) EXPECT_NE(help.find(std::string(budget_name(b)) + ": "), std::string::npos) << budget_name(b);
}

TEST(EngineConfig, ANameThatIsNotARowIsRefusedSayingWhichOption) {
  std::string error;
  EXPECT_FALSE(EngineConfig::parse("tail", "sp", "none", "check", "plain", "heap", &error));
  EXPECT_EQ(error, "--ir: 'heap' is not one of its names");
  EXPECT_FALSE(EngineConfig::parse("jump", "sp", "none", "check", "plain", "stack", &error));
  EXPECT_EQ(error, "--dispatch: 'jump' is not one of its names");
}

TEST(EngineConfig, UnavailableSaysWhyAndTheRuntimeRefusesTheSame) {
  EngineConfig spill{Dispatch::kSwitch, Placement::kSpSpill};
  EXPECT_NE(spill.unavailable().find("sp_spill is about how an argument is passed"), std::string::npos) << spill.unavailable();
  EXPECT_EQ(spill.engine_name(), "");
  EXPECT_THROW(Runtime{spill}, std::invalid_argument);
  EngineConfig vec_register{Dispatch::kTail, Placement::kVec};
  vec_register.lowering.ir = Ir::kRegister;
  // The engine first (a build without tail_vec: engines.def's COMPARED rows), then the IR.
  if (std::string why = engine_unavailable(Dispatch::kTail, Placement::kVec); !why.empty())
    EXPECT_EQ(vec_register.unavailable(), why);
  else  // the IR's own reason, with what to do instead (not a forwarded string compared with itself)
    EXPECT_NE(vec_register.unavailable().find("the register IR is built for the sp placement only, not vec"), std::string::npos)
        << vec_register.unavailable();
  EngineConfig tail{Dispatch::kTail, Placement::kSp};
  tail.lowering = Lowering::none();
  EXPECT_EQ(tail.unavailable(), "");
  Runtime rt(tail);
  EXPECT_EQ(rt.engine(), tail);
  EXPECT_EQ(tail.name(), "tail/sp/none/check/plain/stack");
  // The engine's own handler type, read from its code (budget_test.cc checks every engine's).
  EXPECT_EQ(tail.handler_signature(), "ptr,ptr,ptr,ptr,u64,f64,f32");
}

}  // namespace
}  // namespace dlab::wasm
