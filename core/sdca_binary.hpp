// Dual coordinate ascent for the binary hinge objectives (hinge, weighted
// hinge, transfer): the problem and the step are described in core/sdca.hpp.
// Badly conditioned problems get conjugate-gradient steps on the free dual
// variables, the box polish of core/box_qp.hpp and the interior-point solver
// of core/interior_point.hpp (hand-overs in BinarySdca::hand_over).
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
#include "core/free_face_cg.hpp"
#include "core/fresh_memory.hpp"
#include "core/interior_point_screen.hpp"
#include "core/objective.hpp"
#include "core/random.hpp"
#include "core/ray_primal.hpp"
#include "core/sdca_common.hpp"
#include "core/training.hpp"
#include "core/visit_order.hpp"

namespace pegasos {

// `warm` (optional): dual variables to start from (α_i in [0, c_i]; clipped),
// e.g. a previous run's TrainResult::alpha; w starts as w(α). `start`
// (optional): a warm start's weights, the first primal candidate
// (BestChecked::certify_best).
template <HingeDual O>
class BinarySdca {
 public:
  BinarySdca(const Dataset& data, const O& objective, const EngineSettings& s,
             const std::function<bool(const EpochInfo&)>& on_epoch, const std::vector<double>* warm,
             const WarmStart* start = nullptr)
      : data_(data), objective_(objective), s_(s), on_epoch_(on_epoch), n_(data.size()), dim_(data.dimension),
        lambda_(s.lambda), lambda_n_(lambda_ * static_cast<double>(n_)),
        feature_bias_(s.bias == BiasMode::kFeature), B_(feature_bias_ ? s.bias_feature_value : 0.0),
        checks_(n_, s.tolerance) {
    if (s.bias == BiasMode::kUnregularized) {
      throw ConfigError("solver: sdca supports bias none or feature, not unregularized");
    }
    // Per example: y_i·c_i and the offset o_i (in parallel, each row its own
    // entries). ‖x_i‖² (with the constant feature) is summed by the first
    // pass, which reads the row anyway: a read of all the data less (780k
    // RCV1-like rows: 35 ms here, for about 13 more in the first pass).
    resize_populated(hot_, n_);  // 32 bytes a row: 25 MB for 780k rows
    if constexpr (HasScoreOffset<O>) resize_populated(offset_, n_);  // else made by offsets() when needed
    parallel_for_index(
        n_,
        [&](std::size_t i) {
          const RowView x = data.row(i);
          hot_[i].signed_cost = objective.signed_cost(x);
          if constexpr (HasScoreOffset<O>) objective.add_offset(x, &offset_[i]);
        },
        kSerialRows);
    w_.assign(dim_, 0.0);
    resize_populated(alpha_, n_);  // zeros
    if (warm != nullptr) load_alpha(*warm);
    if (start != nullptr) {  // a warm start's own weights: the first candidate of the certificate
      checks_.best.certify_best = true;
      checks_.best.offer(primal_objective(data, objective, s, start->weights, start->bias), start->weights, start->bias);
    }
    activate_all();
    growing_ = takes_growing_first_pass(s, n_, warm != nullptr || start != nullptr);
    if (visit_budget_reads_norms(s)) {  // automatic: the cap once the first pass has the norms
      automatic_ = true;
      T_ = n_;
    } else {
      T_ = sdca_visit_budget(s, n_, 0.0, automatic_);
    }
    shrinking_ = automatic_;
    if (start != nullptr && automatic_) {
      const double p0 = primal();
      checks_.warm_start(p0, dual());
      shrink_at_warm_start();
    }
  }

  TrainResult run() {
    result_.dimension = dim_;
    result_.outputs = 1;
    result_.solver = "sdca";
    int epoch = 0;
    while (t_ < T_) {
      ++epoch;
      const double dual_at_start = dual_estimate_now();
      const bool after_growing = growing_ && epoch == 2;
      const Pass pass = norms_pending_ ? first_pass() : ascent<false>();
      conjugate_gradient(pass);
      bool unshrink = false, tighten = false;
      if (shrinking_) shrink(pass, unshrink, tighten);
      if (pass.full) {
        loss_sum_ = pass.visited_loss;
        losses_known_ = automatic_;
      }
      const double dual_estimate = dual_estimate_now();
      const CheckHints hints{t_ - checks_.checked_at, after_growing ? 0.0 : dual_estimate - dual_at_start, false, n_ / 2};
      if (end_of_pass(data_, s_, epoch, t_, T_, automatic_, losses_known_, hints, sq_norm_,
                      checks_.best.certified(lambda_ / 2 * sq_norm_ + loss_sum_ / static_cast<double>(n_)),
                      dual_estimate, [&] { return primal_checked(); },
                      [&] { return dual_checked(); }, w_, bias_, result_, on_epoch_)) {
        break;
      }
      const bool stalled = stalling();
      const HandOver h = hand_over(stalled, epoch);
      if (h == HandOver::kStop) break;
      if (h == HandOver::kDone) continue;
      if (tighten) unshrink_below_ /= 10;
      if (unshrink) activate_all();
    }
    return finish();
  }

