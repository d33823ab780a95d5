// Kernel SDCA: dual coordinate ascent for kernel_hinge (the dual sibling of
// kernel Pegasos; Shalev-Shwartz & Zhang, JMLR 2013; Hsieh et al. 2008 for
// the closed-form hinge step), stopping on a certified duality gap.
//
// Per output c (binary: one; one-vs-all: class c vs the rest, all in
// lock-step so that one kernel row serves every class) the problem is
//   P(w) = λ/2 ‖w‖² + (1/n) Σ_i max(0, 1 − y_i ⟨w, φ(x_i)⟩),
// and its dual, with K'_ij = k(x_i, x_j) + B² (B² = 1 with the intercept,
// `bias: feature`: the kernel + 1 trick, a regularised constant feature;
// B² = 0 without it), α_i ∈ [0, 1]:
//   D(α) = (1/n) Σ α_i − λ/2 ‖w(α)‖²,   w(α) = 1/(λn) Σ_j α_j y_j φ'(x_j),
//   g_i = ⟨w(α), φ'(x_i)⟩ = 1/(λn) Σ_j α_j y_j K'_ij,
//   ‖w‖² = 1/(λn) Σ_i α_i y_i g_i.
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
// Between full passes, shrinking: passes over the free rows only
// (0 < α < 1), gathered into a compact problem of their own (FreeSet), g
// kept on them, then rebuilt elsewhere (shrunk_passes below); `epochs` in
// the summary counts visits / n.
//
// Order (random passes): a fresh random permutation of the rows per pass (seeded by `seed`,
// stream 1). Kernel rows and g updates are computed element by element, in
// parallel over blocks but each element the same whatever the thread count,
// so the model is identical for any number of threads.
//
// Stopping (pair steps: pair_ascend's comment; random passes, as follows):
// after every pass the gap Σ_c (P_c − D_c) from the running g;
// when it is within `tolerance`·P, g is recomputed exactly from the support
// vectors (no drift of the running sums can fake a certificate) and the gap
// checked again. Stops at the cap (`max_epochs` passes; 0 = sized from
// κ = mean K'_ii/(λn), as the linear SDCA) with converged false, stopped_by
// max_epochs; with `epochs` > 0 after that many passes (stopped_by budget),
// its gap still reported.
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
#include <numeric>
#include <utility>
#include <span>
#include <stdexcept>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>

#include "core/dataset.hpp"
#include "core/engine.hpp"
#include "core/errors.hpp"
#include "core/random.hpp"
#include "kernel/kernel_model.hpp"
#include "kernel/kernel_rows.hpp"
#include "kernel/kernel_trainer.hpp"
#include "objectives/kernel_hinge.hpp"

namespace pegasos {

namespace kernel_sdca_detail {

// The dual state: α and labels y (n × K, row-major), g (K × n, output-major:
// a change of one output's α updates one contiguous run of n values, which
// vectorises and reads n·8 bytes of g instead of the whole n·K·8), K'_ii.
struct DualState {
  std::size_t n = 0, K = 1;
  double lambda_n = 1.0;
  std::vector<double> alpha, g, y, diag;
  double& g_at(std::size_t i, std::size_t c) { return g[c * n + i]; }
  double g_at(std::size_t i, std::size_t c) const { return g[c * n + i]; }
};

// g_·c += coef_c · row for every output c with coef_c ≠ 0 (only on the rows
// j with skip[j] == 0 when `skip` is given).
inline void add_row(DualState& st, const double* row, const double* coef, const std::vector<char>* skip = nullptr) {
  const std::size_t n = st.n, K = st.K;
  auto run = [&](std::size_t begin, std::size_t end) {
    for (std::size_t c = 0; c < K; ++c) {
      if (coef[c] == 0.0) continue;
      const double a = coef[c];
      double* gc = &st.g[c * n];
      if (skip == nullptr) {
        for (std::size_t j = begin; j < end; ++j) gc[j] += a * row[j];
      } else {
        for (std::size_t j = begin; j < end; ++j) {
          if (!(*skip)[j]) gc[j] += a * row[j];
        }
      }
    }
  };
  if (n > 4 * kRowBlock) {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, kRowBlock),
                      [&](const tbb::blocked_range<std::size_t>& r) { run(r.begin(), r.end()); });
  } else {
    run(0, n);
  }
}

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

