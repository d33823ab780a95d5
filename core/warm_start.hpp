// Warm starts (`init_model`): what the dual solvers make of an earlier
// model. SDCA needs a dual point α with w = w(α) (its steps keep that pair
// consistent). A model trained by SDCA stores its non-zero dual variables per
// row content hash (drivers/duals.hpp); the rows of the new data found there
// start from them (alpha_from_stored), the others at 0. Without stored duals
// (older models, keep_duals false, Pegasos) the dual point is rebuilt from
// the complementary slackness (KKT) conditions of the old model's margins on
// the new data, and w is recomputed from it:
//   binary (hinge family), g_i = 1 − y_i (w_old·x_i + b_old + o_i):
//     α_i = c_i if g_i > β (inside the margin or misclassified), 0 if g_i < −β
//     (beyond the margin: examples classified with room to spare stay at 0),
//     and for the free support vectors near the margin (|g_i| ≤ β,
//     β = kWarmFreeBand) the α that reproduce w_old best: least squares
//     w(α) ≈ w_old over them with the others held (fit_free_alpha), clipped
//     into the box. More than kWarmMaxFree free examples: no fit, a linear
//     ramp of half-width kWarmMarginBand instead.
//   Crammer–Singer, v_i = 1 + max_{r≠y_i} s_r − s_{y_i} (r* the argmax, the
//     first on ties): α_i^{y_i} = C_i·ramp(v_i), α_i^{r*} = −α_i^{y_i}, the other
//     classes 0 (an example's whole weight on its most violating class; no fit).
// The guess is then scaled by the θ ∈ [0, 1] that maximises D(θα), so the warm
// dual point is never worse than the cold one (α = 0). From the old optimum
// on the same data this recovers a dual point within the tolerance (binary).
// SDCA also takes w_old itself as its first primal candidate (core/sdca_common.hpp
// BestChecked::certify_best). Pegasos starts at the old weights (core/engine.hpp);
// these α only seed the dual mirror its certificate starts from.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include <Eigen/Cholesky>
#include <Eigen/Core>

#include "core/dataset.hpp"
#include "core/objective.hpp"
#include "core/training.hpp"

