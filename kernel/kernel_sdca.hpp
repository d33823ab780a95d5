// Kernel SDCA: dual coordinate ascent for kernel_hinge (the dual sibling of
// kernel Pegasos; Shalev-Shwartz & Zhang, JMLR 2013; Hsieh et al. 2008 for
// the closed-form hinge step), stopping on a certified duality gap.
//
// Per output c (binary: one; one-vs-all: class c vs the rest, the outputs
// sharing one kernel-row cache) the problem is
//   P(w) = λ/2 ‖w‖² + (1/n) Σ_i max(0, 1 − y_i ⟨w, φ(x_i)⟩),
// and its dual, with K'_ij = k(x_i, x_j) + B² (B² = 1 with the intercept,
// `bias: feature`: the kernel + 1 trick, a regularised constant feature;
// B² = 0 without it), α_i ∈ [0, 1]:
//   D(α) = (1/n) Σ α_i − λ/2 ‖w(α)‖²,   w(α) = 1/(λn) Σ_j α_j y_j φ'(x_j),
//   g_i = ⟨w(α), φ'(x_i)⟩ = 1/(λn) Σ_j α_j y_j K'_ij,
//   ‖w‖² = 1/(λn) Σ_i α_i y_i g_i.
// With `bias: unregularized` (LIBSVM's form) B² = 0, the dual gains the
// constraint Σ_i α_i y_i = 0 per output and the model an intercept b_c that
// is not regularised (the best one for w(α): kernel_dual.hpp's
// best_intercept); only the pair steps keep the constraint, so it needs
// automatic stopping.
// Automatic stopping (the default) steps pairs of coordinates chosen
// greedily (pair_ascend below: the exact maximum of D over the pair's box,
// the direction LIBSVM's SMO takes); a fixed budget (`epochs` > 0) runs the
// random passes described next, the paper's stochastic dual coordinate
// ascent. Single coordinate step (D is a concave quadratic in α_i alone):
//   α_i ← clip(α_i + λn (1 − y_i g_i) / K'_ii, 0, 1),
//   then g ← g + Δα_i y_i/(λn) · K'_i·   (one kernel row, O(n)).
// A step that changes nothing reads no kernel row: rows at a bound whose
// margin agrees cost O(1). Rows come from an LRU cache of whole kernel rows
// sized by `kernel_cache_mb` (kernel/kernel_rows.hpp: dense data in blocks of
// rows by vectorised dense dot products, sparse data by the gather dot). g is
// stored output-major, so the update of one output is a contiguous axpy.
// `epochs` in the summary counts visits / n.
//
// Order (random passes): a fresh random permutation of the rows per pass (seeded by `seed`,
// stream 1). Kernel rows and g updates are computed element by element, in
// parallel over blocks but each element the same whatever the thread count,
// so the model is identical for any number of threads.
//
// Stopping: automatic stopping is pair_ascend's (kernel_pairs.hpp: a
// certified gap ≤ `tolerance`·P from g recomputed exactly, or the cap of
// `max_epochs` passes' worth of visits, 0 = sized from κ = mean K'_ii/(λn),
// with converged false, stopped_by max_epochs). With `epochs` > 0 exactly that
// many random passes (stopped_by budget), g then recomputed for the reported
// gap.
//
// The model: support vectors = rows with some α_ic > 0 (row order),
// coefficients α_ic y_ic, decision scale 1/(λn) (iterations n, batch size
// 1), intercept b_c = B²/(λn) Σ_j α_jc y_jc, so
//   f_c(x) = 1/(λn) Σ_s α_sc y_sc k(x_s, x) + b_c = ⟨w_c, φ'(x)⟩.
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <list>
#include <mutex>
#include <numeric>
#include <utility>
#include <span>
#include <stdexcept>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/global_control.h>

