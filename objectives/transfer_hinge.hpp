// Transfer learning: hinge loss regularised toward a source model w_R.
//
//   P(w, b) = λ/2 ‖w − w_R‖² + (1/n) Σ_i max(0, 1 − y_i (w·x_i + b))
//   (+ λ/2 (b − b_R)² with a regularised bias feature)
//
// The engine trains u = w − w_R with its usual scale trick; this plugin adds
// the fixed offset o_i = w_R·x_i + b_R (the source model's whole score,
// computed once per example) to every score, so a step still costs O(nnz).
// The engine's own bias is u_b = b − b_R: with a regularised bias feature the
// intercept is pulled toward the source's too (drivers/registry.cpp adds w_R
// and b_R back). Large λ keeps the model at the source's; w_R = 0, b_R = 0 is
// plain hinge.
//
// Sub-gradient w.r.t. s = u·x + o + u_b: −y if y·s < 1, else 0 (as for hinge).
//
// Projection radius for u: in u the problem is a hinge SVM whose example i has
// margin target 1 − y_i o_i. Its dual has α_i ∈ [0, 1] and, at the optimum,
//   λ‖u*‖² = (1/n) Σ α_i (1 − y_i o_i) − (1/n) Σ ξ_i ≤ (1/n) Σ max(0, 1 − y_i o_i) = L_R,
// the hinge loss of the source model on the target data. So ‖u*‖ ≤ √(L_R/λ)
// (with w_R = 0, L_R = 1 and this is Pegasos' 1/√λ; Shalev-Shwartz et al.
// 2011, Sec. 2). A good source model gives a small ball, a useless one 1/√λ.
// Sample weights s_i (RowView::weight) multiply the loss, the sub-gradient and
// the bound α_i ≤ s_i, and so L_R = (1/n) Σ s_i max(0, 1 − y_i o_i).
#pragma once

#include <cmath>
#include <vector>

#include "core/dataset.hpp"

namespace pegasos {

class TransferHinge {
 public:
  // offset[i] = w_R·x_i + b_R for training row i; source_loss = L_R ≥ 0.
  TransferHinge(int positive_class, std::vector<double> offset, double source_loss)
      : positive_(positive_class), offset_(std::move(offset)), source_loss_(source_loss) {}

  int num_outputs() const { return 1; }
  void add_offset(const RowView& x, double* scores) const { scores[0] += offset_[x.index]; }
  double loss(const RowView& x, const double* scores) const {
    const double margin = sign(x) * scores[0];
    return margin < 1.0 ? x.weight * (1.0 - margin) : 0.0;
  }
  bool subgradient(const RowView& x, const double* scores, double* coeff) const {
    const double y = sign(x);
    coeff[0] = y * scores[0] < 1.0 ? -y * x.weight : 0.0;
    return coeff[0] != 0.0;
  }
  double projection_radius(double lambda) const {
    // Never smaller than a tiny positive radius (L_R = 0: w_R already separates
    // the target data with margin, and u* = 0).
    return std::sqrt(std::max(source_loss_, 1e-12)) / std::sqrt(lambda);
  }
  double signed_cost(const RowView& x) const { return sign(x) * x.weight; }

 private:
  double sign(const RowView& x) const { return x.label == positive_ ? 1.0 : -1.0; }
  int positive_;
  std::vector<double> offset_;
  double source_loss_;
};

}  // namespace pegasos