namespace pegasos {

// Half-width of the ramp of g (or v) around the margin where α goes linearly
// from 0 to its cap, where the free α are not fitted.
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

// Examples whose old margin is within this of the margin count as free
// support vectors, whose α the old weights determine by least squares
// (fit_free_alpha), when there are at most kWarmMaxFree of them.
inline constexpr double kWarmFreeBand = 0.05;
inline constexpr std::size_t kWarmMaxFree = 1500;

// The free examples' α_F from w_old = (1/(λn)) Σ_i α_i y_i x̃_i with the others
// held: the least-squares solution of G α_F = h, G_ij = y_i y_j x̃_i·x̃_j,
// h_i = y_i x̃_i·(λn w_old − Σ_{bound} α_j y_j x̃_j), clipped into the box. At the
// old optimum on the old data this recovers the optimal α exactly where the
// free rows are independent. Cost: f² sparse dot products, an f×f Cholesky.
template <HingeDual O>
void fit_free_alpha(const Dataset& data, const O& objective, const WarmStart& warm, double lambda, double B,
                    const std::vector<std::uint32_t>& free, std::vector<double>& alpha) {
  const std::size_t f = free.size(), d = warm.weights.size();
  const double lambda_n = lambda * static_cast<double>(data.size());
  auto y_of = [&](std::size_t i) { return std::copysign(1.0, objective.signed_cost(data.row(i))); };
  std::vector<double> r(d + 1);  // λn w_old − Σ_bound α y x̃ (the last entry: the constant feature)
  for (std::size_t j = 0; j < d; ++j) r[j] = lambda_n * warm.weights[j];
  r[d] = B != 0.0 ? lambda_n * warm.bias[0] / B : 0.0;
  std::vector<char> is_free(data.size(), 0);
  for (const std::uint32_t i : free) is_free[i] = 1;
  for (std::size_t i = 0; i < data.size(); ++i) {
    if (is_free[i] || alpha[i] == 0.0) continue;
    const RowView x = data.row(i);
    const double a = alpha[i] * y_of(i);
    for (std::uint32_t j = 0; j < x.nnz; ++j) r[x.indices[j]] -= a * x.values[j];
    r[d] -= a * B;
  }
  Eigen::MatrixXd G(f, f);
  Eigen::VectorXd h(f);
  std::vector<double> dense(d + 1, 0.0);
  for (std::size_t p = 0; p < f; ++p) {
    const RowView xp = data.row(free[p]);
    for (std::uint32_t j = 0; j < xp.nnz; ++j) dense[xp.indices[j]] = xp.values[j];
    dense[d] = B;
    const double yp = y_of(free[p]);
    double hp = 0.0;
    for (std::uint32_t j = 0; j < xp.nnz; ++j) hp += xp.values[j] * r[xp.indices[j]];
    h(p) = yp * (hp + B * r[d]);
    for (std::size_t q = 0; q <= p; ++q) {
      const RowView xq = data.row(free[q]);
      double dot = B * B;
      for (std::uint32_t j = 0; j < xq.nnz; ++j) dot += xq.values[j] * dense[xq.indices[j]];
      G(p, q) = G(q, p) = yp * y_of(free[q]) * dot;
    }
    for (std::uint32_t j = 0; j < xp.nnz; ++j) dense[xp.indices[j]] = 0.0;
  }
  G.diagonal().array() += 1e-10 * (G.diagonal().maxCoeff() + 1.0);  // dependent rows: the smallest-norm side
  const Eigen::VectorXd a = G.ldlt().solve(h);
  for (std::size_t p = 0; p < f; ++p) {
    if (std::isfinite(a(p))) alpha[free[p]] = std::clamp(a(p), 0.0, std::abs(objective.signed_cost(data.row(free[p]))));
  }
}

// Binary: α ← θα with the best multiple θ ∈ [0, 1]: D(θα) = θ·lin/n − λ/2 θ² ‖w(α)‖².
template <HingeDual O>
void scale_to_best_multiple(const Dataset& data, const O& objective, double lambda, double bias_value,
                            std::vector<double>& alpha) {
  const std::size_t n = data.size();
  std::vector<double> w(data.dimension + 1, 0.0);
  double lin = 0.0;
  const double lambda_n = lambda * static_cast<double>(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (alpha[i] == 0.0) continue;
    const RowView x = data.row(i);
    const double y = std::copysign(1.0, objective.signed_cost(x));
    double o = 0.0;
    if constexpr (HasScoreOffset<O>) objective.add_offset(x, &o);
    lin += alpha[i] * (1.0 - y * o);
    for (std::uint32_t j = 0; j < x.nnz; ++j) w[x.indices[j]] += alpha[i] * y * x.values[j] / lambda_n;
    w.back() += alpha[i] * y * bias_value / lambda_n;
  }
  scale_into_box(alpha, lin / static_cast<double>(n), lambda * squared_norm(w));
}

// Crammer–Singer: the same, D(θα) = λ(θ Σ_i α_i^{y_i} − θ²/2 ‖W(α)‖²).
template <MulticlassDual O>
void scale_to_best_multiple(const Dataset& data, const O& objective, double, double bias_value,
                            std::vector<double>& alpha) {
  const std::size_t n = data.size(), K = static_cast<std::size_t>(objective.num_outputs());
  const std::size_t dim = data.dimension;
  std::vector<double> W((dim + 1) * K, 0.0);
  double linear = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const RowView x = data.row(i);
    linear += alpha[i * K + static_cast<std::size_t>(x.label)];
    for (std::size_t m = 0; m < K; ++m) {
      const double a = alpha[i * K + m];
      if (a == 0.0) continue;
      for (std::uint32_t j = 0; j < x.nnz; ++j) W[std::size_t{x.indices[j]} * K + m] += a * x.values[j];
      W[dim * K + m] += a * bias_value;
    }
  }
  scale_into_box(alpha, linear, squared_norm(W));
}

