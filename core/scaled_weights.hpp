// W = a · V: a dense (rows × K, feature-major) weight table with one shared
// scale, plus a lazily maintained weighted average of the iterates.
//
// Why: the Pegasos shrink W ← (1 − ηλ) W touches every weight; keeping the
// factor in `a` makes it O(1), and an update W[:,k] += c_k · x costs O(nnz(x)·K).
// ‖W‖² is tracked incrementally so the projection onto the ball is O(1) too
// (the same idea as Bottou's svmsgd `wDivisor` and scikit-learn's `wscale`).
//
// Averaging: the average Ā of the iterates is kept as Ā = α·U + β·V. Moving V by δ
// is compensated by U −= (β/α)·δ on the same non-zeros, and an averaging step
// Ā ← (1−μ)Ā + μ·W only changes the scalars: α ← (1−μ)α, β ← (1−μ)β + μ·a.
// So averaging costs O(nnz) per step as well, never O(rows).
#pragma once

#include <cassert>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/dataset.hpp"
#include "core/zeroed_table.hpp"

namespace pegasos {

class ScaledWeights {
 public:
  // Each fold below costs O(rows·K) (at d = 10⁷, a pass over 160 MB), so the
  // thresholds are as loose as precision allows.
  // Fold the scale into V below this. V's entries grow like 1/a and ‖V‖²
  // like 1/a², so at 1e-60 ‖V‖² stays below ~1e120·‖W‖², far from overflow;
  // floating-point precision is relative, so a small a loses nothing else.
  static constexpr double kRenormBelow = 1e-60;
  // Fold the average's α into U below this, for the same reason.
  static constexpr double kAverageRenormBelow = 1e-60;
  // Ā = αU + βV loses about log10(β/a) digits to cancellation when the scale
  // a of W drops much faster than its average β (projections, or a sudden
  // shrink): βV is then far larger than Ā. Fold Ā into U beyond this ratio
  // (at most 4 of the 16 digits lost). The 1/(λt) schedule alone keeps β/a
  // near (1 + γ); frequent projections make it grow.
  static constexpr double kAverageDriftAbove = 1e4;

  // Memory layout: one table, row r holding V[r, 0..K) and, once averaging
  // has started, U[r, 0..K) right after it (stride 2K). An update touches V
  // and U of the same rows, so interleaving them halves the cache misses when
  // the table is far larger than the cache (d = 10⁷: 160 MB). Pass
  // `averaging` = true when averaging will be used, to lay the table out for
  // it from the start (start_averaging() re-lays it out otherwise, O(rows·K)).
  ScaledWeights(std::size_t rows, int outputs, bool averaging = false)
      : rows_(rows),
        k_(outputs),
        stride_(static_cast<std::size_t>(outputs) * (averaging ? 2 : 1)),
        t_(rows * stride_) {}

  std::size_t rows() const { return rows_; }
  int outputs() const { return k_; }
  double scale() const { return a_; }

  // scores[k] += (W·x)_k for k < K. Indices of x at or beyond rows() are ignored.
  // Cost O(nnz(x)·K).
  void add_scores(const RowView& x, double* scores) const { add_scores_of(0, a_, x, scores); }

  // Scores of the averaged iterate (requires averaging()).
  void add_average_scores(const RowView& x, double* scores) const {
    add_scores_of(static_cast<std::size_t>(k_), alpha_, x, scores);
    add_scores_of(0, beta_, x, scores);
  }

  // Hint the cache to fetch the rows x will touch (issued one step ahead, it
  // hides the memory latency that dominates when the table is large).
  [[gnu::always_inline]] void prefetch(const RowView& x) const {
    // A table this small stays in L2 anyway.
    constexpr std::size_t kCachedBytes = std::size_t{256} << 10;
    if (t_.size() * sizeof(double) <= kCachedBytes) return;
    const double* t = t_.data();
    // Rows of up to 8 doubles sit in one cache line (the table is 64-byte
    // aligned and strides are 1, 2, 4 or 8 doubles then); longer rows get
    // their V and U starts fetched.
    const bool second = stride_ > 8 && averaging_;
    for (std::uint32_t j = 0; j < x.nnz; ++j) {
      const std::size_t row = x.indices[j];
      if (row >= rows_) continue;
      __builtin_prefetch(t + row * stride_, 1);
      if (second) __builtin_prefetch(t + row * stride_ + k_, 1);
    }
  }

