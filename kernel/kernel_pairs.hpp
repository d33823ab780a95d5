// Kernel SDCA's pair steps (see the comment below and kernel_sdca.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <utility>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/parallel_reduce.h>

#include "core/engine.hpp"
#include "core/training.hpp"
#include "kernel/kernel_dual.hpp"
#include "kernel/kernel_rows.hpp"

namespace pegasos {
namespace kernel_sdca_detail {

// Pair steps: automatic stopping's solver (a fixed budget, `epochs` > 0,
// keeps the random passes of kernel_sdca.hpp). Each step moves two coordinates of one output
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
  double best = -std::numeric_limits<double>::infinity();
  if (det > 0.0) {  // the free maximum (u, v) = (c Gi − b Gj, a Gj − b Gi) / det, tested without dividing
    const double un = c * Gi - b * Gj, vn = a * Gj - b * Gi;
    if (un >= -ai * det && un <= (1.0 - ai) * det && vn >= -aj * det && vn <= (1.0 - aj) * det) {
      const double inv_det = 1.0 / det;
      x = un * inv_det;
      y = vn * inv_det;
      best = q(x, y);
      // Well conditioned: that is the maximum. Nearly singular (near-equal
      // rows): rounding may spoil it, so the edges compete with it.
      if (det > 1e-12 * a * c) return best;
    }
  }
  // One coordinate's maximum over [lo, hi] with the other fixed: slope s at
  // 0, curvature h ≥ 0 (h = 0: the linear case goes to the better bound).
  auto best_1d = [](double s, double h, double inv_h, double lo, double hi) {
    if (h > 0.0) return std::clamp(s * inv_h, lo, hi);
    return s > 0.0 ? hi : lo;
  };
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
  // The unregularized intercept (pair_output_equality): the intercept of the
  // last gap check, and scratch for finding it.
  bool equality = false;
  double b = 0.0;
  std::vector<double> kinks;
};

// P − D and P of one output from its running g (and, with the
// unregularized intercept, the best intercept for it, kept in p.b).
inline std::pair<double, double> pair_gap(PairProblem& p) {
  if (p.equality) {
    p.b = best_intercept(p.n, [&](std::size_t j) { return p.y[j]; }, [&](std::size_t j) { return p.g[j]; }, p.kinks);
  }
  double loss = 0.0, sum_alpha = 0.0, ayg = 0.0;
  for (std::size_t j = 0; j < p.n; ++j) {
    loss += std::max(0.0, 1.0 - p.y[j] * (p.g[j] + p.b));
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

// The end of a step: g += ci·row_i + cj·row_j in the sweep that finds the
// next first coordinate (`candidate` scores a row), the step counted,
// `tick`, and every 16 steps the output's gap against `target`. False: stop.
template <class Candidate>
bool next_step(PairProblem& p, const double* row_i, const double* row_j, double ci, double cj,
               const Candidate& candidate, double target, const std::function<bool()>& tick, PairChoice& first,
               std::uint64_t& steps) {
  first = pair_sweep(p.n, [&](std::size_t k, PairChoice& c) {
    p.g[k] += ci * row_i[k] + cj * row_j[k];
    candidate(p, k, c);
  });
  ++steps;
  if (tick && !tick()) return false;
  if (steps % 16 == 0) {
    const auto [gap, primal] = pair_gap(p);
    if (gap <= target * std::max(std::abs(primal), std::numeric_limits<double>::min())) return false;
  }
  return true;
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
    // i's own step when no pair beats it (the pair's maximum is at least
    // that, so only rounding on a nearly singular pair, or NaN, gets here).
    const bool alone = pair.at >= n || pair.at == i || !(pair.gain >= first.gain);
    const double* row_j = alone ? row_i : pair_row(p, cache, pair.at);
    if (!alone) row_i = cache.row(i);  // looked up again after row_j's: never a stale pointer
    const double xi = alone ? first.x : pair.x, yj = alone ? 0.0 : pair.y;
    const double ci = xi * p.y[i] / ln, cj = alone ? 0.0 : yj * p.y[pair.at] / ln;
    p.alpha[i] = std::clamp(p.alpha[i] + xi, 0.0, 1.0);
    if (!alone) p.alpha[pair.at] = std::clamp(p.alpha[pair.at] + yj, 0.0, 1.0);
    if (!next_step(p, row_i, row_j, ci, cj, single_step, target, tick, first, steps)) break;
  }
  return steps;
}

// With the unregularized intercept (`bias: unregularized`, LIBSVM's form of
// the problem) a step must keep Σ_j α_j y_j = 0, so it moves a pair along
// α_i += y_i t, α_j −= y_j t (t ≥ 0), which changes n·D by
//   t (v_i − v_j) − ½ t² η_ij,   v_k = y_k (1 − y_k g_k) = y_k − g_k,
//   η_ij = (K_ii + K_jj − 2 K_ij)/(λn),
// for t up to the room y_i α_i has to rise and y_j α_j to fall. i = the row
// whose y α can rise with the largest v (the maximal violating pair's first
// member; Keerthi et al., Neural Computation 2001); j = the row whose y α can
// fall, with v_j < v_i, whose clipped step gains most (second-order
// working-set selection; Fan, Chen & Lin, JMLR 2005). No such pair: α is
// optimal. At the optimum the intercept b separates the two sets
// (max v over the rising ≤ b ≤ min v over the falling).
inline bool rises(const PairProblem& p, std::size_t k) { return p.y[k] > 0.0 ? p.alpha[k] < 1.0 : p.alpha[k] > 0.0; }
inline bool falls(const PairProblem& p, std::size_t k) { return p.y[k] > 0.0 ? p.alpha[k] > 0.0 : p.alpha[k] < 1.0; }
inline double room_to_rise(const PairProblem& p, std::size_t k) { return p.y[k] > 0.0 ? 1.0 - p.alpha[k] : p.alpha[k]; }
inline double room_to_fall(const PairProblem& p, std::size_t k) { return p.y[k] > 0.0 ? p.alpha[k] : 1.0 - p.alpha[k]; }

// Row k as a candidate i (gain = v_k; −∞ where y α cannot rise), and its
// entry of p.gain for pair_row's rows computed ahead: how far v_k lies on
// the wrong side of the last gap check's intercept.
inline void equality_first(PairProblem& p, std::size_t k, PairChoice& c) {
  const double v = p.y[k] - p.g[k];
  const bool up = rises(p, k), down = falls(p, k);
  c.gain = up ? v : -std::numeric_limits<double>::infinity();
  p.gain[k] = std::max(up ? v - p.b : 0.0, down ? p.b - v : 0.0);
}

// α_k moved by `delta`, onto its bound exactly when the step used all the room.
inline void move_alpha(PairProblem& p, std::size_t k, double delta, bool to_bound) {
  const double next = p.alpha[k] + delta;
  p.alpha[k] = to_bound ? (delta > 0.0 ? 1.0 : 0.0) : std::clamp(next, 0.0, 1.0);
}

// pair_output's loop for the unregularized intercept (see above).
inline std::uint64_t pair_output_equality(PairProblem& p, RowCache& cache, double target, std::uint64_t max_steps,
                                          const std::function<bool()>& tick) {
  const std::size_t n = p.n;
  const double inv_ln = 1.0 / p.lambda_n;
  std::uint64_t steps = 0;
  PairChoice first = pair_sweep(n, [&](std::size_t k, PairChoice& c) { equality_first(p, k, c); });
  while (steps < max_steps && first.at < n) {
    const std::size_t i = first.at;
    const double* row_i = pair_row(p, cache, i);
    const double vi = first.gain, hi = p.h[i], room_i = room_to_rise(p, i);
    PairChoice pair = pair_sweep(n, [&](std::size_t j, PairChoice& c) {
      const double slope = vi - (p.y[j] - p.g[j]);
      if (j == i || !(slope > 0.0) || !falls(p, j)) {
        c.gain = -std::numeric_limits<double>::infinity();
        return;
      }
      const double eta = hi + p.h[j] - 2.0 * row_i[j] * inv_ln;
      const double room = std::min(room_i, room_to_fall(p, j));
      c.x = eta > 0.0 && slope < room * eta ? slope / eta : room;
      c.gain = slope * c.x - 0.5 * eta * c.x * c.x;
    });
    if (pair.at >= n || !(pair.gain > 0.0)) break;  // no pair gains: optimal, to rounding
    const std::size_t j = pair.at;
    const double* row_j = pair_row(p, cache, j);
    row_i = cache.row(i);  // looked up again after row_j's: never a stale pointer
    const double t = pair.x;  // at most either room; equal to one when the step used all of it
    move_alpha(p, i, p.y[i] * t, t >= room_i);
    move_alpha(p, j, -p.y[j] * t, t >= room_to_fall(p, j));
    const double ci = t * inv_ln, cj = -t * inv_ln;
    if (!next_step(p, row_i, row_j, ci, cj, equality_first, target, tick, first, steps)) break;
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
      // A fair share of what is left of the cap for this output and those
      // after it (one-vs-all: the first output cannot use up the others').
      p.equality = st.equality;
      const std::uint64_t share = std::max<std::uint64_t>(1, (cap - out.visits) / (2 * (K - c)));
      if (p.equality) {
        pair_output_equality(p, cache, target, share, tick);
      } else {
        pair_output(p, cache, target, share, tick);
      }
      for (std::size_t j = 0; j < n; ++j) st.alpha[j * K + c] = p.alpha[j];
    }
    recompute_g(st, cache);
    set_intercepts(st);
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
}  // namespace pegasos
