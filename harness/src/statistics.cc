#include "dispatchlab/harness/statistics.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

namespace dlab {

double median(std::vector<double> x) {
  if (x.empty()) throw std::invalid_argument("median of no values");
  size_t n = x.size();
  std::nth_element(x.begin(), x.begin() + n / 2, x.end());
  double hi = x[n / 2];
  if (n % 2) return hi;
  double lo = *std::max_element(x.begin(), x.begin() + n / 2);
  return (lo + hi) / 2;
}

double median_absolute_deviation(const std::vector<double>& x) {
  double m = median(x);
  std::vector<double> d(x.size());
  for (size_t i = 0; i < x.size(); ++i) d[i] = std::fabs(x[i] - m);
  return median(std::move(d));
}

double quantile(std::vector<double> x, double q) {
  if (x.empty()) throw std::invalid_argument("quantile of no values");
  std::sort(x.begin(), x.end());
  double h = (static_cast<double>(x.size()) - 1) * q;
  size_t lo = static_cast<size_t>(std::floor(h));
  size_t hi = std::min(lo + 1, x.size() - 1);
  return x[lo] + (h - static_cast<double>(lo)) * (x[hi] - x[lo]);
}

Summary summarize(std::span<const double> xs, const BootstrapOptions& opt) {
  if (xs.empty()) throw std::invalid_argument("summary of no samples");
  std::vector<double> x(xs.begin(), xs.end());
  Summary s;
  s.n = x.size();
  s.median = median(x);
  s.min = *std::min_element(x.begin(), x.end());
  s.max = *std::max_element(x.begin(), x.end());
  s.mad = median_absolute_deviation(x);
  std::mt19937_64 rng(opt.seed);
  std::uniform_int_distribution<size_t> pick(0, x.size() - 1);
  std::vector<double> medians(static_cast<size_t>(opt.resamples)), r(x.size());
  for (auto& m : medians) {
    for (auto& v : r) v = x[pick(rng)];
    m = median(r);
  }
  s.ci95_lo = quantile(medians, 0.025);
  s.ci95_hi = quantile(medians, 0.975);
  return s;
}

Comparison compare_paired(std::span<const double> a, std::span<const double> b, const BootstrapOptions& opt) {
  if (a.size() != b.size() || a.empty()) throw std::invalid_argument("paired comparison needs equal, non-empty samples");
  Comparison c;
  c.n = a.size();
  for (size_t i = 0; i < a.size(); ++i) c.a_smaller += a[i] < b[i];
  std::vector<double> va(a.begin(), a.end()), vb(b.begin(), b.end());
  c.ratio_of_medians = median(va) / median(vb);
  std::mt19937_64 rng(opt.seed);
  std::uniform_int_distribution<size_t> pick(0, a.size() - 1);
  if (!std::isfinite(c.ratio_of_medians)) {
    c.ratio_ci95_lo = c.ratio_ci95_hi = c.ratio_of_medians;
    return c;
  }
  std::vector<double> ratios, ra(a.size()), rb(a.size());
  for (int i = 0; i < opt.resamples; ++i) {
    for (size_t j = 0; j < a.size(); ++j) {
      size_t k = pick(rng);
      ra[j] = a[k];
      rb[j] = b[k];
    }
    double r = median(ra) / median(rb);
    if (std::isfinite(r)) ratios.push_back(r);  // resamples whose baseline median is 0 have no ratio
  }
  c.ratio_ci95_lo = ratios.empty() ? c.ratio_of_medians : quantile(ratios, 0.025);
  c.ratio_ci95_hi = ratios.empty() ? c.ratio_of_medians : quantile(ratios, 0.975);
  return c;
}

}  // namespace dlab
