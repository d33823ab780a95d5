// Multiclass hinge loss (Crammer & Singer, JMLR 2001), one slack per example:
//
//   P(W, b) = λ/2 ‖W‖²_F + (1/n) Σ_i c_{y_i} · max(0, 1 + max_{r≠y_i} s_r − s_{y_i}),
//   s_r = w_r·x_i + b_r.
//
// Sub-gradient w.r.t. the K scores: when the loss is positive, with
// r* = argmax_{r≠y} s_r (the most violating class), ∂ℓ/∂s_y = −c_y and
// ∂ℓ/∂s_{r*} = +c_y; all other entries 0. So a Pegasos step touches two
// columns of W: O(nnz · 2) for the update after the O(nnz · K) scores.
//
// Projection radius √(c̄/λ), c̄ = (1/n)Σ c_{y_i} (1/√λ without class costs):
// the dual variables α_{i,r} ≥ 0 satisfy Σ_r α_{i,r} ≤ c_{y_i}, and strong
// duality gives λ‖W*‖² = (1/n)Σ_{i,r} α_{i,r} − (1/n)Σ c_{y_i} ξ_i ≤ c̄ — the same
// argument as for the binary hinge (Shalev-Shwartz et al. 2011, Sec. 2).
// Sample weights s_i (RowView::weight) multiply the class cost: c_i = s_i c_{y_i},
// c̄ = (1/n) Σ_i s_i c_{y_i}.
#pragma once

#include <cmath>
#include <vector>

#include "core/dataset.hpp"

namespace pegasos {

class MulticlassHinge {
 public:
  // cost empty = all classes weigh 1; mean_cost = (1/n) Σ_i s_i cost[y_i].
  MulticlassHinge(int classes, std::vector<double> cost = {}, double mean_cost = 1.0)
      : k_(classes), cost_(std::move(cost)), mean_cost_(mean_cost) {}

  int num_outputs() const { return k_; }
  double loss(const RowView& x, const double* scores) const {
    const int r = most_violating(x.label, scores);
    const double l = 1.0 + scores[r] - scores[x.label];
    return l > 0.0 ? cost(x) * l : 0.0;
  }
  bool subgradient(const RowView& x, const double* scores, double* coeff) const {
    for (int r = 0; r < k_; ++r) coeff[r] = 0.0;
    const int r = most_violating(x.label, scores);
    if (1.0 + scores[r] - scores[x.label] <= 0.0) return false;
    coeff[x.label] = -cost(x);
    coeff[r] = cost(x);
    return true;
  }
  double projection_radius(double lambda) const { return std::sqrt(mean_cost_) / std::sqrt(lambda); }
  // The dual solver (core/sdca.hpp): the cost c_{y_i} of example i.
  double example_cost(const RowView& x) const { return cost(x); }

 private:
  int most_violating(int y, const double* scores) const {
    int best = y == 0 ? 1 : 0;
    for (int r = 0; r < k_; ++r) {
      if (r != y && scores[r] > scores[best]) best = r;
    }
    return best;
  }
  double cost(const RowView& x) const {
    return (cost_.empty() ? 1.0 : cost_[static_cast<std::size_t>(x.label)]) * x.weight;
  }
  int k_;
  std::vector<double> cost_;
  double mean_cost_;
};

}  // namespace pegasos