// Binary: α_i ∈ [0, c_i] (core/sdca_binary.hpp's parameterisation).
template <HingeDual O>
std::vector<double> alpha_from_margins(const Dataset& data, const O& objective, const WarmStart& warm, double lambda,
                                       double bias_value) {
  const std::size_t n = data.size();
  std::vector<double> g(n), cap(n), alpha(n);
  std::vector<std::uint32_t> free;
  const auto dim = static_cast<std::uint32_t>(warm.weights.size());
  for (std::size_t i = 0; i < n; ++i) {
    const RowView x = data.row(i);
    double score = 0.0;
    dense_scores(objective, warm.weights, warm.bias, dim, x, &score);
    const double yc = objective.signed_cost(x);
    cap[i] = std::abs(yc);
    g[i] = 1.0 - std::copysign(1.0, yc) * score;
    if (std::abs(g[i]) <= kWarmFreeBand) free.push_back(static_cast<std::uint32_t>(i));
  }
  const bool fit = !free.empty() && free.size() <= kWarmMaxFree;
  // With the fit, every example off the band sits at its KKT bound; without
  // it, the ramp spreads the uncertain ones over the box.
  for (std::size_t i = 0; i < n; ++i) alpha[i] = cap[i] * (fit ? (g[i] > 0.0 ? 1.0 : 0.0) : warm_ramp(g[i]));
  if (fit) fit_free_alpha(data, objective, warm, lambda, bias_value, free, alpha);
  scale_to_best_multiple(data, objective, lambda, bias_value, alpha);
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
  scale_to_best_multiple(data, objective, lambda, bias_value, alpha);
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

// The bound each dual variable's box is scaled by: binary α_i ∈ [0, c_i], so
// c_i; Crammer–Singer α_i^m ∈ [−C_i, C_i] with C_i = c_i/(λn). A model stores
// α divided by it (box_fractions): the fraction does not depend on λ, n or
// the class costs, so a warm start with other ones only rescales it.
template <Objective O>
double box_bound(const O& objective, const RowView& x, double lambda_n) {
  if constexpr (HingeDual<O>) {
    return std::abs(objective.signed_cost(x));
  } else {
    return objective.example_cost(x) / lambda_n;
  }
}

// α (n × K, as the solver returns it) as fractions of each row's box bound.
template <Objective O>
std::vector<double> box_fractions(const Dataset& data, const O& objective, double lambda, std::vector<double> alpha) {
  const std::size_t n = data.size();
  if (n == 0 || alpha.size() % n != 0) return {};
  const std::size_t K = alpha.size() / n;
  const double lambda_n = lambda * static_cast<double>(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double bound = box_bound(objective, data.row(i), lambda_n);
    for (std::size_t m = 0; m < K; ++m) {  // rounding may put α/C a hair outside [−1, 1]
      alpha[i * K + m] = bound > 0.0 ? std::clamp(alpha[i * K + m] / bound, -1.0, 1.0) : 0.0;
    }
  }
  return alpha;
}

// Binary: the stored α clipped into this run's box (a fraction f > 1: the
// carried coefficient of a row at its bound on day 1 does not fit under a
// bound that shrank), keeping Σ_i α_i y_i. The intercept's weight is
// Σ_i α_i y_i B/(λn), a difference of two large sums, so the rows at a bound
// of one class alone move it: on SpamAssassin by date (balanced weights; a
// day of ham lowers the ham cost 0.8%), the 53 ham rows at their bound lost
// 0.97 of Σ α_i y_i = 0.17, the warm point's bias went from 0.32 to 2.15 and
// its primal objective from 0.0235 to 0.83 (3325 rows below the margin),
// which coordinate ascent took about 6 passes to undo. So the net mass
// clipping took from one sign (what it took from both signs alike cancels in
// Σ α_i y_i and is left off) is given back to that sign's free rows
// (0 < α_i < c_i) in proportion to their α, and what they cannot take is
// taken off the other sign's rows, in proportion to theirs. Without an
// intercept (`bias_value` 0) the α are only clipped.
template <HingeDual O>
void clip_stored_alpha(const Dataset& data, const O& objective, std::vector<double>& alpha,
                       const std::vector<double>& bound, double bias_value) {
  const std::size_t n = data.size();
  std::vector<std::uint8_t> positive(n);  // 1: y_i = +1
  double lost[2] = {0.0, 0.0};
  for (std::size_t i = 0; i < n; ++i) {
    positive[i] = objective.signed_cost(data.row(i)) >= 0.0 ? 1 : 0;
    if (alpha[i] > bound[i]) {
      lost[positive[i]] += alpha[i] - bound[i];
      alpha[i] = bound[i];
    }
  }
  if (bias_value == 0.0) return;
  const int short_of = lost[1] > lost[0] ? 1 : 0;  // the sign that lost more
  double need = std::abs(lost[1] - lost[0]);
  // Two rounds: a free row the first one lifts to its bound passes on the rest.
  for (int round = 0; round < 2 && need > 0.0; ++round) {
    double free_mass = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      if (positive[i] == short_of && alpha[i] > 0.0 && alpha[i] < bound[i]) free_mass += alpha[i];
    }
    if (!(free_mass > 0.0)) break;
    double over = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      if (positive[i] != short_of || !(alpha[i] > 0.0 && alpha[i] < bound[i])) continue;
      const double a = alpha[i] * (1.0 + need / free_mass);
      alpha[i] = std::min(a, bound[i]);
      over += a - alpha[i];
    }
    need = over;
  }
  double mass = 0.0;  // the other sign's
  for (std::size_t i = 0; i < n; ++i) {
    if (positive[i] != short_of) mass += alpha[i];
  }
  if (!(need > 0.0 && mass > 0.0)) return;
  const double keep = std::max(0.0, 1.0 - need / mass);
  for (std::size_t i = 0; i < n; ++i) {
    if (positive[i] != short_of) alpha[i] *= keep;
  }
}