 private:
  // What a coordinate-ascent visit reads of its example, in one 32-byte
  // entry (one cache line, where four arrays took four): y_i·c_i, ‖x_i‖², α_i
  // (coordinate ascent's own copy: alpha_ is brought up to date by
  // pull_alpha() before anything else reads it, and back by push_alpha()
  // after anything else moves it) and the loss at the last visit (the
  // estimate below).
  struct alignas(32) Hot {
    double signed_cost = 0.0, sq = 0.0, alpha = 0.0, loss = 0.0;
  };
  // Shrinking (Hsieh et al. 2008, Sec. 3.2), with automatic stopping only: an
  // α_i at a bound whose gradient pushes it further out is left out of the
  // following passes; once the projected gradients of the remaining ones
  // spread less than `unshrink_below_`, all examples come back for a full
  // pass. When even a full pass has that small a spread (but the gap is not
  // met), the threshold drops 10× and shrinking goes on from that pass's
  // extremes, so the next shrunk phase goes deeper.
  struct Pass {
    bool full = false;
    std::size_t visits = 0, kept = 0;
    // Σ c_i·max(0, 1 − y_i s_i) with each s_i as it was at the visit: on a
    // full pass an estimate of the loss at the pass's end that costs nothing
    // (exact once w settles).
    double visited_loss = 0.0;
    double pg_max = -std::numeric_limits<double>::infinity();
    double pg_min = std::numeric_limits<double>::infinity();
  };
  static constexpr std::uint64_t kCgStart = 100, kCgEvery = 3, kCgBudget = 4, kPolishAfter = 3 * kCgStart;
  enum class HandOver { kNone, kDone, kStop };

  // α (clipped into the box) and everything kept from it, from scratch.
  void load_alpha(const std::vector<double>& from) {
    std::fill(w_.begin(), w_.end(), 0.0);
    wb_ = linear_ = 0.0;
    for (std::size_t i = 0; i < n_; ++i) {
      const double a = std::clamp(from[i], 0.0, std::abs(hot_[i].signed_cost));
      alpha_[i] = a;
      if (a == 0.0) continue;
      const double y = hot_[i].signed_cost >= 0 ? 1.0 : -1.0;
      linear_ += a * (1.0 - y * offset(i));
      const double step = a * y / lambda_n_;
      const RowView x = data_.row(i);
      for (std::uint32_t j = 0; j < x.nnz; ++j) w_[x.indices[j]] += step * x.values[j];
      wb_ += step * B_;
    }
    sq_norm_ = squared_norm(w_) + wb_ * wb_;
    losses_known_ = false;
    push_alpha();
  }

  // A warm start (automatic stopping) begins shrunk: the rows at a bound
  // whose KKT condition holds at the warm point (α_i = 0 on or beyond the
  // margin, α_i = c_i inside it) are left out of the first passes, as
  // shrinking would leave them out after a pass or two, and come back at the
  // first unshrink like any shrunk row. From a good warm point (yesterday's
  // duals) that is most rows: a cold run's first passes, and a warm run's
  // until now, visit all of them. The same read sums each row's ‖x_i‖² (the
  // first pass does otherwise) for the visit budget. SpamAssassin by date, 45
  // days (bench/warm_start_dated.py): 649 of 4702 rows active on 2002-10-01;
  // warm/cold passes median 0.46 -> 0.41, at most 1/2 on 28 -> 36 days.
  void shrink_at_warm_start() {
    std::vector<std::uint8_t> keep(n_);
    parallel_for_index(
        n_,
        [&](std::size_t i) {
          const RowView x = data_.row(i);
          double score = wb_ * B_;
          for (std::uint32_t j = 0; j < x.nnz; ++j) score += static_cast<double>(x.values[j]) * w_[x.indices[j]];
          Hot& h = hot_[i];
          h.sq = squared_norm(x, B_ * B_);
          const double g = 1.0 - (h.signed_cost >= 0 ? 1.0 : -1.0) * (score + offset(i));  // n·∂D/∂α_i
          keep[i] = !((h.alpha == 0.0 && g <= 0.0) || (h.alpha == std::abs(h.signed_cost) && g >= 0.0));
        },
        kSerialRows);
    std::size_t kept = 0;
    for (std::size_t i = 0; i < n_; ++i) {
      if (keep[i]) active_[kept++] = static_cast<std::uint32_t>(i);
    }
    active_.resize(kept);
    norms_pending_ = false;
    if (visit_budget_reads_norms(s_)) T_ = sdca_visit_budget(s_, squares(), automatic_);
  }

