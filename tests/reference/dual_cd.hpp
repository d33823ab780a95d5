// Independent reference solver for the linear SVM primal
//     P(w) = λ/2 ‖w‖² + (1/n) Σ_i max(0, 1 − y_i w·x_i)
// by dual coordinate descent (Hsieh et al., ICML 2008), written from the math
// with dense vectors and no code shared with the engine. With C = 1/(λn) the
// dual is  max_α Σα_i − ½‖Σ α_i y_i x_i‖²,  0 ≤ α_i ≤ C,  and w = Σ α_i y_i x_i.
// Run to a tiny projected-gradient violation it gives P* to ~1e-10.
// Per-example costs c_i bound α_i ≤ C·c_i; offsets o_i shift every score
// (the margin target becomes 1 − y_i o_i), which is the transfer objective in
// u = w − w_R.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

namespace reference {

struct Problem {
  std::vector<std::vector<double>> x;  // dense rows
  std::vector<double> y;               // ±1
  std::vector<double> weight;          // per-example cost multiplier (1 = plain hinge)
  std::vector<double> offset;          // fixed score offset o_i (transfer: w_R·x_i); empty = 0
};

inline double primal(const Problem& p, const std::vector<double>& w, double lambda) {
  double loss = 0.0;
  for (std::size_t i = 0; i < p.x.size(); ++i) {
    double s = 0.0;
    for (std::size_t j = 0; j < w.size(); ++j) s += w[j] * p.x[i][j];
    const double c = p.weight.empty() ? 1.0 : p.weight[i];
    if (!p.offset.empty()) s += p.offset[i];
    loss += c * std::max(0.0, 1.0 - p.y[i] * s);
  }
  double sq = 0.0;
  for (double v : w) sq += v * v;
  return lambda / 2 * sq + loss / static_cast<double>(p.x.size());
}

// Returns w*. Deterministic (cyclic order).
inline std::vector<double> solve(const Problem& p, double lambda, double tolerance = 1e-12,
                                 int max_sweeps = 200000) {
  const std::size_t n = p.x.size(), d = p.x.empty() ? 0 : p.x[0].size();
  const double C = 1.0 / (lambda * static_cast<double>(n));
  std::vector<double> alpha(n, 0.0), w(d, 0.0), q(n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    for (double v : p.x[i]) q[i] += v * v;
  }
  for (int sweep = 0; sweep < max_sweeps; ++sweep) {
    double max_violation = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      if (q[i] == 0.0) continue;
      const double upper = C * (p.weight.empty() ? 1.0 : p.weight[i]);
      double s = 0.0;
      for (std::size_t j = 0; j < d; ++j) s += w[j] * p.x[i][j];
      if (!p.offset.empty()) s += p.offset[i];
      const double g = p.y[i] * s - 1.0;  // gradient of the dual (minimisation form)
      double pg = g;
      if (alpha[i] == 0.0) pg = std::min(g, 0.0);
      else if (alpha[i] == upper) pg = std::max(g, 0.0);
      max_violation = std::max(max_violation, std::abs(pg));
      if (pg == 0.0) continue;
      const double old = alpha[i];
      alpha[i] = std::clamp(old - g / q[i], 0.0, upper);
      const double delta = (alpha[i] - old) * p.y[i];
      for (std::size_t j = 0; j < d; ++j) w[j] += delta * p.x[i][j];
    }
    if (max_violation < tolerance) break;
  }
  return w;
}

}  // namespace reference
