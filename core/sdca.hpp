// Stochastic dual coordinate ascent (SDCA) for the hinge objectives:
//     P(w) = λ/2 ‖w‖² + (1/n) Σ_i c_i · max(0, 1 − y_i (w·x_i + o_i))
// (c_i = 1 for the plain hinge, the class cost for the weighted hinge, o_i the
// source model's score for transfer), through its dual
//     D(α) = (1/n) Σ_i α_i (1 − y_i o_i) − λ/2 ‖w(α)‖²,  w(α) = 1/(λn) Σ_i α_i y_i x_i,
// with 0 ≤ α_i ≤ c_i (Shalev-Shwartz & Zhang, "Stochastic Dual Coordinate
// Ascent Methods for Regularized Loss Minimization", JMLR 2013; the same
// coordinate step as LIBLINEAR's dual solver, Hsieh et al., ICML 2008).
//
// Why a second solver in a Pegasos suite: SGD needs ~1/(λn·ε) epochs to reach
// a relative gap ε, so where λn is small (few examples or a small λ: text
// data with thousands of documents) the 1/(λt) schedule cannot get within
// 0.1% of the optimum in any reasonable number of epochs. Coordinate ascent
// on the dual converges linearly there, and P − D bounds the gap to the
// optimum: automatic stopping on SDCA is a certificate, not an estimate.
//
// Step for example i (exact maximisation of D along α_i):
//     α_i ← clip(α_i + λn (1 − y_i s_i) / ‖x_i‖², 0, c_i),  w += (Δα_i y_i / (λn)) x_i,
// s_i = w·x_i + o_i. Visits: a fresh permutation per epoch (seeded).
// The bias is the weight of a constant feature (regularised), or none.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <numeric>
#include <span>
#include <utility>
#include <vector>

#include "core/box_qp.hpp"
#include "core/dataset.hpp"
#include "core/errors.hpp"
#include "core/interior_point.hpp"
#include "core/objective.hpp"
#include "core/random.hpp"
#include "core/training.hpp"

namespace pegasos {

// The end of a pass, the same for both dual solvers: the trace point and the
// stopping check. The exact gap needs a pass over the data: it is taken on a
// full pass when the O(1) estimate from running sums (primal_estimate −
// dual_estimate) says the tolerance may be met, and every 10th pass in any
// case (P and D are global: a shrunk phase can have converged), or for a
// trace. `primal()` also brings `weights` / `bias` up to date. Returns true
// when training stops (converged, or on_epoch asked to).
template <class Primal, class Dual>
bool end_of_pass(const Dataset& data, const EngineSettings& s, int epoch, std::uint64_t t, std::uint64_t T,
                 bool automatic, bool full, double sq_norm, double primal_estimate, double dual_estimate,
                 Primal&& primal, Dual&& dual, const std::vector<double>& weights, const std::vector<double>& bias,
                 TrainResult& result, const std::function<bool(const EpochInfo&)>& on_epoch) {
  EpochInfo info;
  info.iterations = t;
  info.epoch = epoch;
  info.traced = s.trace_objective && (epoch % std::max(1, s.trace_every) == 0 || t == T);
  if (!std::isfinite(sq_norm)) {
    throw InputError(data.source + ": the weights became infinite or NaN at iteration " + std::to_string(t) +
                     "; scale the features (e.g. to unit norm) or raise lambda");
  }
  if (automatic) {
    info.stop_check = epoch % 10 == 0 ||
                      (full && primal_estimate - dual_estimate <= s.tolerance * std::abs(primal_estimate));
  }
  double exact_primal = 0.0;
  if (info.traced || info.stop_check) {
    exact_primal = primal();
    info.sample_objective = exact_primal;
    info.has_objective = true;
    info.weights = &weights;
    info.bias = &bias;
  }
  result.trace.push_back(info);
  result.trace.back().weights = result.trace.back().bias = nullptr;
  if (on_epoch && !on_epoch(info)) {
    result.stopped_by = StopReason::kCallback;
    return true;
  }
  if (info.stop_check && epoch >= s.min_epochs && exact_primal - dual() <= s.tolerance * std::abs(exact_primal)) {
    result.converged = true;
    result.stopped_by = StopReason::kTolerance;
    return true;
  }
  return false;
}

// Conjugate gradient on the free face of the binary dual, between passes of
// coordinate ascent. With the examples at a bound held there, the dual is a
// concave quadratic in the free α_F (0 < α_i < c_i):
//     D(α_F + Δ) − D(α_F) = (gᵀΔ − ½ ΔᵀHΔ)/n,  g_i = 1 − y_i (w·x_i + o_i),
//     H_ij = y_i y_j x_i·x_j / (λn)  (x with the constant feature),
// and CG maximises it from Δ = 0, each iterate higher than the last, until
// it converges or a step would take a free α past a bound: that step stops
// at the bound (still higher: the quadratic increases all along a CG step)
// and CG ends there (restarting on the smaller face measured worse).
// Coordinate ascent needs thousands of passes where the free examples are
// about as many as the features they use, nearly dependent (dense raw,
// unscaled features): H_FF is then ill-conditioned, and CG takes it in about
// |F| iterations. Where the free rows use many more features than there are
// of them (text), H_FF is well conditioned and coordinate ascent does fine:
// then (|F| < kMinFreePerFeature × features used) CG is not run.
// Each iteration reads the free rows twice (H p = Y X (Xᵀ Y p) / (λn)); the
// rows read (also for the features used, g and applying Δ) are counted
// against `budget`. `scratch` (dim zeros, left zero) holds Xᵀ Y p.
struct FreeFaceCg {
  std::uint64_t rows_read = 0;
  bool well_conditioned = false;  // not run: too few free examples per feature used
};
inline constexpr double kMinFreePerFeature = 0.25;

template <class Weights>
FreeFaceCg free_face_cg(const Dataset& data, double B, double lambda_n, const std::vector<double>& signed_cost,
                        const std::vector<double>& offset, const std::vector<double>& sq,
                        std::span<const std::uint32_t> candidates, std::uint64_t budget, std::vector<double>& alpha,
                        Weights& w, double& wb, double& linear, double& sq_norm, std::vector<double>& scratch) {
  FreeFaceCg out;
  std::vector<std::uint32_t> F;
  for (const std::uint32_t i : candidates) {
    if (alpha[i] > 0.0 && alpha[i] < std::abs(signed_cost[i]) && sq[i] > 0.0) F.push_back(i);
  }
  const std::size_t f = F.size();
  // The features used (f rows), the gradient (f), one iteration (2f), applying Δ (2f).
  if (f < 2 || 6 * f > budget) return out;
  std::size_t features = B != 0.0 ? 1 : 0;
  for (const std::uint32_t i : F) {
    const RowView x = data.row(i);
    for (std::uint32_t j = 0; j < x.nnz; ++j) {
      if (scratch[x.indices[j]] == 0.0) {
        scratch[x.indices[j]] = 1.0;
        ++features;
      }
    }
  }
  auto clear_scratch = [&] {  // back to zeros, only the entries the free rows touch
    for (const std::uint32_t i : F) {
      const RowView x = data.row(i);
      for (std::uint32_t j = 0; j < x.nnz; ++j) scratch[x.indices[j]] = 0.0;
    }
  };
  clear_scratch();
  out.rows_read = f;
  if (static_cast<double>(f) < kMinFreePerFeature * static_cast<double>(features)) {
    out.well_conditioned = true;
    return out;
  }

  auto dot = [](const RowView& x, const double* v, double start) {
    for (std::uint32_t j = 0; j < x.nnz; ++j) start += static_cast<double>(x.values[j]) * v[x.indices[j]];
    return start;
  };
  std::vector<double> y(f), r(f), q(f), delta(f, 0.0);
  for (std::size_t k = 0; k < f; ++k) {
    y[k] = signed_cost[F[k]] >= 0 ? 1.0 : -1.0;
    r[k] = 1.0 - y[k] * (dot(data.row(F[k]), w.data(), wb * B) + offset[F[k]]);
  }
  out.rows_read += f;
  std::vector<double> p = r;
  double rr = 0.0;
  for (const double v : r) rr += v * v;
  const double rr_start = rr;
  for (std::size_t it = 0; it < 2 * f && rr > 1e-24 * rr_start && out.rows_read + 4 * f <= budget; ++it) {
    // q = H p: u = Σ_k p_k y_k x_k / (λn) into scratch, then q_k = y_k x_k·u.
    double u_bias = 0.0;
    for (std::size_t k = 0; k < f; ++k) {
      const RowView x = data.row(F[k]);
      const double coef = p[k] * y[k] / lambda_n;
      for (std::uint32_t j = 0; j < x.nnz; ++j) scratch[x.indices[j]] += coef * x.values[j];
      u_bias += coef * B;
    }
    double pq = 0.0;
    for (std::size_t k = 0; k < f; ++k) {
      q[k] = y[k] * dot(data.row(F[k]), scratch.data(), u_bias * B);
      pq += p[k] * q[k];
    }
    clear_scratch();
    out.rows_read += 2 * f;
    if (!(pq > 0.0)) break;
    const double step = rr / pq;
    double tau = step;  // the longest step that keeps every α_F within [0, c]
    for (std::size_t k = 0; k < f; ++k) {
      const double a = alpha[F[k]] + delta[k];
      if (p[k] > 0.0) tau = std::min(tau, (std::abs(signed_cost[F[k]]) - a) / p[k]);
      if (p[k] < 0.0) tau = std::min(tau, -a / p[k]);
    }
    tau = std::max(tau, 0.0);
    for (std::size_t k = 0; k < f; ++k) delta[k] += tau * p[k];
    if (tau < step) break;  // at a bound
    double rr_next = 0.0;
    for (std::size_t k = 0; k < f; ++k) {
      r[k] -= step * q[k];
      rr_next += r[k] * r[k];
    }
    const double beta = rr_next / rr;
    rr = rr_next;
    for (std::size_t k = 0; k < f; ++k) p[k] = r[k] + beta * p[k];
  }
  // Apply Δ row by row, as coordinate steps would (w and the running sums).
  for (std::size_t k = 0; k < f; ++k) {
    const std::uint32_t i = F[k];
    const double a = std::clamp(alpha[i] + delta[k], 0.0, std::abs(signed_cost[i]));
    const double d = a - alpha[i];
    if (d == 0.0) continue;
    const RowView x = data.row(i);
    const double score = dot(x, w.data(), wb * B);
    alpha[i] = a;
    linear += d * (1.0 - y[k] * offset[i]);
    const double st = d * y[k] / lambda_n;
    for (std::uint32_t j = 0; j < x.nnz; ++j) w[x.indices[j]] += st * x.values[j];
    wb += st * B;
    sq_norm += 2.0 * st * score + st * st * sq[i];
  }
  out.rows_read += 2 * f;
  return out;
}

// The visit budget of a dual run: iterations or epochs when given (a fixed
// budget), else the cap of automatic stopping, max_epochs passes (or, at 0,
// sized by κ = mean ‖x̃‖²/(λn) from the row norms `sq`).
inline std::uint64_t sdca_visit_budget(const EngineSettings& s, const std::vector<double>& sq, bool& automatic) {
  const std::size_t n = sq.size();
  std::uint64_t T = s.iterations;
  if (T == 0 && s.epochs > 0) T = static_cast<std::uint64_t>(std::ceil(s.epochs * static_cast<double>(n)));
  automatic = T == 0;
  if (!automatic) return T;
  int cap = s.max_epochs;
  if (cap <= 0) {
    double sum = 0.0;
    for (double v : sq) sum += v;
    const double nd = static_cast<double>(std::max<std::size_t>(n, 1));
    cap = automatic_epoch_cap(Solver::kSdca, sum / nd / (s.lambda * nd));
  }
  return static_cast<std::uint64_t>(cap) * n;
}

// The best primal point of a dual run's exact checks, returned by a run that
// ends uncertified: on badly conditioned data the last iterate's objective
// can be far above an earlier one's (tens of percent from pass to pass), and
// the dual bound, which never decreases, certifies any primal point alike.
struct BestChecked {
  double objective = std::numeric_limits<double>::infinity();
  std::vector<double> weights, bias;

