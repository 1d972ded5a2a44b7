#include "dispatchlab/harness/formula.h"

#include <gtest/gtest.h>

namespace dlab {
namespace {

TEST(Formula, EvaluatesTopDownBackendBound) {
  auto f = Formula::parse("1 - (fe + issued + 4 * recovery) / (4 * cycles)");
  EXPECT_EQ(f.names(), (std::set<std::string>{"fe", "issued", "recovery", "cycles"}));
  // 1 - (100 + 200 + 4*25) / (4*200) = 1 - 400/800
  auto v = f.evaluate({{"fe", 100}, {"issued", 200}, {"recovery", 25}, {"cycles", 200}});
  ASSERT_TRUE(v.has_value());
  EXPECT_DOUBLE_EQ(*v, 0.5);
}

TEST(Formula, PrecedenceAndUnaryMinus) {
  EXPECT_DOUBLE_EQ(*Formula::parse("2 + 3 * 4").evaluate({}), 14);
  EXPECT_DOUBLE_EQ(*Formula::parse("(2 + 3) * 4").evaluate({}), 20);
  EXPECT_DOUBLE_EQ(*Formula::parse("-x / 2 - 1").evaluate({{"x", 6}}), -4);
  EXPECT_DOUBLE_EQ(*Formula::parse("8 / 4 / 2").evaluate({}), 1);
}

TEST(Formula, MissingInputOrZeroDenominatorIsNoValue) {
  auto f = Formula::parse("be / slots");
  EXPECT_FALSE(f.evaluate({{"be", 3}}).has_value());
  EXPECT_FALSE(f.evaluate({{"be", 3}, {"slots", 0}}).has_value());
}

TEST(Formula, RejectsMalformedText) {
  EXPECT_THROW(Formula::parse("a +"), std::invalid_argument);
  EXPECT_THROW(Formula::parse("(a"), std::invalid_argument);
  EXPECT_THROW(Formula::parse("a $ b"), std::invalid_argument);
  EXPECT_THROW(Formula::parse("a b"), std::invalid_argument);
}

}  // namespace
}  // namespace dlab
