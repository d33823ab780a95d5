// Independent reference for the multiclass hinge (Crammer–Singer) primal
//   P(W) = λ/2 ‖W‖² + (1/n) Σ_i max(0, 1 + max_{r≠y_i} w_r·x_i − w_{y_i}·x_i)
// by deterministic full-batch sub-gradient descent with step 1/(λt) and the
// average of the last half of the iterates (suffix averaging, Rakhlin, Shamir &
// Sridharan, ICML 2012). Dense, no code shared with the engine; slow but fine
// for tiny problems.
#pragma once

#include <algorithm>
#include <vector>

namespace reference {

struct MulticlassProblem {
  std::vector<std::vector<double>> x;
  std::vector<int> y;  // 0..K-1
  int classes = 0;
};

inline double multiclass_primal(const MulticlassProblem& p, const std::vector<std::vector<double>>& W, double lambda) {
  double loss = 0.0, sq = 0.0;
  for (const auto& w : W) {
    for (double v : w) sq += v * v;
  }
  for (std::size_t i = 0; i < p.x.size(); ++i) {
    std::vector<double> s(p.classes, 0.0);
    for (int r = 0; r < p.classes; ++r) {
      for (std::size_t j = 0; j < p.x[i].size(); ++j) s[r] += W[r][j] * p.x[i][j];
    }
    double worst = -1e300;
    for (int r = 0; r < p.classes; ++r) {
      if (r != p.y[i]) worst = std::max(worst, s[r]);
    }
    loss += std::max(0.0, 1.0 + worst - s[p.y[i]]);
  }
  return lambda / 2 * sq + loss / static_cast<double>(p.x.size());
}

inline std::vector<std::vector<double>> multiclass_solve(const MulticlassProblem& p, double lambda, int T) {
  const std::size_t d = p.x[0].size();
  std::vector<std::vector<double>> W(p.classes, std::vector<double>(d, 0.0)), avg = W;
  int averaged = 0;
  for (int t = 1; t <= T; ++t) {
    std::vector<std::vector<double>> g(p.classes, std::vector<double>(d, 0.0));
    for (std::size_t i = 0; i < p.x.size(); ++i) {
      std::vector<double> s(p.classes, 0.0);
      for (int r = 0; r < p.classes; ++r) {
        for (std::size_t j = 0; j < d; ++j) s[r] += W[r][j] * p.x[i][j];
      }
      int worst = p.y[i] == 0 ? 1 : 0;
      for (int r = 0; r < p.classes; ++r) {
        if (r != p.y[i] && s[r] > s[worst]) worst = r;
      }
      if (1.0 + s[worst] - s[p.y[i]] > 0) {
        for (std::size_t j = 0; j < d; ++j) {
          g[worst][j] += p.x[i][j];
          g[p.y[i]][j] -= p.x[i][j];
        }
      }
    }
    const double eta = 1.0 / (lambda * t);
    for (int r = 0; r < p.classes; ++r) {
      for (std::size_t j = 0; j < d; ++j) {
        W[r][j] -= eta * (lambda * W[r][j] + g[r][j] / static_cast<double>(p.x.size()));
      }
    }
    if (t > T / 2) {
      ++averaged;
      for (int r = 0; r < p.classes; ++r) {
        for (std::size_t j = 0; j < d; ++j) avg[r][j] += (W[r][j] - avg[r][j]) / averaged;
      }
    }
  }
  return avg;
}

}  // namespace reference