  void offer(double p, const std::vector<double>& w, const std::vector<double>& b) {
    if (p < objective) *this = {p, w, b};
  }
  void apply_to(TrainResult& result) {
    if (result.converged || !(objective < result.objective)) return;
    result.weights = std::move(weights);
    result.bias = std::move(bias);
    result.objective = objective;
  }
};

// Why a dual run ended, once its loop is left without a decision.
inline void finish_stop_reason(TrainResult& result, bool automatic) {
  if (result.stopped_by == StopReason::kBudget && automatic) result.stopped_by = StopReason::kMaxEpochs;
}

// Coordinate ascent is stalling when, at an exact gap check, the gap has not
// halved over the last kStallPasses passes' worth of visits and, at the rate
// seen over that window, would need more visits to reach the tolerance than
// the run has spent so far. Feed it every exact check (visits so far, P, D);
// after a stall the history starts over, so the next one needs a new window.
class StallRule {
 public:
  static constexpr double kStallPasses = 50;
  StallRule(std::size_t n, double tolerance) : n_(static_cast<double>(n)), tolerance_(tolerance) {}
  bool check(std::uint64_t t, double primal, double dual) {
    const double gap = primal - dual;
    const double window = kStallPasses * n_;
    bool stalled = false;
    for (auto it = gaps_.rbegin(); it != gaps_.rend(); ++it) {
      const double span = static_cast<double>(t - it->first);
      if (span < window) continue;
      if (gap > it->second / 2) {
        // Visits still needed at the rate gap ∝ ρ^visits seen over the window.
        const double log_rate = std::log(gap / it->second) / span;
        const double needed = log_rate < 0.0 ? std::log(tolerance_ * std::abs(primal) / gap) / log_rate
                                              : std::numeric_limits<double>::infinity();
        stalled = needed > static_cast<double>(t);
      }
      break;
    }
    // The visits still needed at the rate since the last check at least
    // kRatePasses passes' worth of visits ago (a shorter window than the
    // stall's: the interior-point hand-over compares it with its own cost).
    needed_ = -1.0;
    for (auto it = gaps_.rbegin(); it != gaps_.rend(); ++it) {
      const double span = static_cast<double>(t - it->first);
      if (span < kRatePasses * n_) continue;
      const double log_rate = std::log(gap / it->second) / span;
      needed_ = gap <= tolerance_ * std::abs(primal) ? 0.0
                : log_rate < 0.0 ? std::log(tolerance_ * std::abs(primal) / gap) / log_rate
                                 : std::numeric_limits<double>::infinity();
      break;
    }
    gaps_.emplace_back(t, gap);
    if (stalled) gaps_.clear();
    return stalled;
  }
  static constexpr double kRatePasses = 20;
  // From the last check(): visits still needed at the rate seen (∞: the gap
  // did not shrink; −1: no check far enough back).
  double needed() const { return needed_; }