#include "core/dataset.hpp"
#include "core/engine.hpp"
#include "core/errors.hpp"
#include "core/random.hpp"
#include "kernel/kernel_dual.hpp"
#include "kernel/kernel_model.hpp"
#include "kernel/kernel_pairs.hpp"
#include "kernel/kernel_rows.hpp"
#include "kernel/kernel_trainer.hpp"
#include "objectives/kernel_hinge.hpp"

namespace pegasos {

namespace kernel_sdca_detail {

// The coordinate step on row i for every output: α updated, coef_c =
// Δα_ic y_ic/(λn) (g not touched). Returns max_c |Δα_ic|.
inline double coordinate(DualState& st, std::size_t i, double* coef) {
  const std::size_t K = st.K;
  double largest = 0.0;
  for (std::size_t c = 0; c < K; ++c) {
    const std::size_t at = i * K + c;
    const double margin_gap = 1.0 - st.y[at] * st.g_at(i, c);
    double next;
    if (st.diag[i] > 0.0) {
      next = std::clamp(st.alpha[at] + st.lambda_n * margin_gap / st.diag[i], 0.0, 1.0);
    } else {  // K'_i· = 0: D is linear in α_i
      next = margin_gap > 0.0 ? 1.0 : 0.0;
    }
    const double delta = next - st.alpha[at];
    coef[c] = delta * st.y[at] / st.lambda_n;
    st.alpha[at] = next;
    largest = std::max(largest, std::abs(delta));
  }
  return largest;
}

// One coordinate step on row i, g updated on every row; whether α changed.
inline bool step(DualState& st, RowCache& cache, std::size_t i, std::vector<double>& coef,
                 std::span<const std::size_t> upcoming) {
  const bool changed = coordinate(st, i, coef.data()) > 0.0;
  if (changed && st.diag[i] > 0.0) add_row(st, cache.row(i, upcoming), coef.data());
  return changed;
}

// A kernel model from its coefficients a_ij = α y (n rows × `columns`,
// row-major: one column per output, or K − 1 slots for one-vs-one): the
// support vectors are the rows with a non-zero coefficient, in row order, at
// scale 1/(λn); `kept` (if given) receives their row numbers.
inline KernelModel assemble_model(const Dataset& data, const KernelParams& kernel, double lambda,
                                  const std::vector<double>& coef, std::size_t columns,
                                  std::vector<std::size_t>* kept = nullptr) {
  KernelModel m;
  m.classes = data.classes;
  m.dimension = data.dimension;
  m.outputs = data.classes.size() == 2 ? 1 : static_cast<int>(data.classes.size());
  m.kernel = kernel;
  m.lambda = lambda;
  m.iterations = data.size();
  m.batch_size = 1;
  for (std::size_t i = 0; i < data.size(); ++i) {
    const auto first = coef.begin() + static_cast<std::ptrdiff_t>(i * columns);
    const auto last = first + static_cast<std::ptrdiff_t>(columns);
    if (std::all_of(first, last, [](double a) { return a == 0.0; })) continue;
    const RowView x = data.row(i);
    m.sv_indices.insert(m.sv_indices.end(), x.indices, x.indices + x.nnz);
    m.sv_values.insert(m.sv_values.end(), x.values, x.values + x.nnz);
    m.sv_ptr.push_back(m.sv_indices.size());
    m.coefficients.insert(m.coefficients.end(), first, last);
    if (kept) kept->push_back(i);
  }
  return m;
}

// Output c's intercept: the unregularized one (st.b), else the kernel + 1
// trick's B²/(λn) Σ_i α_ic y_ic (shift = B²; 0 without an intercept).
inline double intercept_of(const DualState& st, double shift, std::size_t c) {
  if (st.equality) return st.b[c];
  double sum = 0.0;
  for (std::size_t i = 0; i < st.n; ++i) sum += st.alpha[i * st.K + c] * st.y[i * st.K + c];
  return shift * sum / st.lambda_n;
}

// The model of the dual point (see kernel_sdca.hpp).
inline KernelModel model_of(const Dataset& data, const KernelParams& kernel, const DualState& st, double lambda, double shift) {
  std::vector<double> coef(st.n * st.K);
  for (std::size_t at = 0; at < coef.size(); ++at) coef[at] = st.alpha[at] * st.y[at];
  KernelModel m = assemble_model(data, kernel, lambda, coef, st.K);
  if (st.equality || shift != 0.0) {
    for (std::size_t c = 0; c < st.K; ++c) m.intercept.push_back(intercept_of(st, shift, c));
  }
  m.intercept_regularized = !st.equality;
  m.prepare();
  return m;
}

// The problem set-up: labels, K'_ii, κ = mean K'_ii / (λn).
inline DualState initial_state(const Dataset& data, const KernelParams& kernel, double lambda, double shift,
                        const std::vector<double>& sq) {
  DualState st;
  st.n = data.size();
  st.K = data.classes.size() == 2 ? 1 : data.classes.size();
  st.lambda_n = lambda * static_cast<double>(st.n);
  st.alpha.assign(st.n * st.K, 0.0);
  st.g.assign(st.n * st.K, 0.0);
  st.y.resize(st.n * st.K);
  st.diag.resize(st.n);
  const KernelHinge objective(static_cast<int>(st.K));
  for (std::size_t i = 0; i < st.n; ++i) {
    const RowView x = data.row(i);
    for (std::size_t c = 0; c < st.K; ++c) st.y[i * st.K + c] = objective.sign(x, static_cast<int>(c));
    st.diag[i] = kernel_from_dot(kernel, row_squared_norm(x), sq[i], sq[i]) + shift;
    if (!std::isfinite(st.diag[i])) {
      throw InputError(data.source + ": the kernel value k(x, x) of row " + std::to_string(i + 1) +
                       " is infinite or NaN; scale the features or lower the kernel's gamma / degree");
    }
  }
  return st;
}

// A fixed budget: exactly `passes` random passes (no early stop), then g
// recomputed exactly for the reported gap.
inline Passes random_passes(DualState& st, RowCache& cache, const EngineSettings& s, std::uint64_t passes,
                            const std::function<bool(const EpochInfo&)>& on_epoch) {
  const std::size_t n = st.n;
  Rng rng(derive_seed(s.seed, 1));
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::vector<double> coef(st.K);
  Passes out;
  out.stopped = StopReason::kBudget;
  while (out.passes < passes) {
    ++out.passes;
    out.visits += n;
    rng.shuffle(std::span<std::size_t>(order));
    for (std::size_t p = 0; p < n; ++p) step(st, cache, order[p], coef, std::span<const std::size_t>(order).subspan(p + 1));
    EpochInfo info;
    info.epoch = static_cast<int>(out.passes);
    info.iterations = out.visits;
    if (on_epoch && !on_epoch(info)) {
      out.stopped = StopReason::kCallback;
      break;
    }
  }
  recompute_g(st, cache);
  out.gap = gap_of(st);
  return out;
}

}  // namespace kernel_sdca_detail

namespace kernel_sdca_detail {

// A solved dual: the state, how the run ended, the kernel (gamma resolved)
// and its shift B², and the kernel evaluations made.
struct Solved {
  DualState st;
  Passes run;
  KernelParams kernel;
  double shift = 0.0;
  std::uint64_t evaluations = 0;
};

inline Solved solve_dual(const Dataset& data, const KernelSettings& ks, const EngineSettings& s,
                         const std::function<bool(const EpochInfo&)>& on_epoch) {
  const std::size_t n = data.size();
  Solved out;
  out.kernel = ks.kernel;
  if (out.kernel.type != KernelType::kLinear && out.kernel.gamma == 0.0) {
    out.kernel.gamma = 1.0 / std::max<std::uint32_t>(data.dimension, 1);
  }
  out.shift = ks.intercept ? s.bias_feature_value * s.bias_feature_value : 0.0;
  std::vector<double> sq(n, 0.0);
  if (out.kernel.type == KernelType::kRbf) {
    tbb::parallel_for(std::size_t{0}, n, [&](std::size_t i) { sq[i] = row_squared_norm(data.row(i)); });
  }
  out.st = initial_state(data, out.kernel, s.lambda, out.shift, sq);
  out.st.equality = ks.unregularized_intercept;
  DualState& st = out.st;
  const double kappa = std::accumulate(st.diag.begin(), st.diag.end(), 0.0) / static_cast<double>(n) / st.lambda_n;
  const bool budget = s.epochs > 0;
  const std::uint64_t passes = budget ? static_cast<std::uint64_t>(std::ceil(s.epochs))
                               : s.max_epochs > 0 ? static_cast<std::uint64_t>(s.max_epochs)
                                                  : static_cast<std::uint64_t>(automatic_epoch_cap(Solver::kSdca, kappa));
  RowCache cache(data, out.kernel, out.shift, sq, static_cast<std::uint64_t>(std::max(0.0, ks.cache_megabytes) * 1048576.0));
  out.run = budget ? random_passes(st, cache, s, passes, on_epoch) : pair_ascend(st, cache, s, passes, on_epoch);
  out.evaluations = cache.evaluations();
  if (!std::isfinite(out.run.gap.primal)) {
    throw InputError(data.source + ": the kernel expansion became infinite or NaN; scale the features or lower the "
                     "kernel's gamma / degree");
  }
  return out;
}

inline void fill_summary(TrainingSummary& t, const Dataset& data, const EngineSettings& s, const Gap& gap,
                         std::uint64_t visits, StopReason stopped, std::uint64_t evaluations, std::size_t svs) {
  t.examples = data.size();
  t.nnz = data.nnz();
  t.iterations = visits;
  t.epochs = static_cast<double>(visits) / static_cast<double>(data.size());
  t.converged = stopped == StopReason::kTolerance || (stopped == StopReason::kBudget && gap.relative() <= s.tolerance);
  t.stopped_by = to_string(stopped);
  t.solver = "sdca";
  t.objective = gap.primal;
  t.tolerance = s.tolerance;
  t.dual_objective = gap.dual;
  t.relative_gap = gap.relative();
  t.certificate = "duality gap";
  t.regularizer = gap.regularizer;
  t.support_vectors = svs;
  t.kernel_evaluations = evaluations;
}

// The rows of classes a and b (in row order) as a binary set, b positive.
inline Dataset pair_rows(const Dataset& data, int a, int b, std::vector<std::size_t>& rows) {
  Dataset sub;
  sub.classes = {data.classes[static_cast<std::size_t>(a)], data.classes[static_cast<std::size_t>(b)]};
  sub.dimension = data.dimension;
  sub.source = data.source;
  rows.clear();
  for (std::size_t i = 0; i < data.size(); ++i) {
    const int y = data.labels[i];
    if (y != a && y != b) continue;
    rows.push_back(i);
    const RowView x = data.row(i);
    sub.append_row(std::span<const std::uint32_t>(x.indices, x.nnz), std::span<const float>(x.values, x.nnz),
                   y == b ? 1 : 0);
  }
  return sub;
}

// One pair's result, in the model's terms: its rows' coefficients α y, its
// intercept, and its P, D, regulariser weighted n_p/n.
struct PairResult {
  std::vector<std::size_t> rows;
  std::vector<double> coef;
  double intercept = 0.0, weight = 0.0;
  Gap gap;
  std::uint64_t visits = 0, evaluations = 0;
  StopReason stopped = StopReason::kTolerance;
  KernelParams kernel;
};

inline PairResult solve_pair(const Dataset& data, int a, int b, const KernelSettings& ks, const EngineSettings& s,
                             const std::function<bool(const EpochInfo&)>& on_epoch) {
  PairResult r;
  const Dataset sub = pair_rows(data, a, b, r.rows);
  r.weight = static_cast<double>(sub.size()) / static_cast<double>(data.size());
  EngineSettings sp = s;
  sp.lambda = s.lambda / r.weight;
  const Solved solved = solve_dual(sub, ks, sp, on_epoch);
  const DualState& st = solved.st;
  r.coef.resize(r.rows.size());
  for (std::size_t i = 0; i < r.rows.size(); ++i) r.coef[i] = st.alpha[i] * st.y[i];
  r.intercept = intercept_of(st, solved.shift, 0);
  r.gap = solved.run.gap;
  r.visits = solved.run.visits;
  r.evaluations = solved.evaluations;
  r.stopped = solved.run.stopped;
  r.kernel = solved.kernel;
  return r;
}

// One-vs-one (KernelSettings::one_vs_one): each pair of classes a < b solved
// on its rows at λ_p = λn/n_p (the same C), so every pair's expansion has the
// model's scale 1/(λn). The pairs are solved in parallel, each with its own
// row cache (a share of kernel_cache_mb) and nothing shared but the progress
// callback (serialised), so the model is the same for any thread count. The
// summary adds the pairs' P, D and regulariser weighted n_p/n:
// λ/2 Σ_p ‖w_p‖² + (1/n) Σ_p Σ_{i in p} hinge (the objective
// kernel_model_objective evaluates); converged when every pair is.
inline KernelModel train_one_vs_one(const Dataset& data, const KernelSettings& ks, const EngineSettings& s,
                                    const std::function<bool(const EpochInfo&)>& on_epoch) {
  const std::size_t n = data.size(), K = data.classes.size(), P = K * (K - 1) / 2;
  const std::vector<std::size_t> counts = data.class_counts();
  for (std::size_t c = 0; c < K; ++c) {
    if (counts[c] == 0) throw InputError(data.source + ": class '" + data.classes[c] + "' has no training rows");
  }
  std::vector<std::pair<int, int>> pairs;
  for (std::size_t a = 0; a < K; ++a) {
    for (std::size_t b = a + 1; b < K; ++b) pairs.emplace_back(static_cast<int>(a), static_cast<int>(b));
  }
  KernelSettings share = ks;
  share.cache_megabytes =
      ks.cache_megabytes /
      static_cast<double>(std::max<std::size_t>(1, tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism)));
  std::mutex progress;
  std::uint64_t reported = 0;
  bool go_on = true;
  std::vector<PairResult> results(P);
  tbb::parallel_for(std::size_t{0}, P, [&](std::size_t p) {
    std::uint64_t seen = 0;  // this pair's visits already reported
    results[p] = solve_pair(data, pairs[p].first, pairs[p].second, share, s, [&](const EpochInfo& e) {
      const std::lock_guard<std::mutex> lock(progress);
      reported += e.iterations - seen;
      seen = e.iterations;
      EpochInfo info = e;
      info.iterations = reported;
      // Passes averaged over the pairs (each row is in K − 1 of them), rising:
      // visits / n counted a pass K − 1 times ("epoch 87" where the model said 20 passes).
      info.epoch = static_cast<int>(reported / (n * (K - 1)));
      go_on = go_on && (!on_epoch || on_epoch(info));
      return go_on;
    });
  }, tbb::simple_partitioner());
  std::vector<double> coef(n * (K - 1), 0.0), intercept(P, 0.0);  // LIBSVM's layout, see KernelModel::sv_class
  Gap total;
  std::uint64_t visits = 0, evaluations = 0;
  StopReason stopped = StopReason::kTolerance;
  double passes = 0.0;  // the most of any pair (each row is in K − 1 pairs)
  for (std::size_t p = 0; p < P; ++p) {  // in pair order: the same sums for any thread count
    const PairResult& r = results[p];
    const auto [a, b] = pairs[p];
    for (std::size_t i = 0; i < r.rows.size(); ++i) {
      const std::size_t row = r.rows[i];
      const auto c = static_cast<std::size_t>(data.labels[row]);
      coef[row * (K - 1) + ovo_slot(c, static_cast<std::size_t>(c == static_cast<std::size_t>(a) ? b : a))] = r.coef[i];
    }
    intercept[p] = r.intercept;
    total.primal += r.weight * r.gap.primal;
    total.dual += r.weight * r.gap.dual;
    total.regularizer += r.weight * r.gap.regularizer;
    visits += r.visits;
    evaluations += r.evaluations;
    passes = std::max(passes, static_cast<double>(r.visits) / static_cast<double>(r.rows.size()));
    if (r.stopped != StopReason::kTolerance && stopped == StopReason::kTolerance) stopped = r.stopped;
  }
  std::vector<std::size_t> kept;
  KernelModel m = assemble_model(data, results.back().kernel, s.lambda, coef, K - 1, &kept);
  m.one_vs_one = true;
  for (const std::size_t i : kept) m.sv_class.push_back(static_cast<std::uint32_t>(data.labels[i]));
  if (ks.unregularized_intercept || ks.intercept) m.intercept = std::move(intercept);
  m.intercept_regularized = !ks.unregularized_intercept;
  m.prepare();
  fill_summary(m.training, data, s, total, visits, stopped, evaluations, m.num_support_vectors());
  m.training.epochs = passes;  // iterations stays the visits of all pairs
  return m;
}

}  // namespace kernel_sdca_detail

