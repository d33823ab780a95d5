// The Pegasos engine: stochastic sub-gradient descent on
//     P(W, b) = λ/2 ‖W‖² + (1/n) Σ_i ℓ(x_i, W·x_i + b)
// for any Objective (see core/objective.hpp), following Shalev-Shwartz et al.,
// "Pegasos: Primal Estimated sub-GrAdient SOlver for SVM" (2011), Fig. 2:
//   step t: pick a batch A_t of k examples, η_t = 1/(λt),
//           W ← (1 − η_t λ) W − (η_t / k) Σ_{i∈A_t} ∂ℓ_i/∂s · x_i,
//           optionally W ← min(1, r/‖W‖) W with r from the objective.
// Every step costs O(nnz of the batch · K), never O(dimension): the shrink and
// the projection act on the scale of ScaledWeights, and the averaged iterate is
// maintained lazily.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "core/dataset.hpp"
#include "core/errors.hpp"
#include "core/objective.hpp"
#include "core/random.hpp"
#include "core/scaled_weights.hpp"
#include "core/training.hpp"
#include "core/visit_order.hpp"

namespace pegasos {

// Chooses the examples of each step.
class Sampler {
 public:
  Sampler(const Dataset& data, Sampling mode, std::uint64_t seed)
      : mode_(mode), n_(data.size()), rng_(seed),
        pass_order_(data, mode) {
    if (mode_ == Sampling::kPermutation || mode_ == Sampling::kShuffle) {
      order_.resize(n_);
      std::iota(order_.begin(), order_.end(), std::size_t{0});
      pass_order_.arrange(std::span<std::size_t>(order_), rng_);
    } else if (mode_ == Sampling::kBalanced) {
      by_class_.resize(data.classes.size());
      for (std::size_t i = 0; i < n_; ++i) {
        if (data.labels[i] >= 0) by_class_[static_cast<std::size_t>(data.labels[i])].push_back(i);
      }
      std::erase_if(by_class_, [](const auto& v) { return v.empty(); });
    }
  }
  std::size_t next() {
    switch (mode_) {
      case Sampling::kUniform:
        return rng_.below(n_);
      case Sampling::kSequential: {
        const std::size_t i = pos_++;
        if (pos_ == n_) pos_ = 0;
        return i;
      }
      case Sampling::kPermutation:
      case Sampling::kShuffle: {
        if (pos_ == n_) {
          pass_order_.arrange(std::span<std::size_t>(order_), rng_);
          pos_ = 0;
        }
        return order_[pos_++];
      }
      case Sampling::kBalanced: {
        const auto& members = by_class_[rng_.below(by_class_.size())];
        return members[rng_.below(members.size())];
      }
    }
    return 0;
  }

 private:
  Sampling mode_;
  std::size_t n_;
  Rng rng_;
  PassOrder pass_order_;
  std::size_t pos_ = 0;
  std::vector<std::size_t> order_;
  std::vector<std::vector<std::size_t>> by_class_;
};

// The progress estimate of automatic stopping, for the latest evaluation E in
// `trace`: P_{E'} − P_E ≤ tolerance·|P_E|, E' the latest evaluated epoch ≤ E/2.
// Small whenever progress is slow, on a plateau far from the optimum too: a
// reason to look for a certificate, never one itself.
inline bool estimate_met(const std::vector<EpochInfo>& trace, double tolerance) {
  const EpochInfo& last = trace.back();
  const EpochInfo* baseline = nullptr;
  for (const EpochInfo& e : trace) {
    if (e.stop_check && e.has_objective && e.epoch <= last.epoch / 2) baseline = &e;
  }
  return baseline != nullptr &&
         baseline->sample_objective - last.sample_objective <= tolerance * std::abs(last.sample_objective);
}

// The batches of steps t, t+1, ..., t+4, drawn from the sampler in step order
// ahead of time, and the three-stage prefetch that uses them: where the rows
// of the batch four steps ahead start, the rows of the batch three steps
// ahead, and the weights of the batch two steps ahead come into cache, each
// stage reading only what the previous one fetched, so that nothing stalls:
// with a table far larger than the cache every weight is a memory access (and
// the row offsets are evicted by them), and one step of work is too short to
// hide that latency.
class BatchPipeline {
 public:
  BatchPipeline(Sampler& sampler, std::size_t k) : sampler_(sampler), k_(k) {
    for (auto& b : ring_) b.resize(k);
  }
  // Draws the batches of steps 1 to 4 (before the first step).
  void start() {
    for (std::size_t j = 0; j < 4; ++j) {
      for (std::size_t a = 0; a < k_; ++a) ring_[j][a] = sampler_.next();
    }
  }
  const std::vector<std::size_t>& current() const { return ring_[0]; }
  // After step t of T: draw step t + 4's batch, prefetch, move on one step.
  void advance(std::uint64_t t, std::uint64_t T, const Dataset& data, const ScaledWeights& W) {
    if (t + 4 <= T) {
      for (std::size_t a = 0; a < k_; ++a) {
        ring_[4][a] = sampler_.next();
        prefetch_row_start(data, ring_[4][a]);
      }
    }
    if (t + 3 <= T) {
      for (std::size_t a = 0; a < k_; ++a) prefetch_row(data.row(ring_[3][a]));
    }
    if (t + 2 <= T) {
      for (std::size_t a = 0; a < k_; ++a) W.prefetch(data.row(ring_[2][a]));
    }
    for (std::size_t j = 0; j < 4; ++j) ring_[j].swap(ring_[j + 1]);
  }