 private:
  double n_, tolerance_, needed_ = -1.0;
  std::vector<std::pair<std::uint64_t, double>> gaps_;  // (visits, exact P − D) at the exact checks
};

// The interior-point solver (core/interior_point.hpp), once per run, at an
// exact gap check where its whole run costs fewer floating-point operations
// than coordinate ascent is predicted to need: the visits to the tolerance at
// the rate of the last StallRule::kRatePasses passes, or at a stall all the
// visits left in the budget (a visit costs about 4 operations a non-zero and
// output). On unscaled low-dimensional data it certifies in tens of
// Newton steps where coordinate ascent ends at its cap with gaps near 100%
// (UCI Vehicle, Satellite, Glass); on wide data (text, images) its
// (rK)² normal matrix does not pay and it is never tried.
struct InteriorPointGate {
  // Mehrotra's method took 15–45 steps to a gap of tolerance/4 on the UCI
  // sets (bench/c_sweep.py); its cost is budgeted for this many.
  static constexpr int kIterations = 80;
  // An 8 MB dense normal matrix for (rK) = 1024 unknowns, 0.4 GFlop a
  // Cholesky factorisation.
  static constexpr std::size_t kMaxUnknowns = 1024;
  bool tried = false;

  bool pays(const Dataset& data, std::size_t K, std::size_t unknowns, double visits_left) const {
    if (tried || unknowns > kMaxUnknowns || data.size() == 0) return false;
    const double p = static_cast<double>(data.nnz()) / static_cast<double>(data.size());
    const double ipm = kIterations * interior_point_flops(data.size(), p, K, unknowns);
    const double cd = visits_left * 4.0 * static_cast<double>(K) * (p + 1.0);
    return ipm <= cd;
  }
};

// The binary problem in the interior-point form: J = 2 constraints an
// example, the hinge (u = −y_i, b = 1 − y_i o_i) and ξ_i ≥ 0, with
// U_i = c_i/(λn); its α_i0 is the dual solver's α_i/(λn).
inline InteriorPointProblem binary_interior_point_problem(const Dataset& data, double B, double lambda_n,
                                                          const std::vector<double>& signed_cost,
                                                          const std::vector<double>& offset) {
  const std::size_t n = data.size();
  InteriorPointProblem pr;
  pr.data = &data;
  pr.B = B;
  pr.K = 1;
  pr.J = 2;
  pr.U.resize(n);
  pr.b.assign(2 * n, 0.0);
  pr.u.assign(2 * n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    const double y = signed_cost[i] >= 0 ? 1.0 : -1.0;
    pr.U[i] = std::abs(signed_cost[i]) / lambda_n;
    pr.b[2 * i] = 1.0 - y * offset[i];
    pr.u[2 * i] = -y;
  }
  return pr;
}

// The Crammer–Singer problem in the interior-point form: J = K constraints an
// example, u_ij = e_j − e_{y_i}, b_ij = [j ≠ y_i], U_i = the cap of α_i^{y_i};
// the dual solver's α_i^m = −α_im (m ≠ y_i), α_i^{y_i} = Σ_{j ≠ y_i} α_ij.
inline InteriorPointProblem crammer_singer_interior_point_problem(const Dataset& data, double B, std::size_t K,
                                                                  const std::vector<double>& cap) {
  const std::size_t n = data.size();
  InteriorPointProblem pr;
  pr.data = &data;
  pr.B = B;
  pr.K = K;
  pr.J = K;
  pr.U = cap;
  pr.b.assign(n * K, 0.0);
  pr.u.assign(n * K * K, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t y = static_cast<std::size_t>(data.row(i).label);
    for (std::size_t j = 0; j < K; ++j) {
      if (j == y) continue;
      pr.b[i * K + j] = 1.0;
      pr.u[(i * K + j) * K + j] = 1.0;
      pr.u[(i * K + j) * K + y] = -1.0;
    }
  }
  return pr;
}

// The dual point of the binary problem from Pegasos' dual coefficients
// (w = Σ_i A_i x̃_i, so α_i = λn·y_i·A_i), clipped into the box [0, c_i].
template <HingeDual O>
std::vector<double> alpha_from_coefficients(const Dataset& data, const O& objective, const EngineSettings& s,
                                            const std::vector<double>& A) {
  const std::size_t n = data.size();
  const double lambda_n = s.lambda * static_cast<double>(n);
  std::vector<double> alpha(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double yc = objective.signed_cost(data.row(i));
    alpha[i] = std::clamp(lambda_n * std::copysign(1.0, yc) * A[i], 0.0, std::abs(yc));
  }
  return alpha;
}

// `warm` (optional): dual variables to start from (α_i in [0, c_i]; clipped),
// e.g. a previous run's TrainResult::alpha; w starts as w(α).
template <HingeDual O>
TrainResult train_sdca(const Dataset& data, const O& objective, const EngineSettings& s,
                       const std::function<bool(const EpochInfo&)>& on_epoch = {},
                       const std::vector<double>* warm = nullptr) {
  const std::size_t n = data.size();
  const std::uint32_t dim = data.dimension;
  const double lambda = s.lambda;
  const double lambda_n = lambda * static_cast<double>(n);
  const bool feature_bias = s.bias == BiasMode::kFeature;
  const double B = feature_bias ? s.bias_feature_value : 0.0;
  if (s.bias == BiasMode::kUnregularized) {
    throw ConfigError("solver: sdca supports bias none or feature, not unregularized");
  }

  // Per example: y_i·c_i, ‖x_i‖² (with the constant feature), and the offset o_i.
  std::vector<double> signed_cost(n), sq(n), offset(n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    const RowView x = data.row(i);
    signed_cost[i] = objective.signed_cost(x);
    sq[i] = squared_norm(x, B * B);
    if constexpr (HasScoreOffset<O>) objective.add_offset(x, &offset[i]);
  }

  std::vector<double> w(dim, 0.0), alpha(n, 0.0);
  double wb = 0.0;          // weight of the constant feature
  double sq_norm = 0.0;     // ‖w‖² + wb², kept incrementally (for the cheap gap estimate)
  double linear = 0.0;      // Σ α_i (1 − y_i o_i), kept incrementally
  std::vector<double> bias(1, 0.0);
  // α (clipped into the box) and everything kept from it, from scratch.
  auto load_alpha = [&](const std::vector<double>& from) {
    std::fill(w.begin(), w.end(), 0.0);
    wb = linear = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      const double a = std::clamp(from[i], 0.0, std::abs(signed_cost[i]));
      alpha[i] = a;
      if (a == 0.0) continue;
      const double y = signed_cost[i] >= 0 ? 1.0 : -1.0;
      linear += a * (1.0 - y * offset[i]);
      const double step = a * y / lambda_n;
      const RowView x = data.row(i);
      for (std::uint32_t j = 0; j < x.nnz; ++j) w[x.indices[j]] += step * x.values[j];
      wb += step * B;
    }
    sq_norm = squared_norm(w) + wb * wb;
  };
  if (warm != nullptr) load_alpha(*warm);
  // Examples visited in the next pass (all of them, unless shrinking).
  std::vector<std::uint32_t> active(n);
  std::iota(active.begin(), active.end(), 0u);
  Rng rng(derive_seed(s.seed, 4));