  // W[:,k] += coeff[k] · x. Cost O(nnz(x)·K); skips zero coefficients.
  void add(const RowView& x, const double* coeff) {
    const std::size_t k_count = static_cast<std::size_t>(k_);
    const double inv_a = 1.0 / a_;
    const double avg_ratio = averaging_ ? beta_ / alpha_ : 0.0;
    double* t = t_.data();
    const std::size_t stride = stride_;
    double sq = 0.0;
    if (k_ == 1) {  // the binary hot path: no inner loop over outputs
      if (coeff[0] == 0.0) return;
      v_zero_ = false;
      const double c = coeff[0] * inv_a;
      double sq1 = 0.0;  // two chains for the ‖V‖² bookkeeping
      std::uint32_t j = 0;
      auto one = [&](std::uint32_t e, double& acc) {
        const std::size_t row = x.indices[e];
        if (row >= rows_) return;
        double* p = t + row * stride;
        const double delta = c * x.values[e];
        acc += delta * (2.0 * p[0] + delta);
        p[0] += delta;
        if (averaging_) p[1] -= avg_ratio * delta;
      };
      for (; j + 2 <= x.nnz; j += 2) {
        one(j, sq);
        one(j + 1, sq1);
      }
      if (j < x.nnz) one(j, sq);
      sq_norm_v_ += sq + sq1;
      return;
    }
    // Multiclass: only the outputs with a non-zero coefficient are touched
    // (two for the multiclass hinge), so the update is O(nnz · active).
    active_.clear();
    for (std::size_t k = 0; k < k_count; ++k) {
      if (coeff[k] != 0.0) active_.push_back(k);
    }
    if (!active_.empty()) v_zero_ = false;
    for (std::uint32_t j = 0; j < x.nnz; ++j) {
      const std::size_t row = x.indices[j];
      if (row >= rows_) continue;
      const double xj = x.values[j] * inv_a;
      double* v = t + row * stride;
      double* u = v + k_count;
      for (std::size_t k : active_) {
        const double delta = coeff[k] * xj;
        sq += delta * (2.0 * v[k] + delta);
        v[k] += delta;
        if (averaging_) u[k] -= avg_ratio * delta;
      }
    }
    sq_norm_v_ += sq;
  }

  // W ← c · W. O(1) except when c == 0 or the scale underflows (then O(rows·K)).
  void scale_by(double c) {
    assert(c >= 0.0 && std::isfinite(c));
    if (c == 0.0) {
      // W ← 0. Pegasos' first step does this (η₁λ = 1), when V is still zero:
      // then there is nothing to clear (and Ā = αU + βV does not depend on β).
      if (!v_zero_) {
        if (averaging_) fold_average();
        for_each_v([](double& v) { v = 0.0; });
        v_zero_ = true;
      }
      a_ = 1.0;
      sq_norm_v_ = 0.0;
      return;
    }
    a_ *= c;
    if (a_ < kRenormBelow) renormalize();
    if (averaging_ && std::abs(beta_) > kAverageDriftAbove * a_) fold_average();
  }

  // ‖W‖²_F in O(1).
  double squared_norm() const { return a_ * a_ * std::max(sq_norm_v_, 0.0); }

  // Start (or restart) averaging: the average becomes the current W.
  void start_averaging() {
    const std::size_t K = static_cast<std::size_t>(k_);
    if (stride_ == K) {  // lay the table out with room for U
      Table wide(rows_ * 2 * K);
      for (std::size_t r = 0; r < rows_; ++r) {
        for (std::size_t k = 0; k < K; ++k) wide[r * 2 * K + k] = t_[r * K + k];
      }
      t_ = std::move(wide);
      stride_ = 2 * K;
    } else {
      for (std::size_t r = 0; r < rows_; ++r) std::fill_n(&t_[r * stride_ + K], K, 0.0);
    }
    averaging_ = true;
    alpha_ = 1.0;
    beta_ = a_;
  }
  bool averaging() const { return averaging_; }

  // Ā ← (1 − mu)·Ā + mu·W in O(1) (amortised).
  void average_step(double mu) {
    if (mu == 1.0) {  // the first step of an average: Ā = W
      start_averaging();
      return;
    }
    assert(averaging_ && mu > 0.0 && mu < 1.0);
    alpha_ *= (1.0 - mu);
    beta_ = (1.0 - mu) * beta_ + mu * a_;
    if (alpha_ < kAverageRenormBelow) fold_average();
  }