 private:
  Sampler& sampler_;
  std::size_t k_;
  std::vector<std::size_t> ring_[5];
};

// One Pegasos run: the state of Fig. 2 (W, its average, the bias) and the
// named parts around the step (the batch pipeline, the epoch monitor with
// traces and automatic stopping, the output iterate).
template <Objective O>
class PegasosTrainer {
 public:
  PegasosTrainer(const Dataset& data, const O& objective, const EngineSettings& s,
                 const std::function<bool(const EpochInfo&)>& on_epoch, const PegasosHooks& hooks)
      : data_(data), objective_(objective), s_(s), on_epoch_(on_epoch), hooks_(hooks), n_(data.size()),
        K_(static_cast<std::size_t>(objective.num_outputs())), dim_(data.dimension),
        feature_bias_(s.bias == BiasMode::kFeature), free_bias_(s.bias == BiasMode::kUnregularized),
        averaging_(s.output == OutputIterate::kAverage), k_(batch_for(s, data.size())),
        lambda_(s.lambda), bias_value_(static_cast<float>(s.bias_feature_value)),
        W_(dim_ + (feature_bias_ ? 1 : 0), static_cast<int>(K_), averaging_), b_(K_, 0.0), b_avg_(K_, 0.0),
        radius_(s.projection ? objective.projection_radius(lambda_) : std::numeric_limits<double>::infinity()),
        steps_per_epoch_((n_ + k_ - 1) / k_), sampler_(data, s.sampling, derive_seed(s.seed, 1)),
        pipeline_(sampler_, k_), scores_(k_ * K_), coeff_(k_ * K_), active_(k_) {
    schedule();
    if (hooks.track_dual) A_.emplace(n_, static_cast<int>(K_), averaging_);
    if (hooks.warm != nullptr) start_from(*hooks.warm);
    // Fixed evaluation sample for the stopping rule, or for traces.
    std::size_t sample_size = n_;
    if (automatic_) {
      sample_size = std::min(n_, s.stop_sample);
    } else if (s.trace_objective) {
      sample_size = trace_sample_size(s.trace_sample, n_);
    }
    if (sample_size < n_) eval_rows_ = Rng(derive_seed(s.seed, 3)).sample_indices(n_, sample_size);
  }

  TrainResult run() {
    result_.dimension = dim_;
    result_.outputs = static_cast<int>(K_);
    std::uint64_t t = 0;
    if (T_ > 0) pipeline_.start();
    while (t < T_) {
      ++t;
      step(t, pipeline_.current());
      pipeline_.advance(t, T_, data_, W_);
      if (t == t_star_) {
        snapshot_w_ = W_.weights();
        snapshot_b_ = free_bias_ ? b_ : std::vector<double>(K_, 0.0);
        if (A_) snapshot_a_ = A_->weights();
      }
      if (monitor(t)) break;
    }
    if (automatic_ && t == T_ && result_.stopped_by == StopReason::kBudget) result_.stopped_by = StopReason::kMaxEpochs;
    output_iterate(result_.weights, result_.bias);
    result_.dual_coefficients = output_dual();
    result_.iterations = t;
    result_.epochs = static_cast<double>(t) * static_cast<double>(k_) / static_cast<double>(n_);
    result_.objective = primal_objective(data_, objective_, s_, result_.weights, result_.bias);
    return std::move(result_);
  }