  bool automatic = false;
  std::uint64_t T = sdca_visit_budget(s, sq, automatic);
  // Shrinking (Hsieh et al. 2008, Sec. 3.2), with automatic stopping only: an
  // α_i at a bound whose gradient pushes it further out is left out of the
  // following passes; once the projected gradients of the remaining ones
  // spread less than `unshrink_below`, all examples come back for a full pass.
  // When even a full pass has that small a spread (but the gap is not met),
  // the threshold drops 10× and shrinking goes on from that pass's extremes,
  // so the next shrunk phase goes deeper.
  const bool shrinking = automatic;
  double pg_max_old = std::numeric_limits<double>::infinity();
  double pg_min_old = -std::numeric_limits<double>::infinity();
  double unshrink_below = 0.1;
  constexpr std::uint64_t kCgStart = 100, kCgEvery = 3, kCgBudget = 4, kPolishAfter = 3 * kCgStart;
  std::uint64_t cd_visits = 0, cg_every = kCgEvery;
  std::vector<double> scratch;  // free_face_cg's dense vector

  // The exact check calls primal() then dual() at the same t: ‖w‖² is
  // summed once.
  constexpr std::uint64_t kNotSummed = std::numeric_limits<std::uint64_t>::max();
  double w_sq = 0.0;
  std::uint64_t w_sq_at = kNotSummed;
  std::uint64_t t = 0;
  BestChecked best;
  auto primal = [&] {
    bias[0] = wb * B;
    w_sq = squared_norm(w);
    w_sq_at = t;
    const double p = lambda / 2 * (w_sq + wb * wb) + mean_loss(data, objective, w, bias);
    best.offer(p, w, bias);
    return p;
  };
  auto dual = [&] {
    double lin = 0.0;
    for (std::size_t i = 0; i < n; ++i) lin += alpha[i] * (1.0 - std::copysign(1.0, signed_cost[i]) * offset[i]);
    return lin / static_cast<double>(n) - lambda / 2 * ((w_sq_at == t ? w_sq : squared_norm(w)) + wb * wb);
  };
  // --- Polish (core/box_qp.hpp), automatic stopping only -----------------
  // When coordinate ascent stalls (StallRule), the polish gets as many row
  // reads as coordinate ascent has made (a visit reads a row twice), so one
  // that does not certify at most doubles the work; it never returns a
  // worse dual point, and the next one needs another stall.
  StallRule stall(n, s.tolerance);
  InteriorPointGate interior;
  double checked_primal = 0.0, checked_dual = 0.0;
  bool checked = false;  // end_of_pass took the exact gap this pass
  auto primal_checked = [&] { return checked_primal = primal(); };
  auto dual_checked = [&] {
    checked = true;
    return checked_dual = dual();
  };
  double needed = -1.0;  // from the last exact check: visits still needed at the rate seen
  auto stalling = [&](std::uint64_t t) {
    needed = -1.0;
    if (!automatic || !checked) return false;
    checked = false;
    const bool stalled = stall.check(t, checked_primal, checked_dual);
    needed = stall.needed();
    return stalled;
  };
  // -------------------------------------------------------------------------