// Shrinking. Between full passes, the rows with a free α (0 < α_ic < 1 for
// some c: the only ones that still move much once the bounds have settled)
// get up to kShrunkPasses passes of their own, with g kept on those rows
// only (O(|F|) per change instead of O(n)); then the rest of g is rebuilt
// from the accumulated changes, one kernel row per changed free row, so the
// next full pass (which re-examines every row, bound ones included, and
// checks the gap) sees g exactly as without shrinking, to rounding.
// Returns the coordinate visits made. Up to 200 shrunk passes (was 20):
// spam at C = 100 (729 passes) 3.1 -> 2.4 s CPU, Fashion-MNIST unchanged;
// the phase usually ends earlier, on the largest step.
inline constexpr int kShrunkPasses = 200;

// The free rows' part of the state, gathered into a compact problem of
// their own (local row k = free[k]): the same values, so every step computes
// what it would on the whole state, but g, α and the kernel rows restricted
// to the free rows are contiguous (a vectorised update instead of an indexed
// one). Rows restricted to the free set are kept for the whole phase when
// they fit in kCompactBytes (each is then gathered once, not at every use).
inline constexpr std::uint64_t kCompactBytes = std::uint64_t{256} << 20;

class FreeSet {
 public:
  FreeSet(const DualState& st, std::vector<std::size_t> free) : free_(std::move(free)), local_(st.n, 0) {
    const std::size_t m = free_.size(), K = st.K;
    sub_.n = m;
    sub_.K = K;
    sub_.lambda_n = st.lambda_n;
    sub_.alpha.resize(m * K);
    sub_.y.resize(m * K);
    sub_.g.resize(m * K);
    sub_.diag.resize(m);
    for (std::size_t k = 0; k < m; ++k) {
      const std::size_t i = free_[k];
      local_[i] = k;
      sub_.diag[k] = st.diag[i];
      for (std::size_t c = 0; c < K; ++c) {
        sub_.alpha[k * K + c] = st.alpha[i * K + c];
        sub_.y[k * K + c] = st.y[i * K + c];
        sub_.g_at(k, c) = st.g_at(i, c);
      }
    }
    const std::uint64_t bytes = std::uint64_t{m} * m * sizeof(double);
    if (bytes <= kCompactBytes) rows_.resize(m);
    scratch_.resize(m);
  }
  DualState& state() { return sub_; }
  std::size_t local(std::size_t i) const { return local_[i]; }

  // K'_i· on the free rows (local order).
  const double* row(std::size_t k, RowCache& cache, std::span<const std::size_t> upcoming) {
    if (!rows_.empty() && !rows_[k].empty()) return rows_[k].data();
    const double* full = cache.row(free_[k], upcoming);
    std::vector<double>& out = rows_.empty() ? scratch_ : rows_[k];
    out.resize(free_.size());
    for (std::size_t l = 0; l < free_.size(); ++l) out[l] = full[free_[l]];
    return out.data();
  }

  // α and g written back into the whole state.
  void write_back(DualState& st) const {
    for (std::size_t k = 0; k < free_.size(); ++k) {
      const std::size_t i = free_[k];
      for (std::size_t c = 0; c < st.K; ++c) {
        st.alpha[i * st.K + c] = sub_.alpha[k * st.K + c];
        st.g_at(i, c) = sub_.g_at(k, c);
      }
    }
  }

 private:
  std::vector<std::size_t> free_, local_;
  DualState sub_;
  std::vector<std::vector<double>> rows_;
  std::vector<double> scratch_;
};

