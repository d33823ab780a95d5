// Dual coordinate ascent for the Crammer–Singer multiclass hinge (Crammer &
// Singer, JMLR 2001; Keerthi et al., KDD 2008): one example's K dual variables
// at a time, the sub-problem solved exactly by sorting, with shrinking of
// classes within an example; the interior-point solver of
// core/interior_point.hpp where coordinate ascent stalls.
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

#include "core/cs_subproblem.hpp"
#include "core/dataset.hpp"
#include "core/interior_point_screen.hpp"
#include "core/objective.hpp"
#include "core/random.hpp"
#include "core/ray_primal.hpp"
#include "core/sdca_common.hpp"
#include "core/training.hpp"
#include "core/visit_order.hpp"

namespace pegasos {

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
// previous run's TrainResult::alpha); W starts as W(α). `start` (optional): a
// warm start's weights, the first primal candidate (BestChecked::certify_best).
template <MulticlassDual O>
class MulticlassSdca {
 public:
  MulticlassSdca(const Dataset& data, const O& objective, const EngineSettings& s,
                 const std::function<bool(const EpochInfo&)>& on_epoch, const std::vector<double>* warm,
                 const WarmStart* start = nullptr)
      : data_(data), objective_(objective), s_(s), on_epoch_(on_epoch), n_(data.size()), dim_(data.dimension),
        K_(static_cast<std::size_t>(objective.num_outputs())), lambda_(s.lambda),
        feature_bias_(s.bias == BiasMode::kFeature), B_(feature_bias_ ? s.bias_feature_value : 0.0),
        rows_(dim_ + (feature_bias_ ? 1 : 0)), sets_(n_, K_), checks_(n_, s.tolerance) {
    if (s.bias == BiasMode::kUnregularized) {
      throw ConfigError("solver: sdca supports bias none or feature, not unregularized");
    }
    W_.assign(rows_ * K_, 0.0);
    alpha_.assign(n_ * K_, 0.0);
    sq_.resize(n_);
    cap_.resize(n_);
    for (std::size_t i = 0; i < n_; ++i) {
      const RowView x = data.row(i);
      sq_[i] = squared_norm(x, B_ * B_);
      cap_[i] = objective.example_cost(x) / (lambda_ * static_cast<double>(n_));
    }
    active_.resize(n_);
    std::iota(active_.begin(), active_.end(), 0u);
    T_ = sdca_visit_budget(s, sq_, automatic_);
    shrinking_ = automatic_;
    for (auto* v : {&scores_, &grad_, &b_coef_, &d_sorted_, &fresh_, &step_}) v->assign(K_, 0.0);
    moved_.assign(K_, 0);
    bias_.assign(K_, 0.0);
    growing_ = takes_growing_first_pass(s, n_, warm != nullptr || start != nullptr);
    if (warm != nullptr) load_alpha(*warm);
    if (start != nullptr) {  // a warm start's own weights: the first candidate of the certificate
      checks_.best.certify_best = true;
      checks_.best.offer(primal_objective(data, objective, s, start->weights, start->bias), start->weights, start->bias);
      if (automatic_) {
        const double p0 = primal();
        checks_.warm_start(p0, dual());
      }
    }
  }

  TrainResult run() {
    result_.dimension = dim_;
    result_.outputs = static_cast<int>(K_);
    result_.solver = "sdca";
    int epoch = 0;
    while (t_ < T_) {
      ++epoch;
      const double dual_at_start = dual_estimate_now();
      const bool after_growing = growing_ && epoch == 2;
      const Pass pass = coordinate_ascent(growing_ && epoch == 1);
      smooth_.update(W_);
      bool unshrink = false, tighten = false;
      if (shrinking_) shrink(pass, unshrink, tighten);
      const double dual_estimate = dual_estimate_now();
      const CheckHints hints{t_ - checks_.checked_at, after_growing ? 0.0 : dual_estimate - dual_at_start,
                             defer_periodic_check()};
      if (end_of_pass(data_, s_, epoch, t_, T_, automatic_, pass.full, hints, sq_norm_,
                      checks_.best.certified(lambda_ / 2 * sq_norm_ + pass.visited_loss / static_cast<double>(n_)),
                      dual_estimate, [&] { return primal_checked(); },
                      [&] { return dual_checked(); }, w_out_, bias_, result_, on_epoch_)) {
        break;
      }
      const HandOver h = hand_over(epoch);
      if (h == HandOver::kStop) break;
      if (h == HandOver::kDone) continue;
      if (tighten) unshrink_below_ /= 10;
      if (unshrink) {
        active_.resize(n_);
        std::iota(active_.begin(), active_.end(), 0u);
        sets_.activate_all();
      }
    }
    return finish();
  }