  TrainResult result;
  result.dimension = dim;
  result.outputs = 1;
  result.solver = "sdca";
  int epoch = 0;
  while (t < T) {
    ++epoch;
    const bool full = active.size() == n;
    rng.shuffle(std::span<std::uint32_t>(active));
    const std::size_t visits = static_cast<std::size_t>(std::min<std::uint64_t>(active.size(), T - t));
    // Σ c_i·max(0, 1 − y_i s_i) with each s_i as it was at the visit: on a
    // full pass an estimate of the loss at the pass's end that costs nothing
    // (exact once w settles).
    double visited_loss = 0.0;
    double pg_max = -std::numeric_limits<double>::infinity();
    double pg_min = std::numeric_limits<double>::infinity();
    std::size_t kept = 0;
    for (std::size_t v = 0; v < visits; ++v, ++t) {
      const std::uint32_t i = active[v];
      const RowView x = data.row(i);
      double score = wb * B;
      for (std::uint32_t j = 0; j < x.nnz; ++j) score += static_cast<double>(x.values[j]) * w[x.indices[j]];
      const double y = signed_cost[i] >= 0 ? 1.0 : -1.0;
      const double c = std::abs(signed_cost[i]);
      const double g = 1.0 - y * (score + offset[i]);  // n·∂D/∂α_i
      if (g > 0.0) visited_loss += c * g;
      if (shrinking) {
        // Projected gradient of the minimisation form (G = −g).
        double pg = -g;
        if (alpha[i] == 0.0) {
          if (-g > pg_max_old) continue;  // shrink: stays at 0
          if (-g > 0.0) pg = 0.0;
        } else if (alpha[i] == c) {
          if (-g < pg_min_old) continue;  // shrink: stays at c
          if (-g < 0.0) pg = 0.0;
        }
        active[kept++] = i;
        pg_max = std::max(pg_max, pg);
        pg_min = std::min(pg_min, pg);
      }
      double a;
      if (sq[i] > 0.0) {
        a = std::clamp(alpha[i] + lambda_n * g / sq[i], 0.0, c);
      } else {
        a = g > 0.0 ? c : 0.0;  // an empty row: D is linear in α_i
      }
      const double delta = a - alpha[i];
      if (delta == 0.0) continue;
      alpha[i] = a;
      linear += delta * (1.0 - y * offset[i]);
      const double step = delta * y / lambda_n;
      for (std::uint32_t j = 0; j < x.nnz; ++j) w[x.indices[j]] += step * x.values[j];
      wb += step * B;
      sq_norm += 2.0 * step * score + step * step * sq[i];
    }
    // Free-face CG (automatic stopping only): not before kCgStart passes'
    // worth of visits (coordinate ascent alone is faster while it makes
    // progress: measured, CG from the start gave a lower dual at 25..200
    // passes and a worse model at the 200-pass cap), then whenever coordinate
    // ascent has made kCgEvery passes' worth of visits since the last one,
    // with kCgBudget times those visits (counted in t); where it is not worth
    // it (see free_face_cg), it is asked again only after twice as many.
    cd_visits += visits;
    if (shrinking && t >= kCgStart * n && cd_visits >= cg_every * n && t < T) {
      const std::uint64_t budget = std::min<std::uint64_t>(T - t, kCgBudget * cd_visits);
      if (scratch.empty()) scratch.assign(dim, 0.0);
      const FreeFaceCg cg = free_face_cg(data, B, lambda_n, signed_cost, offset, sq,
                                         std::span<const std::uint32_t>(active.data(), kept), budget, alpha, w, wb,
                                         linear, sq_norm, scratch);
      t += cg.rows_read;
      cg_every = cg.well_conditioned ? 2 * cg_every : kCgEvery;
      cd_visits = 0;
    }
    bool unshrink = false, tighten = false;
    if (shrinking) {
      // Examples not reached (the visit budget ran out) stay active.
      for (std::size_t v = visits; v < active.size(); ++v) active[kept++] = active[v];
      active.resize(kept);
      // Solved on the active set: after a shrunk pass, everything comes back
      // for a full pass; after a full pass (not yet at the tolerance), the
      // threshold drops and shrinking goes on from this pass's extremes (a
      // second full pass would only repeat it).
      if (pg_max - pg_min <= unshrink_below) {
        if (full) {
          tighten = true;
        } else {
          unshrink = true;
        }
      }
      if (!unshrink) {
        pg_max_old = pg_max <= 0.0 ? std::numeric_limits<double>::infinity() : pg_max;
        pg_min_old = pg_min >= 0.0 ? -std::numeric_limits<double>::infinity() : pg_min;
      }
    }

    if (end_of_pass(data, s, epoch, t, T, automatic, full, sq_norm,
                    lambda / 2 * sq_norm + visited_loss / static_cast<double>(n),
                    linear / static_cast<double>(n) - lambda / 2 * sq_norm, primal_checked, dual_checked, w, bias,
                    result, on_epoch)) {
      break;
    }
    // The polish waits until the free-face CG (from kCgStart passes' worth of
    // visits on) has had 2·kCgStart more: where CG does the job (UCI
    // Ionosphere/Sonar, Fashion-MNIST, text) an early polish that does not
    // certify doubles the work; where it does not (Pima) the polish still
    // comes in time. 12 UCI settings, passes to certify summed: polish alone
    // 13777, both without the wait 15551, with it 10697.
    const bool stalled = stalling(t);
    if ((stalled || needed > 0.0) &&
        interior.pays(data, 1, dim + (feature_bias ? 1 : 0), stalled ? T - t : std::min<double>(T - t, needed))) {
      // The interior-point solver; its dual point replaces α if it is higher,
      // and the next exact check (this one) judges it. Its operations count
      // against the visit budget at the rate pays() assumes.
      interior.tried = true;
      const InteriorPointResult ipm = solve_interior_point(
          binary_interior_point_problem(data, B, lambda_n, signed_cost, offset), s.tolerance / 4,
          InteriorPointGate::kIterations);
      const double row_cost = 4.0 * (static_cast<double>(data.nnz()) / static_cast<double>(n) + 1.0);
      const double p = static_cast<double>(data.nnz()) / static_cast<double>(n);
      t += std::min<std::uint64_t>(
          static_cast<std::uint64_t>(ipm.iterations * interior_point_flops(n, p, 1, dim + (feature_bias ? 1 : 0)) /
                                     row_cost),
          T - t);
      if (lambda * ipm.dual > checked_dual) {
        std::vector<double> from(n);
        for (std::size_t i = 0; i < n; ++i) from[i] = lambda_n * ipm.alpha[2 * i];
        load_alpha(from);
        w_sq_at = kNotSummed;
        active.resize(n);  // α moved: shrinking starts over
        std::iota(active.begin(), active.end(), 0u);
        pg_max_old = std::numeric_limits<double>::infinity();
        pg_min_old = -std::numeric_limits<double>::infinity();
        if (end_of_pass(data, s, ++epoch, t, T, automatic, true, sq_norm, lambda * ipm.primal, lambda * ipm.dual,
                        primal, dual, w, bias, result, on_epoch)) {
          break;
        }
        continue;
      }
    }
    if (stalled && t >= kPolishAfter * n) {
      // The polish counts as one more pass in the trace and the stopping
      // check (its exact P and D as the estimate), and its row reads (one
      // dot product or axpy each, half a visit) against the visit budget.
      const PolishResult polish = polish_hinge_dual(data, signed_cost, offset, lambda, B, alpha, w, wb, s.tolerance,
                                                    2 * std::min(t, T - t));
      t += std::min<std::uint64_t>(polish.row_visits / 2, T - t);
      w_sq_at = kNotSummed;  // w moved
      sq_norm = squared_norm(w) + wb * wb;
      linear = 0.0;
      for (std::size_t i = 0; i < n; ++i) linear += alpha[i] * (1.0 - std::copysign(1.0, signed_cost[i]) * offset[i]);
      active.resize(n);  // α moved: shrinking starts over
      std::iota(active.begin(), active.end(), 0u);
      pg_max_old = std::numeric_limits<double>::infinity();
      pg_min_old = -std::numeric_limits<double>::infinity();
      if (end_of_pass(data, s, ++epoch, t, T, automatic, true, sq_norm, polish.primal, polish.dual, primal, dual, w,
                      bias, result, on_epoch)) {
        break;
      }
      continue;
    }
    if (tighten) unshrink_below /= 10;
    if (unshrink) {
      active.resize(n);
      std::iota(active.begin(), active.end(), 0u);
      pg_max_old = std::numeric_limits<double>::infinity();
      pg_min_old = -std::numeric_limits<double>::infinity();
    }
  }

  finish_stop_reason(result, automatic);
  result.dual_objective = dual();
  bias[0] = wb * B;
  result.weights = std::move(w);
  result.bias = bias;
  result.alpha = std::move(alpha);
  result.iterations = t;
  result.epochs = static_cast<double>(t) / static_cast<double>(n);  // in full passes' worth of visits
  result.objective = lambda / 2 * (squared_norm(result.weights) + wb * wb) +
                     mean_loss(data, objective, result.weights, result.bias);
  best.apply_to(result);
  return result;
}

// The active classes of each example for the multiclass dual solver: a
// permutation of 0..K−1 per example whose first count(i) entries are active.
class MulticlassActiveSets {
 public:
  MulticlassActiveSets(std::size_t n, std::size_t K) : K_(K), classes_(n * K), count_(n, static_cast<std::uint32_t>(K)) {
    for (std::size_t i = 0; i < n; ++i) std::iota(classes(i), classes(i) + K, 0u);
  }
  std::uint32_t* classes(std::size_t i) { return &classes_[i * K_]; }
  std::size_t count(std::size_t i) const { return count_[i]; }
  void set_count(std::size_t i, std::size_t k) {
    shrunk_ += count_[i] - k;
    count_[i] = static_cast<std::uint32_t>(k);
  }
  bool all_active() const { return shrunk_ == 0; }
  void activate_all() {
    std::fill(count_.begin(), count_.end(), static_cast<std::uint32_t>(K_));
    shrunk_ = 0;
  }

 private:
  std::size_t K_;
  std::vector<std::uint32_t> classes_;
  std::vector<std::uint32_t> count_;
  std::size_t shrunk_ = 0;  // Σ_i (K − count(i))
};