inline std::uint64_t shrunk_passes(DualState& st, RowCache& cache, Rng& rng, double tolerance) {
  const std::size_t n = st.n, K = st.K;
  std::vector<std::size_t> free;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t c = 0; c < K; ++c) {
      if (st.alpha[i * K + c] > 0.0 && st.alpha[i * K + c] < 1.0 && st.diag[i] > 0.0) {
        free.push_back(i);
        break;
      }
    }
  }
  if (free.size() < 2 || 2 * free.size() > n) return 0;  // nothing to gain
  std::vector<double> pending(n * K, 0.0), coef(K);
  std::vector<std::size_t> order = free;
  FreeSet set(st, free);
  DualState& sub = set.state();
  const std::size_t m = free.size();
  std::uint64_t visits = 0;
  for (int pass = 0; pass < kShrunkPasses; ++pass) {
    rng.shuffle(std::span<std::size_t>(order));
    double largest = 0.0;
    for (std::size_t p = 0; p < order.size(); ++p) {
      const std::size_t i = order[p], k = set.local(i);
      const double moved = coordinate(sub, k, coef.data());
      ++visits;
      if (moved == 0.0) continue;
      largest = std::max(largest, moved);
      const double* row = set.row(k, cache, std::span<const std::size_t>(order).subspan(p + 1));
      for (std::size_t c = 0; c < K; ++c) {
        if (coef[c] == 0.0) continue;
        pending[i * K + c] += coef[c];
        const double a = coef[c];
        double* gc = &sub.g[c * m];
        for (std::size_t l = 0; l < m; ++l) gc[l] += a * row[l];
      }
    }
    if (largest < 0.1 * tolerance) break;
  }
  set.write_back(st);
  std::vector<char> is_free(n, 0);
  for (const std::size_t i : free) is_free[i] = 1;
  for (const std::size_t i : free) {  // in row order: the same sums whatever the shuffles
    bool any = false;
    for (std::size_t c = 0; c < K; ++c) any = any || pending[i * K + c] != 0.0;
    if (any) add_row(st, cache.row(i), &pending[i * K], &is_free);
  }
  return visits;
}

struct Gap {
  double primal = 0.0, dual = 0.0, regularizer = 0.0;
  double relative() const {
    return (primal - dual) / std::max(std::abs(primal), std::numeric_limits<double>::min());
  }
};

// P and D summed over the outputs, from g (in row order).
inline Gap gap_of(const DualState& st) {
  double loss = 0.0, sum_alpha = 0.0, ayg = 0.0;
  for (std::size_t at = 0; at < st.n * st.K; ++at) {
    const double g = st.g_at(at / st.K, at % st.K);
    loss += std::max(0.0, 1.0 - st.y[at] * g);
    sum_alpha += st.alpha[at];
    ayg += st.alpha[at] * st.y[at] * g;
  }
  const double n = static_cast<double>(st.n);
  Gap out;
  out.regularizer = ayg / (2.0 * n);  // λ/2 ‖w‖² = λ/2 · 1/(λn) Σ α y g
  out.primal = out.regularizer + loss / n;
  out.dual = sum_alpha / n - out.regularizer;
  return out;
}

// g recomputed from the support vectors' kernel rows (no running-sum drift).
inline void recompute_g(DualState& st, RowCache& cache) {
  std::fill(st.g.begin(), st.g.end(), 0.0);
  std::vector<double> coef(st.K);
  for (std::size_t i = 0; i < st.n; ++i) {
    bool any = false;
    for (std::size_t c = 0; c < st.K; ++c) {
      coef[c] = st.alpha[i * st.K + c] * st.y[i * st.K + c] / st.lambda_n;
      any = any || coef[c] != 0.0;
    }
    if (any && st.diag[i] > 0.0) add_row(st, cache.row(i), coef.data());
  }
}