// The dual point from a model's stored fractions (WarmStart::stored_alpha,
// carried to this run's box: a binary fraction may exceed 1):
// α = fraction × this run's box bound, clipped into the box (binary:
// clip_stored_alpha); rows the model has no entry for (NaN) start at 0.
// Crammer–Singer rows are made feasible again (α^y ∈ [0, C], the others ≤ 0
// and summing to −α^y). Then scaled by its best multiple θ ∈ [0, 1], like the
// margin guess.
template <Objective O>
std::vector<double> alpha_from_stored(const Dataset& data, const O& objective, double lambda, double bias_value,
                                      const std::vector<double>& stored) {
  const std::size_t n = data.size(), K = n == 0 ? 1 : stored.size() / n;
  const double lambda_n = lambda * static_cast<double>(n);
  std::vector<double> alpha(stored.size(), 0.0);
  std::vector<double> bounds;
  if constexpr (HingeDual<O>) bounds.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const RowView x = data.row(i);
    const double bound = box_bound(objective, x, lambda_n);
    double* a = &alpha[i * K];
    if constexpr (HingeDual<O>) {
      const double f = stored[i];
      a[0] = std::isfinite(f) ? std::max(f, 0.0) * bound : 0.0;  // clipped below
      bounds[i] = bound;
    } else {
      for (std::size_t m = 0; m < K; ++m) {
        const double f = stored[i * K + m];
        a[m] = std::isfinite(f) ? std::clamp(f, -1.0, 1.0) * bound : 0.0;
      }
      const std::size_t y = static_cast<std::size_t>(x.label);
      double negative = 0.0;
      for (std::size_t m = 0; m < K; ++m) {
        if (m != y) negative += a[m] = std::min(a[m], 0.0);
      }
      const double top = std::min(std::max(a[y], 0.0), -negative);
      for (std::size_t m = 0; m < K; ++m) {
        if (m != y && negative < 0.0) a[m] *= top / -negative;
      }
      a[y] = top;
    }
  }
  if constexpr (HingeDual<O>) clip_stored_alpha(data, objective, alpha, bounds, bias_value);
  scale_to_best_multiple(data, objective, lambda, bias_value, alpha);
  return alpha;
}

// The warm dual point for either dual objective: the old model's stored dual
// variables where it has them, else the guess from its margins.
template <Objective O>
std::vector<double> warm_alpha(const Dataset& data, const O& objective, const EngineSettings& s, const WarmStart& warm) {
  const double bias_value = s.bias == BiasMode::kFeature ? s.bias_feature_value : 0.0;
  const std::size_t K = static_cast<std::size_t>(objective.num_outputs());
  if (!warm.stored_alpha.empty() && warm.stored_alpha.size() == data.size() * K) {
    return alpha_from_stored(data, objective, s.lambda, bias_value, warm.stored_alpha);
  }
  return alpha_from_margins(data, objective, warm, s.lambda, bias_value);
}

}  // namespace pegasos