 private:
  // Shrinking (automatic stopping only), of classes within an example and of
  // whole examples (Keerthi et al. 2008, Sec. 4): a class m ≠ y_i with
  // α_i^m = 0 whose gradient G_m = s_m + 1 lies more than `shrink_margin_`
  // below min_{m': α_i^m' < cap} G_m' is left out of example i's score,
  // sub-problem and W update; an example left with its label alone (then
  // α_i = 0: its margin is met against every class) is left out of the
  // passes. The margin is a tenth of the largest KKT violation of the
  // previous pass (max_m G_m − min_{m: α_m < cap} G_m over the active
  // classes; nothing is shrunk in the first pass). Once those violations drop
  // below `unshrink_below_`, every class of every example comes back for a
  // full pass (classes are scored before they are shrunk, so its losses are
  // exact); when even a full pass is below it, it drops 10×. The exact gap
  // that stops training is over all variables.
  // Measured (31k documents, 28 classes, λn = 0.1): a tenth of the violation
  // needs 2/3 of the score work of the whole violation at the same objective.
  struct Pass {
    // Every class of every example is visited, so the visited losses are the
    // losses (the gap estimate holds).
    bool full = false;
    std::size_t visits = 0, kept = 0;
    double visited_loss = 0.0;  // Σ c_i ξ_i at the visits (an estimate, exact once W settles)
    double violation_max = 0.0;
  };
  enum class HandOver { kNone, kDone, kStop };

  // α and everything kept from it, from scratch.
  void load_alpha(const std::vector<double>& from) {
    alpha_ = from;
    smooth_.reset();
    std::fill(W_.begin(), W_.end(), 0.0);
    sum_alpha_y_ = 0.0;
    for (std::size_t i = 0; i < n_; ++i) {
      const RowView x = data_.row(i);
      const double* a = &alpha_[i * K_];
      sum_alpha_y_ += a[x.label];
      for (std::size_t m = 0; m < K_; ++m) {
        if (a[m] == 0.0) continue;
        for (std::uint32_t j = 0; j < x.nnz; ++j) W_[std::size_t{x.indices[j]} * K_ + m] += a[m] * x.values[j];
        if (feature_bias_) W_[std::size_t{dim_} * K_ + m] += a[m] * B_;
      }
    }
    sq_norm_ = squared_norm(W_);
  }

  // One pass over the active examples in a fresh random order, with a
  // three-stage prefetch (as in the Pegasos engine): where the row three
  // visits ahead starts, that row two ahead and its per-example state, and
  // the weights of the next one, each stage reading only what the previous
  // one fetched.
  // `growing`: the growing first pass (takes_growing_first_pass).
  Pass coordinate_ascent(bool growing) {
    Pass pass;
    pass.full = active_.size() == n_ && sets_.all_active();
    pass_order_.arrange(std::span<std::uint32_t>(active_), rng_);
    pass.visits = static_cast<std::size_t>(std::min<std::uint64_t>(active_.size(), T_ - t_));
    for (std::size_t v = 0; v < pass.visits; ++v, ++t_) {
      if (v + 3 < pass.visits) prefetch_row_start(data_, active_[v + 3]);
      if (v + 2 < pass.visits) {
        const std::uint32_t i2 = active_[v + 2];
        prefetch_row(data_.row(i2));
        // All of the example's class list and α_i (K = 28: 2 and 4 lines),
        // not only their first lines: the rest missed on every visit.
        prefetch_span(sets_.classes(i2), K_ * sizeof(std::uint32_t));
        prefetch_span(&alpha_[std::size_t{i2} * K_], K_ * sizeof(double));
        __builtin_prefetch(&cap_[i2]);
        __builtin_prefetch(&sq_[i2]);
      }
      if (v + 1 < pass.visits) {
        const std::uint32_t i1 = active_[v + 1];
        prefetch_class_weights(W_.data(), K_, data_.row(i1), sets_.classes(i1), sets_.count(i1));
      }
      // The growing first pass: the t = v + 1 rows' problem, whose W is n/t times ours.
      visit(active_[v], pass, growing ? static_cast<double>(n_) / static_cast<double>(v + 1) : 1.0);
    }
    return pass;
  }