// The model of the dual point (see kernel_sdca.hpp).
inline KernelModel model_of(const Dataset& data, const KernelParams& kernel, const DualState& st, double lambda, double shift) {
  KernelModel m;
  m.classes = data.classes;
  m.dimension = data.dimension;
  m.outputs = static_cast<int>(st.K);
  m.kernel = kernel;
  m.lambda = lambda;
  m.iterations = st.n;
  m.batch_size = 1;
  std::vector<double> sum(st.K, 0.0);
  for (std::size_t i = 0; i < st.n; ++i) {
    bool support = false;
    for (std::size_t c = 0; c < st.K; ++c) support = support || st.alpha[i * st.K + c] > 0.0;
    if (!support) continue;
    const RowView x = data.row(i);
    m.sv_indices.insert(m.sv_indices.end(), x.indices, x.indices + x.nnz);
    m.sv_values.insert(m.sv_values.end(), x.values, x.values + x.nnz);
    m.sv_ptr.push_back(m.sv_indices.size());
    for (std::size_t c = 0; c < st.K; ++c) {
      const double a = st.alpha[i * st.K + c] * st.y[i * st.K + c];
      m.coefficients.push_back(a);
      sum[c] += a;
    }
  }
  if (shift != 0.0) {
    m.intercept.resize(st.K);
    for (std::size_t c = 0; c < st.K; ++c) m.intercept[c] = shift * sum[c] / st.lambda_n;
  }
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

// The passes of coordinate ascent and the stopping rule (kernel_sdca.hpp):
// at most `passes`; `budget`: exactly that many, no early stop.
struct Passes {
  std::uint64_t passes = 0;  // full passes
  std::uint64_t visits = 0;  // coordinate visits, shrunk passes included
  StopReason stopped = StopReason::kMaxEpochs;
  Gap gap;  // from an exactly recomputed g
};

inline Passes ascend(DualState& st, RowCache& cache, const EngineSettings& s, std::uint64_t passes, bool budget,
                     const std::function<bool(const EpochInfo&)>& on_epoch) {
  const std::size_t n = st.n;
  Rng rng(derive_seed(s.seed, 1));
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::vector<double> coef(st.K);
  Passes out;
  out.stopped = budget ? StopReason::kBudget : StopReason::kMaxEpochs;
  bool exact = false;  // g was recomputed since the last change of α
  const std::uint64_t cap = passes * n;
  while (out.visits < cap) {
    if (!budget && out.visits > 0) {  // shrunk passes between full ones (none for a fixed budget)
      const std::uint64_t shrunk = shrunk_passes(st, cache, rng, s.tolerance);
      out.visits += shrunk;
      exact = exact && shrunk == 0;
    }
    ++out.passes;
    out.visits += n;
    rng.shuffle(std::span<std::size_t>(order));
    bool changed = false;
    for (std::size_t p = 0; p < n; ++p) {
      changed = step(st, cache, order[p], coef, std::span<const std::size_t>(order).subspan(p + 1)) || changed;
    }
    exact = exact && !changed;
    out.gap = gap_of(st);
    if (!budget && out.gap.relative() <= s.tolerance) {
      if (!exact) {
        recompute_g(st, cache);
        exact = true;
        out.gap = gap_of(st);
      }
      if (out.gap.relative() <= s.tolerance) {
        out.stopped = StopReason::kTolerance;
        break;
      }
    }
    EpochInfo info;
    info.epoch = static_cast<int>(out.passes);
    info.iterations = out.visits;
    if (on_epoch && !on_epoch(info)) {
      out.stopped = StopReason::kCallback;
      break;
    }
  }
  if (!exact) {
    recompute_g(st, cache);
    out.gap = gap_of(st);
  }
  // The cap reached with the gap met only after the exact recomputation: certified all the same.
  if (out.stopped == StopReason::kMaxEpochs && out.gap.relative() <= s.tolerance) out.stopped = StopReason::kTolerance;
  return out;
}


// Pair steps: automatic stopping's solver (a fixed budget, `epochs` > 0,
// keeps the random passes above). Each step moves two coordinates of one output
// together, to the exact maximum of D over the box [0, 1]² of the pair:
//   i = the coordinate whose own clipped Newton step gains most,
//   j = the coordinate whose joint step with i gains most (K'_ij from i's row).
// Why pairs: an RBF kernel on scaled features is close to a constant plus a
// small part, and the kernel + 1 intercept adds another constant, so the
// dual's Hessian has one huge near-constant direction. A single coordinate
// step mostly moves along it and the random passes crawl (Pima at C = 100:
// 190 passes; Vowel: 4200); a pair of opposite-label coordinates moves them
// against each other, the direction LIBSVM's SMO takes by construction, and
// the same problems certify in 1–20 passes' worth of steps. A step costs
// O(n): one sweep updates g with the two rows and finds the next i, a second
// evaluates every j's pair gain against i's row. Outputs (one-vs-all) are
// solved one after the other, all reading the same cached rows; the LRU
// cache (any size) changes how often a row is computed, never a step. No random
// numbers: ties go to the lowest row, so the result does not depend on the
// seed or on the thread count.

// The box-constrained maximum of the concave quadratic
//   q(x, y) = Gi x + Gj y − ½ (a x² + 2 b x y + c y²)
// over x ∈ [−ai, 1 − ai], y ∈ [−aj, 1 − aj]: the unconstrained maximum if it
// lies inside, else the best of the four edges (a concave quadratic on a box
// attains its maximum on the boundary when the free maximum is outside it),
// each maximised in closed form. Returns the gain q(x, y) ≥ 0.
// `inv_a`, `inv_c`: 1/a and 1/c (0 where a or c is 0), precomputed, so the
// sweep over every j divides only when the interior maximum is feasible.
inline double pair_gain(double Gi, double Gj, double a, double inv_a, double b, double c, double inv_c, double ai,
                        double aj, double& x, double& y) {
  x = 0.0;
  y = 0.0;
  auto q = [&](double u, double v) { return Gi * u + Gj * v - 0.5 * (a * u * u + 2.0 * b * u * v + c * v * v); };
  const double det = a * c - b * b;
  if (det > 1e-12 * a * c) {  // the free maximum (u, v) = (c Gi − b Gj, a Gj − b Gi) / det, tested without dividing
    const double un = c * Gi - b * Gj, vn = a * Gj - b * Gi;
    if (un >= -ai * det && un <= (1.0 - ai) * det && vn >= -aj * det && vn <= (1.0 - aj) * det) {
      const double inv_det = 1.0 / det;
      x = un * inv_det;
      y = vn * inv_det;
      return q(x, y);
    }
  }
  // One coordinate's maximum over [lo, hi] with the other fixed: slope s at
  // 0, curvature h ≥ 0 (h = 0: the linear case goes to the better bound).
  auto best_1d = [](double s, double h, double inv_h, double lo, double hi) {
    if (h > 0.0) return std::clamp(s * inv_h, lo, hi);
    return s > 0.0 ? hi : lo;
  };
  double best = -std::numeric_limits<double>::infinity();
  const double xs[2] = {-ai, 1.0 - ai}, ys[2] = {-aj, 1.0 - aj};
  for (int e = 0; e < 4; ++e) {
    const double u = e < 2 ? xs[e] : best_1d(Gi - b * ys[e - 2], a, inv_a, -ai, 1.0 - ai);
    const double v = e < 2 ? best_1d(Gj - b * xs[e], c, inv_c, -aj, 1.0 - aj) : ys[e - 2];
    const double value = q(u, v);
    if (value > best) {
      best = value;
      x = u;
      y = v;
    }
  }
  return best;
}

struct PairProblem {
  std::size_t n = 0;
  double lambda_n = 1.0;
  std::vector<double> alpha, y;  // one output's α and labels, contiguous
  double* g = nullptr;           // its run of st.g
  std::vector<double> h, inv_h;  // K'_jj / (λn) and its inverse (0 where K'_jj = 0)
  std::vector<double> gain;      // each row's single-step gain at the last sweep
  std::vector<std::size_t> ahead;  // scratch: rows to compute with a missing one
};

// P − D and P of one output from its running g.
inline std::pair<double, double> pair_gap(const PairProblem& p) {
  double loss = 0.0, sum_alpha = 0.0, ayg = 0.0;
  for (std::size_t j = 0; j < p.n; ++j) {
    loss += std::max(0.0, 1.0 - p.y[j] * p.g[j]);
    sum_alpha += p.alpha[j];
    ayg += p.alpha[j] * p.y[j] * p.g[j];
  }
  const double n = static_cast<double>(p.n);
  const double primal = ayg / (2.0 * n) + loss / n;
  return {primal - (sum_alpha / n - ayg / (2.0 * n)), primal};
}

// The best candidate of a sweep: the largest gain, ties to the lowest row,
// so that any split of the rows into blocks (any thread count) gives the
// same choice.
struct PairChoice {
  std::size_t at = 0;
  double gain = 0.0, x = 0.0, y = 0.0;
  bool better_than(const PairChoice& o) const { return gain > o.gain || (gain == o.gain && at < o.at); }
};

// Over rows [begin, end) in blocks, in parallel when n is large: the best of
// `visit(j, choice)` (which fills choice.gain, .x, .y for row j).
template <class Visit>
PairChoice pair_sweep(std::size_t n, const Visit& visit) {
  auto run = [&](std::size_t begin, std::size_t end, PairChoice best) {
    for (std::size_t j = begin; j < end; ++j) {
      PairChoice c;
      c.at = j;
      visit(j, c);
      if (c.better_than(best)) best = c;
    }
    return best;
  };
  PairChoice none;
  none.gain = -std::numeric_limits<double>::infinity();
  none.at = std::numeric_limits<std::size_t>::max();
  if (n <= 4 * kRowBlock) return run(0, n, none);
  return tbb::parallel_reduce(
      tbb::blocked_range<std::size_t>(0, n, kRowBlock), none,
      [&](const tbb::blocked_range<std::size_t>& r, PairChoice best) { return run(r.begin(), r.end(), best); },
      [](const PairChoice& a, const PairChoice& b) { return b.better_than(a) ? b : a; });
}

// Row j's own clipped Newton step and its gain.
inline void single_step(PairProblem& p, std::size_t j, PairChoice& c) {
  const double h = p.h[j];
  const double G = 1.0 - p.y[j] * p.g[j];
  c.x = h > 0.0 ? std::clamp(G * p.inv_h[j], -p.alpha[j], 1.0 - p.alpha[j]) : (G > 0.0 ? 1.0 - p.alpha[j] : -p.alpha[j]);
  c.gain = c.x * G - 0.5 * h * c.x * c.x;
  p.gain[j] = c.gain;  // only row j's entry: the sweep's blocks never share one
}

// Row r's kernel row; when it is missing, the uncached rows whose single
// steps gain most (those a pair is likeliest to pick next) are computed with
// it, a block of rows for one read of the data (kernel_rows.hpp). Which
// rows join depends only on the gains and the requests so far, and a row's
// values never on its block, so this changes the cost, never the model.
inline const double* pair_row(PairProblem& p, RowCache& cache, std::size_t r) {
  if (cache.cached(r)) return cache.row(r);
  p.ahead.clear();
  for (std::size_t j = 0; j < p.n; ++j) {
    if (j != r && p.gain[j] > 0.0 && !cache.cached(j)) p.ahead.push_back(j);
  }
  const std::size_t keep = std::min<std::size_t>(p.ahead.size(), kQueryBlock - 1);
  auto larger = [&](std::size_t a, std::size_t b) { return p.gain[a] > p.gain[b] || (p.gain[a] == p.gain[b] && a < b); };
  std::partial_sort(p.ahead.begin(), p.ahead.begin() + static_cast<std::ptrdiff_t>(keep), p.ahead.end(), larger);
  p.ahead.resize(keep);
  return cache.row(r, p.ahead);
}

// Pair steps on one output until its gap ≤ target·P, nothing gains, or
// max_steps; `tick` after every step (false: stop). Returns the steps made.
inline std::uint64_t pair_output(PairProblem& p, RowCache& cache, double target, std::uint64_t max_steps,
                                 const std::function<bool()>& tick) {
  const std::size_t n = p.n;
  const double ln = p.lambda_n, inv_ln = 1.0 / ln;
  std::uint64_t steps = 0;
  // The first i; later ones come out of the sweep that updates g.
  PairChoice first = pair_sweep(n, [&](std::size_t j, PairChoice& c) { single_step(p, j, c); });
  while (steps < max_steps && first.gain > 0.0) {  // gain 0: every coordinate optimal given the others
    const std::size_t i = first.at;
    const double* row_i = pair_row(p, cache, i);
    const double Gi = 1.0 - p.y[i] * p.g[i], a = p.h[i], inv_a = p.inv_h[i];
    PairChoice pair = pair_sweep(n, [&](std::size_t j, PairChoice& c) {
      if (j == i) {
        c.gain = -std::numeric_limits<double>::infinity();
        return;
      }
      c.gain = pair_gain(Gi, 1.0 - p.y[j] * p.g[j], a, inv_a, p.y[i] * p.y[j] * row_i[j] * inv_ln, p.h[j], p.inv_h[j],
                         p.alpha[i], p.alpha[j], c.x, c.y);
    });
    const bool alone = pair.at >= n;  // a single row: its own step
    const double* row_j = alone ? row_i : pair_row(p, cache, pair.at);
    if (!alone) row_i = cache.row(i);  // looked up again after row_j's: never a stale pointer
    const double xi = alone ? first.x : pair.x, yj = alone ? 0.0 : pair.y;
    const double ci = xi * p.y[i] / ln, cj = alone ? 0.0 : yj * p.y[pair.at] / ln;
    p.alpha[i] = std::clamp(p.alpha[i] + xi, 0.0, 1.0);
    if (!alone) p.alpha[pair.at] = std::clamp(p.alpha[pair.at] + yj, 0.0, 1.0);
    first = pair_sweep(n, [&](std::size_t k, PairChoice& c) {
      p.g[k] += ci * row_i[k] + cj * row_j[k];
      single_step(p, k, c);
    });
    ++steps;
    if (tick && !tick()) break;
    if (steps % 16 == 0) {
      const auto [gap, primal] = pair_gap(p);
      if (gap <= target * std::max(std::abs(primal), std::numeric_limits<double>::min())) break;
    }
  }
  return steps;
}

// Every output by pair steps (target 0.5·tolerance each), then g recomputed
// exactly and the whole gap checked; while it misses (rounding drift of g),
// the outputs are stepped again with a 4× tighter target, up to `passes`·n
// coordinate visits (two a step) in all.
inline Passes pair_ascend(DualState& st, RowCache& cache, const EngineSettings& s, std::uint64_t passes,
                          const std::function<bool(const EpochInfo&)>& on_epoch) {
  const std::size_t n = st.n, K = st.K;
  Passes out;
  const std::uint64_t cap = passes * n;
  double target = 0.5 * s.tolerance;
  bool stopped = false;
  auto tick = [&]() {
    out.visits += 2;
    if (!on_epoch || out.visits % n > 1) return true;  // a multiple of n just crossed
    EpochInfo info;
    info.epoch = static_cast<int>(out.visits / n);
    info.iterations = out.visits;
    stopped = !on_epoch(info);
    return !stopped;
  };
  while (true) {
    const std::uint64_t before = out.visits;
    for (std::size_t c = 0; c < K && !stopped && out.visits < cap; ++c) {
      PairProblem p;
      p.n = n;
      p.lambda_n = st.lambda_n;
      p.gain.assign(n, 0.0);
      p.h.resize(n);
      p.inv_h.resize(n);
      for (std::size_t j = 0; j < n; ++j) {
        p.h[j] = st.diag[j] / st.lambda_n;
        p.inv_h[j] = st.diag[j] > 0.0 ? st.lambda_n / st.diag[j] : 0.0;
      }
      p.g = &st.g[c * n];
      p.alpha.resize(n);
      p.y.resize(n);
      for (std::size_t j = 0; j < n; ++j) {
        p.alpha[j] = st.alpha[j * K + c];
        p.y[j] = st.y[j * K + c];
      }
      pair_output(p, cache, target, (cap - out.visits + 1) / 2, tick);
      for (std::size_t j = 0; j < n; ++j) st.alpha[j * K + c] = p.alpha[j];
    }
    recompute_g(st, cache);
    out.gap = gap_of(st);
    out.passes = (out.visits + n - 1) / n;
    if (out.gap.relative() <= s.tolerance) {
      out.stopped = StopReason::kTolerance;
      break;
    }
    // No step gains anything and still the exact gap misses the tolerance
    // (one below rounding, e.g. tolerance 1e-17): stopped, not converged,
    // its gap reported, as at the cap.
    if (stopped || out.visits >= cap || out.visits == before) {
      out.stopped = stopped ? StopReason::kCallback : StopReason::kMaxEpochs;
      break;
    }
    target *= 0.25;
  }
  return out;
}

}  // namespace kernel_sdca_detail