  // Dense copies (rows × K, feature-major).
  std::vector<double> weights() const {
    const std::size_t K = static_cast<std::size_t>(k_);
    std::vector<double> w(rows_ * K);
    for (std::size_t r = 0; r < rows_; ++r) {
      const double* v = &t_[r * stride_];
      for (std::size_t k = 0; k < K; ++k) w[r * K + k] = a_ * v[k];
    }
    return w;
  }
  std::vector<double> average_weights() const {
    assert(averaging_);
    const std::size_t K = static_cast<std::size_t>(k_);
    std::vector<double> w(rows_ * K);
    for (std::size_t r = 0; r < rows_; ++r) {
      const double* v = &t_[r * stride_];
      for (std::size_t k = 0; k < K; ++k) w[r * K + k] = alpha_ * v[K + k] + beta_ * v[k];
    }
    return w;
  }

 private:
  using Table = ZeroedTable;
  // scores[k] += factor · Σ_j x_j · T[row_j, offset + k]: offset 0 reads V, K reads U.
  void add_scores_of(std::size_t offset, double factor, const RowView& x, double* scores) const {
    if (factor == 0.0) return;
    const double* t = t_.data() + offset;
    const std::size_t stride = stride_;
    if (k_ == 1) {
      // Four partial sums break the add-latency chain (≈3× faster on dense rows).
      double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
      const std::uint32_t* idx = x.indices;
      const float* val = x.values;
      std::uint32_t j = 0;
      if (x.nnz > 0 && idx[x.nnz - 1] < rows_) {  // indices increase: all in range
        for (; j + 4 <= x.nnz; j += 4) {
          s0 += static_cast<double>(val[j]) * t[idx[j] * stride];
          s1 += static_cast<double>(val[j + 1]) * t[idx[j + 1] * stride];
          s2 += static_cast<double>(val[j + 2]) * t[idx[j + 2] * stride];
          s3 += static_cast<double>(val[j + 3]) * t[idx[j + 3] * stride];
        }
      }
      for (; j < x.nnz; ++j) {
        if (idx[j] < rows_) s0 += static_cast<double>(val[j]) * t[idx[j] * stride];
      }
      scores[0] += factor * ((s0 + s1) + (s2 + s3));
      return;
    }
    const std::size_t k_count = static_cast<std::size_t>(k_);
    for (std::uint32_t j = 0; j < x.nnz; ++j) {
      const std::size_t row = x.indices[j];
      if (row >= rows_) continue;
      const double xj = factor * x.values[j];
      const double* r = t + row * stride;
      for (std::size_t k = 0; k < k_count; ++k) scores[k] += xj * r[k];
    }
  }

  template <class F>
  void for_each_v(F&& f) {
    const std::size_t K = static_cast<std::size_t>(k_);
    for (std::size_t r = 0; r < rows_; ++r) {
      double* v = &t_[r * stride_];
      for (std::size_t k = 0; k < K; ++k) f(v[k]);
    }
  }

  // U ← Ā, α = 1, β = 0: the average no longer depends on V. O(rows·K).
  void fold_average() {
    const std::size_t K = static_cast<std::size_t>(k_);
    for (std::size_t r = 0; r < rows_; ++r) {
      double* v = &t_[r * stride_];
      for (std::size_t k = 0; k < K; ++k) v[K + k] = alpha_ * v[K + k] + beta_ * v[k];
    }
    alpha_ = 1.0;
    beta_ = 0.0;
  }

  // V ← a·V, a ← 1; recomputes ‖V‖² exactly (removes drift of the running sum).
  void renormalize() {
    double sq = 0.0;
    for_each_v([&](double& v) {
      v *= a_;
      sq += v * v;
    });
    if (averaging_) beta_ /= a_;  // βV_old = (β/a)·V_new
    a_ = 1.0;
    sq_norm_v_ = sq;
  }

  std::size_t rows_;
  int k_;
  std::size_t stride_;  // K, or 2K once the table holds U
  Table t_;
  double a_ = 1.0;
  double sq_norm_v_ = 0.0;
  bool averaging_ = false;
  bool v_zero_ = true;  // V is known to be all zero (no add() since the last clear)
  double alpha_ = 1.0, beta_ = 0.0;
  std::vector<std::size_t> active_;  // scratch for add()
};

}  // namespace pegasos
