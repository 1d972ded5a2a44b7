// Robust statistics for repeated samples: medians and MAD rather than means and standard
// deviations, because timing noise on shared machines is one-sided and heavy-tailed; percentile
// bootstrap for the 95% CI of the median (no normality assumption); paired comparisons by round.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace dlab {

struct BootstrapOptions {
  int resamples = 2000;
  uint64_t seed = 1;  // fixed, so a result file's intervals are reproducible from its samples
};

struct Summary {
  size_t n = 0;
  double median = 0, min = 0, max = 0;
  double mad = 0;  // median absolute deviation from the median, unscaled (no 1.4826 factor)
  double ci95_lo = 0, ci95_hi = 0;  // percentile bootstrap CI of the median
};

struct Comparison {
  // a relative to b: median(a) / median(b); below 1 means a is smaller (faster for times).
  double ratio_of_medians = 0;
  double ratio_ci95_lo = 0, ratio_ci95_hi = 0;  // bootstrap over rounds, pairs kept together
  size_t a_smaller = 0;  // k: rounds in which a's sample was smaller than b's
  size_t n = 0;          // rounds compared
};

double median(std::vector<double> x);
double median_absolute_deviation(const std::vector<double>& x);
// Linear interpolation between order statistics (Hyndman-Fan type 7, as numpy's default).
double quantile(std::vector<double> x, double q);

// Throws std::invalid_argument on an empty input.
Summary summarize(std::span<const double> x, const BootstrapOptions& opt = {});
// a[i] and b[i] must come from the same round. Throws std::invalid_argument on size mismatch.
Comparison compare_paired(std::span<const double> a, std::span<const double> b, const BootstrapOptions& opt = {});

}  // namespace dlab
