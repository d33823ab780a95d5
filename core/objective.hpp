// The contract between the engine and an objective plugin.
//
// The engine owns λ, the step size, the (1 − ηλ) shrink, the projection and the
// averaging. An objective supplies only the data term ℓ(x, scores) of
//     P(W, b) = λ/2 ‖W‖² + (1/n) Σ_i ℓ(x_i, W·x_i + b)
// and a sub-gradient of ℓ with respect to the K scores, plus the radius of a
// ball known to contain the optimum W* (infinity when none is known).
#pragma once

#include <concepts>

#include "core/dataset.hpp"

namespace pegasos {

template <class O>
concept Objective = requires(const O& o, const RowView& x, const double* scores, double* coeff,
                             double lambda) {
  // K: the number of scores per example (1 for binary problems).
  { o.num_outputs() } -> std::convertible_to<int>;
  // ℓ(x, scores) ≥ 0, the data term for one example.
  { o.loss(x, scores) } -> std::convertible_to<double>;
  // coeff[k] = ∂ℓ/∂score_k (a sub-gradient). Returns false when all are 0, so
  // the engine can skip the update.
  { o.subgradient(x, scores, coeff) } -> std::convertible_to<bool>;
  // ‖W*‖ ≤ radius; the engine projects onto this ball when asked.
  { o.projection_radius(lambda) } -> std::convertible_to<double>;
};

// Optional: objectives that move the origin of the regulariser (transfer
// learning: W = W_R + U, the engine trains U) add a fixed per-example score
// offset through `void add_offset(const RowView&, double* scores) const`.
template <class O>
concept HasScoreOffset = requires(const O& o, const RowView& x, double* scores) {
  o.add_offset(x, scores);
};

// Optional: binary objectives whose loss is c·max(0, 1 − y·s) (plain, class-
// weighted and transfer hinge) give `double signed_cost(const RowView&) const`
// = y·c, which is all the dual solver (core/sdca.hpp) needs: α ∈ [0, c].
template <class O>
concept HingeDual = Objective<O> && requires(const O& o, const RowView& x) {
  { o.signed_cost(x) } -> std::convertible_to<double>;
};

// Optional: the Crammer-Singer multiclass hinge c·max(0, 1 + max_{r≠y} s_r − s_y)
// gives `double example_cost(const RowView&) const` = c for the dual solver.
template <class O>
concept MulticlassDual = Objective<O> && requires(const O& o, const RowView& x) {
  { o.example_cost(x) } -> std::convertible_to<double>;
};

}  // namespace pegasos
