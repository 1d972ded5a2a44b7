#include "dispatchlab/harness/knee.h"

#include <cmath>
#include <random>

#include <gtest/gtest.h>

namespace dlab {
namespace {

// Noisy samples (5 per x) of y(x) at the given x.
void sample(const std::vector<double>& xs, double (*f)(double), double noise, std::vector<double>& x, std::vector<double>& y) {
  std::mt19937_64 rng(42);
  std::normal_distribution<double> n(0, noise);
  for (double v : xs)
    for (int k = 0; k < 5; ++k) {
      x.push_back(v);
      y.push_back(f(v) + n(rng));
    }
}

const std::vector<double> kPairs = {5, 8, 11, 13, 15, 17, 19, 22, 26, 30, 35, 40, 45};

TEST(Knee, FindsAKnownRampBetweenElevenAndNineteen) {
  // Flat at 5 up to 11 pairs, a ramp to 7 at 19, flat after (the shape in the research context).
  std::vector<double> x, y;
  sample(kPairs, [](double v) { return v <= 11 ? 5.0 : v >= 19 ? 7.0 : 5.0 + 2.0 * (v - 11) / 8; }, 0.05, x, y);
  auto r = detect_knee(x, y);
  EXPECT_EQ(r.best.model, "plateau");
  EXPECT_EQ(r.best.start, 11);
  EXPECT_EQ(r.best.end, 19);
  EXPECT_NEAR(r.best.before, 5, 0.05);
  EXPECT_NEAR(r.best.after, 7, 0.05);
  EXPECT_LE(r.start_lo, 11);
  EXPECT_GE(r.start_lo, 8);
  EXPECT_GE(r.end_hi, 19);
  EXPECT_LE(r.end_hi, 22);
  EXPECT_NE(r.summary.find("steps up between"), std::string::npos) << r.summary;
}

TEST(Knee, FindsAStep) {
  std::vector<double> x, y;
  sample(kPairs, [](double v) { return v < 20 ? 1.0 : 3.0; }, 0.05, x, y);
  auto r = detect_knee(x, y);
  EXPECT_EQ(r.best.model, "step");
  EXPECT_EQ(r.best.start, 19);
  EXPECT_EQ(r.best.end, 22);
}

TEST(Knee, FlatDataIsFlat) {
  std::vector<double> x, y;
  sample(kPairs, [](double) { return 5.4; }, 0.05, x, y);
  auto r = detect_knee(x, y);
  EXPECT_EQ(r.best.model, "flat");
  EXPECT_NE(r.summary.find("flat at 5.4"), std::string::npos) << r.summary;
}

TEST(Knee, RejectsTooLittleData) {
  std::vector<double> x = {1, 2, 3}, y = {1, 2, 3};
  EXPECT_THROW(detect_knee(x, y), std::invalid_argument);
  std::vector<double> x2 = {1, 1, 2, 2, 2}, y2 = {1, 1, 2, 2, 2};
  EXPECT_THROW(detect_knee(x2, y2), std::invalid_argument);
}

TEST(Knee, ManyRowsAtManyLevelsAreFittedInLinearTime) {
  // 2,000 distinct x with 10 samples each (20,000 rows, as a long sweep gives): the fit searches
  // 128 quantile-spaced breakpoint levels and still finds the ramp to within that grid.
  std::vector<double> x, y;
  std::mt19937_64 rng(7);
  std::normal_distribution<double> noise(0, 0.05);
  for (int level = 0; level < 2000; ++level)
    for (int k = 0; k < 10; ++k) {
      double v = level / 1999.0;
      x.push_back(v);
      y.push_back((v <= 0.3 ? 1.0 : v >= 0.6 ? 3.0 : 1.0 + 2.0 * (v - 0.3) / 0.3) + noise(rng));
    }
  auto r = detect_knee(x, y);
  EXPECT_EQ(r.best.model, "plateau");
  EXPECT_NEAR(r.best.start, 0.3, 0.02);
  EXPECT_NEAR(r.best.end, 0.6, 0.02);
  EXPECT_NEAR(r.best.before, 1, 0.05);
  EXPECT_NEAR(r.best.after, 3, 0.05);
}

// Issue 32 item 9: the same step data scaled towards the limits of double. Unscaled squares of
// y * 1e160 overflow and of y * 1e-170 underflow; every scale must give the unscaled knee.
TEST(Knee, FindsTheSameKneeAtAnyScaleOfDouble) {
  std::vector<double> x, y;
  sample(kPairs, [](double v) { return v < 20 ? 1.0 : 3.0; }, 0.05, x, y);
  const auto base = detect_knee(x, y);
  ASSERT_EQ(base.best.model, "step");
  for (double scale : {1e150, 1e160, 1e300, 1e-170, 1e-300}) {
    for (bool scale_x : {false, true})
      for (bool scale_y : {false, true}) {
        if (!scale_x && !scale_y) continue;
        SCOPED_TRACE(::testing::Message() << "scale " << scale << (scale_x ? " x" : "") << (scale_y ? " y" : ""));
        std::vector<double> sx = x, sy = y;
        for (double& v : sx) v *= scale_x ? scale : 1;
        for (double& v : sy) v *= scale_y ? scale : 1;
        auto r = detect_knee(sx, sy);
        const double xs = scale_x ? scale : 1, ys = scale_y ? scale : 1;
        EXPECT_EQ(r.best.model, "step") << r.summary;
        EXPECT_DOUBLE_EQ(r.best.start, 19 * xs);
        EXPECT_DOUBLE_EQ(r.best.end, 22 * xs);
        EXPECT_NEAR(r.best.before / ys, base.best.before, 1e-9);
        EXPECT_NEAR(r.best.after / ys, base.best.after, 1e-9);
        EXPECT_DOUBLE_EQ(r.start_lo, base.start_lo * xs);
        EXPECT_DOUBLE_EQ(r.end_hi, base.end_hi * xs);
        EXPECT_EQ(r.resamples, base.resamples);
        EXPECT_TRUE(std::isfinite(r.best.bic));
      }
  }
}

TEST(Knee, FlatDataIsFlatAtAnyScale) {
  std::vector<double> x, y;
  sample(kPairs, [](double) { return 5.4; }, 0.05, x, y);
  for (double scale : {1e160, 1e300, 1e-170, 1e-300}) {
    std::vector<double> sy = y;
    for (double& v : sy) v *= scale;
    auto r = detect_knee(x, sy);
    EXPECT_EQ(r.best.model, "flat") << scale << ": " << r.summary;
    EXPECT_NEAR(r.best.before / scale, 5.4, 0.05) << scale;
  }
}

}  // namespace
}  // namespace dlab
