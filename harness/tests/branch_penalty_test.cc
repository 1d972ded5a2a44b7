// The mispredict penalty's two loops differ only in their targets' order: the same length, the
// pattern a short cycle, the random order using every target about equally, from a fixed seed.
#include "dispatchlab/harness/branch_penalty.h"

#include <array>

#include <gtest/gtest.h>

namespace dlab {
namespace {

TEST(BranchPenalty, ThePatternIsACycleOfFour) {
  auto s = target_sequence(TargetOrder::pattern);
  ASSERT_EQ(s.size(), kSequenceLength);
  for (size_t i = 0; i < 16; ++i) EXPECT_EQ(s[i], i % kPatternPeriod);
}

TEST(BranchPenalty, TheRandomOrderUsesEveryTargetAboutEquallyAndIsTheSameEveryRun) {
  auto s = target_sequence(TargetOrder::random);
  ASSERT_EQ(s.size(), kSequenceLength);
  std::array<size_t, kTargets> seen{};
  size_t repeats = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    ASSERT_LT(s[i], kTargets);
    ++seen[s[i]];
    if (i && s[i] == s[i - 1]) ++repeats;
  }
  for (size_t n : seen) EXPECT_NEAR(static_cast<double>(n) / kSequenceLength, 1.0 / kTargets, 0.002);
  // A target repeats its predecessor about 1/16 of the time: no last-target predictor does better.
  EXPECT_NEAR(static_cast<double>(repeats) / kSequenceLength, 1.0 / kTargets, 0.002);
  EXPECT_EQ(target_sequence(TargetOrder::random), s);
  EXPECT_DOUBLE_EQ(unavoidable_mispredict_rate(), 15.0 / 16.0);
}

TEST(BranchPenalty, TheCallsComputeTheSameWhateverTimesThem) {
  auto pattern = target_sequence(TargetOrder::pattern), random = target_sequence(TargetOrder::random);
  EXPECT_EQ(run_indirect_calls(pattern, 1000), run_indirect_calls(pattern, 1000));
  EXPECT_NE(run_indirect_calls(pattern, 1000), run_indirect_calls(random, 1000));  // they call other targets
}

}  // namespace
}  // namespace dlab