  // Example i's sub-problem: scores and gradients of its active classes,
  // class shrinking, then the exact step on its K dual variables.
  // `grow`: the growing first pass's n/t (1 otherwise), which scales the scores
  // and the cap of the sub-problem, and the step back (α_i is 0 at its visit).
  void visit(std::uint32_t i, Pass& pass, double grow) {
    const RowView x = data_.row(i);
    const std::size_t y = static_cast<std::size_t>(x.label);
    std::uint32_t* cls = sets_.classes(i);
    std::size_t k = sets_.count(i);
    score(x, cls, k);
    double* a = &alpha_[std::size_t{i} * K_];
    // G_m = s_m + [m ≠ y] (the gradient of the minimisation form, up to a
    // constant), its largest value over the active classes and its smallest
    // over the active ones below their cap.
    double g_max = -std::numeric_limits<double>::infinity(), g_min = std::numeric_limits<double>::infinity();
    for (std::size_t p = 0; p < k; ++p) {
      const std::size_t m = cls[p];
      const double g = scores_[m] * grow + (m == y ? 0.0 : 1.0);
      grad_[m] = g;
      g_max = std::max(g_max, g);
      if (a[m] < (m == y ? cap_[i] : 0.0)) g_min = std::min(g_min, g);
    }
    if (pass.full && g_max - grad_[y] > 0.0) {
      pass.visited_loss += cap_[i] * lambda_ * static_cast<double>(n_) * (g_max - grad_[y]);
    }
    if (shrinking_) {
      for (std::size_t p = 0; p < k;) {
        const std::size_t m = cls[p];
        if (m != y && a[m] == 0.0 && g_min - grad_[m] > shrink_margin_) {
          std::swap(cls[p], cls[--k]);  // shrink class m: α_i^m stays 0
        } else {
          ++p;
        }
      }
      sets_.set_count(i, k);
      if (k == 1) return;  // only y_i left, so α_i = 0: shrink the example
      active_[pass.kept++] = i;
      if (g_min < std::numeric_limits<double>::infinity()) pass.violation_max = std::max(pass.violation_max, g_max - g_min);
    }
    const double A = sq_[i];
    if (A <= 0.0) {
      // An empty row (bias none) does not move W, and D is linear in α_i:
      // its maximum puts α_i^y at C_i (and −C_i on another class).
      if (a[y] != cap_[i]) {
        sum_alpha_y_ += cap_[i] - a[y];
        std::fill(a, a + K_, 0.0);
        a[y] = cap_[i];
        a[y == 0 ? 1 : 0] = -cap_[i];
      }
      return;
    }
    if (!(g_max > g_min)) return;  // the sub-problem is solved already
    const std::size_t moves = solve_cs_subproblem(cls, k, y, A, cap_[i] * grow, grad_.data(), a, b_coef_.data(),
                                                  d_sorted_.data(), fresh_.data(), moved_.data());
    if (grow != 1.0) {
      for (std::size_t q = 0; q < moves; ++q) fresh_[moved_[q]] /= grow;
    }
    if (moves > 0) move(x, y, A, a, moves);
  }

  // scores_[m] = w_m·x̃ for the k active classes cls of row x.
  void score(const RowView& x, const std::uint32_t* cls, std::size_t k) {
    if (k == K_) {
      for (std::size_t m = 0; m < K_; ++m) scores_[m] = feature_bias_ ? W_[std::size_t{dim_} * K_ + m] * B_ : 0.0;
      for (std::uint32_t j = 0; j < x.nnz; ++j) {
        const double xj = x.values[j];
        const double* row = &W_[std::size_t{x.indices[j]} * K_];
        for (std::size_t m = 0; m < K_; ++m) scores_[m] += xj * row[m];
      }
    } else {
      active_class_scores(W_.data(), K_, feature_bias_ ? &W_[std::size_t{dim_} * K_] : nullptr, B_, x, cls, k,
                          scores_.data());
    }
  }

