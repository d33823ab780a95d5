// Hinge loss: the standard primal SVM objective of Pegasos.
//
//   P(w, b) = λ/2 ‖w‖² + (1/n) Σ_i max(0, 1 − y_i (w·x_i + b)),   y_i ∈ {−1, +1}
//
// Sub-gradient of the data term w.r.t. the score s = w·x + b:
//   ∂ℓ/∂s = −y  if y·s < 1,  else 0.
// Projection radius 1/√λ: by strong duality the optimum satisfies
// ‖w*‖² ≤ (1/λ)·(mean dual variable) ≤ 1/λ, since the dual variables lie in
// [0, 1] (Shalev-Shwartz, Singer, Srebro, Cotter, "Pegasos", Math. Program.
// 2011, Sec. 2, Theorem 1 and the remark on projection).
//
// Sample weights s_i (RowView::weight, mean 1; README § Sample weights)
// multiply example i's loss and sub-gradient, and its dual bound: α_i ∈
// [0, s_i], so the same argument gives ‖w*‖ ≤ √(s̄/λ), s̄ = (1/n)Σ s_i.
#pragma once

#include <cmath>

#include "core/dataset.hpp"

namespace pegasos {

class Hinge {
 public:
  // Examples whose class id equals `positive_class` are +1, all others −1
  // (1 for a binary dataset; class k for one-vs-all).
  // mean_weight = s̄ = (1/n) Σ_i s_i over the training set (1 without weights).
  explicit Hinge(int positive_class = 1, double mean_weight = 1.0)
      : positive_(positive_class), mean_weight_(mean_weight) {}

  int num_outputs() const { return 1; }
  double sign(const RowView& x) const { return x.label == positive_ ? 1.0 : -1.0; }

  double loss(const RowView& x, const double* scores) const {
    const double margin = sign(x) * scores[0];
    return margin < 1.0 ? x.weight * (1.0 - margin) : 0.0;
  }
  bool subgradient(const RowView& x, const double* scores, double* coeff) const {
    const double y = sign(x);
    coeff[0] = y * scores[0] < 1.0 ? -y * x.weight : 0.0;
    return coeff[0] != 0.0;
  }
  double projection_radius(double lambda) const { return std::sqrt(mean_weight_) / std::sqrt(lambda); }
  double signed_cost(const RowView& x) const { return sign(x) * x.weight; }

 private:
  int positive_;
  double mean_weight_;
};

}  // namespace pegasos
