#include "dispatchlab/harness/knee.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <stdexcept>

#include <Eigen/Dense>
#include <fmt/format.h>

namespace dlab {

namespace {

// More distinct x than this: breakpoints are searched on this many quantile-spaced levels (every
// level still counts in every fit). The search is quadratic in the candidates, and 128 levels
// resolve a knee far more finely than any sweep this toolkit runs.
constexpr size_t kMaxBreakpointLevels = 128;

// The points grouped by distinct x: a ramp's r(x) is the same for every point of one level, so
// every least-squares sum is a sum over levels, and prefix sums over the levels give any
// breakpoint pair's sums in O(1). (Refitting every pair point by point was O(levels^2 x points)
// per fit, times the bootstrap's resamples: 20,000 rows took minutes.)
struct Levels {
  std::vector<double> x;           // distinct x, sorted
  std::vector<double> u;           // x scaled to [0, 1]: keeps the prefix sums well conditioned, and
                                   // every ramp is computed from it, so x's own scale never matters
  std::vector<double> count;       // points per level
  std::vector<Eigen::Index> level; // each point's level
  std::vector<size_t> candidates;  // levels a breakpoint may sit at
};

// The power of two that brings the largest |v| into [0.5, 1) (0 when every v is 0). Scaling by
// it is exact, so a fit of the scaled values is the fit of the values themselves, and no square,
// sum or span of data near the limits of double (1e300, 1e-300) overflows or underflows.
int binary_exponent(std::span<const double> vs) {
  double largest = 0;
  for (double v : vs)
    if (std::isfinite(v)) largest = std::max(largest, std::fabs(v));
  return largest > 0 ? std::ilogb(largest) + 1 : 0;
}

Levels group(std::span<const double> xs) {
  std::map<double, size_t> index;
  for (double v : xs) index.emplace(v, 0);
  Levels L;
  for (auto& [v, i] : index) {
    i = L.x.size();
    L.x.push_back(v);
  }
  const int e = binary_exponent(L.x);  // (x_max - x_min of x near 1e308 would overflow unscaled)
  double lo = std::ldexp(L.x.front(), -e), span = std::ldexp(L.x.back(), -e) - lo;
  for (double v : L.x) L.u.push_back((std::ldexp(v, -e) - lo) / span);
  L.count.assign(L.x.size(), 0);
  for (double v : xs) {
    size_t i = index[v];
    L.level.push_back(static_cast<Eigen::Index>(i));
    L.count[i] += 1;
  }
  const size_t n = L.x.size();
  if (n <= kMaxBreakpointLevels) {
    for (size_t i = 0; i < n; ++i) L.candidates.push_back(i);
  } else {
    for (size_t k = 0; k < kMaxBreakpointLevels; ++k) L.candidates.push_back(k * (n - 1) / (kMaxBreakpointLevels - 1));
    L.candidates.erase(std::unique(L.candidates.begin(), L.candidates.end()), L.candidates.end());
  }
  return L;
}

// y as fitted: scaled by 2^-exponent (binary_exponent), so its squares stay finite and normal.
struct ScaledY {
  Eigen::VectorXd y;
  int exponent = 0;
};

ScaledY scale_y(std::span<const double> ys) {
  ScaledY s;
  s.exponent = binary_exponent(ys);
  s.y.resize(static_cast<Eigen::Index>(ys.size()));
  for (size_t i = 0; i < ys.size(); ++i) s.y[static_cast<Eigen::Index>(i)] = std::ldexp(ys[i], -s.exponent);
  return s;
}

// The ramp from level i to level j (0 up to level i, 1 from level j on) at one point.
double ramp_at(const Levels& L, Eigen::Index point, size_t i, size_t j) {
  double u = L.u[static_cast<size_t>(L.level[static_cast<size_t>(point)])];
  // Equal u at two levels: x so far apart that the smaller ones round to the same fraction of the span.
  if (!(L.u[j] > L.u[i])) return u > L.u[i] ? 1.0 : 0.0;
  return std::clamp((u - L.u[i]) / (L.u[j] - L.u[i]), 0.0, 1.0);
}

// BIC of a fit of n points with k parameters, from the rss of the scaled y: log(rss / n) of the
// data itself is log(scaled rss / n) + 2 * exponent * log 2, a shift the same for every model.
double bic(double scaled_rss, int exponent, int n, int k) {
  // A perfect fit would give log(0); a floor (relative to y's scale) keeps exact synthetic data comparable.
  return n * (std::log(std::max(scaled_rss / n, 1e-300)) + 2.0 * exponent * std::log(2.0)) + k * std::log(static_cast<double>(n));
}

// Least squares of the scaled y on [1 - r, r] with r the ramp from level i to level j, point by
// point: used for the chosen fits, so what is reported never depends on the prefix sums' rounding.
// Levels and rss are reported in y's own units (an rss beyond double is infinite).
KneeFit fit_ramp(const Levels& L, const ScaledY& s, size_t i, size_t j, const char* model, int parameters) {
  const Eigen::Index n = s.y.size();
  Eigen::MatrixXd A(n, 2);
  for (Eigen::Index p = 0; p < n; ++p) {
    double r = ramp_at(L, p, i, j);
    A(p, 0) = 1 - r;
    A(p, 1) = r;
  }
  Eigen::Vector2d c = A.colPivHouseholderQr().solve(s.y);
  double rss = (A * c - s.y).squaredNorm();
  KneeFit f;
  f.model = model;
  f.parameters = parameters;
  f.before = std::ldexp(c[0], s.exponent);
  f.after = std::ldexp(c[1], s.exponent);
  f.start = L.x[i];
  f.end = L.x[j];
  f.rss = std::ldexp(rss, 2 * s.exponent);
  f.bic = bic(rss, s.exponent, static_cast<int>(n), parameters);
  return f;
}

// Prefix sums over the levels of one y: count, count*u, count*u^2, sum y, u*sum y.
struct Prefix {
  std::vector<double> c, cu, cuu, y, uy;
  double n = 0, sum_y = 0, sum_yy = 0;
};

Prefix prefix_sums(const Levels& L, const Eigen::VectorXd& y) {
  const size_t m = L.x.size();
  std::vector<double> level_y(m, 0);
  Prefix p;
  double mean = y.mean();
  for (Eigen::Index i = 0; i < y.size(); ++i) {
    double d = y[i] - mean;  // centred: the rss below is a difference of sums
    level_y[static_cast<size_t>(L.level[static_cast<size_t>(i)])] += d;
    p.sum_yy += d * d;
  }
  p.c.assign(m + 1, 0);
  p.cu = p.cuu = p.y = p.uy = p.c;
  for (size_t i = 0; i < m; ++i) {
    p.c[i + 1] = p.c[i] + L.count[i];
    p.cu[i + 1] = p.cu[i] + L.count[i] * L.u[i];
    p.cuu[i + 1] = p.cuu[i] + L.count[i] * L.u[i] * L.u[i];
    p.y[i + 1] = p.y[i] + level_y[i];
    p.uy[i + 1] = p.uy[i] + L.u[i] * level_y[i];
  }
  p.n = p.c[m];
  p.sum_y = p.y[m];
  return p;
}

// The rss of the ramp from level i to level j (i < j) from the prefix sums, in O(1).
double ramp_rss(const Levels& L, const Prefix& p, size_t i, size_t j) {
  const size_t m = L.x.size();
  double u1 = L.u[i], w = L.u[j] - L.u[i];
  // levels i+1 .. j-1 lie on the ramp
  double C = p.c[j] - p.c[i + 1], X = p.cu[j] - p.cu[i + 1], XX = p.cuu[j] - p.cuu[i + 1];
  double Y = p.y[j] - p.y[i + 1], XY = p.uy[j] - p.uy[i + 1];
  double right_c = p.c[m] - p.c[j], right_y = p.y[m] - p.y[j];
  double s_r = right_c + (X - u1 * C) / w;
  double s_rr = right_c + (XX - 2 * u1 * X + u1 * u1 * C) / (w * w);
  double s_ry = right_y + (XY - u1 * Y) / w;
  double a11 = p.n - 2 * s_r + s_rr, a12 = s_r - s_rr, a22 = s_rr;
  double b1 = p.sum_y - s_ry, b2 = s_ry;
  double det = a11 * a22 - a12 * a12;
  if (!(det > 0)) return std::numeric_limits<double>::infinity();
  double a = (b1 * a22 - b2 * a12) / det, b = (a11 * b2 - a12 * b1) / det;
  return std::max(0.0, p.sum_yy - (a * b1 + b * b2));
}

std::vector<KneeFit> fit_all(const ScaledY& s, const Levels& L) {
  const Eigen::VectorXd& y = s.y;
  const int n = static_cast<int>(y.size());
  Prefix p = prefix_sums(L, y);
  std::vector<KneeFit> best(3);
  KneeFit flat;
  flat.model = "flat";
  flat.parameters = 1;
  double mean = y.mean(), rss = (y.array() - mean).square().sum();
  flat.before = flat.after = std::ldexp(mean, s.exponent);
  flat.start = flat.end = L.x.front();
  flat.rss = std::ldexp(rss, 2 * s.exponent);
  flat.bic = bic(rss, s.exponent, n, 1);
  best[0] = flat;
  // step: between adjacent levels (a ramp with no level inside it); plateau: a ramp over levels
  const auto& K = L.candidates;
  double best_step = std::numeric_limits<double>::infinity(), best_plateau = best_step;
  size_t step_i = 0, plateau_i = 0, plateau_j = 0;
  for (size_t i = 0; i + 1 < L.x.size(); ++i) {
    double rss = ramp_rss(L, p, i, i + 1);
    if (rss < best_step) best_step = rss, step_i = i;
  }
  for (size_t a = 0; a < K.size(); ++a)
    for (size_t b = a + 1; b < K.size(); ++b) {
      if (K[b] < K[a] + 2) continue;
      double rss = ramp_rss(L, p, K[a], K[b]);
      if (rss < best_plateau) best_plateau = rss, plateau_i = K[a], plateau_j = K[b];
    }
  best[1] = fit_ramp(L, s, step_i, step_i + 1, "step", 3);
  if (std::isfinite(best_plateau)) {
    best[2] = fit_ramp(L, s, plateau_i, plateau_j, "plateau", 4);
  } else {
    best.pop_back();  // fewer than 3 levels for a ramp
  }
  return best;
}

std::string fmt_x(double v) { return fmt::format("{:g}", v); }

// The level of x (one of L.x).
size_t level_of(const Levels& L, double x) { return static_cast<size_t>(std::lower_bound(L.x.begin(), L.x.end(), x) - L.x.begin()); }

}  // namespace

KneeResult detect_knee(std::span<const double> xs, std::span<const double> ys, const BootstrapOptions& opt) {
  if (xs.size() != ys.size()) throw std::invalid_argument("knee: x and y differ in length");
  Levels L = group(xs);
  if (xs.size() < 4 || L.x.size() < 3) throw std::invalid_argument("knee: need at least 4 points at 3 distinct x");
  ScaledY s = scale_y(ys);
  const Eigen::VectorXd& y = s.y;

  KneeResult r;
  r.candidates = fit_all(s, L);
  r.best = *std::min_element(r.candidates.begin(), r.candidates.end(), [](auto& a, auto& b) { return a.bic < b.bic; });
  if (r.best.model == "flat") {
    r.start_lo = r.end_hi = L.x.front();
    r.summary = fmt::format("flat at {:.4g}", r.best.before);
    return r;
  }
  // Residual bootstrap of the chosen model: new y = fitted + resampled residual, refit the same
  // model family, record where its change starts and ends. (In the scaled y's units.)
  Eigen::VectorXd fitted(y.size());
  const size_t i1 = level_of(L, r.best.start), i2 = level_of(L, r.best.end);
  const double before = std::ldexp(r.best.before, -s.exponent), after = std::ldexp(r.best.after, -s.exponent);
  for (Eigen::Index i = 0; i < y.size(); ++i) {
    double t = ramp_at(L, i, i1, i2);
    fitted[i] = (1 - t) * before + t * after;
  }
  Eigen::VectorXd resid = y - fitted;
  std::mt19937_64 rng(opt.seed);
  std::uniform_int_distribution<Eigen::Index> pick(0, y.size() - 1);
  std::vector<double> starts, ends;
  ScaledY boot = s;
  int resamples = std::min(opt.resamples, 400);  // each refit searches every breakpoint pair
  for (int k = 0; k < resamples; ++k) {
    for (Eigen::Index i = 0; i < y.size(); ++i) boot.y[i] = fitted[i] + resid[pick(rng)];
    auto fits = fit_all(boot, L);
    const KneeFit* same = nullptr;
    for (const auto& f : fits)
      if (f.model == r.best.model) same = &f;
    if (!same) continue;
    starts.push_back(same->start);
    ends.push_back(same->end);
  }
  r.resamples = static_cast<int>(starts.size());
  r.start_lo = quantile(starts, 0.025);
  r.end_hi = quantile(ends, 0.975);
  const char* dir = r.best.after >= r.best.before ? "steps up" : "steps down";
  r.summary = fmt::format("{} between {} and {} (from {:.4g} to {:.4g}; best fit: {} {}-{})", dir, fmt_x(r.start_lo),
                          fmt_x(r.end_hi), r.best.before, r.best.after, r.best.model, fmt_x(r.best.start), fmt_x(r.best.end));
  return r;
}
nlohmann::json KneeResult::to_json() const {
  auto fit = [](const KneeFit& f) {
    return nlohmann::json{{"model", f.model}, {"parameters", f.parameters}, {"rss", f.rss}, {"bic", f.bic},
                          {"before", f.before}, {"after", f.after}, {"start", f.start}, {"end", f.end}};
  };
  nlohmann::json c = nlohmann::json::array();
  for (const auto& f : candidates) c.push_back(fit(f));
  return {{"best", fit(best)}, {"candidates", c}, {"start_lo", start_lo}, {"end_hi", end_hi}, {"resamples", resamples},
          {"summary", summary}};
}

}  // namespace dlab