  // α_i ← fresh on the moved classes, W += Σ_moved δ_m x̃ e_mᵀ feature by
  // feature (one row of W at a time), ‖W‖² and Σ α^y kept.
  void move(const RowView& x, std::size_t y, double A, double* a, std::size_t moves) {
    for (std::size_t q = 0; q < moves; ++q) {
      const std::size_t m = moved_[q];
      const double delta = fresh_[m] - a[m];
      // ‖W + δ x e_mᵀ‖² = ‖W‖² + 2δ (w_m·x) + δ² A (scores include the bias column).
      sq_norm_ += 2.0 * delta * scores_[m] + delta * delta * A;
      if (m == y) sum_alpha_y_ += delta;
      step_[q] = delta;
      a[m] = fresh_[m];
    }
    for (std::uint32_t j = 0; j < x.nnz; ++j) {
      const double xj = x.values[j];
      double* row = &W_[std::size_t{x.indices[j]} * K_];
      for (std::size_t q = 0; q < moves; ++q) row[moved_[q]] += step_[q] * xj;
    }
    if (feature_bias_) {
      for (std::size_t q = 0; q < moves; ++q) W_[std::size_t{dim_} * K_ + moved_[q]] += step_[q] * B_;
    }
  }

  // After a pass: the shrunk examples leave the active set; whether all come
  // back (unshrink: after a shrunk pass solved on the active set) or the
  // threshold drops (tighten: after a full pass, whose shrinking stands).
  void shrink(const Pass& pass, bool& unshrink, bool& tighten) {
    std::size_t kept = pass.kept;
    for (std::size_t v = pass.visits; v < active_.size(); ++v) active_[kept++] = active_[v];  // not reached: stay
    active_.resize(kept);
    if (pass.violation_max <= unshrink_below_) {
      if (pass.full) {
        tighten = true;
      } else {
        unshrink = true;
      }
    }
    shrink_margin_ = pass.violation_max / 10;
  }

  // The primal at M (rows_ × K_, the bias row last), copied out to w and b as
  // the model stores it, with ‖M‖² summed in the same sweep (in the order
  // squared_norm(M) would sum it).
  // With `margins`, each row's max_{r≠y} s_r − s_y at M goes there (for the
  // best multiple of M, core/ray_primal.hpp).
  double primal_at(const std::vector<double>& M, std::vector<double>& w, std::vector<double>& b, double& sum,
                   std::vector<double>* margins = nullptr) const {
    const std::size_t stored = std::size_t{dim_} * K_;
    w.resize(stored);
    b.resize(K_);
    sum = 0.0;
    for (std::size_t e = 0; e < stored; ++e) {
      w[e] = M[e];
      sum += M[e] * M[e];
    }
    for (std::size_t e = stored; e < M.size(); ++e) sum += M[e] * M[e];
    for (std::size_t m = 0; m < K_; ++m) b[m] = feature_bias_ ? M[stored + m] * B_ : 0.0;
    if (margins == nullptr) return lambda_ / 2 * sum + mean_loss(data_, objective_, w, b);
    margins->resize(n_);
    const auto K = K_;
    return lambda_ / 2 * sum + mean_loss(data_, objective_, w, b, {}, [&](std::size_t i, const RowView& x, const double* s) {
             const auto y = static_cast<std::size_t>(x.label);
             double top = -std::numeric_limits<double>::infinity();
             for (std::size_t r = 0; r < K; ++r) {
               if (r != y) top = std::max(top, s[r]);
             }
             (*margins)[i] = top - s[y];
           });
  }
  // The exact primal at W (its ‖W‖² reused by dual() at the same t), at the
  // smoothed weights (SmoothedIterate) or at the best multiple of W
  // (core/ray_primal.hpp), whichever is lowest; each point is offered as the
  // best checked one.
  double primal() {
    double p = primal_at(W_, w_out_, bias_, checks_.w_sq, &ray_.b);
    checks_.w_sq_at = t_;
    smoothed_checked_ = false;
    if (smooth_.ready()) {
      double sum = 0.0;
      const double ps = primal_at(smooth_.w, w_smooth_, b_smooth_, sum);
      if (ps < p) {
        w_out_.swap(w_smooth_);
        bias_.swap(b_smooth_);
        p = smoothed_p_ = ps;
        smoothed_checked_ = true;
      }
    }
    ray_.find(lambda_ * checks_.w_sq, [](std::size_t) { return 1.0; },
              [&](std::size_t i) { return objective_.example_cost(data_.row(i)); }, t_);
    const RayPoint& ray = ray_.point;
    if (ray.primal < p) {
      const std::size_t stored = std::size_t{dim_} * K_;
      for (std::size_t e = 0; e < stored; ++e) w_out_[e] = ray.theta * W_[e];
      for (std::size_t m = 0; m < K_; ++m) bias_[m] = feature_bias_ ? ray.theta * W_[stored + m] * B_ : 0.0;
      p = smoothed_p_ = ray.primal;
      smoothed_checked_ = true;
    }
    checks_.best.offer(p, w_out_, bias_);
    return checks_.best.certified(p);
  }
  // D from the running sums (exact up to their rounding).
  double dual_estimate_now() const { return lambda_ * (sum_alpha_y_ - sq_norm_ / 2); }
  double dual() const { return lambda_ * (sum_alpha_y_ - (checks_.w_sq_at == t_ ? checks_.w_sq : squared_norm(W_)) / 2); }
  double primal_checked() {
    checks_.checked_at = t_;
    return checks_.primal = primal();
  }
  double dual_checked() {
    checks_.fresh = true;
    return checks_.dual = dual();
  }