  // Every example active again, the shrinking thresholds reset.
  void activate_all() {
    resize_populated(active_, n_);
    std::iota(active_.begin(), active_.end(), 0u);
    pg_max_old_ = std::numeric_limits<double>::infinity();
    pg_min_old_ = -std::numeric_limits<double>::infinity();
  }

  // The first pass, which also sums each row's ‖x_i‖² as it reads it (the
  // same sum, in the same order, as squared_norm), then the norms of any
  // rows it did not reach (a budget under one pass) and the visit budget
  // that depends on them.
  Pass first_pass() {
    const Pass pass = ascent<true>();
    for (std::size_t v = pass.visits; v < active_.size(); ++v) {
      hot_[active_[v]].sq = squared_norm(data_.row(active_[v]), B_ * B_);
    }
    norms_pending_ = false;
    if (visit_budget_reads_norms(s_)) T_ = sdca_visit_budget(s_, squares(), automatic_);
    return pass;
  }

  // Rows that hold every feature (x_ij at j, for j < d): the pass reads no
  // index array, half the memory traffic of such rows (random Fourier or
  // Nyström features, dense numeric data). The same sums in the same order.
  template <bool kNorms>
  Pass ascent() {
    if constexpr (kNorms) {  // the first pass, once
      if (growing_) return dense_rows_ ? coordinate_ascent<true, true, true>() : coordinate_ascent<true, false, true>();
    }
    return dense_rows_ ? coordinate_ascent<kNorms, true>() : coordinate_ascent<kNorms, false>();
  }

  // One pass of coordinate ascent over the active examples in a fresh random
  // order (the hot loop: its state in locals, written back at the end).
  // kNorms: the first pass (first_pass). kDense: every row holds all d
  // features in order (dense_rows_), so x.indices[j] == j is not read.
  template <bool kNorms, bool kDense, bool kGrowing = false>
  Pass coordinate_ascent() {
    Pass pass;
    pass.full = active_.size() == n_;
    pass_order_.arrange(std::span<std::uint32_t>(active_), rng_);
    pass.visits = static_cast<std::size_t>(std::min<std::uint64_t>(active_.size(), T_ - t_));
    double* w = w_.data();
    double wb = wb_, linear = linear_, sq_norm = sq_norm_, loss_sum = loss_sum_;
    std::uint64_t t = t_;
    std::size_t kept = 0;
    const bool track = automatic_;  // each example's loss at its last visit (Hot::loss)
    for (std::size_t v = 0; v < pass.visits; ++v, ++t) {
      if (v + kAhead < pass.visits) prefetch<kDense>(active_[v + kAhead], active_[v + kAhead / 2]);
      const std::uint32_t i = active_[v];
      Hot& h = hot_[i];
      const RowView x = data_.row(i);
      const double score = row_dot<kDense>(x, w, wb * B_);
      if constexpr (kNorms) h.sq = squared_norm(x, B_ * B_);  // the row is in the cache now
      const double y = h.signed_cost >= 0 ? 1.0 : -1.0;
      const double c = std::abs(h.signed_cost);
      const double g = 1.0 - y * (score + offset(i));  // n·∂D/∂α_i
      // The growing first pass (growing_): the step of the t = v + 1 rows' problem.
      const double t_seen = static_cast<double>(v + 1);
      const double g_step = kGrowing ? 1.0 - y * (score * (static_cast<double>(n_) / t_seen) + offset(i)) : g;
      const double lambda_step = kGrowing ? lambda_ * t_seen : lambda_n_;
      const double loss = g > 0.0 ? c * g : 0.0;
      pass.visited_loss += loss;
      if (track) {
        loss_sum += loss - h.loss;
        h.loss = loss;
      }
      if (shrinking_) {
        // Projected gradient of the minimisation form (G = −g).
        double pg = -g;
        if (h.alpha == 0.0) {
          if (-g > pg_max_old_) continue;  // shrink: stays at 0
          if (-g > 0.0) pg = 0.0;
        } else if (h.alpha == c) {
          if (-g < pg_min_old_) continue;  // shrink: stays at c
          if (-g < 0.0) pg = 0.0;
        }
        active_[kept++] = i;
        pass.pg_max = std::max(pass.pg_max, pg);
        pass.pg_min = std::min(pass.pg_min, pg);
      }
      double a;
      if (h.sq > 0.0) {
        a = std::clamp(h.alpha + lambda_step * g_step / h.sq, 0.0, c);
      } else {
        a = g > 0.0 ? c : 0.0;  // an empty row: D is linear in α_i
      }
      const double delta = a - h.alpha;
      if (delta == 0.0) continue;
      h.alpha = a;
      linear += delta * (1.0 - y * offset(i));
      const double step = delta * y / lambda_n_;
      for (std::uint32_t j = 0; j < x.nnz; ++j) w[kDense ? j : x.indices[j]] += step * x.values[j];
      wb += step * B_;
      sq_norm += 2.0 * step * score + step * step * h.sq;
    }
    wb_ = wb;
    linear_ = linear;
    sq_norm_ = sq_norm;
    loss_sum_ = loss_sum;
    t_ = t;
    pass.kept = kept;
    return pass;
  }