// Ask the cache for the weights an example's visit reads: for each of its
// features the active classes' entries of that feature's row of W (K
// doubles), or the whole row when many classes are active.
inline void prefetch_class_weights(const double* W, std::size_t K, const RowView& x, const std::uint32_t* cls,
                                   std::size_t k) {
  constexpr std::size_t kLine = 64 / sizeof(double);
  for (std::uint32_t j = 0; j < x.nnz; ++j) {
    const double* row = W + std::size_t{x.indices[j]} * K;
    if (k * 2 > K / kLine + 1) {
      for (std::size_t m = 0; m < K; m += kLine) __builtin_prefetch(row + m);
      __builtin_prefetch(row + K - 1);
    } else {
      for (std::size_t p = 0; p < k; ++p) __builtin_prefetch(row + cls[p]);
    }
  }
}

// Scores of an example's active classes cls[0..k) (k ≥ 1) into scores[c]:
// four classes at a time, each summed in a register in feature order (the
// same sums as a loop over all classes).
inline void active_class_scores(const double* W, std::size_t K, const double* bias_row, double B, const RowView& x,
                                const std::uint32_t* cls, std::size_t k, double* scores) {
  for (std::size_t p = 0; p < k; p += 4) {
    // The last group repeats its last class to fill four lanes.
    const std::size_t c0 = cls[p], c1 = cls[std::min(p + 1, k - 1)], c2 = cls[std::min(p + 2, k - 1)],
                      c3 = cls[std::min(p + 3, k - 1)];
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    if (bias_row != nullptr) {
      s0 = bias_row[c0] * B;
      s1 = bias_row[c1] * B;
      s2 = bias_row[c2] * B;
      s3 = bias_row[c3] * B;
    }
    for (std::uint32_t j = 0; j < x.nnz; ++j) {
      const double xj = x.values[j];
      const double* row = W + std::size_t{x.indices[j]} * K;
      s0 += xj * row[c0];
      s1 += xj * row[c1];
      s2 += xj * row[c2];
      s3 += xj * row[c3];
    }
    scores[c0] = s0;
    scores[c1] = s1;
    scores[c2] = s2;
    scores[c3] = s3;
  }
}

// One example's Crammer-Singer sub-problem over its active classes cls[0..k):
// with A = ‖x‖², G_m the gradient and caps C^y = cap, C^m = 0 (m ≠ y), the new
// α minimises Σ_m (A/2 α_m² + B_m α_m), B_m = G_m − A α_m, subject to α_m ≤ C^m
// and Σ_m α_m = 0 (inactive classes stay at 0): α_m = min(C^m, (β − B_m)/A),
// with β from the r largest D_m = B_m + A·C^m, β = (Σ_{top r} D − A·cap)/r, r the
// largest count with β < D_r. Writes fresh[m] for the active classes, the
// classes whose α changed to moved[], and returns their number.
inline std::size_t solve_cs_subproblem(const std::uint32_t* cls, std::size_t k, std::size_t y, double A, double cap,
                                       const double* grad, const double* alpha, double* b_coef, double* d_sorted,
                                       double* fresh, std::uint32_t* moved) {
  for (std::size_t p = 0; p < k; ++p) {
    const std::size_t m = cls[p];
    b_coef[m] = grad[m] - A * alpha[m];
    d_sorted[p] = b_coef[m] + (m == y ? A * cap : 0.0);
  }
  std::sort(d_sorted, d_sorted + k, std::greater<double>());
  double beta = d_sorted[0] - A * cap;
  std::size_t r = 1;
  for (; r < k && beta < static_cast<double>(r) * d_sorted[r]; ++r) beta += d_sorted[r];
  beta /= static_cast<double>(r);
  std::size_t moves = 0;
  for (std::size_t p = 0; p < k; ++p) {
    const std::size_t m = cls[p];
    fresh[m] = std::min(m == y ? cap : 0.0, (beta - b_coef[m]) / A);
    if (fresh[m] != alpha[m]) moved[moves++] = static_cast<std::uint32_t>(m);
  }
  return moves;
}

// Crammer-Singer multiclass hinge, P(W) = λ/2 ‖W‖² + (1/n) Σ_i c_i max(0, 1 + max_{r≠y_i} s_r − s_{y_i}),
// by dual coordinate ascent over one example's K dual variables at a time
// (Crammer & Singer, JMLR 2001; the sequential dual method of Keerthi et al.,
// KDD 2008). With C_i = c_i/(λn), W = Σ_i α_i x_iᵀ (row m: Σ_i α_i^m x_i) and
//     α_i^m ≤ 0 (m ≠ y_i),  α_i^{y_i} ≤ C_i,  Σ_m α_i^m = 0,
// P(W) = λ·(½‖W‖² + Σ_i C_i ξ_i) and the dual is D(α) = λ·(Σ_i α_i^{y_i} − ½‖W(α)‖²).
// Step for example i, with A = ‖x_i‖² and B_m = s_m + [m ≠ y_i] − A α_i^m: the
// new α_i minimises Σ_m (A/2 α_m² + B_m α_m) on the constraints, i.e.
// α_m = min(C^m, (β − B_m)/A) with β the root of Σ_m α_m(β) = 0, found by
// sorting D_m = B_m + A·C^m (the β at which α_m reaches its cap).
// The Crammer-Singer dual point from Pegasos' dual coefficients (W = Σ_i A_i x̃_iᵀ,
// the same parameterisation: α_i = A_i), made feasible: α_i^m ≤ 0 for m ≠ y_i,
// α_i^{y_i} = −Σ_{m≠y_i} α_i^m, and the example scaled down to α_i^{y_i} ≤ C_i.
template <MulticlassDual O>
std::vector<double> alpha_from_coefficients(const Dataset& data, const O& objective, const EngineSettings& s,
                                            const std::vector<double>& A) {
  const std::size_t n = data.size();
  const std::size_t K = static_cast<std::size_t>(objective.num_outputs());
  std::vector<double> alpha(n * K, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    const RowView x = data.row(i);
    const std::size_t y = static_cast<std::size_t>(x.label);
    const double cap = objective.example_cost(x) / (s.lambda * static_cast<double>(n));
    double* a = &alpha[i * K];
    double sum = 0.0;
    for (std::size_t m = 0; m < K; ++m) {
      if (m == y) continue;
      a[m] = std::min(A[i * K + m], 0.0);
      sum += a[m];
    }
    a[y] = -sum;
    if (a[y] > cap) {
      const double shrink = cap / a[y];
      for (std::size_t m = 0; m < K; ++m) a[m] *= shrink;
      a[y] = std::min(a[y], cap);
    }
  }
  return alpha;
}

