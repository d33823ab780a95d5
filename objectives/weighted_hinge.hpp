// Class-weighted hinge loss, for imbalanced data (e.g. spam filtering).
//
//   P(w, b) = λ/2 ‖w‖² + (1/n) Σ_i c_{y_i} · max(0, 1 − y_i (w·x_i + b))
//
// With integer costs this is exactly the plain hinge objective on data where
// each example of class y is repeated c_y times (up to the 1/n normalisation,
// which the weights keep at the original n). "balanced" costs are
// c_k = n / (K · n_k), so c₊ = n/(2n₊), c₋ = n/(2n₋) for two classes.
//
// Sub-gradient w.r.t. the score s: −c_y·y if y·s < 1, else 0; its norm is at
// most c_max·R, which only changes the constant of the convergence bound — the
// step 1/(λt) depends on the λ-strong convexity alone and stays the same.
//
// Projection radius √(c̄/λ) with c̄ = (1/n) Σ_i c_{y_i}: in the dual the
// variables α_i lie in [0, c_{y_i}], and strong duality gives
//   λ‖w*‖² = (1/n)Σ α_i − (1/n)Σ c_{y_i} ξ_i ≤ c̄
// (the unweighted case c ≡ 1 is Pegasos' 1/√λ; Shalev-Shwartz et al. 2011,
// Sec. 2 and Theorem 1; the weighted dual as in LIBLINEAR, Fan et al. 2008).
// Sample weights s_i (RowView::weight) multiply the class cost: c_i = s_i c_{y_i}
// everywhere above, c̄ = (1/n) Σ_i s_i c_{y_i}.
#pragma once

#include <cmath>
#include <vector>

#include "core/dataset.hpp"

namespace pegasos {

class WeightedHinge {
 public:
  // cost[k] is the weight of class id k; examples of `positive_class` are +1.
  // mean_cost = (1/n) Σ_i s_i cost[y_i] over the training set.
  WeightedHinge(int positive_class, std::vector<double> cost, double mean_cost)
      : positive_(positive_class), cost_(std::move(cost)), mean_cost_(mean_cost) {}

  int num_outputs() const { return 1; }
  double loss(const RowView& x, const double* scores) const {
    const double y = x.label == positive_ ? 1.0 : -1.0;
    const double margin = y * scores[0];
    return margin < 1.0 ? cost(x) * (1.0 - margin) : 0.0;
  }
  bool subgradient(const RowView& x, const double* scores, double* coeff) const {
    const double y = x.label == positive_ ? 1.0 : -1.0;
    coeff[0] = y * scores[0] < 1.0 ? -cost(x) * y : 0.0;
    return coeff[0] != 0.0;
  }
  double projection_radius(double lambda) const { return std::sqrt(mean_cost_) / std::sqrt(lambda); }
  double signed_cost(const RowView& x) const { return (x.label == positive_ ? 1.0 : -1.0) * cost(x); }

 private:
  double cost(const RowView& x) const { return cost_[static_cast<std::size_t>(x.label)] * x.weight; }
  int positive_;
  std::vector<double> cost_;
  double mean_cost_;
};

}  // namespace pegasos