  // Prefetches for the visit kAhead on (its row's extent and Hot entry)
  // and for the one kAhead/2 on (its row, whose extent was fetched kAhead/2
  // visits ago). Rows are visited in a shuffled order: without them each
  // visit waits on a cache miss per array (a9a × 24: 0.95 s -> 0.55 s for
  // the same 4.8 passes). A visit reads about as many cache lines as it
  // has arrays, and with many rows that traffic sets the pace: hence Hot.
  static constexpr std::size_t kAhead = 64;
  // kDense: the near row's values only (its indices are not read).
  template <bool kDense>
  [[gnu::always_inline]] void prefetch(std::uint32_t far, std::uint32_t near) const {
    __builtin_prefetch(data_.row_ptr.data() + far);
    __builtin_prefetch(hot_.data() + far);
    if constexpr (HasScoreOffset<O>) __builtin_prefetch(offset_.data() + far);
    if constexpr (kDense) {
      prefetch_row_values(data_.row(near));
    } else {
      prefetch_row(data_.row(near));
    }
  }
  double offset(std::size_t i) const {
    if constexpr (HasScoreOffset<O>) {
      return offset_[i];
    } else {
      return 0.0;
    }
  }
  // Every o_i, for the hand-overs: without score offsets, zeros made on the
  // first call (a fresh array of n zeros less for every run that never hands
  // over: 6 MB for 780k rows, 12 ms of page faults here).
  const std::vector<double>& offsets() {
    if (offset_.size() != n_) offset_.assign(n_, 0.0);
    return offset_;
  }
  // One field of hot_ as a vector: y_i·c_i and ‖x_i‖² (with the constant
  // feature) for the hand-overs and the visit budget.
  std::vector<double> column(double Hot::*field) const {
    std::vector<double> out(n_);
    for (std::size_t i = 0; i < n_; ++i) out[i] = hot_[i].*field;
    return out;
  }
  std::vector<double> signed_costs() const { return column(&Hot::signed_cost); }
  std::vector<double> squares() const { return column(&Hot::sq); }
  // Σ α_i (1 − y_i o_i), from scratch (linear_ keeps it incrementally).
  double linear_sum() const {
    double lin = 0.0;
    for (std::size_t i = 0; i < n_; ++i) lin += hot_[i].alpha * (1.0 - std::copysign(1.0, hot_[i].signed_cost) * offset(i));
    return lin;
  }
  // α between coordinate ascent (which keeps it in hot_) and the rest (alpha_).
  void pull_alpha() {
    for (std::size_t i = 0; i < n_; ++i) alpha_[i] = hot_[i].alpha;
  }
  void push_alpha() {
    for (std::size_t i = 0; i < n_; ++i) hot_[i].alpha = alpha_[i];
  }