  // The every-10th-pass exact check is deferred where its only use is to see
  // convergence (the interior-point hand-over, which the checks also feed,
  // is out of reach: tried, or r·K over its cap) and the rate of the last
  // checks says the tolerance is still more than twice the visits since the
  // last check away (StallRule::needed), for at most 50 passes' worth of
  // visits. A check scores every class of every example; in a shrunk tail it
  // costs several passes. 31k documents, 28 classes, C = 10: 4.5 -> 4.3 s,
  // the same passes.
  bool defer_periodic_check() const {
    if (!checks_.interior.tried && rows_ * K_ <= InteriorPointGate::kMaxUnknowns) return false;
    const double since = static_cast<double>(t_ - checks_.checked_at), needed = checks_.stall.needed();
    return needed > 0.0 && since < needed / 2 && since < 50.0 * static_cast<double>(n_);
  }

  // After an exact check: the interior-point solver once, where it pays
  // (InteriorPointGate), at a stall (StallRule) or when coordinate ascent's
  // predicted visits cost more.
  HandOver hand_over(int& epoch) {
    const bool stalled = automatic_ && checks_.fresh && checks_.stall.check(t_, checks_.primal, checks_.dual);
    const double needed = automatic_ && checks_.fresh ? checks_.stall.needed() : -1.0;
    if (checks_.fresh) smooth_.maybe_start(automatic_, data_, W_, checks_.primal, checks_.dual, s_.tolerance);
    checks_.fresh = false;
    if (!((stalled || needed > 0.0) &&
          checks_.interior.pays(data_, K_, rows_ * K_, stalled ? T_ - t_ : std::min<double>(T_ - t_, needed),
                                static_cast<double>(t_)))) {
      return HandOver::kNone;
    }
    return interior_point(epoch);
  }

