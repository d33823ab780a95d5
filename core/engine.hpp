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

#include <tbb/parallel_for.h>
#include <tbb/blocked_range.h>

#include "core/dataset.hpp"
#include "core/errors.hpp"
#include "core/objective.hpp"
#include "core/random.hpp"
#include "core/scaled_weights.hpp"

namespace pegasos {

enum class OutputIterate { kLast, kAverage, kRandom };
enum class Sampling { kUniform, kPermutation, kSequential, kBalanced };
enum class BiasMode { kNone, kFeature, kUnregularized };
// Pegasos (this file), SDCA (core/sdca.hpp, the linear hinge objectives), or auto:
// SDCA where λn is small (see core/solver.hpp).
enum class Solver { kPegasos, kSdca, kAuto };

struct EngineSettings {
  double lambda = 1e-4;
  Solver solver = Solver::kPegasos;
  std::uint64_t iterations = 0;  // > 0: exactly this many steps
  double epochs = 0.0;           // > 0: ceil(epochs · n / k) steps
  int batch_size = 1;
  bool projection = true;
  OutputIterate output = OutputIterate::kAverage;
  // Polynomial-decay averaging (Shamir & Zhang, ICML 2013):
  //   Ā_t = (1 − μ_t) Ā_{t−1} + μ_t W_t,  μ_t = (1 + γ)/(t + γ).
  // γ = 0 is the plain running average of all iterates; γ > 0 forgets the
  // wild early iterates of the 1/(λt) schedule and keeps the O(1/(λT)) rate.
  double average_gamma = 10.0;
  Sampling sampling = Sampling::kPermutation;
  BiasMode bias = BiasMode::kFeature;
  double bias_feature_value = 1.0;  // value of the constant feature ("feature" mode)
  std::uint64_t seed = 42;
  // Automatic stopping (iterations == 0 and epochs == 0): after epoch E the
  // output iterate's objective P_E on a fixed sample of the training set is
  // compared with P_{⌊E/2⌋}. Averaged SGD converges like P* + c/E, so
  // P_{⌊E/2⌋} − P_E ≈ c/E estimates the remaining gap P_E − P* (a long
  // baseline, robust to epoch-to-epoch noise); training stops when that
  // estimate is below `tolerance`·P_E, or at max_epochs. P_E is evaluated
  // after each of the first 32 epochs, then every 2nd up to 64, every 4th up
  // to 128, ... (the baseline is the latest evaluated epoch ≤ E/2).
  //
  // The estimate is not a certificate (it is small on any plateau): see
  // PegasosHooks for what happens when it fires, and core/solver.hpp for how
  // a run is certified by a duality gap.
  double tolerance = 5e-4;
  int min_epochs = 2;
  // Cap of automatic stopping, in epochs (Pegasos) or passes' worth of
  // visits (SDCA); 0 = sized by the solver from the problem (solver.hpp).
  int max_epochs = 0;
  std::size_t stop_sample = 100000;
  // Compute the sample objective after every epoch even with a fixed number
  // of steps (for traces / progress); costs one pass over the sample.
  bool trace_objective = false;
  // With trace_objective: only every trace_every-th epoch (and at the last step).
  int trace_every = 1;
  // With trace_objective, > 0: trace every trace_iterations steps instead
  // (and at the last step), also inside epochs; trace_every is then ignored.
  std::uint64_t trace_iterations = 0;
  // With trace_objective and a fixed step count, the traced objective is
  // computed on a fixed random sample (by seed) of max(⌈trace_sample·n⌉,
  // min(n, 200)) training rows, so that a trace point costs about
  // trace_sample of an epoch; 1 = the whole training set. (With automatic
  // stopping the stopping sample is used.) The final objective in
  // TrainResult is always on the whole set.
  double trace_sample = 0.1;
};

// Rows in a trace sample of `fraction` of n rows: max(⌈fraction·n⌉, 200),
// at most n (see EngineSettings::trace_sample).
inline std::size_t trace_sample_size(double fraction, std::size_t n) {
  if (fraction >= 1.0) return n;
  const auto rows = static_cast<std::size_t>(std::ceil(fraction * static_cast<double>(n)));
  return std::min(n, std::max(rows, std::size_t{200}));
}

struct EpochInfo {
  int epoch = 0;
  std::uint64_t iterations = 0;
  double sample_objective = 0.0;  // output iterate, on the stopping sample
  bool has_objective = false;     // sample_objective was computed this epoch
  bool traced = false;            // a trace point (trace_objective), not only a stopping check
  bool stop_check = false;        // evaluated for the automatic stopping rule
  // When has_objective: the output iterate (dense weights, dimension × K
  // feature-major, and K biases); valid only during the on_epoch call.
  const std::vector<double>* weights = nullptr;
  const std::vector<double>* bias = nullptr;
};

// Why training ended.
enum class StopReason {
  kTolerance,  // a duality gap certifies P − P* ≤ tolerance·P (converged)
  kEstimate,   // Pegasos' progress estimate fired and nothing could certify it
  kMaxEpochs,  // automatic stopping reached its cap (max_epochs) first
  kBudget,     // the requested epochs / iterations ran
  kCallback,   // the on_epoch callback asked to stop
};

struct TrainResult {
  std::uint32_t dimension = 0;
  int outputs = 1;
  std::vector<double> weights;  // dimension × K, feature-major (the bias is separate)
  std::vector<double> bias;     // K entries (0 for BiasMode::kNone)
  std::uint64_t iterations = 0;
  double epochs = 0.0;
  // True only when a duality gap certifies it: objective − dual_objective ≤
  // tolerance·objective (stopped_by == kTolerance).
  bool converged = false;
  StopReason stopped_by = StopReason::kBudget;
  double objective = 0.0;       // P on the whole training set, output iterate
  // A lower bound on the optimum P* (a dual objective value), −∞ when none
  // was computed: P* lies in [dual_objective, objective].
  double dual_objective = -std::numeric_limits<double>::infinity();
  const char* solver = "pegasos";  // which solver produced it (core/solver.hpp)
  // SDCA: the dual variables α (n × K) at the end, to warm-start from.
  std::vector<double> alpha;
  // Pegasos with PegasosHooks::track_dual: the dual coefficients of the
  // output iterate, W = Σ_i A_i x̃_i (n × K, x̃ with the bias feature).
  std::vector<double> dual_coefficients;
  std::vector<EpochInfo> trace;