 private:
  // Step t of Fig. 2 on the batch A_t: scores and sub-gradients with the
  // current iterate, η_t = 1/(λt), W ← (1 − η_t λ) W − (η_t/k) Σ ∂ℓ_i x_i,
  // the projection onto the ball of radius r, the running average. Every
  // change to W is mirrored in the dual coefficients A when they are kept.
  void step(std::uint64_t local_t, const std::vector<std::size_t>& batch) {
    const std::uint64_t t = t0_ + local_t;  // the schedule's step (t0_ > 0 after a warm start)
    for (std::size_t a = 0; a < k_; ++a) {
      const RowView x = data_.row(batch[a]);
      double* sc = &scores_[a * K_];
      for (std::size_t c = 0; c < K_; ++c) sc[c] = b_[c];
      W_.add_scores(x, sc);
      if (feature_bias_) W_.add_scores(bias_row(), sc);
      if constexpr (HasScoreOffset<O>) objective_.add_offset(x, sc);
      active_[a] = objective_.subgradient(x, sc, &coeff_[a * K_]);
    }
    const double eta = 1.0 / (lambda_ * static_cast<double>(t));
    // 1 − η_t λ = 1 − 1/t, computed without λ so that an extreme λ (even a
    // denormal, where η overflows) cannot turn the shrink into NaN; exactly 0
    // at t = 1, where W restarts from 0.
    scale(1.0 - 1.0 / static_cast<double>(t));
    const double step = -eta / static_cast<double>(k_);
    for (std::size_t a = 0; a < k_; ++a) {
      if (active_[a]) update(batch[a], &coeff_[a * K_], step);
    }
    if (free_bias_) {
      for (std::size_t j = 0; j < K_; ++j) b_[j] = std::clamp(b_[j], -bias_bound_, bias_bound_);
    }
    if (std::isfinite(radius_)) {
      const double sq = W_.squared_norm();
      if (sq > radius_ * radius_) scale(radius_ / std::sqrt(sq));
    }
    if (averaging_) average(t);
  }

  void scale(double c) {
    W_.scale_by(c);
    if (A_) A_->scale_by(c);
  }

  // W += step·coeff·x̃_i (and A_i += step·coeff, the free bias b += step·coeff).
  void update(std::size_t i, double* c, double step) {
    for (std::size_t j = 0; j < K_; ++j) c[j] *= step;
    W_.add(data_.row(i), c);
    if (feature_bias_) W_.add(bias_row(), c);
    if (A_) {
      const auto row = static_cast<std::uint32_t>(i);
      A_->add(RowView{&kUnit, &row, 1, -1, 0}, c);
    }
    if (free_bias_) {
      for (std::size_t j = 0; j < K_; ++j) b_[j] += c[j];
    }
  }

  void average(std::uint64_t t) {
    const double mu = (1.0 + s_.average_gamma) / (static_cast<double>(t) + s_.average_gamma);
    W_.average_step(t == 1 ? 1.0 : mu);
    if (A_) A_->average_step(t == 1 ? 1.0 : mu);
    for (std::size_t j = 0; j < K_; ++j) b_avg_[j] = t == 1 ? b_[j] : (1.0 - mu) * b_avg_[j] + mu * b_[j];
  }

  // A warm start: W (and its average, and the dual mirror A) start at the
  // given state, the schedule at its step count, at most kWarmEpochs epochs'
  // worth of steps. Under the 1/(λt) schedule W_t is the mean of t steps'
  // subgradients, so the old run's whole count (84 epochs on 90% of a
  // Fashion-MNIST slice at λ = 0.1) weighs yesterday's data that many epochs
  // against today's and the new rows take as long to count: 136 epochs where
  // a cold run takes 54. With 4 epochs' worth: 38 (UCI Ionosphere, Sonar,
  // Breast Cancer at λ = 0.1: 200 → 40, 160 → 36, 136 → 38 epochs; cold 38, 54, 44).
  // Unit rows put each stored weight row in place through the ordinary update.
  static constexpr std::uint64_t kWarmEpochs = 4;
  void start_from(const WarmStart& warm) {
    // t = 0: W = 0; warm_schedule continue: the whole count (one run going on).
    t0_ = s_.warm_whole_schedule ? std::max<std::uint64_t>(warm.steps, 1)
                                 : std::clamp<std::uint64_t>(warm.steps, 1, kWarmEpochs * steps_per_epoch_);
    auto put = [](ScaledWeights& table, std::size_t row, const double* values, std::size_t K) {
      if (std::all_of(values, values + K, [](double v) { return v == 0.0; })) return;
      const auto r = static_cast<std::uint32_t>(row);
      table.add(RowView{&kUnit, &r, 1, -1, 0}, values);
    };
    for (std::size_t j = 0; j < dim_; ++j) put(W_, j, &warm.weights[j * K_], K_);
    if (feature_bias_) {
      std::vector<double> b(K_);
      for (std::size_t c = 0; c < K_; ++c) b[c] = warm.bias[c] / bias_value_;
      put(W_, dim_, b.data(), K_);
    }
    if (free_bias_) b_ = b_avg_ = warm.bias;
    if (A_ && !warm.dual_coefficients.empty()) {
      for (std::size_t i = 0; i < n_; ++i) put(*A_, i, &warm.dual_coefficients[i * K_], K_);
    }
    if (averaging_) {  // the average starts at the warm iterate
      W_.average_step(1.0);
      if (A_) A_->average_step(1.0);
    }
  }

