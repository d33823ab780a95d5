// Warm starts (`init_model`): what the dual solvers make of an earlier
// model's weights. The model stores no dual variables, and SDCA needs a dual
// point α with w = w(α) (its steps keep that pair consistent), so the dual
// point is guessed from the complementary slackness (KKT) conditions of the
// old model's margins on the new data, and w is recomputed from it:
//   binary (hinge family), g_i = 1 − y_i (w_old·x_i + b_old + o_i):
//     α_i = c_i if g_i > δ (inside the margin or misclassified), 0 if g_i < −δ
//     (beyond the margin), linear in between (c_i/2 at the margin itself);
//   Crammer–Singer, v_i = 1 + max_{r≠y_i} s_r − s_{y_i} (r* the argmax, the
//     first on ties): α_i^{y_i} = C_i·ramp(v_i), α_i^{r*} = −α_i^{y_i}, the other
//     classes 0 (an example's whole weight on its most violating class).
// At the old optimum on the old data these are the optimal α of every
// example off the margin; examples already classified with room to spare
// start (and, with shrinking, mostly stay) at 0. δ = kWarmMarginBand. The
// guess is then scaled by the θ ∈ [0, 1] that maximises D(θα), so the warm
// dual point is never worse than the cold one (α = 0). The free support
// vectors' α are not determined by the margins, and on dense data a few
// wrong ones move w(α) far from w_old: bench/warm_start.py measures what this
// start saves (README § Warm start).
// Pegasos starts at the old weights themselves (core/engine.hpp); these α
// only seed the dual mirror its certificate starts from.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/dataset.hpp"
#include "core/objective.hpp"
#include "core/training.hpp"