  // Free-face CG (automatic stopping only): not before kCgStart passes'
  // worth of visits (coordinate ascent alone is faster while it makes
  // progress: measured, CG from the start gave a lower dual at 25..200
  // passes and a worse model at the 200-pass cap), then whenever coordinate
  // ascent has made kCgEvery passes' worth of visits since the last one,
  // with kCgBudget times those visits (counted in t); where it is not worth
  // it (see free_face_cg), it is asked again only after twice as many.
  void conjugate_gradient(const Pass& pass) {
    cd_visits_ += pass.visits;
    if (!(shrinking_ && t_ >= kCgStart * n_ && cd_visits_ >= cg_every_ * n_ && t_ < T_)) return;
    const std::uint64_t budget = std::min<std::uint64_t>(T_ - t_, kCgBudget * cd_visits_);
    if (scratch_.empty()) scratch_.assign(dim_, 0.0);
    pull_alpha();
    const FreeFaceCg cg = free_face_cg(data_, B_, lambda_n_, signed_costs(), offsets(), squares(),
                                       std::span<const std::uint32_t>(active_.data(), pass.kept), budget, alpha_, w_,
                                       wb_, linear_, sq_norm_, scratch_);
    push_alpha();
    t_ += cg.rows_read;
    losses_known_ = false;  // w moved
    cg_every_ = cg.well_conditioned ? 2 * cg_every_ : kCgEvery;
    cd_visits_ = 0;
  }

  // After a pass: the shrunk examples leave the active set, and whether all
  // come back (unshrink) or the threshold drops (tighten).
  void shrink(const Pass& pass, bool& unshrink, bool& tighten) {
    // Examples not reached (the visit budget ran out) stay active.
    std::size_t kept = pass.kept;
    for (std::size_t v = pass.visits; v < active_.size(); ++v) active_[kept++] = active_[v];
    active_.resize(kept);
    // Solved on the active set: after a shrunk pass, everything comes back
    // for a full pass; after a full pass (not yet at the tolerance), the
    // threshold drops and shrinking goes on from this pass's extremes (a
    // second full pass would only repeat it).
    if (pass.pg_max - pass.pg_min <= unshrink_below_) {
      if (pass.full) {
        tighten = true;
      } else {
        unshrink = true;
      }
    }
    if (!unshrink) {
      pg_max_old_ = pass.pg_max <= 0.0 ? std::numeric_limits<double>::infinity() : pass.pg_max;
      pg_min_old_ = pass.pg_min >= 0.0 ? -std::numeric_limits<double>::infinity() : pass.pg_min;
    }
  }

  // The exact primal: the lower of P(w) and P(θ*·w), w's best multiple
  // (core/ray_primal.hpp; the check calls primal() then dual() at the same t,
  // so ‖w‖² is summed once); each is offered as the best checked point.
  double primal() {
    bias_[0] = wb_ * B_;
    checks_.w_sq = squared_norm(w_);
    checks_.w_sq_at = t_;
    ray_.b.resize(n_);
    const auto y = [this](std::size_t i) { return std::copysign(1.0, hot_[i].signed_cost); };
    const double p = lambda_ / 2 * (checks_.w_sq + wb_ * wb_) +
                     mean_loss(data_, objective_, w_, bias_, {}, [&](std::size_t i, const RowView&, const double* s) {
                       ray_.b[i] = -y(i) * (s[0] - offset(i));
                     });
    checks_.primal_at_w = p;
    checks_.best.offer(p, w_, bias_);
    ray_.find(lambda_ * (checks_.w_sq + wb_ * wb_), [&](std::size_t i) { return 1.0 - y(i) * offset(i); },
              [&](std::size_t i) { return std::abs(hot_[i].signed_cost); }, t_);
    if (ray_.point.primal < p) checks_.best.offer(ray_.point.primal, ray_.scaled(w_), {ray_.point.theta * bias_[0]});
    return checks_.best.certified(std::min(p, ray_.point.primal));
  }
  // D from the running sums (exact up to their rounding).
  double dual_estimate_now() const { return linear_ / static_cast<double>(n_) - lambda_ / 2 * sq_norm_; }
  double dual() const {
    return linear_sum() / static_cast<double>(n_) - lambda_ / 2 * ((checks_.w_sq_at == t_ ? checks_.w_sq : squared_norm(w_)) + wb_ * wb_);
  }
  double primal_checked() {
    checks_.checked_at = t_;
    return checks_.primal = primal();
  }
  double dual_checked() {
    checks_.fresh = true;
    return checks_.dual = dual();
  }
  // Fed with this pass's exact check (if any): did coordinate ascent stall,
  // and the visits it still needs at its rate (needed_).
  bool stalling() {
    needed_ = -1.0;
    if (!automatic_ || !checks_.fresh) return false;
    checks_.fresh = false;
    const bool stalled = checks_.stall.check(t_, checks_.primal, checks_.dual);
    needed_ = checks_.stall.needed();
    return stalled;
  }

