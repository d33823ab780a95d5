// Kernel hinge: the Pegasos SVM objective in a reproducing-kernel Hilbert
// space, one binary problem per output (binary, or one-vs-all over K classes):
//
//   P(w_1..w_K) = Σ_c [ λ/2 ‖w_c‖² + (1/n) Σ_i max(0, 1 − y_ic ⟨w_c, φ(x_i)⟩) ],
//   y_ic = +1 if x_i belongs to class c (binary: class id 1), else −1,
//
// with k(x, x') = ⟨φ(x), φ(x')⟩ (objectives/kernels.hpp). No bias (the paper's
// kernel algorithm has none; an RBF or polynomial kernel with c₀ > 0 already
// contains a constant direction). Sub-gradient w.r.t. score s_c: −y_ic when
// y_ic s_c < 1, else 0 — exactly the binary Hinge, so the engine's plugin
// contract (core/objective.hpp) is reused unchanged. No projection: the
// kernel trainer never projects (the paper's Fig. 3 has no projection step),
// the radius 1/√λ is returned only to satisfy the contract.
//
// The α-count algorithm (Shalev-Shwartz, Singer, Srebro, Cotter, "Pegasos",
// Math. Program. 2011, Sec. 4, Fig. 3; mini-batches as in Sec. 2.3).
// Linear Pegasos without projection, last iterate, batch A_t of k examples:
//
//   w_{t+1} = (1 − 1/t) w_t + 1/(λ t k) Σ_{j ∈ A_t⁺} y_j φ(x_j),
//   A_t⁺ = { j ∈ A_t : y_j ⟨w_t, φ(x_j)⟩ < 1 }  (all judged with the same w_t).
//
// Claim: w_{t+1} = 1/(λ t k) Σ_i α_i y_i φ(x_i), where α_i counts how often i
// was in some A_s⁺, s ≤ t (with multiplicity if drawn twice in one batch).
// Induction: w_1 = 0 and (1 − 1/t) · 1/(λ(t−1)k) = 1/(λ t k), so the shrink
// only rescales the common factor and each violator adds one to its count.
// Hence, with α the counts before step t:
//
//   step t ≥ 2:  α_j += 1  for every j ∈ A_t with
//                y_j · 1/(λ (t−1) k) · Σ_i α_i y_i k(x_i, x_j) < 1;
//   step t = 1:  w_1 = 0, every example of A_1 is a violator;
//   output:      f(x) = 1/(λ T k) · Σ_i α_i y_i k(x_i, x)   (= ⟨w_{T+1}, φ(x)⟩).
//
// With k = 1 this is Fig. 3. The figure writes 1/(λt) in the test at step t;
// with the counts α_t of that step the iterate is w_t = 1/(λ(t−1)) Σ α y φ
// (the paper's own identity w_{t+1} = 1/(λt) Σ α_{t+1} y φ), which is what we
// use, so that the linear kernel reproduces the linear engine step for step.
// The 1/k comes from the (η_t/k) of the mini-batch sub-gradient: counts stay
// integers and the batch size enters only the common factor. Decision values
// f(x) are ⟨w, φ(x)⟩, directly comparable with a linear model's w·x.
//
// For K outputs the counts are per output: α_ic, coefficient α_ic y_ic.
#pragma once

#include <cmath>

#include "core/dataset.hpp"

namespace pegasos {

class KernelHinge {
 public:
  // outputs == 1: binary (class id 1 is +1); outputs == K ≥ 2: output c is
  // "class c vs the rest".
  explicit KernelHinge(int outputs) : k_(outputs) {}

  int num_outputs() const { return k_; }
  double sign(const RowView& x, int output) const {
    const int positive = k_ == 1 ? 1 : output;
    return x.label == positive ? 1.0 : -1.0;
  }
  // Σ_c max(0, 1 − y_c s_c): the OvA data term is the sum of the K binary ones.
  double loss(const RowView& x, const double* scores) const {
    double l = 0.0;
    for (int c = 0; c < k_; ++c) {
      const double margin = sign(x, c) * scores[c];
      if (margin < 1.0) l += 1.0 - margin;
    }
    return l;
  }
  bool subgradient(const RowView& x, const double* scores, double* coeff) const {
    bool any = false;
    for (int c = 0; c < k_; ++c) {
      const double y = sign(x, c);
      coeff[c] = y * scores[c] < 1.0 ? -y : 0.0;
      any = any || coeff[c] != 0.0;
    }
    return any;
  }
  double projection_radius(double lambda) const { return 1.0 / std::sqrt(lambda); }

 private:
  int k_;
};

}  // namespace pegasos
