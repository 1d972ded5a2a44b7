#include "dispatchlab/harness/knee.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <set>
#include <stdexcept>

#include <Eigen/Dense>
#include <fmt/format.h>

namespace dlab {

namespace {

struct Data {
  Eigen::VectorXd x, y;
  std::vector<double> levels;  // distinct x, sorted
};

// Least squares of y on [1 - r, r] with r(x) the ramp from x1 to x2 (0 before, 1 after).
KneeFit fit_ramp(const Data& d, double x1, double x2, const char* model) {
  const Eigen::Index n = d.x.size();
  Eigen::MatrixXd A(n, 2);
  for (Eigen::Index i = 0; i < n; ++i) {
    double r = x2 > x1 ? std::clamp((d.x[i] - x1) / (x2 - x1), 0.0, 1.0) : (d.x[i] > x1 ? 1.0 : 0.0);
    A(i, 0) = 1 - r;
    A(i, 1) = r;
  }
  Eigen::Vector2d c = A.colPivHouseholderQr().solve(d.y);
  KneeFit f;
  f.model = model;
  f.before = c[0];
  f.after = c[1];
  f.start = x1;
  f.end = x2;
  f.rss = (A * c - d.y).squaredNorm();
  return f;
}

double bic(double rss, int n, int k) {
  // A perfect fit would give log(0); a floor keeps exact synthetic data comparable.
  return n * std::log(std::max(rss / n, 1e-300)) + k * std::log(static_cast<double>(n));
}

std::vector<KneeFit> fit_all(const Data& d) {
  const int n = static_cast<int>(d.x.size());
  std::vector<KneeFit> best(3);
  KneeFit flat;
  flat.model = "flat";
  flat.parameters = 1;
  flat.before = flat.after = d.y.mean();
  flat.start = flat.end = d.levels.front();
  flat.rss = (d.y.array() - flat.before).square().sum();
  flat.bic = bic(flat.rss, n, 1);
  best[0] = flat;
  best[1].bic = best[2].bic = std::numeric_limits<double>::infinity();
  const auto& L = d.levels;
  for (size_t i = 0; i + 1 < L.size(); ++i) {
    // step between adjacent levels: a ramp with no level inside it
    KneeFit s = fit_ramp(d, L[i], L[i + 1], "step");
    s.parameters = 3;
    s.bic = bic(s.rss, n, 3);
    if (s.bic < best[1].bic) best[1] = s;
    for (size_t j = i + 2; j < L.size(); ++j) {
      KneeFit p = fit_ramp(d, L[i], L[j], "plateau");
      p.parameters = 4;
      p.bic = bic(p.rss, n, 4);
      if (p.bic < best[2].bic) best[2] = p;
    }
  }
  if (!std::isfinite(best[2].bic)) best.pop_back();  // fewer than 3 levels for a ramp
  return best;
}

std::string fmt_x(double v) { return fmt::format("{:g}", v); }

}  // namespace

KneeResult detect_knee(std::span<const double> xs, std::span<const double> ys, const BootstrapOptions& opt) {
  if (xs.size() != ys.size()) throw std::invalid_argument("knee: x and y differ in length");
  std::set<double> distinct(xs.begin(), xs.end());
  if (xs.size() < 4 || distinct.size() < 3) throw std::invalid_argument("knee: need at least 4 points at 3 distinct x");
  Data d;
  d.x = Eigen::Map<const Eigen::VectorXd>(xs.data(), static_cast<Eigen::Index>(xs.size()));
  d.y = Eigen::Map<const Eigen::VectorXd>(ys.data(), static_cast<Eigen::Index>(ys.size()));
  d.levels.assign(distinct.begin(), distinct.end());

  KneeResult r;
  r.candidates = fit_all(d);
  r.best = *std::min_element(r.candidates.begin(), r.candidates.end(), [](auto& a, auto& b) { return a.bic < b.bic; });
  if (r.best.model == "flat") {
    r.start_lo = r.end_hi = d.levels.front();
    r.summary = fmt::format("flat at {:.4g}", r.best.before);
    return r;
  }
  // Residual bootstrap of the chosen model: new y = fitted + resampled residual, refit the same
  // model family, record where its change starts and ends.
  Eigen::VectorXd fitted(d.x.size());
  for (Eigen::Index i = 0; i < d.x.size(); ++i) {
    const auto& b = r.best;
    double t = b.end > b.start ? std::clamp((d.x[i] - b.start) / (b.end - b.start), 0.0, 1.0) : (d.x[i] > b.start ? 1.0 : 0.0);
    fitted[i] = (1 - t) * b.before + t * b.after;
  }
  Eigen::VectorXd resid = d.y - fitted;
  std::mt19937_64 rng(opt.seed);
  std::uniform_int_distribution<Eigen::Index> pick(0, d.x.size() - 1);
  std::vector<double> starts, ends;
  Data boot = d;
  int resamples = std::min(opt.resamples, 400);  // each refit tries every breakpoint pair
  for (int k = 0; k < resamples; ++k) {
    for (Eigen::Index i = 0; i < d.x.size(); ++i) boot.y[i] = fitted[i] + resid[pick(rng)];
    auto fits = fit_all(boot);
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