  // The hand-overs after an exact check: the interior-point solver
  // (InteriorPointGate), else at a stall the polish of core/box_qp.hpp. Each
  // counts as one more pass in the trace and the stopping check.
  HandOver hand_over(bool stalled, int& epoch) {
    const std::size_t unknowns = dim_ + (feature_bias_ ? 1 : 0);
    if ((stalled || needed_ > 0.0) &&
        checks_.interior.pays(data_, 1, unknowns, stalled ? T_ - t_ : std::min<double>(T_ - t_, needed_),
                              static_cast<double>(t_))) {
      const HandOver h = interior_point(epoch);
      if (h != HandOver::kNone) return h;
    }
    // The polish waits until the free-face CG (from kCgStart passes' worth of
    // visits on) has had 2·kCgStart more: where CG does the job (UCI
    // Ionosphere/Sonar, Fashion-MNIST, text) an early polish that does not
    // certify doubles the work; where it does not (Pima) the polish still
    // comes in time. 12 UCI settings, passes to certify summed: polish alone
    // 13777, both without the wait 15551, with it 10697.
    if (stalled && t_ >= kPolishAfter * n_) return polish(epoch);
    return HandOver::kNone;
  }

  // The interior-point solver; its dual point replaces α if it is higher, and
  // the next exact check judges it. Its operations count against the visit
  // budget at the rate InteriorPointGate::pays() assumes.
  HandOver interior_point(int& epoch) {
    checks_.interior.tried = true;
    const std::size_t unknowns = dim_ + (feature_bias_ ? 1 : 0);
    const InteriorPointProblem problem = binary_interior_point_problem(data_, B_, lambda_n_, signed_costs(), offsets());
    std::vector<double> w(problem.unknowns(), 0.0);
    std::copy(w_.begin(), w_.end(), w.begin());
    if (B_ != 0.0) w.back() = wb_;
    const InteriorPointResult ipm =
        solve_interior_point_screened(problem, w, s_.tolerance / 4, InteriorPointGate::kMaxIterations);
    t_ += std::min<std::uint64_t>(InteriorPointGate::visits_charged(data_, 1, unknowns, ipm.work), T_ - t_);
    if (!(lambda_ * ipm.dual > checks_.dual)) return HandOver::kNone;
    std::vector<double> from(n_);
    for (std::size_t i = 0; i < n_; ++i) from[i] = lambda_n_ * ipm.alpha[2 * i];
    load_alpha(from);
    checks_.w_sq_at = ExactChecks::kNotSummed;
    // w(α) is offered as the best checked point (a run that ends at its cap
    // returns the best), and the check below reuses its primal.
    const double p = primal();
    activate_all();  // α moved: shrinking starts over
    return end_of_pass(data_, s_, ++epoch, t_, T_, automatic_, true, {}, sq_norm_, lambda_ * ipm.primal,
                       lambda_ * ipm.dual, [&] { return p; }, [&] { return dual(); }, w_, bias_, result_,
                       on_epoch_)
               ? HandOver::kStop
               : HandOver::kDone;
  }

  // The polish gets as many row reads as coordinate ascent has made (a visit
  // reads a row twice), so one that does not certify at most doubles the
  // work; it never returns a worse dual point, and the next one needs another
  // stall. Its row reads (one dot product or axpy each, half a visit) count
  // against the visit budget, its exact P and D as the pass's estimate.
  HandOver polish(int& epoch) {
    pull_alpha();
    const PolishResult polish = polish_hinge_dual(data_, signed_costs(), offsets(), lambda_, B_, alpha_, w_, wb_,
                                                  s_.tolerance, 2 * std::min(t_, T_ - t_));
    t_ += std::min<std::uint64_t>(polish.row_visits / 2, T_ - t_);
    push_alpha();
    checks_.w_sq_at = ExactChecks::kNotSummed;  // w moved
    losses_known_ = false;
    sq_norm_ = squared_norm(w_) + wb_ * wb_;
    linear_ = linear_sum();
    activate_all();  // α moved: shrinking starts over
    return end_of_pass(data_, s_, ++epoch, t_, T_, automatic_, true, {}, sq_norm_, polish.primal, polish.dual,
                       [&] { return primal(); }, [&] { return dual(); }, w_, bias_, result_, on_epoch_)
               ? HandOver::kStop
               : HandOver::kDone;
  }

