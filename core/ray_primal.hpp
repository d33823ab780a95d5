// The best multiple of a primal point, for the exact gap checks of the dual
// solvers (core/sdca_binary.hpp, core/sdca_multiclass.hpp).
//
// Along the ray θ·w (θ > 0; the bias weight, a regularised feature in the dual
// solvers, scales with it) every hinge-type loss the dual solvers train is
// one kink per row:
//     binary (hinge, weighted, transfer):  c_i·max(0, (1 − y_i o_i) − θ·y_i w·x̃_i)
//     Crammer–Singer:  c_i·max(0, 1 + θ·(max_{r≠y_i} w_r·x̃_i − w_{y_i}·x̃_i))
// so P(θ) = (λ‖w‖²/2)θ² + (1/n)Σ_i c_i·max(0, a_i + θ b_i) is a convex
// piecewise quadratic whose minimiser is found exactly by walking its kinks
// θ_i = −a_i/b_i in order. P(θ*) − D(α) is a duality gap like P(w) − D(α):
// θ*·w is a primal point like any other, and it predicts the same labels as
// w (every score is scaled by θ* > 0).
//
// Why: near a large-C optimum the dual iterate's w(α) leaves many rows just
// inside their margins, each charged C times its shortfall, while a slightly
// longer w clears them for little extra ‖w‖². bench/c_sweep.py on 8 UCI sets
// (80 default runs, C = 0.01 .. 100): passes summed 35331 -> 25778, 21 runs
// fewer and 8 more — Musk hinge at C = 100 10707 -> 2586, Soybean
// Crammer–Singer at C = 100 7871 -> 6512; Glass at C = 0.01 the most the
// other way (Crammer–Singer 144 -> 254), the stopping rule's predictions
// seeing other primal values.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

namespace pegasos {

struct RayPoint {
  double theta = 1.0;
  double primal = std::numeric_limits<double>::infinity();  // P(θ·w); infinity: not computed
};

// θ in [kRayLow, kRayHigh] only: the kinks walked are those of the rows
// whose margin lies within a factor of 2 of 1.
inline constexpr double kRayLow = 0.5, kRayHigh = 2.0;

namespace ray_detail {

// The slope's walk through kinks [first, last) sorted by position, from θ
// with slope `slope` (the slope just right of θ): where it reaches 0, or
// false with θ and slope moved past the last kink.
inline bool walk_kinks(const std::pair<double, double>* first, const std::pair<double, double>* last, double quad,
                       double& theta, double& slope) {
  for (; first != last; ++first) {
    const double zero = theta - slope / quad;  // where the slope's line crosses 0
    if (zero <= first->first) {
      theta = zero;
      return true;
    }
    slope += quad * (first->first - theta) + first->second;
    theta = first->first;
    if (slope >= 0.0) return true;
  }
  return false;
}

}  // namespace ray_detail

// The minimiser of P(θ) = quad·θ²/2 + (1/n)Σ_i c(i)·max(0, a(i) + θ b[i]) over
// [kRayLow, kRayHigh] and its value, n = b.size(); `kinks` is scratch. Skipped
// (primal infinity) where quad ≤ 0. Linear time: the kinks' jumps are summed
// in kBins equal bins of the range, the slope walks bin by bin to the one
// where it reaches 0, and only that bin's kinks are sorted (sorting all of
// them took 60 ms for the 500k rows near the margin of an RCV1-shaped file,
// a fifth of a pass).
template <class A, class C>
RayPoint best_ray_point(double quad, const std::vector<double>& b, A&& a, C&& c,
                        std::vector<std::pair<double, double>>& kinks) {
  constexpr std::size_t kBins = 1024;
  RayPoint out;
  const std::size_t n = b.size();
  if (n == 0 || !(quad > 0.0) || !std::isfinite(quad)) return out;
  const double inv_n = 1.0 / static_cast<double>(n), scale = kBins / (kRayHigh - kRayLow);
  const auto bin_of = [&](double kink) { return std::min(kBins - 1, static_cast<std::size_t>((kink - kRayLow) * scale)); };
  // The slope just right of kRayLow, and the kinks strictly inside the range
  // with the slope's jump there (c·|b|/n: a row switching on or off).
  double slope = quad * kRayLow;
  std::vector<double> jumps(kBins, 0.0);
  kinks.clear();
  for (std::size_t i = 0; i < n; ++i) {
    const double ci = c(i), ai = a(i), bi = b[i];
    if (!(ci > 0.0) || bi == 0.0) continue;  // no loss, or a constant one: no slope
    const double at_low = ai + kRayLow * bi;
    if (at_low > 0.0 || (at_low == 0.0 && bi > 0.0)) slope += ci * bi * inv_n;
    const double kink = -ai / bi;
    if (kink > kRayLow && kink < kRayHigh) {
      kinks.emplace_back(kink, ci * std::abs(bi) * inv_n);
      jumps[bin_of(kink)] += kinks.back().second;
    }
  }
  double theta = kRayLow;
  bool found = slope >= 0.0;
  for (std::size_t bin = 0; bin < kBins && !found; ++bin) {
    const double end = bin + 1 == kBins ? kRayHigh : kRayLow + static_cast<double>(bin + 1) / scale;
    if (slope + quad * (end - theta) + jumps[bin] < 0.0) {  // still falling past the bin: on to the next
      slope += quad * (end - theta) + jumps[bin];
      theta = end;
      continue;
    }
    std::vector<std::pair<double, double>> here;  // the bin where P turns: its kinks in order
    for (const auto& k : kinks) {
      if (bin_of(k.first) == bin) here.push_back(k);
    }
    std::sort(here.begin(), here.end());
    if (!ray_detail::walk_kinks(here.data(), here.data() + here.size(), quad, theta, slope)) theta -= slope / quad;
    found = true;
  }
  if (!found) theta = std::min(theta - slope / quad, kRayHigh);
  double loss = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const double ci = c(i);
    if (ci > 0.0) loss += ci * std::max(0.0, a(i) + theta * b[i]);
  }
  out.theta = theta;
  out.primal = quad / 2 * theta * theta + loss * inv_n;
  return out;
}

// A dual solver's best multiple at its last exact check: the rows' slopes b
// (filled by the check), the kinks' scratch, θ*·w where it was lower than
// P(w), and the visit count t it was found at.
struct RayCheck {
  std::vector<double> b, w;
  std::vector<std::pair<double, double>> kinks;
  RayPoint point;
  std::uint64_t at = std::numeric_limits<std::uint64_t>::max();

  // After the check at visit t has filled b: the best multiple (best_ray_point).
  template <class A, class C>
  void find(double quad, A&& a, C&& c, std::uint64_t t) {
    point = best_ray_point(quad, b, std::forward<A>(a), std::forward<C>(c), kinks);
    at = t;
  }
  // θ*·v, kept in w.
  const std::vector<double>& scaled(const std::vector<double>& v) {
    w = v;
    for (double& x : w) x *= point.theta;
    return w;
  }
  // A run's result at the checked w becomes θ*·w, with its primal value.
  template <class Result>
  void scale(Result& result) const {
    for (double& x : result.weights) x *= point.theta;
    for (double& x : result.bias) x *= point.theta;
    result.objective = point.primal;
  }
};

}  // namespace pegasos
