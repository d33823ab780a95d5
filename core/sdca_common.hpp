// The parts shared by the dual solvers (core/sdca_binary.hpp,
// core/sdca_multiclass.hpp; see core/sdca.hpp): the end of a pass (trace
// point, stopping check), the visit budget, the best checked point, the stall
// rule, and the hand-over to the interior-point solver.
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

#include "core/dataset.hpp"
#include "core/errors.hpp"
#include "core/interior_point.hpp"
#include "core/objective.hpp"
#include "core/training.hpp"

namespace pegasos {

// The end of a pass, the same for both dual solvers: the trace point and the
// stopping check. The exact gap needs a pass over the data: it is taken on a
// full pass when the O(1) estimate from running sums (primal_estimate −
// dual_estimate) says the tolerance may be met, and every 10th pass in any
// case (P and D are global: a shrunk phase can have converged), or for a
// trace. The estimate lags within a pass (each loss is taken before the
// example's own step and w moves on after it), so the check is also taken
// when the estimate is within kNearEstimate tolerances and at least half a
// pass's worth of visits, and a quarter of all visits so far, have gone by
// since the last exact check: a check reads the data once on all cores,
// about half a pass on two, and the spacing grows with the run, so such
// checks are few. Where shrunk passes are short a check costs many of them,
// so with CheckHints::min_spacing (the binary solver: half a pass) no check
// of either kind comes sooner after the last one. One-vs-all on 2000 random
// Fourier features of 10k Fashion-MNIST images, C = 10: a class whose
// estimate said "within the tolerance" on 40 short passes in a row, where
// the exact gap was still 2-3 tolerances, was checked on each of them; with
// the spacing the checks' CPU time is 19% lower (1768 -> 1430 samples)
// for 1.2% more visits (2 of the 10 classes stop later; objective
// 0.399534 -> 0.399492). (Spacing the every-10th-pass check further, by
// 10 passes' worth of visits, saved more there but delayed the stalls that
// the checks detect for the hand-overs: 139 -> 254 passes on a small
// one-vs-all fixture.) The multiclass solver keeps the per-pass rule.
// Neither is taken while the last pass still raised the dual
// estimate by more than kNearEstimate tolerances (the gap is then most likely
// still above it). RCV1-like (780k rows): a failing check after pass 2 (the
// dual rose 1.7%) is skipped, and pass 3's is taken (the estimate said 9
// tolerances, the exact gap was within one), which saves a shrunk pass and
// a check (3.33 -> 3 passes, 2 -> 1 checks). `primal()` also brings
// `weights` / `bias` up to date. Returns true when training stops
// (converged, or on_epoch asked to).
inline constexpr double kNearEstimate = 10.0;
// For the check's rule above: visits since the last exact check, and the
// dual estimate's rise over the pass. Hand-overs pass {} (their estimate is
// exact).
struct CheckHints {
  std::uint64_t since_check = 0;
  double dual_rise = 0.0;
  bool defer_periodic = false;  // skip the every-10th-pass check (see defer_periodic_check)
  // Visits since the last exact check below which no check is taken (0:
  // no such rule; hand-overs, whose estimate is exact, pass 0).
  std::uint64_t min_spacing = 0;
};
template <class Primal, class Dual>
bool end_of_pass(const Dataset& data, const EngineSettings& s, int epoch, std::uint64_t t, std::uint64_t T,
                 bool automatic, bool full, const CheckHints& hints, double sq_norm, double primal_estimate,
                 double dual_estimate, Primal&& primal, Dual&& dual, const std::vector<double>& weights,
                 const std::vector<double>& bias, TrainResult& result,
                 const std::function<bool(const EpochInfo&)>& on_epoch) {
  EpochInfo info;
  info.iterations = t;
  info.epoch = epoch;
  info.traced = s.trace_objective && (epoch % std::max(1, s.trace_every) == 0 || t == T);
  if (!std::isfinite(sq_norm)) {
    throw InputError(data.source + ": the weights became infinite or NaN at iteration " + std::to_string(t) +
                     "; scale the features (e.g. to unit norm) or raise lambda");
  }
  if (automatic) {
    const double estimate = primal_estimate - dual_estimate, tolerance = s.tolerance * std::abs(primal_estimate);
    const std::uint64_t spacing = std::max<std::uint64_t>(data.size() / 2, t / 4);
    const bool settling = hints.dual_rise <= kNearEstimate * tolerance;
    const bool near = estimate <= kNearEstimate * tolerance && hints.since_check >= spacing;
    const bool spaced = hints.since_check >= hints.min_spacing;
    info.stop_check = spaced && ((epoch % 10 == 0 && !hints.defer_periodic) || (full && settling && (estimate <= tolerance || near)));
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

// The visit budget of a dual run: iterations or epochs when given (a fixed
// budget), else the cap of automatic stopping, max_epochs passes (or, at 0,
// sized by κ = mean ‖x̃‖²/(λn) from the row norms `sq`).
// Whether sdca_visit_budget reads the row norms (automatic stopping with the
// cap sized by the problem).
inline bool visit_budget_reads_norms(const EngineSettings& s) {
  return s.iterations == 0 && !(s.epochs > 0) && s.max_epochs <= 0;
}

// `sum_sq`: Σ‖x̃_i‖² over the n rows (read only where visit_budget_reads_norms).
inline std::uint64_t sdca_visit_budget(const EngineSettings& s, std::size_t n, double sum_sq, bool& automatic) {
  std::uint64_t T = s.iterations;
  if (T == 0 && s.epochs > 0) T = static_cast<std::uint64_t>(std::ceil(s.epochs * static_cast<double>(n)));
  automatic = T == 0;
  if (!automatic) return T;
  int cap = s.max_epochs;
  if (cap <= 0) {
    const double nd = static_cast<double>(std::max<std::size_t>(n, 1));
    cap = automatic_epoch_cap(Solver::kSdca, sum_sq / nd / (s.lambda * nd));
  }
  return static_cast<std::uint64_t>(cap) * n;
}
inline std::uint64_t sdca_visit_budget(const EngineSettings& s, const std::vector<double>& sq, bool& automatic) {
  double sum = 0.0;
  for (double v : sq) sum += v;
  return sdca_visit_budget(s, sq.size(), sum, automatic);
}

// The best primal point of a dual run's exact checks, returned by a run that
// ends uncertified: on badly conditioned data the last iterate's objective
// can be far above an earlier one's (tens of percent from pass to pass), and
// the dual bound, which never decreases, certifies any primal point alike.
//
// A warm start offers the old model's weights first and certifies the best
// point (certify_best): the gap test then compares the dual bound with the
// best primal value seen, so a run from a near-optimal model stops once the
// dual has caught up with it, and returns that point if it is the best.
struct BestChecked {
  double objective = std::numeric_limits<double>::infinity();
  std::vector<double> weights, bias;
  bool certify_best = false;

  void offer(double p, const std::vector<double>& w, const std::vector<double>& b) {
    if (p < objective) {
      objective = p;
      weights = w;
      bias = b;
    }
  }
  // The primal value a gap test uses for a checked value p.
  double certified(double p) const { return certify_best ? std::min(p, objective) : p; }
  void apply_to(TrainResult& result) {
    if ((result.converged && !certify_best) || !(objective < result.objective)) return;
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
      if (span < rate_passes_ * n_) continue;
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
  // A warm start's rate window (see ExactChecks::warm_start): its first check
  // is the start point, so the rate since then is known after a few passes.
  static constexpr double kWarmRatePasses = 3;
  // From the last check(): visits still needed at the rate seen (∞: the gap
  // did not shrink; −1: no check far enough back).
  double needed() const { return needed_; }
  void set_rate_passes(double passes) { rate_passes_ = passes; }

 private:
  double n_, tolerance_, needed_ = -1.0, rate_passes_ = kRatePasses;
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
  // Mehrotra's method with Gondzio's correctors took 9–40 steps to a gap of
  // tolerance/4 on UCI Vehicle, Satellite and Glass, 95 on Shuttle's
  // Crammer–Singer problem (bench/c_sweep.py); the hand-over is judged
  // worth it at the cost of kIterations steps, and the solver may go on to
  // kMaxIterations while its gap keeps halving (every step is charged to the
  // visit budget).
  static constexpr int kIterations = 80;
  static constexpr int kMaxIterations = 240;
  // An 8 MB dense normal matrix for (rK) = 1024 unknowns, 0.4 GFlop a
  // Cholesky factorisation.
  static constexpr std::size_t kMaxUnknowns = 1024;
  // The prediction of coordinate ascent's visits (the rate of its last
  // passes) can be far too high where shrinking makes the later passes cheap
  // and quick: Fashion-MNIST T-shirt vs rest (60000 × 784 raw pixels, C = 1)
  // handed over at pass 61, when the rate said > 7800 passes, and the solver
  // took 20 Newton steps (a 784² normal matrix from 60000 dense rows each),
  // 70 s; coordinate ascent alone certifies at pass 230–307, in 12–14 s. So the
  // hand-over also waits until coordinate ascent has spent kHedge of a
  // typical solve (kTypicalIterations steps; about p/2 passes for rows of p
  // non-zeros), a rent-or-buy rule that only binds where a solve costs
  // hundreds of passes: on the unscaled UCI sets that hand over, a typical
  // solve is 80–300 passes' worth (Spambase about 80, Breast Cancer about 270
  // before screening), so the wait is 8–30 passes, mostly before where they
  // handed over (bench/c_sweep.py on 8 sets: the same passes everywhere but
  // DNA's Crammer–Singer problem, 470 -> 382 at C = 10, 560 -> 618 at 100).
  // A warm start (ExactChecks::warm_start) does not wait: it starts near its
  // optimum, where the rate is no early guess (a λ path's Crammer–Singer fit
  // on 300 rows waited its way from 74 to 611 passes).
  static constexpr double kTypicalIterations = 20.0;
  static constexpr double kHedge = 0.1;
  bool tried = false;
  bool warm = false;

  bool pays(const Dataset& data, std::size_t K, std::size_t unknowns, double visits_left, double visits_done) const {
    if (tried || unknowns > kMaxUnknowns || data.size() == 0) return false;
    const double p = static_cast<double>(data.nnz()) / static_cast<double>(data.size());
    const double step = interior_point_flops(data.size(), p, K, unknowns);
    const double visit = 4.0 * static_cast<double>(K) * (p + 1.0);
    return kIterations * step <= visits_left * visit &&
           (warm || visits_done * visit >= kHedge * kTypicalIterations * step);
  }
  // The visits a run of `iterations` Newton steps is charged against the
  // budget: its operations at the cost of a visit that pays() assumes.
  static std::uint64_t visits_charged(const Dataset& data, std::size_t K, std::size_t unknowns, double iterations) {
    const double p = static_cast<double>(data.nnz()) / static_cast<double>(data.size());
    const double visit = 4.0 * static_cast<double>(K) * (p + 1.0);
    return static_cast<std::uint64_t>(iterations * interior_point_flops(data.size(), p, K, unknowns) / visit);
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

// A smoothed primal candidate for the tail of a dual run. Near the optimum
// coordinate ascent's dual barely moves (Crammer–Singer on 31k documents at
// C = 10: the dual rose by 2e-8 of P a pass after pass 200) while the primal
// at w(α) jitters from check to check (relative gaps 4.5e-4 .. 1.4e-3 at
// tolerance 5e-4), so certification waited for a lucky check. An exponential
// average of the end-of-pass weights, w̄ ← w̄ + β (w − w̄) with β = 0.1 (about
// the last 10 passes), is a primal point like any other: P(w̄) − D(α) is a
// duality gap, and P(w̄) ≤ the average of the P(w) it mixes (convexity). It
// starts once an exact gap is within kFromTolerances tolerances (earlier the
// average lags behind a fast-moving w), is a candidate after kWarmPasses
// passes, and is kept only where it costs at most the data: |w| ≤ nnz (one
// more copy of w in memory, an O(|w|) update a pass; hashed text with many
// classes is left out). Measured there: the smoothed gap 2.2e-4 .. 4.7e-4
// where w's was 4.5e-4 .. 1.4e-3; certified at 195 instead of 280 passes.
struct SmoothedIterate {
  static constexpr double kBeta = 0.1;
  static constexpr double kFromTolerances = 10.0;
  static constexpr int kWarmPasses = 5;
  std::vector<double> w;
  int passes = 0;  // averaged so far; the average is on while w is not empty

  static bool affordable(std::size_t size, const Dataset& data) { return size <= data.nnz(); }
  // After an exact check with gap P − D: start from w where due.
  void maybe_start(bool automatic, const Dataset& data, const std::vector<double>& current, double primal,
                   double dual, double tolerance) {
    if (!w.empty() || !automatic || !affordable(current.size(), data)) return;
    if (primal - dual > kFromTolerances * tolerance * std::abs(primal)) return;
    w = current;
    passes = 0;
  }
  // At the end of a pass.
  void update(const std::vector<double>& current) {
    for (std::size_t e = 0; e < w.size(); ++e) w[e] += kBeta * (current[e] - w[e]);
    ++passes;
  }
  // w jumped (a dual point loaded from elsewhere): the average starts over.
  void reset() {
    passes = 0;
    std::vector<double>().swap(w);
  }
  bool ready() const { return !w.empty() && passes >= kWarmPasses; }
};

// The bookkeeping of a dual run's exact gap checks, the same for both
// solvers: ‖w‖² summed by the check's primal() and reused by its dual() at
// the same t, the best checked point, the stall rule, the interior-point
// gate, and the last check's P and D.
struct ExactChecks {
  static constexpr std::uint64_t kNotSummed = std::numeric_limits<std::uint64_t>::max();
  double w_sq = 0.0;
  std::uint64_t w_sq_at = kNotSummed;
  double primal_at_w = 0.0;  // the primal at w, computed with w_sq (valid while w_sq_at is t)
  BestChecked best;
  StallRule stall;
  InteriorPointGate interior;
  double primal = 0.0, dual = 0.0;
  std::uint64_t checked_at = 0;  // t of the last exact check
  bool fresh = false;  // end_of_pass took the exact gap this pass
  ExactChecks(std::size_t n, double tolerance) : stall(n, tolerance) {}

  // A warm start (automatic stopping): the exact gap at the start point (P0
  // at w(α), D0) is the stall rule's first check, and its rate window for the
  // interior-point gate is kWarmRatePasses rather than kRatePasses. A cold
  // run's rate needs two checks 20 passes apart; a warm start beginning where
  // coordinate ascent crawls (unscaled UCI sets, where the interior-point
  // solver certifies) would wait as long for a hand-over that its start does
  // not bring any closer. Measured (bench/warm_start.py): UCI ionosphere C =
  // 100 and UCI spam C = 1, warm/cold 1.02 → 0.81 and 0.95 → 0.79 at 10% new
  // rows (Sonar C = 100 and Vehicle gain too); the cases that never hand over
  // are unchanged. The check reads the data once more, like any exact check.
  void warm_start(double p0, double d0) {
    interior.warm = true;
    stall.set_rate_passes(StallRule::kWarmRatePasses);
    stall.check(0, p0, d0);
  }
};

// The growing first pass of the dual solvers (EngineSettings::growing_first_pass;
// a cold start): its t-th visit steps in the dual of λ/2‖w‖² + (1/t)Σ_{j≤t} ℓ_j,
// whose weights are n/t times ours (Shalev-Shwartz & Zhang, JMLR 14, 2013,
// § 7); at t = n the problems are one. Only at λn ≥ 30, where plain steps from
// w = 0 leave the box by far on unit rows; at λn = 7.8 it did not pay, at 10
// it was neutral (README, Solvers), and 30 is no C of a usual grid (C ≤ 1/30:
// 0.01 and 2⁻⁵ take it, 0.1 and 2⁻⁴ do not), so no such C sits on the edge.
// The pass after it takes its exact check on the estimate alone: its dual rise
// mends the first pass's small early steps and says nothing of the rest.
inline constexpr double kGrowingMinLambdaN = 30.0;
inline bool takes_growing_first_pass(const EngineSettings& s, std::size_t n, bool warm) {
  return s.growing_first_pass && !warm && s.lambda * static_cast<double>(n) >= kGrowingMinLambdaN;
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

}  // namespace pegasos