  // The constant feature of BiasMode::kFeature as a one-entry row.
  RowView bias_row() const { return RowView{&bias_value_, &bias_index_, 1, -1, 0}; }

  // The number of steps T (a budget, or the cap of automatic stopping), the
  // random iterate's step and the bound of an unregularised bias.
  void schedule() {
    if (free_bias_) {
      // |b*| ≤ 1 + R·‖w*‖ (a margin support vector has y(w·x + b) = 1), so
      // clipping b to that interval never excludes the optimum while it tames
      // the huge early steps η_1 = 1/λ.
      double max_sq = 0.0;
      for (std::size_t i = 0; i < n_; ++i) max_sq = std::max(max_sq, squared_norm(data_.row(i)));
      const double w_bound = std::isfinite(radius_) ? radius_ : objective_.projection_radius(lambda_);
      bias_bound_ = 1.0 + std::sqrt(max_sq) * w_bound;
    }
    const double epoch_nnz = static_cast<double>(std::max<std::uint64_t>(data_.nnz(), 1));
    const double dimension = s_.check_dimension != 0 ? s_.check_dimension : dim_;
    eval_every_ = static_cast<int>(std::clamp(std::ceil(dimension * static_cast<double>(K_) / epoch_nnz), 1.0, 16.0));
    T_ = s_.iterations;
    if (T_ == 0 && s_.epochs > 0) {
      T_ = static_cast<std::uint64_t>(std::ceil(s_.epochs * static_cast<double>(n_) / static_cast<double>(k_)));
    }
    automatic_ = T_ == 0;
    if (automatic_) {
      const int cap =
          s_.max_epochs > 0 ? s_.max_epochs : automatic_epoch_cap(Solver::kPegasos, condition_number(data_, s_));
      T_ = steps_per_epoch_ * static_cast<std::uint64_t>(cap);
    }
    if (s_.output == OutputIterate::kRandom) t_star_ = 1 + Rng(derive_seed(s_.seed, 2)).below(T_);  // Theorem 2
  }

  // The epoch monitor, after step t: at the end of an epoch (or a trace
  // point, or the last step) the finiteness check, the trace point, the
  // on_epoch callback and the automatic stopping rule. True to stop.
  bool monitor(std::uint64_t t) {
    const bool epoch_end = t % steps_per_epoch_ == 0;
    const bool iteration_point = s_.trace_objective && s_.trace_iterations > 0 && t % s_.trace_iterations == 0;
    if (!(epoch_end || t == T_ || iteration_point)) return false;
    if (!std::isfinite(W_.squared_norm())) {
      throw InputError(data_.source + ": the weights became infinite or NaN at iteration " + std::to_string(t) +
                       "; scale the features (e.g. to unit norm) or raise lambda");
    }
    EpochInfo info;
    info.epoch = static_cast<int>((t + steps_per_epoch_ - 1) / steps_per_epoch_);
    info.iterations = t;
    // Materialising the output iterate costs O(dimension); when an epoch has
    // far fewer non-zeros than that (text: 2^20 buckets, few documents),
    // evaluate only every `eval_every_` epochs.
    info.traced = s_.trace_objective &&
                  (t == T_ || (s_.trace_iterations > 0 ? iteration_point
                                                       : epoch_end && info.epoch % std::max(1, s_.trace_every) == 0));
    // Late in a long run the stopping rule need not look at every epoch:
    // evaluate every p-th epoch, p the largest power of two with 32·p < E (so
    // stopping comes at most 1/16 of the epochs late), which turns the O(E)
    // evaluation passes of a long run into O(32 · log E).
    int spacing = 1;
    while (32 * spacing < info.epoch) spacing *= 2;
    // Only the stopping rule's own schedule decides when to stop, so that
    // tracing never changes the model.
    info.stop_check = automatic_ && epoch_end && info.epoch % eval_every_ == 0 && info.epoch % spacing == 0;
    std::vector<double> w, bias;  // outlive the on_epoch call below
    if ((info.traced || info.stop_check) &&
        (s_.output != OutputIterate::kRandom || !snapshot_w_.empty() || automatic_)) {
      output_iterate(w, bias);
      info.sample_objective = regulariser(w, bias) + mean_loss(data_, objective_, w, bias, eval_rows_);
      info.has_objective = true;
      info.weights = &w;
      info.bias = &bias;
    }
    result_.trace.push_back(info);
    result_.trace.back().weights = result_.trace.back().bias = nullptr;  // w, bias die with this step
    if (on_epoch_ && !on_epoch_(info)) {
      result_.stopped_by = StopReason::kCallback;
      return true;
    }
    if (!(info.stop_check && info.has_objective && info.epoch >= std::max(2, s_.min_epochs) &&
          estimate_met(result_.trace, s_.tolerance))) {
      return false;
    }
    const EstimateVerdict verdict =
        hooks_.at_estimate ? hooks_.at_estimate(w, bias, output_dual()) : EstimateVerdict::kStop;
    if (verdict == EstimateVerdict::kContinue) return false;
    result_.converged = verdict == EstimateVerdict::kConverged;
    result_.stopped_by = result_.converged ? StopReason::kTolerance : StopReason::kEstimate;
    return true;
  }

