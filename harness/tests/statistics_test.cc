#include "dispatchlab/harness/statistics.h"

#include <gtest/gtest.h>

namespace dlab {
namespace {

TEST(Statistics, MedianOddAndEven) {
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(median({7}), 7);
  EXPECT_THROW(median({}), std::invalid_argument);
}

TEST(Statistics, MedianAbsoluteDeviationByHand) {
  // median 2; |x - 2| = 1 1 0 0 2 4 7 -> sorted 0 0 1 1 2 4 7 -> 1
  EXPECT_DOUBLE_EQ(median_absolute_deviation({1, 1, 2, 2, 4, 6, 9}), 1);
  EXPECT_DOUBLE_EQ(median_absolute_deviation({5, 5, 5}), 0);
}

TEST(Statistics, QuantileInterpolatesLikeNumpy) {
  // numpy.quantile([1, 2, 3, 4], [0, 0.25, 0.5, 0.975, 1]) == [1, 1.75, 2.5, 3.925, 4]
  EXPECT_DOUBLE_EQ(quantile({4, 3, 2, 1}, 0.0), 1);
  EXPECT_DOUBLE_EQ(quantile({4, 3, 2, 1}, 0.25), 1.75);
  EXPECT_DOUBLE_EQ(quantile({4, 3, 2, 1}, 0.5), 2.5);
  EXPECT_NEAR(quantile({4, 3, 2, 1}, 0.975), 3.925, 1e-12);
  EXPECT_DOUBLE_EQ(quantile({4, 3, 2, 1}, 1.0), 4);
}

TEST(Statistics, SummaryOfConstantSamplesHasZeroWidth) {
  std::vector<double> x = {5, 5, 5, 5};
  Summary s = summarize(x);
  EXPECT_EQ(s.n, 4u);
  EXPECT_DOUBLE_EQ(s.median, 5);
  EXPECT_DOUBLE_EQ(s.min, 5);
  EXPECT_DOUBLE_EQ(s.mad, 0);
  EXPECT_DOUBLE_EQ(s.ci95_lo, 5);
  EXPECT_DOUBLE_EQ(s.ci95_hi, 5);
}

TEST(Statistics, BootstrapIntervalIsReproducibleAndBracketsTheMedian) {
  std::vector<double> x = {10, 12, 11, 30, 9, 10, 11, 13, 10, 12, 11};
  Summary a = summarize(x, {2000, 7});
  Summary b = summarize(x, {2000, 7});
  EXPECT_DOUBLE_EQ(a.ci95_lo, b.ci95_lo);
  EXPECT_DOUBLE_EQ(a.ci95_hi, b.ci95_hi);
  EXPECT_DOUBLE_EQ(a.median, 11);
  EXPECT_DOUBLE_EQ(a.min, 9);
  EXPECT_DOUBLE_EQ(a.max, 30);
  EXPECT_DOUBLE_EQ(a.mad, 1);  // |x-11| sorted: 0 0 0 1 1 1 1 1 2 2 19
  EXPECT_LE(a.ci95_lo, a.median);
  EXPECT_GE(a.ci95_hi, a.median);
  // The outlier 30 cannot drag a median interval beyond the bulk of the data.
  EXPECT_GE(a.ci95_lo, 10);
  EXPECT_LE(a.ci95_hi, 12);
}

TEST(Statistics, PairedComparisonByHand) {
  std::vector<double> a = {1, 5, 3}, b = {2, 4, 4};
  Comparison c = compare_paired(a, b);
  EXPECT_DOUBLE_EQ(c.ratio_of_medians, 0.75);  // 3 / 4
  EXPECT_EQ(c.a_smaller, 2u);                   // rounds 0 and 2
  EXPECT_EQ(c.n, 3u);
  EXPECT_LE(c.ratio_ci95_lo, c.ratio_ci95_hi);
}

TEST(Statistics, PairedComparisonOfProportionalSamplesIsExact) {
  // b is exactly twice a in every round, so every resample has ratio 0.5.
  std::vector<double> a = {1, 2, 3, 4, 5}, b = {2, 4, 6, 8, 10};
  Comparison c = compare_paired(a, b);
  EXPECT_DOUBLE_EQ(c.ratio_of_medians, 0.5);
  EXPECT_DOUBLE_EQ(c.ratio_ci95_lo, 0.5);
  EXPECT_DOUBLE_EQ(c.ratio_ci95_hi, 0.5);
  EXPECT_EQ(c.a_smaller, 5u);
  EXPECT_THROW(compare_paired(std::vector<double>{1}, std::vector<double>{1, 2}), std::invalid_argument);
}

}  // namespace
}  // namespace dlab