  TrainResult finish() {
    finish_stop_reason(result_, automatic_);
    pull_alpha();
    result_.dual_objective = dual();
    bias_[0] = wb_ * B_;
    result_.weights = std::move(w_);
    result_.bias = bias_;
    result_.alpha = std::move(alpha_);
    result_.iterations = t_;
    result_.epochs = static_cast<double>(t_) / static_cast<double>(n_);  // in full passes' worth of visits
    // A run that stopped at an exact check has its primal already (a full
    // read of the data less; the same sums, so the same value).
    result_.objective = checks_.w_sq_at == t_ ? checks_.primal_at_w
                                              : lambda_ / 2 * (squared_norm(result_.weights) + wb_ * wb_) +
                                                    mean_loss(data_, objective_, result_.weights, result_.bias);
    // A run that ended at a check whose θ*·w was lower returns θ*·w.
    if (ray_.at == t_ && checks_.w_sq_at == t_ && ray_.point.primal < checks_.primal_at_w) ray_.scale(result_);
    checks_.best.apply_to(result_);
    return std::move(result_);
  }

  const Dataset& data_;
  const O& objective_;
  const EngineSettings& s_;
  const std::function<bool(const EpochInfo&)>& on_epoch_;
  const std::size_t n_;
  const std::uint32_t dim_;
  const double lambda_, lambda_n_;
  const bool feature_bias_;
  const double B_;
  std::vector<double> offset_;  // o_i with score offsets; else empty until offsets() fills it with zeros
  std::vector<double> w_, alpha_, bias_ = std::vector<double>(1, 0.0);
  HugeVector<Hot> hot_;
  double wb_ = 0.0;       // weight of the constant feature
  double sq_norm_ = 0.0;  // ‖w‖² + wb², kept incrementally (for the cheap gap estimate)
  double linear_ = 0.0;   // Σ α_i (1 − y_i o_i), kept incrementally
  // Automatic stopping's primal estimate on every pass, shrunk ones included:
  // each example's loss c_i·max(0, 1 − y_i s_i) at its last visit, and their
  // sum (exact from the visits of a full pass, then updated visit by visit).
  // Known from the first full pass on until w moves by other means (CG, the
  // polish, the interior point) and the next full pass. Shrunk examples keep
  // their last loss: 0 at α_i = 0, and at the bound c_i one that drifts as w
  // does, which only the exact check that the estimate calls for can tell.
  double loss_sum_ = 0.0;
  bool losses_known_ = false;
  HugeVector<std::uint32_t> active_;  // examples visited in the next pass
  Rng rng_{derive_seed(s_.seed, 4)};
  PassOrder pass_order_{data_, s_.sampling};
  bool automatic_ = false, shrinking_ = false;
  bool norms_pending_ = true;  // Hot::sq is summed by the first pass
  // The first pass is the growing one (takes_growing_first_pass; set once).
  bool growing_ = false;
  const bool dense_rows_ = data_.rows_hold_every_feature();  // see ascent()
  std::uint64_t T_ = 0, t_ = 0;
  double pg_max_old_ = 0.0, pg_min_old_ = 0.0, unshrink_below_ = 0.1;
  std::uint64_t cd_visits_ = 0, cg_every_ = kCgEvery;
  std::vector<double> scratch_;  // free_face_cg's dense vector
  RayCheck ray_;  // the best multiple of w at the last exact check (primal())
  ExactChecks checks_;
  double needed_ = -1.0;  // from the last exact check: visits still needed at the rate seen
  TrainResult result_;
};

template <HingeDual O>
TrainResult train_sdca(const Dataset& data, const O& objective, const EngineSettings& s,
                       const std::function<bool(const EpochInfo&)>& on_epoch = {},
                       const std::vector<double>* warm = nullptr, const WarmStart* start = nullptr) {
  return BinarySdca<O>(data, objective, s, on_epoch, warm, start).run();
}

}  // namespace pegasos