// `warm` (optional): dual variables to start from (n × K, feasible; e.g. a
// previous run's TrainResult::alpha); W starts as W(α).
template <MulticlassDual O>
TrainResult train_sdca_multiclass(const Dataset& data, const O& objective, const EngineSettings& s,
                                  const std::function<bool(const EpochInfo&)>& on_epoch = {},
                                  const std::vector<double>* warm = nullptr) {
  const std::size_t n = data.size();
  const std::uint32_t dim = data.dimension;
  const std::size_t K = static_cast<std::size_t>(objective.num_outputs());
  const double lambda = s.lambda;
  const bool feature_bias = s.bias == BiasMode::kFeature;
  const double B = feature_bias ? s.bias_feature_value : 0.0;
  if (s.bias == BiasMode::kUnregularized) {
    throw ConfigError("solver: sdca supports bias none or feature, not unregularized");
  }
  const std::size_t rows = dim + (feature_bias ? 1 : 0);  // W: rows × K, feature-major
  std::vector<double> W(rows * K, 0.0), alpha(n * K, 0.0), sq(n), cap(n);
  for (std::size_t i = 0; i < n; ++i) {
    const RowView x = data.row(i);
    sq[i] = squared_norm(x, B * B);
    cap[i] = objective.example_cost(x) / (lambda * static_cast<double>(n));
  }
  std::vector<std::uint32_t> active(n);
  std::iota(active.begin(), active.end(), 0u);
  Rng rng(derive_seed(s.seed, 4));
  bool automatic = false;
  std::uint64_t T = sdca_visit_budget(s, sq, automatic);
  // Shrinking (automatic stopping only), of classes within an example and of
  // whole examples (Keerthi et al. 2008, Sec. 4): a class m ≠ y_i with
  // α_i^m = 0 whose gradient G_m = s_m + 1 lies more than `shrink_margin`
  // below min_{m': α_i^m' < cap} G_m' is left out of example i's score,
  // sub-problem and W update; an example left with its label alone (then
  // α_i = 0: its margin is met against every class) is left out of the
  // passes. The margin is a tenth of the largest KKT violation of the
  // previous pass (max_m G_m − min_{m: α_m < cap} G_m over the active
  // classes; nothing is shrunk in the first pass). Once those violations drop
  // below `unshrink_below`, every class of every example comes back for a
  // full pass (classes are scored before they are shrunk, so its losses are
  // exact); when even a full pass is below it, it drops 10×. The exact gap
  // that stops training is over all variables.
  // Measured (31k documents, 28 classes, λn = 0.1): a tenth of the violation
  // needs 2/3 of the score work of the whole violation at the same objective.
  const bool shrinking = automatic;
  MulticlassActiveSets sets(n, K);
  double shrink_margin = std::numeric_limits<double>::infinity();
  double unshrink_below = 0.1;

  double sum_alpha_y = 0.0;  // Σ_i α_i^{y_i}, kept incrementally
  double sq_norm = 0.0;      // ‖W‖², kept incrementally (for the cheap gap estimate)
  std::vector<double> scores(K), grad(K), b_coef(K), d_sorted(K), fresh(K), step(K);
  std::vector<std::uint32_t> moved(K);
  std::vector<double> w_out, bias(K, 0.0);
  // α and everything kept from it, from scratch.
  auto load_alpha = [&](const std::vector<double>& from) {
    alpha = from;
    std::fill(W.begin(), W.end(), 0.0);
    sum_alpha_y = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      const RowView x = data.row(i);
      const double* a = &alpha[i * K];
      sum_alpha_y += a[x.label];
      for (std::size_t m = 0; m < K; ++m) {
        if (a[m] == 0.0) continue;
        for (std::uint32_t j = 0; j < x.nnz; ++j) W[std::size_t{x.indices[j]} * K + m] += a[m] * x.values[j];
        if (feature_bias) W[std::size_t{dim} * K + m] += a[m] * B;
      }
    }
    sq_norm = squared_norm(W);
  };
  if (warm != nullptr) load_alpha(*warm);
  auto split = [&] {  // the weights and biases as the model stores them
    w_out.assign(W.begin(), W.begin() + static_cast<std::ptrdiff_t>(std::size_t{dim} * K));
    for (std::size_t m = 0; m < K; ++m) bias[m] = feature_bias ? W[std::size_t{dim} * K + m] * B : 0.0;
  };
  // The exact check calls primal() then dual() at the same t: ‖W‖² (a sweep
  // over d × K doubles) is summed once, in the sweep that copies W out, in
  // the order squared_norm(W) would sum it.
  constexpr std::uint64_t kNotSummed = std::numeric_limits<std::uint64_t>::max();
  double w_sq = 0.0;
  std::uint64_t w_sq_at = kNotSummed;
  std::uint64_t t = 0;
  BestChecked best;
  auto primal = [&] {
    const std::size_t stored = std::size_t{dim} * K;
    w_out.resize(stored);
    double sum = 0.0;
    for (std::size_t e = 0; e < stored; ++e) {
      w_out[e] = W[e];
      sum += W[e] * W[e];
    }
    for (std::size_t e = stored; e < W.size(); ++e) sum += W[e] * W[e];
    for (std::size_t m = 0; m < K; ++m) bias[m] = feature_bias ? W[stored + m] * B : 0.0;
    w_sq = sum;
    w_sq_at = t;
    const double p = lambda / 2 * sum + mean_loss(data, objective, w_out, bias);
    best.offer(p, w_out, bias);
    return p;
  };
  auto dual = [&] { return lambda * (sum_alpha_y - (w_sq_at == t ? w_sq : squared_norm(W)) / 2); };
  // At a stall of coordinate ascent (StallRule), the interior-point solver
  // once, where it pays (InteriorPointGate).
  StallRule stall(n, s.tolerance);
  InteriorPointGate interior;
  double checked_primal = 0.0, checked_dual = 0.0;
  bool checked = false;  // end_of_pass took the exact gap this pass
  auto primal_checked = [&] { return checked_primal = primal(); };
  auto dual_checked = [&] {
    checked = true;
    return checked_dual = dual();
  };

  TrainResult result;
  result.dimension = dim;
  result.outputs = static_cast<int>(K);
  result.solver = "sdca";
  int epoch = 0;
  while (t < T) {
    ++epoch;
    // Full: every class of every example is visited, so the visited losses
    // are the losses (the gap estimate holds).
    const bool full = active.size() == n && sets.all_active();
    rng.shuffle(std::span<std::uint32_t>(active));
    const std::size_t visits = static_cast<std::size_t>(std::min<std::uint64_t>(active.size(), T - t));
    double visited_loss = 0.0;  // Σ c_i ξ_i at the visits (an estimate, exact once W settles)
    double violation_max = 0.0;
    std::size_t kept = 0;
    for (std::size_t v = 0; v < visits; ++v, ++t) {
      // Three-stage prefetch (as in the Pegasos engine): where the row three
      // visits ahead starts, that row two ahead and its per-example state,
      // and the weights of the next one, each stage reading only what the
      // previous one fetched.
      if (v + 3 < visits) prefetch_row_start(data, active[v + 3]);
      if (v + 2 < visits) {
        const std::uint32_t i2 = active[v + 2];
        prefetch_row(data.row(i2));
        __builtin_prefetch(sets.classes(i2));
        __builtin_prefetch(&alpha[std::size_t{i2} * K]);
      }
      if (v + 1 < visits) {
        const std::uint32_t i1 = active[v + 1];
        prefetch_class_weights(W.data(), K, data.row(i1), sets.classes(i1), sets.count(i1));
      }
      const std::uint32_t i = active[v];
      const RowView x = data.row(i);
      const std::size_t y = static_cast<std::size_t>(x.label);
      std::uint32_t* cls = sets.classes(i);
      std::size_t k = sets.count(i);
      // Scores of the active classes.
      if (k == K) {
        for (std::size_t m = 0; m < K; ++m) scores[m] = feature_bias ? W[std::size_t{dim} * K + m] * B : 0.0;
        for (std::uint32_t j = 0; j < x.nnz; ++j) {
          const double xj = x.values[j];
          const double* row = &W[std::size_t{x.indices[j]} * K];
          for (std::size_t m = 0; m < K; ++m) scores[m] += xj * row[m];
        }
      } else {
        active_class_scores(W.data(), K, feature_bias ? &W[std::size_t{dim} * K] : nullptr, B, x, cls, k,
                            scores.data());
      }
      double* a = &alpha[std::size_t{i} * K];
      // G_m = s_m + [m ≠ y] (the gradient of the minimisation form, up to a
      // constant), its largest value over the active classes and its smallest
      // over the active ones below their cap.
      double g_max = -std::numeric_limits<double>::infinity(), g_min = std::numeric_limits<double>::infinity();
      for (std::size_t p = 0; p < k; ++p) {
        const std::size_t m = cls[p];
        const double g = scores[m] + (m == y ? 0.0 : 1.0);
        grad[m] = g;
        g_max = std::max(g_max, g);
        if (a[m] < (m == y ? cap[i] : 0.0)) g_min = std::min(g_min, g);
      }
      if (full && g_max - grad[y] > 0.0) visited_loss += cap[i] * lambda * static_cast<double>(n) * (g_max - grad[y]);
      if (shrinking) {
        for (std::size_t p = 0; p < k;) {
          const std::size_t m = cls[p];
          if (m != y && a[m] == 0.0 && g_min - grad[m] > shrink_margin) {
            std::swap(cls[p], cls[--k]);  // shrink class m: α_i^m stays 0
          } else {
            ++p;
          }
        }
        sets.set_count(i, k);
        if (k == 1) continue;  // only y_i left, so α_i = 0: shrink the example
        active[kept++] = i;
        if (g_min < std::numeric_limits<double>::infinity()) violation_max = std::max(violation_max, g_max - g_min);
      }
      const double A = sq[i];
      if (A <= 0.0) {
        // An empty row (bias none) does not move W, and D is linear in α_i:
        // its maximum puts α_i^y at C_i (and −C_i on another class).
        if (a[y] != cap[i]) {
          sum_alpha_y += cap[i] - a[y];
          std::fill(a, a + K, 0.0);
          a[y] = cap[i];
          a[y == 0 ? 1 : 0] = -cap[i];
        }
        continue;
      }
      if (!(g_max > g_min)) continue;  // the sub-problem is solved already
      const std::size_t moves = solve_cs_subproblem(cls, k, y, A, cap[i], grad.data(), a, b_coef.data(),
                                                    d_sorted.data(), fresh.data(), moved.data());
      if (moves == 0) continue;
      for (std::size_t q = 0; q < moves; ++q) {
        const std::size_t m = moved[q];
        const double delta = fresh[m] - a[m];
        // ‖W + δ x e_mᵀ‖² = ‖W‖² + 2δ (w_m·x) + δ² A (scores include the bias column).
        sq_norm += 2.0 * delta * scores[m] + delta * delta * A;
        if (m == y) sum_alpha_y += delta;
        step[q] = delta;
        a[m] = fresh[m];
      }
      // W += Σ_moved δ_m x e_mᵀ, feature by feature (one row of W at a time).
      for (std::uint32_t j = 0; j < x.nnz; ++j) {
        const double xj = x.values[j];
        double* row = &W[std::size_t{x.indices[j]} * K];
        for (std::size_t q = 0; q < moves; ++q) row[moved[q]] += step[q] * xj;
      }
      if (feature_bias) {
        for (std::size_t q = 0; q < moves; ++q) W[std::size_t{dim} * K + moved[q]] += step[q] * B;
      }
    }
    bool unshrink = false, tighten = false;
    if (shrinking) {
      for (std::size_t v = visits; v < active.size(); ++v) active[kept++] = active[v];  // not reached: stay
      active.resize(kept);
      // Solved on the active set: after a shrunk pass, everything comes back
      // for a full pass; after a full pass (not yet at the tolerance), the
      // threshold drops and the shrinking done in that pass stands.
      if (violation_max <= unshrink_below) {
        if (full) {
          tighten = true;
        } else {
          unshrink = true;
        }
      }
      shrink_margin = violation_max / 10;
    }

    if (end_of_pass(data, s, epoch, t, T, automatic, full, sq_norm,
                    lambda / 2 * sq_norm + visited_loss / static_cast<double>(n),
                    lambda * (sum_alpha_y - sq_norm / 2), primal_checked, dual_checked, w_out, bias, result,
                    on_epoch)) {
      break;
    }
    const bool stalled = automatic && checked && stall.check(t, checked_primal, checked_dual);
    const double needed = automatic && checked ? stall.needed() : -1.0;
    checked = false;
    if ((stalled || needed > 0.0) &&
        interior.pays(data, K, rows * K, stalled ? T - t : std::min<double>(T - t, needed))) {
      // As in the binary solver: the dual point replaces α if it is higher,
      // the next exact check judges it, its operations count against the
      // visit budget.
      interior.tried = true;
      const InteriorPointResult ipm = solve_interior_point(crammer_singer_interior_point_problem(data, B, K, cap),
                                                           s.tolerance / 4, InteriorPointGate::kIterations);
      const double p = static_cast<double>(data.nnz()) / static_cast<double>(n);
      const double row_cost = 4.0 * static_cast<double>(K) * (p + 1.0);
      t += std::min<std::uint64_t>(
          static_cast<std::uint64_t>(ipm.iterations * interior_point_flops(n, p, K, rows * K) / row_cost), T - t);
      if (lambda * ipm.dual > checked_dual) {
        std::vector<double> from(n * K);
        for (std::size_t i = 0; i < n; ++i) {
          const std::size_t y = static_cast<std::size_t>(data.row(i).label);
          double sum = 0.0;
          for (std::size_t m = 0; m < K; ++m) {
            if (m == y) continue;
            from[i * K + m] = -ipm.alpha[i * K + m];
            sum += ipm.alpha[i * K + m];
          }
          from[i * K + y] = sum;  // ≤ cap: Σ_j α_ij = cap with α_iy ≥ 0
        }
        load_alpha(from);
        active.resize(n);  // α moved: shrinking starts over
        std::iota(active.begin(), active.end(), 0u);
        sets.activate_all();
        shrink_margin = std::numeric_limits<double>::infinity();
        if (end_of_pass(data, s, ++epoch, t, T, automatic, true, sq_norm, lambda * ipm.primal, lambda * ipm.dual,
                        primal_checked, dual_checked, w_out, bias, result, on_epoch)) {
          break;
        }
        checked = false;
        continue;
      }
    }
    if (tighten) unshrink_below /= 10;
    if (unshrink) {
      active.resize(n);
      std::iota(active.begin(), active.end(), 0u);
      sets.activate_all();
    }
  }

  finish_stop_reason(result, automatic);
  result.dual_objective = dual();
  split();
  result.weights = std::move(w_out);
  result.bias = bias;
  result.alpha = std::move(alpha);
  result.iterations = t;
  result.epochs = static_cast<double>(t) / static_cast<double>(n);
  result.objective = lambda / 2 * squared_norm(W) + mean_loss(data, objective, result.weights, result.bias);
  best.apply_to(result);
  return result;
}

}  // namespace pegasos