  // The current output iterate as dense weights (with the bias split off).
  void output_iterate(std::vector<double>& w, std::vector<double>& bias) const {
    std::vector<double> full;
    if (s_.output == OutputIterate::kAverage) {
      full = W_.average_weights();
      bias = free_bias_ ? b_avg_ : std::vector<double>(K_, 0.0);
    } else if (s_.output == OutputIterate::kRandom && !snapshot_w_.empty()) {
      full = snapshot_w_;
      bias = snapshot_b_;
    } else {
      full = W_.weights();
      bias = free_bias_ ? b_ : std::vector<double>(K_, 0.0);
    }
    if (feature_bias_) {
      for (std::size_t c = 0; c < K_; ++c) bias[c] = full[dim_ * K_ + c] * bias_value_;
      full.resize(static_cast<std::size_t>(dim_) * K_);
    }
    w = std::move(full);
  }

  std::vector<double> output_dual() const {
    if (!A_) return {};
    if (s_.output == OutputIterate::kAverage) return A_->average_weights();
    if (s_.output == OutputIterate::kRandom && !snapshot_w_.empty()) return snapshot_a_;
    return A_->weights();
  }

  // λ/2 ‖w‖², counting the bias when it is the weight of a constant feature.
  double regulariser(const std::vector<double>& w, const std::vector<double>& bias) const {
    double sq = squared_norm(w);
    if (feature_bias_) {
      for (double v : bias) sq += (v / bias_value_) * (v / bias_value_);
    }
    return lambda_ / 2 * sq;
  }

  static constexpr float kUnit = 1.0f;

  const Dataset& data_;
  const O& objective_;
  const EngineSettings& s_;
  const std::function<bool(const EpochInfo&)>& on_epoch_;
  const PegasosHooks& hooks_;
  const std::size_t n_, K_;
  const std::uint32_t dim_, bias_index_ = dim_;
  const bool feature_bias_, free_bias_, averaging_;
  const std::size_t k_;
  const double lambda_;
  const float bias_value_;
  ScaledWeights W_;
  std::optional<ScaledWeights> A_;  // the dual coefficients (PegasosHooks::track_dual), one row per example
  std::vector<double> b_, b_avg_;
  const double radius_;
  double bias_bound_ = std::numeric_limits<double>::infinity();
  const std::uint64_t steps_per_epoch_;
  std::uint64_t T_ = 0, t_star_ = 0;
  std::uint64_t t0_ = 0;  // the schedule's step count before this run (warm start)  // t_star_: the random-iterate output's step (Theorem 2)
  bool automatic_ = false;
  int eval_every_ = 1;
  Sampler sampler_;
  BatchPipeline pipeline_;
  std::vector<double> scores_, coeff_;
  std::vector<char> active_;
  std::vector<std::size_t> eval_rows_;
  std::vector<double> snapshot_w_, snapshot_b_, snapshot_a_;
  TrainResult result_;
};

// Train with the Pegasos schedule. Requires data.size() > 0 and settings
// validated (lambda > 0, batch_size ≥ 1). Throws InputError when the weights
// stop being finite (features too large for the chosen λ).
// `on_epoch` (optional) is called after every epoch; returning false stops.
template <Objective O>
TrainResult train(const Dataset& data, const O& objective, const EngineSettings& s,
                  const std::function<bool(const EpochInfo&)>& on_epoch = {}, const PegasosHooks& hooks = {}) {
  return PegasosTrainer<O>(data, objective, s, on_epoch, hooks).run();
}

}  // namespace pegasos
