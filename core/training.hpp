// Types and helpers shared by the solvers (the Pegasos engine, core/engine.hpp;
// dual coordinate ascent, core/sdca.hpp; the choice between them,
// core/solver.hpp): settings, the result and trace of a run, why it stopped,
// the primal objective, and prefetch hints for row access.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "core/dataset.hpp"
#include "core/objective.hpp"
#include "core/parallel.hpp"

namespace pegasos {

enum class OutputIterate { kLast, kAverage, kRandom };
// kPermutation: every example once a pass in a random order, in blocks on
// large data (core/visit_order.hpp); kShuffle: a uniform permutation always.
enum class Sampling { kUniform, kPermutation, kSequential, kBalanced, kShuffle };
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
  // A warm start continues the old run's whole 1/(λt) schedule (warm_schedule:
  // continue), not at most Engine::kWarmEpochs epochs' worth of it.
  bool warm_whole_schedule = false;
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
  double tolerance = 1e-3;
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
  // Training may run in the feature space the data uses (core/compact_features.hpp);
  // false: always in the data's dimension (the tests compare the two).
  bool compact_features = true;
  // The dimension Pegasos sizes its check schedule by (core/engine.hpp
  // schedule(): evaluate every ⌈d·K / nnz⌉ epochs); 0: the data's. A run on
  // compacted features keeps the original's, so that it checks the same
  // epochs and returns the same model.
  std::uint32_t check_dimension = 0;
  // SDCA's first pass from α = 0 (binary and Crammer–Singer) solves, at its
  // t-th visit, the dual of the problem of the t examples seen so far, where
  // λn ≥ 30 (core/sdca_common.hpp); false: the plain first pass (the tests
  // compare the two).
  bool growing_first_pass = true;
};

// The mini-batch size k of a run on n examples: batch_size, at most n. A
// mini-batch is a subset of the data (Shalev-Shwartz et al.: A_t ⊆ S,
// k ≤ m), so a batch_size past n is n and `epochs` counts passes as asked.
inline std::size_t batch_for(const EngineSettings& s, std::size_t n) {
  return std::min<std::size_t>(static_cast<std::size_t>(s.batch_size), std::max<std::size_t>(n, 1));
}

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
  // Seconds since this fit began, where the caller of the solvers timed it
  // (drivers/fit.cpp: fit_model, after any lambda "auto" search); < 0 unset.
  double seconds = -1.0;
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
  // SDCA through train_with_solver / train_one_vs_all: the same α as fractions
  // of each variable's box bound (n × K; core/warm_start.hpp box_fractions),
  // what a model file stores (README § Warm start); empty for Pegasos.
  std::vector<double> alpha_fraction;
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