  // (P − D)/|P|, +∞ without a bound.
  double relative_gap() const {
    if (!std::isfinite(dual_objective)) return std::numeric_limits<double>::infinity();
    return (objective - dual_objective) / std::max(std::abs(objective), std::numeric_limits<double>::min());
  }
};

// What the Pegasos engine does when its progress estimate fires.
enum class EstimateVerdict {
  kContinue,   // not certified: train on (the estimate was fooled by a plateau)
  kConverged,  // certified by a duality gap: stop, converged
  kStop,       // stop here without a claim (e.g. a dual solver takes over)
};

// Optional parts of a Pegasos run (see train()).
struct PegasosHooks {
  // Keep the dual coefficients A of the iterates: every update
  // W += c·x̃_i is mirrored as A_i += c, every shrink and projection scales
  // A as W, and A is averaged as W is, so W = Σ_i A_i x̃_i holds for the
  // last and the averaged iterate alike (O(K) per update, n × K memory).
  // With permutation sampling each A_i stays inside the dual's box (an
  // example is used at most once per epoch), which makes A a dual-feasible
  // point whose dual value bounds the optimum (core/solver.hpp).
  bool track_dual = false;
  // Called when the progress estimate says the tolerance may be met, with
  // the output iterate and (track_dual) its dual coefficients. Without it
  // the run stops there, not converged (kEstimate).
  std::function<EstimateVerdict(const std::vector<double>& weights, const std::vector<double>& bias,
                                const std::vector<double>& dual_coefficients)>
      at_estimate;
};

inline const char* to_string(StopReason r) {
  switch (r) {
    case StopReason::kTolerance: return "tolerance";
    case StopReason::kEstimate: return "estimate";
    case StopReason::kMaxEpochs: return "max_epochs";
    case StopReason::kBudget: return "budget";
    case StopReason::kCallback: return "callback";
  }
  return "?";
}

// Scores W·x + b (+ objective offset) of one row for given dense weights.
template <Objective O>
void dense_scores(const O& objective, const std::vector<double>& weights, const std::vector<double>& bias,
                  std::uint32_t dimension, const RowView& x, double* scores) {
  const std::size_t K = static_cast<std::size_t>(objective.num_outputs());
  for (std::size_t k = 0; k < K; ++k) scores[k] = bias[k];
  for (std::uint32_t j = 0; j < x.nnz; ++j) {
    const std::uint32_t f = x.indices[j];
    if (f >= dimension) continue;
    for (std::size_t k = 0; k < K; ++k) scores[k] += static_cast<double>(x.values[j]) * weights[f * K + k];
  }
  if constexpr (HasScoreOffset<O>) objective.add_offset(x, scores);
}

// Mean data loss over `rows` (all rows when empty), summed in fixed blocks so
// the result is bit-identical for any thread count.
template <Objective O>
double mean_loss(const Dataset& data, const O& objective, const std::vector<double>& weights,
                 const std::vector<double>& bias, const std::vector<std::size_t>& rows = {}) {
  const std::size_t n = rows.empty() ? data.size() : rows.size();
  constexpr std::size_t kBlock = 4096;
  const std::size_t blocks = (n + kBlock - 1) / kBlock;
  std::vector<double> partial(blocks, 0.0);
  const std::size_t K = static_cast<std::size_t>(objective.num_outputs());
  // The weights' own dimension: data read for a model may have more features
  // (ignored, as in prediction).
  const auto dimension = static_cast<std::uint32_t>(weights.size() / K);
  tbb::parallel_for(std::size_t{0}, blocks, [&](std::size_t b) {
    std::vector<double> scores(K);
    double sum = 0.0;
    for (std::size_t r = b * kBlock; r < std::min(n, (b + 1) * kBlock); ++r) {
      const RowView x = data.row(rows.empty() ? r : rows[r]);
      dense_scores(objective, weights, bias, dimension, x, scores.data());
      sum += objective.loss(x, scores.data());
    }
    partial[b] = sum;
  });
  double total = 0.0;
  for (double p : partial) total += p;
  return n == 0 ? 0.0 : total / static_cast<double>(n);
}

inline double squared_norm(const std::vector<double>& w) {
  double s = 0.0;
  for (double v : w) s += v * v;
  return s;
}

// The primal objective P = λ/2 (‖w‖² + ‖b/B‖² when the bias is the weight
// B·(b/B) of a constant feature B) + mean data loss, on the whole set.
template <Objective O>
double primal_objective(const Dataset& data, const O& objective, const EngineSettings& s,
                        const std::vector<double>& w, const std::vector<double>& bias) {
  double sq = squared_norm(w);
  if (s.bias == BiasMode::kFeature) {
    for (double v : bias) sq += (v / s.bias_feature_value) * (v / s.bias_feature_value);
  }
  return s.lambda / 2 * sq + mean_loss(data, objective, w, bias);
}

// Ask the cache for a row's indices and values (non-blocking).
// Hint the cache to fetch where row i starts (its offsets and label), so
// that data.row(i) a step later does not stall on them.
inline void prefetch_row_start(const Dataset& data, std::size_t i) {
  __builtin_prefetch(data.row_ptr.data() + i);
  __builtin_prefetch(data.labels.data() + i);
}

inline void prefetch_row(const RowView& x) {
  constexpr std::size_t kLine = 64;
  const char* idx = reinterpret_cast<const char*>(x.indices);
  const char* val = reinterpret_cast<const char*>(x.values);
  const std::size_t bytes = std::size_t{x.nnz} * 4;
  for (std::size_t off = 0; off < bytes; off += kLine) {
    __builtin_prefetch(idx + off);
    __builtin_prefetch(val + off);
  }
}

// Chooses the examples of each step.
class Sampler {
 public:
  Sampler(const Dataset& data, Sampling mode, std::uint64_t seed) : mode_(mode), n_(data.size()), rng_(seed) {
    if (mode_ == Sampling::kPermutation) {
      order_.resize(n_);
      std::iota(order_.begin(), order_.end(), std::size_t{0});
      rng_.shuffle(std::span<std::size_t>(order_));
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
      case Sampling::kPermutation: {
        if (pos_ == n_) {
          rng_.shuffle(std::span<std::size_t>(order_));
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
  std::size_t pos_ = 0;
  std::vector<std::size_t> order_;
  std::vector<std::vector<std::size_t>> by_class_;
};

// κ = mean ‖x̃_i‖² / (λn), x̃ with the bias feature: the condition number that
// sets both solvers' pace (SGD needs on the order of κ/ε epochs for a relative
// gap ε, dual coordinate ascent (1 + κ)·log(1/ε) passes at worst).
inline double condition_number(const Dataset& data, const EngineSettings& s) {
  const double b2 = s.bias == BiasMode::kFeature ? s.bias_feature_value * s.bias_feature_value : 0.0;
  double sum = 0.0;
  for (std::size_t i = 0; i < data.size(); ++i) sum += squared_norm(data.row(i), b2);
  const double n = static_cast<double>(std::max<std::size_t>(data.size(), 1));
  return sum / n / (s.lambda * n);
}

// The cap of automatic stopping when max_epochs is 0 (sized by the problem):
// epochs for Pegasos, passes' worth of visits for SDCA.
inline int automatic_epoch_cap(Solver solver, double kappa) {
  const double k = std::isfinite(kappa) ? std::max(kappa, 0.0) : 1e9;
  if (solver == Solver::kSdca) return static_cast<int>(std::clamp(std::ceil(100.0 * (1.0 + k)), 1000.0, 20000.0));
  return static_cast<int>(std::clamp(std::ceil(50.0 * (1.0 + k)), 200.0, 1000.0));
}

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

// Train with the Pegasos schedule. Requires data.size() > 0 and settings
// validated (lambda > 0, batch_size ≥ 1). Throws InputError when the weights
// stop being finite (features too large for the chosen λ).
// `on_epoch` (optional) is called after every epoch; returning false stops.
template <Objective O>
TrainResult train(const Dataset& data, const O& objective, const EngineSettings& s,
                  const std::function<bool(const EpochInfo&)>& on_epoch = {}, const PegasosHooks& hooks = {}) {
  const std::size_t n = data.size();
  const std::size_t K = static_cast<std::size_t>(objective.num_outputs());
  const std::uint32_t dim = data.dimension;
  const bool feature_bias = s.bias == BiasMode::kFeature;
  const bool free_bias = s.bias == BiasMode::kUnregularized;
  const std::size_t k = static_cast<std::size_t>(s.batch_size);
  const double lambda = s.lambda;

  ScaledWeights W(dim + (feature_bias ? 1 : 0), static_cast<int>(K), s.output == OutputIterate::kAverage);
  const std::uint32_t bias_index = dim;
  const float bias_value = static_cast<float>(s.bias_feature_value);
  std::vector<double> b(K, 0.0), b_avg(K, 0.0);

  const double radius = s.projection ? objective.projection_radius(lambda) : std::numeric_limits<double>::infinity();
  // Unregularised bias: |b*| ≤ 1 + R·‖w*‖ (a margin support vector has
  // y(w·x + b) = 1), so clipping b to that interval never excludes the
  // optimum while it tames the huge early steps η_1 = 1/λ.
  double bias_bound = std::numeric_limits<double>::infinity();
  if (free_bias) {
    double max_sq = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      max_sq = std::max(max_sq, squared_norm(data.row(i)));
    }
    const double w_bound = std::isfinite(radius) ? radius : objective.projection_radius(lambda);
    bias_bound = 1.0 + std::sqrt(max_sq) * w_bound;
  }

  const std::uint64_t steps_per_epoch = (n + k - 1) / k;
  const double epoch_nnz = static_cast<double>(std::max<std::uint64_t>(data.nnz(), 1));
  const int eval_every = static_cast<int>(
      std::clamp(std::ceil(static_cast<double>(dim) * static_cast<double>(K) / epoch_nnz), 1.0, 16.0));
  std::uint64_t T = s.iterations;
  if (T == 0 && s.epochs > 0) T = static_cast<std::uint64_t>(std::ceil(s.epochs * static_cast<double>(n) / static_cast<double>(k)));
  const bool automatic = T == 0;
  if (automatic) {
    const int cap = s.max_epochs > 0 ? s.max_epochs : automatic_epoch_cap(Solver::kPegasos, condition_number(data, s));
    T = steps_per_epoch * static_cast<std::uint64_t>(cap);
  }

  Sampler sampler(data, s.sampling, derive_seed(s.seed, 1));
  std::uint64_t t_star = 0;  // random-iterate output (Theorem 2)
  std::vector<double> snapshot_w, snapshot_b;
  if (s.output == OutputIterate::kRandom) {
    Rng pick(derive_seed(s.seed, 2));
    t_star = 1 + pick.below(T);
  }
  const bool averaging = s.output == OutputIterate::kAverage;
  // The dual coefficients A of the iterates (PegasosHooks::track_dual), one
  // row per example: they receive the same shrinks, updates, projections and
  // averaging steps as W.
  std::optional<ScaledWeights> A;
  std::vector<double> snapshot_a;
  if (hooks.track_dual) A.emplace(n, static_cast<int>(K), averaging);
  const float unit = 1.0f;
  auto example_row = [&](const std::uint32_t& i) { return RowView{&unit, &i, 1, -1, 0}; };

  // Fixed evaluation sample for the stopping rule, or for traces.
  std::vector<std::size_t> eval_rows;
  std::size_t sample_size = n;
  if (automatic) {
    sample_size = std::min(n, s.stop_sample);
  } else if (s.trace_objective) {
    sample_size = trace_sample_size(s.trace_sample, n);
  }
  if (sample_size < n) eval_rows = Rng(derive_seed(s.seed, 3)).sample_indices(n, sample_size);

  const float one = bias_value;
  const RowView bias_row{&one, &bias_index, 1, -1, 0};
  std::vector<double> scores(k * K), coeff(k * K);
  // Batches of steps t, t+1, ..., t+4 (drawn ahead for prefetching).
  std::vector<std::size_t> batch(k), batch1(k), batch2(k), batch3(k), batch4(k);
  std::vector<char> active(k);

  // The current output iterate as dense weights (with the bias split off).
  auto output_iterate = [&](std::vector<double>& w, std::vector<double>& bias) {
    std::vector<double> full;
    if (s.output == OutputIterate::kAverage) {
      full = W.average_weights();
      bias = free_bias ? b_avg : std::vector<double>(K, 0.0);
    } else if (s.output == OutputIterate::kRandom && !snapshot_w.empty()) {
      full = snapshot_w;
      bias = snapshot_b;
    } else {
      full = W.weights();
      bias = free_bias ? b : std::vector<double>(K, 0.0);
    }
    if (feature_bias) {
      for (std::size_t c = 0; c < K; ++c) bias[c] = full[dim * K + c] * bias_value;
      full.resize(static_cast<std::size_t>(dim) * K);
    }
    w = std::move(full);
  };

  auto output_dual = [&] {
    if (!A) return std::vector<double>{};
    if (s.output == OutputIterate::kAverage) return A->average_weights();
    if (s.output == OutputIterate::kRandom && !snapshot_w.empty()) return snapshot_a;
    return A->weights();
  };

  // λ/2 ‖w‖², counting the bias when it is the weight of a constant feature.
  auto regulariser = [&](const std::vector<double>& w, const std::vector<double>& bias) {
    double sq = squared_norm(w);
    if (feature_bias) {
      for (double v : bias) sq += (v / bias_value) * (v / bias_value);
    }
    return lambda / 2 * sq;
  };

  TrainResult result;
  result.dimension = dim;
  result.outputs = static_cast<int>(K);
  std::uint64_t t = 0;
  while (t < T) {
    ++t;
    // Scores of the batch with the current iterate. The batch was drawn at
    // the end of the previous step so its weight rows could be prefetched.
    if (t == 1) {
      for (std::size_t a = 0; a < k; ++a) batch[a] = sampler.next();
      for (std::size_t a = 0; a < k; ++a) batch1[a] = sampler.next();
      for (std::size_t a = 0; a < k; ++a) batch2[a] = sampler.next();
      for (std::size_t a = 0; a < k; ++a) batch3[a] = sampler.next();
    }
    for (std::size_t a = 0; a < k; ++a) {
      const RowView x = data.row(batch[a]);
      double* sc = &scores[a * K];
      for (std::size_t c = 0; c < K; ++c) sc[c] = b[c];
      W.add_scores(x, sc);
      if (feature_bias) W.add_scores(bias_row, sc);
      if constexpr (HasScoreOffset<O>) objective.add_offset(x, sc);
      active[a] = objective.subgradient(x, sc, &coeff[a * K]);
    }
    const double eta = 1.0 / (lambda * static_cast<double>(t));
    // 1 − η_t λ = 1 − 1/t, computed without λ so that an extreme λ (even a
    // denormal, where η overflows) cannot turn the shrink into NaN; exactly 0
    // at t = 1, where W restarts from 0.
    W.scale_by(1.0 - 1.0 / static_cast<double>(t));
    if (A) A->scale_by(1.0 - 1.0 / static_cast<double>(t));
    const double step = -eta / static_cast<double>(k);
    for (std::size_t a = 0; a < k; ++a) {
      if (!active[a]) continue;
      double* c = &coeff[a * K];
      for (std::size_t j = 0; j < K; ++j) c[j] *= step;
      W.add(data.row(batch[a]), c);
      if (feature_bias) W.add(bias_row, c);
      if (A) A->add(example_row(static_cast<std::uint32_t>(batch[a])), c);
      if (free_bias) {
        for (std::size_t j = 0; j < K; ++j) b[j] += c[j];
      }
    }
    if (free_bias) {
      for (std::size_t j = 0; j < K; ++j) b[j] = std::clamp(b[j], -bias_bound, bias_bound);
    }
    if (std::isfinite(radius)) {
      const double sq = W.squared_norm();
      if (sq > radius * radius) {
        W.scale_by(radius / std::sqrt(sq));
        if (A) A->scale_by(radius / std::sqrt(sq));
      }
    }
    if (averaging) {
      const double mu = (1.0 + s.average_gamma) / (static_cast<double>(t) + s.average_gamma);
      W.average_step(t == 1 ? 1.0 : mu);
      if (A) A->average_step(t == 1 ? 1.0 : mu);
      for (std::size_t j = 0; j < K; ++j) b_avg[j] = t == 1 ? b[j] : (1.0 - mu) * b_avg[j] + mu * b[j];
    }
    // Three-stage prefetch: where the rows of the batch four steps ahead
    // start, the rows of the batch three steps ahead, and the weights of the
    // batch two steps ahead come into cache now, each stage reading only
    // what the previous one fetched, so that nothing stalls: with a table
    // far larger than the cache every weight is a memory access (and the
    // row offsets are evicted by them), and one step of work is too short to
    // hide that latency. Batches are drawn in step order.
    if (t + 4 <= T) {
      for (std::size_t a = 0; a < k; ++a) {
        batch4[a] = sampler.next();
        prefetch_row_start(data, batch4[a]);
      }
    }
    if (t + 3 <= T) {
      for (std::size_t a = 0; a < k; ++a) prefetch_row(data.row(batch3[a]));
    }
    if (t + 2 <= T) {
      for (std::size_t a = 0; a < k; ++a) W.prefetch(data.row(batch2[a]));
    }
    if (t == t_star) {
      snapshot_w = W.weights();
      snapshot_b = free_bias ? b : std::vector<double>(K, 0.0);
      if (A) snapshot_a = A->weights();
    }

    batch.swap(batch1);
    batch1.swap(batch2);
    batch2.swap(batch3);
    batch3.swap(batch4);

    const bool epoch_end = t % steps_per_epoch == 0;
    const bool iteration_point = s.trace_objective && s.trace_iterations > 0 && t % s.trace_iterations == 0;
    if (epoch_end || t == T || iteration_point) {
      if (!std::isfinite(W.squared_norm())) {
        throw InputError(data.source + ": the weights became infinite or NaN at iteration " + std::to_string(t) +
                         "; scale the features (e.g. to unit norm) or raise lambda");
      }
      EpochInfo info;
      info.epoch = static_cast<int>((t + steps_per_epoch - 1) / steps_per_epoch);
      info.iterations = t;
      // Materialising the output iterate costs O(dimension); when an epoch
      // has far fewer non-zeros than that (text: 2^20 buckets, few
      // documents), evaluate only every `eval_every` epochs.
      const bool traced =
          s.trace_objective && (t == T || (s.trace_iterations > 0 ? iteration_point
                                                                  : epoch_end && info.epoch % std::max(1, s.trace_every) == 0));
      // Late in a long run the stopping rule need not look at every epoch:
      // evaluate every p-th epoch, p the largest power of two with 32·p < E
      // (so stopping comes at most 1/16 of the epochs late), which turns the
      // O(E) evaluation passes of a long run into O(32 · log E).
      int spacing = 1;
      while (32 * spacing < info.epoch) spacing *= 2;
      // Only the stopping rule's own schedule decides when to stop, so that
      // tracing never changes the model.
      info.stop_check = automatic && epoch_end && info.epoch % eval_every == 0 && info.epoch % spacing == 0;
      const bool want_objective = traced || info.stop_check;
      info.traced = traced;
      std::vector<double> w, bias;  // outlive the on_epoch call below
      if (want_objective && (s.output != OutputIterate::kRandom || !snapshot_w.empty() || automatic)) {
        output_iterate(w, bias);
        info.sample_objective = regulariser(w, bias) + mean_loss(data, objective, w, bias, eval_rows);
        info.has_objective = true;
        info.weights = &w;
        info.bias = &bias;
      }
      result.trace.push_back(info);
      result.trace.back().weights = result.trace.back().bias = nullptr;  // w, bias die with this step
      if (on_epoch && !on_epoch(info)) {
        result.stopped_by = StopReason::kCallback;
        break;
      }
      if (info.stop_check && info.has_objective && info.epoch >= std::max(2, s.min_epochs) &&
          estimate_met(result.trace, s.tolerance)) {
        const EstimateVerdict verdict = hooks.at_estimate ? hooks.at_estimate(w, bias, output_dual()) : EstimateVerdict::kStop;
        if (verdict != EstimateVerdict::kContinue) {
          result.converged = verdict == EstimateVerdict::kConverged;
          result.stopped_by = result.converged ? StopReason::kTolerance : StopReason::kEstimate;
          break;
        }
      }
    }
  }
  if (automatic && t == T && result.stopped_by == StopReason::kBudget) result.stopped_by = StopReason::kMaxEpochs;

  output_iterate(result.weights, result.bias);
  result.dual_coefficients = output_dual();
  result.iterations = t;
  result.epochs = static_cast<double>(t) * static_cast<double>(k) / static_cast<double>(n);
  result.objective = primal_objective(data, objective, s, result.weights, result.bias);
  return result;
}

}  // namespace pegasos