  // As in the binary solver: the dual point replaces α if it is higher, the
  // next exact check judges it, its operations count against the visit budget.
  HandOver interior_point(int& epoch) {
    checks_.interior.tried = true;
    const InteriorPointProblem problem = crammer_singer_interior_point_problem(data_, B_, K_, cap_);
    std::vector<double> w(rows_ * K_);  // W (feature-major) in the solver's class-major order
    for (std::size_t j = 0; j < rows_; ++j) {
      for (std::size_t m = 0; m < K_; ++m) w[m * rows_ + j] = W_[j * K_ + m];
    }
    const InteriorPointResult ipm =
        solve_interior_point_screened(problem, w, s_.tolerance / 4, InteriorPointGate::kMaxIterations);
    t_ += std::min<std::uint64_t>(InteriorPointGate::visits_charged(data_, K_, rows_ * K_, ipm.work), T_ - t_);
    if (!(lambda_ * ipm.dual > checks_.dual)) return HandOver::kNone;
    std::vector<double> from(n_ * K_);
    for (std::size_t i = 0; i < n_; ++i) {
      const std::size_t y = static_cast<std::size_t>(data_.row(i).label);
      double sum = 0.0;
      for (std::size_t m = 0; m < K_; ++m) {
        if (m == y) continue;
        from[i * K_ + m] = -ipm.alpha[i * K_ + m];
        sum += ipm.alpha[i * K_ + m];
      }
      from[i * K_ + y] = sum;  // ≤ cap: Σ_j α_ij = cap with α_iy ≥ 0
    }
    load_alpha(from);
    // w(α) is offered as the best checked point (a run that ends at its cap
    // returns the best), and the check below reuses its primal.
    const double p = primal_checked();
    active_.resize(n_);  // α moved: shrinking starts over
    std::iota(active_.begin(), active_.end(), 0u);
    sets_.activate_all();
    shrink_margin_ = std::numeric_limits<double>::infinity();
    const bool stop = end_of_pass(data_, s_, ++epoch, t_, T_, automatic_, true, {}, sq_norm_, lambda_ * ipm.primal,
                                  lambda_ * ipm.dual, [&] { return p; },
                                  [&] { return dual_checked(); }, w_out_, bias_, result_, on_epoch_);
    checks_.fresh = false;
    return stop ? HandOver::kStop : HandOver::kDone;
  }

  TrainResult finish() {
    finish_stop_reason(result_, automatic_);
    result_.dual_objective = dual();
    // The weights and biases as the model stores them: W's, or the smoothed
    // ones or θ*·W's where they were the certified point.
    double sum = 0.0;
    const double objective = result_.converged && smoothed_checked_ ? smoothed_p_ : primal_at(W_, w_out_, bias_, sum);
    result_.weights = std::move(w_out_);
    result_.bias = bias_;
    result_.alpha = std::move(alpha_);
    result_.iterations = t_;
    result_.epochs = static_cast<double>(t_) / static_cast<double>(n_);
    result_.objective = objective;
    checks_.best.apply_to(result_);
    return std::move(result_);
  }

  const Dataset& data_;
  const O& objective_;
  const EngineSettings& s_;
  const std::function<bool(const EpochInfo&)>& on_epoch_;
  const std::size_t n_;
  const std::uint32_t dim_;
  const std::size_t K_;
  const double lambda_;
  bool growing_ = false;  // the first pass is the growing one (takes_growing_first_pass; set once)
  const bool feature_bias_;
  const double B_;
  const std::size_t rows_;                // W: rows_ × K_, feature-major
  std::vector<double> W_, alpha_, sq_, cap_;
  std::vector<std::uint32_t> active_;
  Rng rng_{derive_seed(s_.seed, 4)};
  PassOrder pass_order_{data_, s_.sampling};
  bool automatic_ = false, shrinking_ = false;
  std::uint64_t T_ = 0, t_ = 0;
  MulticlassActiveSets sets_;
  double shrink_margin_ = std::numeric_limits<double>::infinity();
  double unshrink_below_ = 0.1;
  double sum_alpha_y_ = 0.0;  // Σ_i α_i^{y_i}, kept incrementally
  double sq_norm_ = 0.0;      // ‖W‖², kept incrementally (for the cheap gap estimate)
  std::vector<double> scores_, grad_, b_coef_, d_sorted_, fresh_, step_;
  std::vector<std::uint32_t> moved_;
  std::vector<double> w_out_, bias_, w_smooth_, b_smooth_;
  SmoothedIterate smooth_;
  bool smoothed_checked_ = false;  // the last exact check's primal point is smooth_'s or θ*·W (in w_out_, bias_)
  double smoothed_p_ = 0.0;        // and its primal value
  RayCheck ray_;                   // the last check's margins at W (best_ray_point's slopes)
  ExactChecks checks_;
  TrainResult result_;
};

template <MulticlassDual O>
TrainResult train_sdca_multiclass(const Dataset& data, const O& objective, const EngineSettings& s,
                                  const std::function<bool(const EpochInfo&)>& on_epoch = {},
                                  const std::vector<double>* warm = nullptr, const WarmStart* start = nullptr) {
  return MulticlassSdca<O>(data, objective, s, on_epoch, warm, start).run();
}

}  // namespace pegasos
