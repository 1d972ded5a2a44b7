// Knee detection: where does a metric (flushes, cycles per dispatch) step up as the number of
// live handler pairs grows? Three models are fitted by least squares (Eigen) to every sample:
//   flat     y = a
//   step     y = a up to a breakpoint, b after it
//   plateau  y = a up to x1, a straight ramp to b at x2, b after (a step is a ramp with no point inside)
// and chosen by BIC. The knee's uncertainty comes from a residual bootstrap of the chosen model:
// "steps up between 11 and 19 pairs" is the 2.5th percentile of the ramp's start and the 97.5th
// of its end over the resamples. The fits are made on copies of x and y scaled by powers of two
// (exact), so data at any scale of double (1e300, 1e-300) gives the knee of the same data at 1.
#pragma once

#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dispatchlab/harness/statistics.h"

namespace dlab {

struct KneeFit {
  std::string model;          // "flat", "step", "plateau"
  int parameters = 0;
  double rss = 0, bic = 0;    // rss in y's units squared: infinite (null in JSON) past the range of double
  double before = 0, after = 0;  // level before and after the knee (flat: both the mean)
  double start = 0, end = 0;     // knee: step between start and end (adjacent x), ramp from start to end
};

struct KneeResult {
  KneeFit best;
  std::vector<KneeFit> candidates;  // best fit of each model
  double start_lo = 0, end_hi = 0;  // bootstrap 95% range of where the change begins and ends
  int resamples = 0;
  std::string summary;  // "flat at 5.4", "steps up between 11 and 19 (from 5.4 to 6.6)"
  nlohmann::json to_json() const;
};

// x need not be sorted and may repeat (one point per sample). Throws std::invalid_argument with
// fewer than 4 points or fewer than 3 distinct x.
KneeResult detect_knee(std::span<const double> x, std::span<const double> y, const BootstrapOptions& opt = {});

}  // namespace dlab