// Train kernel_hinge by dual coordinate ascent (binary, or one-vs-all when
// data has more than two classes). Uses s.lambda, s.seed, s.tolerance,
// s.max_epochs, s.epochs (> 0: a fixed number of passes), ks.kernel,
// ks.intercept, ks.cache_megabytes; ks.max_support_vectors must be 0.
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
  KernelParams kernel = ks.kernel;
  if (kernel.type != KernelType::kLinear && kernel.gamma == 0.0) {
    kernel.gamma = 1.0 / std::max<std::uint32_t>(data.dimension, 1);
  }
  const double shift = ks.intercept ? s.bias_feature_value * s.bias_feature_value : 0.0;
  std::vector<double> sq(n, 0.0);
  if (kernel.type == KernelType::kRbf) {
    tbb::parallel_for(std::size_t{0}, n, [&](std::size_t i) { sq[i] = row_squared_norm(data.row(i)); });
  }
  DualState st = initial_state(data, kernel, s.lambda, shift, sq);
  const double kappa = std::accumulate(st.diag.begin(), st.diag.end(), 0.0) / static_cast<double>(n) / st.lambda_n;
  const bool budget = s.epochs > 0;
  const std::uint64_t passes = budget ? static_cast<std::uint64_t>(std::ceil(s.epochs))
                               : s.max_epochs > 0 ? static_cast<std::uint64_t>(s.max_epochs)
                                                  : static_cast<std::uint64_t>(automatic_epoch_cap(Solver::kSdca, kappa));
  RowCache cache(data, kernel, shift, sq, static_cast<std::uint64_t>(std::max(0.0, ks.cache_megabytes) * 1048576.0));
  const Passes run = budget ? ascend(st, cache, s, passes, budget, on_epoch) : pair_ascend(st, cache, s, passes, on_epoch);
  const Gap& gap = run.gap;
  if (!std::isfinite(gap.primal)) {
    throw InputError(data.source + ": the kernel expansion became infinite or NaN; scale the features or lower the "
                     "kernel's gamma / degree");
  }
  KernelModel m = model_of(data, kernel, st, s.lambda, shift);
  TrainingSummary& t = m.training;
  t.examples = n;
  t.nnz = data.nnz();
  t.iterations = run.visits;
  t.epochs = static_cast<double>(run.visits) / static_cast<double>(n);
  t.converged = run.stopped == StopReason::kTolerance || (run.stopped == StopReason::kBudget && gap.relative() <= s.tolerance);
  t.stopped_by = to_string(run.stopped);
  t.solver = "sdca";
  t.objective = gap.primal;
  t.tolerance = s.tolerance;
  t.dual_objective = gap.dual;
  t.relative_gap = gap.relative();
  t.certificate = "duality gap";
  t.regularizer = gap.regularizer;
  t.support_vectors = m.num_support_vectors();
  t.kernel_evaluations = cache.evaluations();
  return m;
}

}  // namespace pegasos