// Train kernel_hinge by dual coordinate ascent (binary; one-vs-all when
// data has more than two classes, or one-vs-one with ks.one_vs_one). Uses s.lambda, s.seed, s.tolerance,
// s.max_epochs, s.epochs (> 0: a fixed number of passes), ks.kernel,
// ks.intercept, ks.unregularized_intercept, ks.one_vs_one, ks.cache_megabytes;
// ks.max_support_vectors must be 0.
// Fills model.training (examples, nnz, iterations = coordinate visits,
// epochs = passes, converged, stopped_by, solver "sdca", objective,
// dual_objective, relative_gap, tolerance, certificate, regularizer,
// support_vectors, kernel_evaluations). `on_epoch` is called after every
// pass (pair steps: every n coordinate visits); returning false stops
// (stopped_by callback).
// Cost: pair steps O(n) each plus two kernel rows unless cached; random
// passes O(n) plus O(n · (nnz + K)) per changed row (its kernel row, unless
// cached, and the update of g); memory O(n·K) plus the cache.
inline KernelModel train_kernel_sdca(const Dataset& data, const KernelSettings& ks, const EngineSettings& s,
                                     const std::function<bool(const EpochInfo&)>& on_epoch = {}) {
  using namespace kernel_sdca_detail;
  const std::size_t n = data.size();
  if (n == 0) throw InputError(data.source + ": no training examples");
  if (data.classes.size() < 2) throw InputError(data.source + ": a classifier needs at least two classes");
  if (!(s.lambda > 0)) throw std::invalid_argument("train_kernel_sdca: lambda > 0 required");
  if (ks.max_support_vectors != 0) throw std::invalid_argument("train_kernel_sdca: no budget (Pegasos only)");
  if (ks.unregularized_intercept && (ks.intercept || s.epochs > 0)) {
    throw std::invalid_argument("train_kernel_sdca: the unregularized intercept needs automatic stopping and no kernel + 1");
  }
  if (ks.one_vs_one && data.classes.size() > 2) return train_one_vs_one(data, ks, s, on_epoch);
  Solved solved = solve_dual(data, ks, s, on_epoch);
  KernelModel m = model_of(data, solved.kernel, solved.st, s.lambda, solved.shift);
  fill_summary(m.training, data, s, solved.run.gap, solved.run.visits, solved.run.stopped, solved.evaluations,
               m.num_support_vectors());
  return m;
}

}  // namespace pegasos