// A warm start (`init_model`): the state an earlier model left, to continue
// from instead of from zero (core/warm_start.hpp for what each solver makes of
// it). Weights in the data's dimension, feature-major like TrainResult.
struct WarmStart {
  std::vector<double> weights;  // dimension × K
  std::vector<double> bias;     // K
  // Pegasos: the step t of the 1/(λt) schedule the weights stand at; the run
  // continues with t + 1 (η = 1/(λ(t + 1)), averaging weight μ_{t+1}).
  std::uint64_t steps = 0;
  // Pegasos with PegasosHooks::track_dual: the dual coefficients the mirror A
  // of the iterates starts from (n × K; core/solver.hpp fills them).
  std::vector<double> dual_coefficients;
  // The old model's stored dual variables matched to the new data's rows (n ×
  // K, fractions of the box bound as box_fractions gives them; NaN: a row the
  // old model has no entry for). Empty: the model stores none, and the dual
  // point is rebuilt from its margins (core/warm_start.hpp).
  std::vector<double> stored_alpha;
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
  // Start from this state instead of W = 0, t = 0 (the average starts at W).
  const WarmStart* warm = nullptr;
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

// start + x·w for the coordinate-ascent passes. A row of kSplitDot or more
// non-zeros is summed in four partial sums (as ScaledWeights::add_scores_of
// sums Pegasos' scores): one running sum waits on each add's latency, about
// 4 cycles an element, which kept SDCA's pass over 2000 dense random-Fourier
// features at 0.9 G elements/s a core where four sums reach 1.7 from memory.
// Shorter rows keep the one running sum in index order (their sums, and the
// models trained on them, as before). The threshold is squared_norm's
// (core/dataset.hpp).
inline constexpr std::uint32_t kSplitDot = kSplitSum;
template <bool kDense>
[[gnu::always_inline]] inline double row_dot(const RowView& x, const double* w, double start) {
  const float* val = x.values;
  const std::uint32_t* idx = x.indices;
  if (x.nnz < kSplitDot) {
    for (std::uint32_t j = 0; j < x.nnz; ++j) start += static_cast<double>(val[j]) * w[kDense ? j : idx[j]];
    return start;
  }
  // The four sums as two pairs of lanes (s0, s1) and (s2, s3): each lane
  // adds the same products in the same order as the four scalar sums did,
  // so the result is bit-identical, with one packed multiply and add for
  // two elements (GCC kept the hand-split sums scalar). One-vs-all SDCA on
  // 2000 random Fourier features of 10k Fashion-MNIST images: the passes'
  // CPU time 23% lower.
  using Pair = double __attribute__((vector_size(16)));
  Pair low = {0.0, 0.0}, high = {0.0, 0.0};
  std::uint32_t j = 0;
  for (; j + 4 <= x.nnz; j += 4) {
    const Pair xl = {static_cast<double>(val[j]), static_cast<double>(val[j + 1])};
    const Pair xh = {static_cast<double>(val[j + 2]), static_cast<double>(val[j + 3])};
    Pair wl, wh;
    if constexpr (kDense) {
      std::memcpy(&wl, w + j, sizeof wl);
      std::memcpy(&wh, w + j + 2, sizeof wh);
    } else {
      wl = Pair{w[idx[j]], w[idx[j + 1]]};
      wh = Pair{w[idx[j + 2]], w[idx[j + 3]]};
    }
    low += xl * wl;
    high += xh * wh;
  }
  double s0 = low[0];
  const double s1 = low[1], s2 = high[0], s3 = high[1];
  for (; j < x.nnz; ++j) s0 += static_cast<double>(val[j]) * w[kDense ? j : idx[j]];
  return start + ((s0 + s1) + (s2 + s3));
}

// Scores W·x + b (+ objective offset) of one row for given dense weights.
template <Objective O>
void dense_scores(const O& objective, const std::vector<double>& weights, const std::vector<double>& bias,
                  std::uint32_t dimension, const RowView& x, double* scores) {
  const std::size_t K = static_cast<std::size_t>(objective.num_outputs());
  if (K == 1 && (x.nnz == 0 || x.indices[x.nnz - 1] < dimension)) {  // indices increase: all within the weights
    // Rows holding every feature (indices 0..d−1) read no index array.
    scores[0] = x.nnz == dimension ? row_dot<true>(x, weights.data(), bias[0]) : row_dot<false>(x, weights.data(), bias[0]);
    if constexpr (HasScoreOffset<O>) objective.add_offset(x, scores);
    return;
  }
  for (std::size_t k = 0; k < K; ++k) scores[k] = bias[k];
  for (std::uint32_t j = 0; j < x.nnz; ++j) {
    const std::uint32_t f = x.indices[j];
    if (f >= dimension) continue;
    for (std::size_t k = 0; k < K; ++k) scores[k] += static_cast<double>(x.values[j]) * weights[f * K + k];
  }
  if constexpr (HasScoreOffset<O>) objective.add_offset(x, scores);
}

// Mean data loss over `rows` (all rows when empty), summed in fixed blocks so
// the result is bit-identical for any thread count. on_row(r, x, scores) sees
// each row's scores (r: the row's place in `rows`, or its index), from any
// thread, each r once.
template <Objective O, class OnRow>
double mean_loss(const Dataset& data, const O& objective, const std::vector<double>& weights,
                 const std::vector<double>& bias, const std::vector<std::size_t>& rows, OnRow&& on_row) {
  const std::size_t n = rows.empty() ? data.size() : rows.size();
  constexpr std::size_t kBlock = 4096;
  const std::size_t blocks = (n + kBlock - 1) / kBlock;
  std::vector<double> partial(blocks, 0.0);
  const std::size_t K = static_cast<std::size_t>(objective.num_outputs());
  // The weights' own dimension: data read for a model may have more features
  // (ignored, as in prediction).
  const auto dimension = static_cast<std::uint32_t>(weights.size() / K);
  parallel_for_index(blocks, [&](std::size_t b) {
    std::vector<double> scores(K);
    double sum = 0.0;
    for (std::size_t r = b * kBlock; r < std::min(n, (b + 1) * kBlock); ++r) {
      const RowView x = data.row(rows.empty() ? r : rows[r]);
      dense_scores(objective, weights, bias, dimension, x, scores.data());
      sum += objective.loss(x, scores.data());
      on_row(r, x, scores.data());
    }
    partial[b] = sum;
  });
  double total = 0.0;
  for (double p : partial) total += p;
  return n == 0 ? 0.0 : total / static_cast<double>(n);
}
template <Objective O>
double mean_loss(const Dataset& data, const O& objective, const std::vector<double>& weights,
                 const std::vector<double>& bias, const std::vector<std::size_t>& rows = {}) {
  return mean_loss(data, objective, weights, bias, rows, [](std::size_t, const RowView&, const double*) {});
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

// Prefetch hints (non-blocking, no effect on results). Always inlined: GCC
// takes a function made only of prefetches for a pure one and drops the
// calls whose result is unused, i.e. every call.
//
// Hint the cache to fetch where row i starts (its offsets and label), so
// that data.row(i) a step later does not stall on them.
[[gnu::always_inline]] inline void prefetch_row_start(const Dataset& data, std::size_t i) {
  __builtin_prefetch(data.row_ptr.data() + i);
  __builtin_prefetch(data.labels.data() + i);
}

// Of a long row only the first kPrefetchRowBytes of each array are asked
// for: the hardware prefetcher streams the rest once the visit reads them
// in order, while a hint for every line of an 8 KB row (2000 dense
// features) filled the line buffers and stalled: 30% of SDCA's pass time
// was in the prefetch loop (one-vs-all on random Fourier features), and
// capped the passes take 8% less CPU time.
inline constexpr std::size_t kPrefetchRowBytes = 1024;

// Ask the cache for a row's values only: rows whose indices are not read
// (dense rows, Dataset::rows_hold_every_feature).
[[gnu::always_inline]] inline void prefetch_row_values(const RowView& x) {
  constexpr std::size_t kLine = 64;
  const char* val = reinterpret_cast<const char*>(x.values);
  const std::size_t bytes = std::min(std::size_t{x.nnz} * 4, kPrefetchRowBytes);
  for (std::size_t off = 0; off < bytes; off += kLine) __builtin_prefetch(val + off);
}

// Ask the cache for a row's indices and values.
[[gnu::always_inline]] inline void prefetch_row(const RowView& x) {
  constexpr std::size_t kLine = 64;
  const char* idx = reinterpret_cast<const char*>(x.indices);
  const char* val = reinterpret_cast<const char*>(x.values);
  const std::size_t bytes = std::min(std::size_t{x.nnz} * 4, kPrefetchRowBytes);
  for (std::size_t off = 0; off < bytes; off += kLine) {
    __builtin_prefetch(idx + off);
    __builtin_prefetch(val + off);
  }
}

// Ask the cache for every line of [p, p + bytes) (bytes > 0): the first,
// each 64 bytes on, and the last, wherever p is aligned.
[[gnu::always_inline]] inline void prefetch_span(const void* p, std::size_t bytes) {
  constexpr std::size_t kLine = 64;
  const char* c = static_cast<const char*>(p);
  for (std::size_t off = 0; off < bytes; off += kLine) __builtin_prefetch(c + off);
  __builtin_prefetch(c + bytes - 1);
}

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

}  // namespace pegasos