namespace pegasos {

// Half-width of the band of g (or v) around the margin where α goes
// linearly from 0 to its cap: margins are never exactly 1 in floating point,
// and free support vectors sit near it.
inline constexpr double kWarmMarginBand = 0.5;

// The fraction of its cap an example's dual variable starts at, from g.
inline double warm_ramp(double g) {
  return std::clamp(0.5 + g / (2.0 * kWarmMarginBand), 0.0, 1.0);
}

// α ← θα with θ = argmax_{θ∈[0,1]} θ·linear − θ²/2·quadratic (a dual that is
// linear minus quadratic in α): the guess scaled to its best multiple, so a
// warm dual point is never below D(0), the cold start.
inline void scale_into_box(std::vector<double>& alpha, double linear, double quadratic) {
  const double theta = quadratic > 0.0 ? std::clamp(linear / quadratic, 0.0, 1.0) : 1.0;
  if (theta == 1.0) return;
  for (double& a : alpha) a *= theta;
}

// Binary: α_i ∈ [0, c_i] (core/sdca_binary.hpp's parameterisation).
template <HingeDual O>
std::vector<double> alpha_from_margins(const Dataset& data, const O& objective, const WarmStart& warm, double lambda,
                                       double bias_value) {
  std::vector<double> alpha(data.size());
  const auto dim = static_cast<std::uint32_t>(warm.weights.size());
  for (std::size_t i = 0; i < data.size(); ++i) {
    const RowView x = data.row(i);
    double score = 0.0;
    dense_scores(objective, warm.weights, warm.bias, dim, x, &score);
    const double yc = objective.signed_cost(x);
    alpha[i] = std::abs(yc) * warm_ramp(1.0 - std::copysign(1.0, yc) * score);
  }
  {  // the best multiple θ ∈ [0, 1]: D(θα) = θ·lin/n − λ/2 θ² ‖w(α)‖²
    std::vector<double> w(warm.weights.size() + 1, 0.0);
    double lin = 0.0;
    const double lambda_n = lambda * static_cast<double>(data.size());
    for (std::size_t i = 0; i < data.size(); ++i) {
      if (alpha[i] == 0.0) continue;
      const RowView x = data.row(i);
      const double y = std::copysign(1.0, objective.signed_cost(x));
      double o = 0.0;
      if constexpr (HasScoreOffset<O>) objective.add_offset(x, &o);
      lin += alpha[i] * (1.0 - y * o);
      for (std::uint32_t j = 0; j < x.nnz; ++j) w[x.indices[j]] += alpha[i] * y * x.values[j] / lambda_n;
      w.back() += alpha[i] * y * bias_value / lambda_n;
    }
    scale_into_box(alpha, lin / static_cast<double>(data.size()), lambda * squared_norm(w));
  }
  return alpha;
}

// Crammer–Singer: n × K, α_i^{y_i} ≤ C_i = c_i/(λn), α_i^m ≤ 0 otherwise, Σ_m α_i^m = 0
// (core/sdca_multiclass.hpp's parameterisation).
template <MulticlassDual O>
std::vector<double> alpha_from_margins(const Dataset& data, const O& objective, const WarmStart& warm,
                                       double lambda, double bias_value) {
  const std::size_t n = data.size();
  const std::size_t K = static_cast<std::size_t>(objective.num_outputs());
  const auto dim = static_cast<std::uint32_t>(warm.weights.size() / K);
  std::vector<double> alpha(n * K, 0.0), scores(K);
  for (std::size_t i = 0; i < n; ++i) {
    const RowView x = data.row(i);
    dense_scores(objective, warm.weights, warm.bias, dim, x, scores.data());
    const std::size_t y = static_cast<std::size_t>(x.label);
    std::size_t worst = y == 0 ? 1 : 0;
    for (std::size_t m = 0; m < K; ++m) {
      if (m != y && scores[m] > scores[worst]) worst = m;
    }
    const double cap = objective.example_cost(x) / (lambda * static_cast<double>(n));
    const double a = cap * warm_ramp(1.0 + scores[worst] - scores[y]);
    alpha[i * K + y] = a;
    alpha[i * K + worst] = -a;
  }
  // The best multiple θ ∈ [0, 1]: D(θα) = λ(θ Σ_i α_i^{y_i} − θ²/2 ‖W(α)‖²).
  std::vector<double> W((dim + 1) * K, 0.0);
  double linear = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const RowView x = data.row(i);
    linear += alpha[i * K + static_cast<std::size_t>(x.label)];
    for (std::size_t m = 0; m < K; ++m) {
      const double a = alpha[i * K + m];
      if (a == 0.0) continue;
      for (std::uint32_t j = 0; j < x.nnz; ++j) W[std::size_t{x.indices[j]} * K + m] += a * x.values[j];
      W[std::size_t{dim} * K + m] += a * bias_value;
    }
  }
  scale_into_box(alpha, linear, squared_norm(W));
  return alpha;
}

// Pegasos' dual coefficients A (W = Σ_i A_i x̃_i) of a dual point: the inverse
// of alpha_from_coefficients (binary A_i = y_i α_i/(λn); Crammer–Singer A = α).
template <Objective O>
std::vector<double> coefficients_from_alpha(const Dataset& data, const O& objective, double lambda,
                                            std::vector<double> alpha) {
  if constexpr (HingeDual<O>) {
    const double lambda_n = lambda * static_cast<double>(data.size());
    for (std::size_t i = 0; i < data.size(); ++i) {
      alpha[i] *= std::copysign(1.0, objective.signed_cost(data.row(i))) / lambda_n;
    }
  }
  return alpha;
}

// The warm dual point for either dual objective.
template <Objective O>
std::vector<double> warm_alpha(const Dataset& data, const O& objective, const EngineSettings& s, const WarmStart& warm) {
  if constexpr (HingeDual<O>) {
    return alpha_from_margins(data, objective, warm, s.lambda, s.bias == BiasMode::kFeature ? s.bias_feature_value : 0.0);
  } else {
    return alpha_from_margins(data, objective, warm, s.lambda, s.bias == BiasMode::kFeature ? s.bias_feature_value : 0.0);
  }
}

}  // namespace pegasos
