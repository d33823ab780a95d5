// A primal–dual interior-point solver for the hinge problems of the dual
// solvers (core/sdca.hpp), for when dual coordinate ascent stalls on badly
// conditioned, low-dimensional data (unscaled dense features: UCI Vehicle,
// Satellite, Glass, where coordinate ascent ends 20000 passes with a gap near
// 100%). Its iterations barely depend on the conditioning; each costs
// O(n·K²·p² + (rK)³) (p non-zeros a row, r rows of W, K outputs), so it pays
// only where r·K is small; see interior_point_flops().
//
// The problem and its helpers: core/interior_point_problem.hpp.
//
// Method: Mehrotra's predictor–corrector (Nocedal & Wright, Numerical
// Optimization, 2nd ed., Alg. 16.4 for QPs) on the KKT system, with ξ, the
// slacks and the multipliers eliminated example by example, so each Newton
// step solves one (rK)×(rK) system
//   (I + Σ_i M_i ⊗ x̃_i x̃_iᵀ) Δw = rhs,  M_i = Σ_j d_ij (u_ij − ū_i)(u_ij − ū_i)ᵀ,
// d_ij = α_ij / s_ij, ū_i = Σ_j d_ij u_ij / Σ_j d_ij — positive definite
// (≥ I) by construction, written as a sum of PSD terms so that rounding
// cannot make it indefinite (the same low-dimensional normal equations as
// Ferris & Munson, SIAM J. Optim. 13(3), 2003). The result is judged by its
// exact duality gap only: α projected onto the dual feasible set, the gap of
// w(α) against D(α), the same certificate the dual solvers use.
#pragma once

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/dataset.hpp"
#include "core/interior_point_problem.hpp"

namespace pegasos {

// Mehrotra's method on one problem: the state (w, ξ, α, slacks), the
// residuals, the normal matrix and its factorisation, one part each.
template <std::size_t kK = 0, std::size_t kJ = 0>
class InteriorPointSolver {
 public:
  explicit InteriorPointSolver(const InteriorPointProblem& pr)
      : pr_(pr), n_(pr.data->size()), K_(pr.K), J_(pr.J), m_(pr.unknowns()), N_(n_ * J_) {
    // Eigen blocks its matrix products by the cache sizes it detects, and the
    // blocking fixes the order of the sums: fixed sizes make the results the
    // same on every machine (models are reproducible bit for bit).
    Eigen::setCpuCacheSizes(32 * 1024, 1024 * 1024, 8 * 1024 * 1024);
    start();
    S_.reserve(n_ * K());
    z_.assign(n_ * K(), 0.0);
    d_.assign(N_, 0.0);
    g_.assign(N_, 0.0);
    Di_.assign(n_, 0.0);
    ubar_.assign(n_ * K(), 0.0);
    rxi_.assign(n_, 0.0);
    rs_.assign(N_, 0.0);
    rc_.assign(N_, 0.0);
    da_.assign(N_, 0.0);
    ds_.assign(N_, 0.0);
    dxi_.assign(n_, 0.0);
    M_.resize(static_cast<Eigen::Index>(m_), static_cast<Eigen::Index>(m_));
    sparse_ = sums_sparse_normal_matrix(pr);
    if (sparse_) cache_sparse_rows();
    has_columns_ = interior_point_detail::make_feature_columns(pr, columns_);
    outer_ = sums_outer_normal_matrix(pr);
  }

  // Solve to a certified relative gap `target` or `max_iterations` Newton
  // steps, whichever first, or until the best gap has not halved in
  // kPatience steps; the best certified point seen (smallest gap).
  InteriorPointResult run(double target, int max_iterations) {
    InteriorPointResult best;
    if (live_ == 0) return best;
    double mark = std::numeric_limits<double>::infinity();  // the best gap kPatience steps ago, at most
    int mark_at = 0;
    for (int it = 0; it < max_iterations; ++it) {
      if (it - mark_at >= kPatience) {
        const double gap = best.primal - best.dual;
        if (!(gap <= mark / 2)) break;
        mark = gap;
        mark_at = it;
      }
      const double mu = residuals();
      InteriorPointResult now;
      interior_point_detail::certify<kK, kJ>(pr_, alpha_, now, cz_, cS_, cat_, columns());
      const double gap = now.primal - now.dual;
      now.certified = gap <= target * std::abs(now.primal);
      if (std::isfinite(gap) && !(best.primal - best.dual <= gap)) best = std::move(now);
      best.iterations = it;
      best.work = it;
      if (best.certified || !factorise()) break;
      step(mu);
    }
    return best;
  }

 private:
  // K and J: compile-time constants for the binary problem (its loops
  // unrolled, e / J a shift), else the problem's.
  std::size_t K() const { return kK != 0 ? kK : K_; }
  std::size_t J() const { return kJ != 0 ? kJ : J_; }
  bool live(std::size_t i) const { return pr_.U[i] > 0.0; }
  const interior_point_detail::FeatureColumns* columns() const { return has_columns_ ? &columns_ : nullptr; }

  // w = 0, ξ_i one above its largest b_ij (slacks ≥ 1), α_ij = U_i/J.
  void start() {
    w_ = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(m_));
    xi_.assign(n_, 0.0);
    alpha_.assign(N_, 0.0);
    s_.assign(N_, 0.0);
    for (std::size_t i = 0; i < n_; ++i) {
      double top = -std::numeric_limits<double>::infinity();
      for (std::size_t j = 0; j < J(); ++j) top = std::max(top, pr_.b[i * J() + j]);
      xi_[i] = top + 1.0;
      for (std::size_t j = 0; j < J(); ++j) {
        alpha_[i * J() + j] = pr_.U[i] / static_cast<double>(J());
        s_[i * J() + j] = xi_[i] - pr_.b[i * J() + j];
      }
      if (live(i)) live_ += J();
    }
  }

  // r_w = w + Σ α a, r_ξ = U − Σ_j α, r_s = s − ξ + b + aᵀw; returns μ.
  double residuals() {
    namespace ip = interior_point_detail;
    ip::scores<kK>(pr_, w_.data(), S_);
    ip::constraint_values<kK, kJ>(pr_, S_, at_);
    std::fill(z_.begin(), z_.end(), 0.0);
    double mu = 0.0;
    for (std::size_t i = 0; i < n_; ++i) {
      rxi_[i] = pr_.U[i];
      for (std::size_t j = 0; j < J(); ++j) {
        const std::size_t e = i * J() + j;
        rxi_[i] -= alpha_[e];
        rs_[e] = s_[e] - xi_[i] + pr_.b[e] + at_[e];
        if (!live(i)) continue;
        mu += alpha_[e] * s_[e];
        for (std::size_t k = 0; k < K(); ++k) z_[i * K() + k] += alpha_[e] * pr_.u[e * K() + k];
      }
    }
    rw_ = w_;
    ip::scatter<kK>(pr_, z_, rw_.data(), columns());
    return mu / static_cast<double>(live_);
  }

  // d = α/s, D_i, ū_i and M_i = Σ_j d_ij (u_ij − ū_i)(u_ij − ū_i)ᵀ (lower).
  void example_weights(std::size_t i, std::vector<double>& Mi) {
    double D = 0.0;
    for (std::size_t k = 0; k < K(); ++k) ubar_[i * K() + k] = 0.0;
    for (std::size_t j = 0; j < J(); ++j) {
      const std::size_t e = i * J() + j;
      d_[e] = alpha_[e] / s_[e];
      D += d_[e];
      for (std::size_t k = 0; k < K(); ++k) ubar_[i * K() + k] += d_[e] * pr_.u[e * K() + k];
    }
    Di_[i] = D;
    for (std::size_t k = 0; k < K(); ++k) ubar_[i * K() + k] /= D;
    std::fill(Mi.begin(), Mi.end(), 0.0);
    for (std::size_t j = 0; j < J(); ++j) {
      const std::size_t e = i * J() + j;
      for (std::size_t k = 0; k < K(); ++k) {
        const double ck = d_[e] * (pr_.u[e * K() + k] - ubar_[i * K() + k]);
        if (ck == 0.0) continue;
        for (std::size_t l = 0; l <= k; ++l) Mi[k * K() + l] += ck * (pr_.u[e * K() + l] - ubar_[i * K() + l]);
      }
    }
  }

  // M = I + Σ_i M_i ⊗ x̃_i x̃_iᵀ block by block: block (k, l) is
  // X̃ᵀ diag(M_i[k, l]) X̃, formed kRows examples at a time as dense products
  // (BLAS-3 speed; a diagonal block, whose weights are ≥ 0, as a symmetric
  // rank update). Then Cholesky; LDLᵀ where rounding has left the huge
  // late-stage M not positive definite. False if both fail.
  bool factorise() {
    if (sparse_) {
      sparse_normal_matrix();
    } else if (outer_) {
      outer_normal_matrix();
    } else {
      dense_normal_matrix();
    }
    return cholesky();
  }

  // Row i as the sparse sum reads it: its indices and values (as double)
  // with the bias feature appended; returns their count.
  std::size_t sparse_row(std::size_t i, std::uint32_t* idx, double* val) const {
    const RowView x = pr_.data->row(i);
    for (std::uint32_t p = 0; p < x.nnz; ++p) {
      idx[p] = x.indices[p];
      val[p] = static_cast<double>(x.values[p]);
    }
    if (pr_.B == 0.0) return x.nnz;
    idx[x.nnz] = static_cast<std::uint32_t>(pr_.data->dimension);
    val[x.nnz] = pr_.B;
    return x.nnz + std::size_t{1};
  }

  static bool increasing_indices(const std::uint32_t* idx, std::size_t m) {
    return std::adjacent_find(idx, idx + m, [](std::uint32_t u, std::uint32_t v) { return u >= v; }) == idx + m;
  }

  // The rows as the sparse sum reads them at every step, made once where
  // they are at most InteriorPointProblem::copy_nnz non-zeros (else
  // row_idx_ and row_val_ hold one row at a time): each row's indices and
  // values, and whether its indices increase (every reader's order; the bias
  // comes last).
  void cache_sparse_rows() {
    std::size_t longest = 0, total = 0;
    for (std::size_t i = 0; i < n_; ++i) {
      const std::size_t m = pr_.data->row(i).nnz + (pr_.B != 0.0 ? 1 : 0);
      longest = std::max(longest, m);
      total += m;
    }
    if (total > pr_.copy_nnz) {
      row_idx_.resize(longest);
      row_val_.resize(longest);
      return;
    }
    row_start_.assign(n_ + 1, 0);
    row_idx_.resize(total);
    row_val_.resize(total);
    row_increasing_.assign(n_, 0);
    for (std::size_t i = 0; i < n_; ++i) {
      std::uint32_t* idx = row_idx_.data() + row_start_[i];
      const std::size_t m = sparse_row(i, idx, row_val_.data() + row_start_[i]);
      row_start_[i + 1] = row_start_[i] + m;
      row_increasing_[i] = increasing_indices(idx, m);
    }
  }

  // M = I + Σ_i M_i ⊗ x̃_i x̃_iᵀ, each row's products added where they fall
  // (the lower triangle; the rows' index order does not matter).
  void sparse_normal_matrix() {
    const std::size_t r = pr_.rows();
    const auto ld = static_cast<std::size_t>(M_.outerStride());
    std::vector<double> Mi(K() * K());
    M_.setIdentity();
    double* const M = M_.data();
    for (std::size_t i = 0; i < n_; ++i) {
      if (!live(i)) continue;
      example_weights(i, Mi);
      const std::uint32_t* idx = nullptr;
      const double* val = nullptr;
      std::size_t m = 0;
      bool increasing = false;
      if (!row_start_.empty()) {
        idx = row_idx_.data() + row_start_[i];
        val = row_val_.data() + row_start_[i];
        m = row_start_[i + 1] - row_start_[i];
        increasing = row_increasing_[i] != 0;
      } else {
        m = sparse_row(i, row_idx_.data(), row_val_.data());
        idx = row_idx_.data();
        val = row_val_.data();
        increasing = increasing_indices(idx, m);
      }
      // Rows in increasing index order: the lower triangle of a diagonal
      // block is the pairs a >= b, with no test per pair (the same products
      // added in the same order).
      for (std::size_t k = 0; k < K(); ++k) {
        for (std::size_t l = 0; l <= k; ++l) {
          const double c = k == l ? std::max(Mi[k * K() + l], 0.0) : Mi[k * K() + l];
          if (c == 0.0) continue;
          double* const block = M + l * r * ld + k * r;  // block (k, l): rows k·r.., columns l·r..
          for (std::size_t b = 0; b < m; ++b) {
            const double cb = c * val[b];
            double* const column = block + idx[b] * ld;
            if (k == l && increasing) {
              for (std::size_t a = b; a < m; ++a) column[idx[a]] += cb * val[a];
              continue;
            }
            for (std::size_t a = 0; a < m; ++a) {
              if (k == l && idx[a] < idx[b]) continue;  // the upper triangle: never read
              column[idx[a]] += cb * val[a];
            }
          }
        }
      }
    }
  }

  void dense_normal_matrix() {
    constexpr std::size_t kRows = 256;
    const std::size_t r = pr_.rows(), dim = pr_.data->dimension;
    const auto R = static_cast<Eigen::Index>(r);
    std::vector<double> Mi(K() * K());
    Eigen::MatrixXd X(static_cast<Eigen::Index>(kRows), R), Y(static_cast<Eigen::Index>(kRows), R);
    Eigen::MatrixXd C(static_cast<Eigen::Index>(kRows), static_cast<Eigen::Index>(K() * K()));
    M_.setIdentity();
    for (std::size_t c0 = 0; c0 < n_; c0 += kRows) {
      const std::size_t rows = std::min(kRows, n_ - c0);
      const auto Rows = static_cast<Eigen::Index>(rows);
      X.topRows(Rows).setZero();
      C.topRows(Rows).setZero();
      for (std::size_t v = 0; v < rows; ++v) {
        const std::size_t i = c0 + v;
        if (!live(i)) continue;
        example_weights(i, Mi);
        for (std::size_t e = 0; e < K() * K(); ++e) C(static_cast<Eigen::Index>(v), static_cast<Eigen::Index>(e)) = Mi[e];
        const RowView x = pr_.data->row(i);
        for (std::uint32_t p = 0; p < x.nnz; ++p) X(static_cast<Eigen::Index>(v), x.indices[p]) = x.values[p];
        if (pr_.B != 0.0) X(static_cast<Eigen::Index>(v), static_cast<Eigen::Index>(dim)) = pr_.B;
      }
      for (std::size_t k = 0; k < K(); ++k) {
        for (std::size_t l = 0; l <= k; ++l) {
          const auto col = C.col(static_cast<Eigen::Index>(k * K() + l)).head(Rows);
          auto block = M_.block(static_cast<Eigen::Index>(k * r), static_cast<Eigen::Index>(l * r), R, R);
          if (k == l) {
            Y.topRows(Rows) = col.cwiseMax(0.0).cwiseSqrt().asDiagonal() * X.topRows(Rows);
            block.selfadjointView<Eigen::Lower>().rankUpdate(Y.topRows(Rows).transpose());
          } else {
            Y.topRows(Rows) = col.asDiagonal() * X.topRows(Rows);
            block.noalias() += X.topRows(Rows).transpose() * Y.topRows(Rows);
          }
        }
      }
    }
  }

  // M = I + Σ_i M_i ⊗ x̃_i x̃_iᵀ as R = Wᵀ O over chunks of rows (W: M_i[k, l], l ≤ k,
  // diagonal ones ≥ 0; O: x̃_a x̃_b, b ≤ a), R placed in M's lower triangle (block
  // (k, l) is symmetric in a, b): one product for dense_normal_matrix's many.
  void outer_normal_matrix() {
    const std::size_t kRows = std::min<std::size_t>(256, n_);  // a chunk's rows (a small problem: all)
    const std::size_t r = pr_.rows(), dim = pr_.data->dimension, Q = K() * (K() + 1) / 2, P = r * (r + 1) / 2;
    std::vector<double> Mi(K() * K()), x(r);
    // Column v: row v's weights (W) and products (O), each contiguous.
    Eigen::MatrixXd W(static_cast<Eigen::Index>(Q), static_cast<Eigen::Index>(kRows));
    Eigen::MatrixXd O = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(P), static_cast<Eigen::Index>(kRows));
    Eigen::MatrixXd R = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(Q), static_cast<Eigen::Index>(P));
    for (std::size_t c0 = 0; c0 < n_; c0 += kRows) {
      const auto rows = static_cast<Eigen::Index>(std::min(kRows, n_ - c0));
      W.leftCols(rows).setZero();
      for (Eigen::Index v = 0; v < rows; ++v) {
        const std::size_t i = c0 + static_cast<std::size_t>(v);
        if (!live(i)) continue;  // zero weights (O's column: finite products of an earlier chunk, or 0)
        example_weights(i, Mi);
        for (std::size_t k = 0, q = 0; k < K(); ++k) {
          for (std::size_t l = 0; l <= k; ++l) {
            const double c = Mi[k * K() + l];
            W(static_cast<Eigen::Index>(q++), v) = k == l ? std::max(c, 0.0) : c;
          }
        }
        std::fill(x.begin(), x.end(), 0.0);
        const RowView row = pr_.data->row(i);
        for (std::uint32_t p = 0; p < row.nnz; ++p) x[row.indices[p]] = row.values[p];
        if (pr_.B != 0.0) x[dim] = pr_.B;
        for (std::size_t a = 0, e = 0; a < r; ++a) {
          for (std::size_t b = 0; b <= a; ++b, ++e) O(static_cast<Eigen::Index>(e), v) = x[a] * x[b];
        }
      }
      R.noalias() += W.leftCols(rows) * O.leftCols(rows).transpose();
    }
    M_.setIdentity();
    for (std::size_t k = 0, q = 0; k < K(); ++k) {
      for (std::size_t l = 0; l <= k; ++l, ++q) {
        for (std::size_t a = 0, e = 0; a < r; ++a) {
          for (std::size_t b = 0; b <= a; ++b, ++e) {
            const double v = R(static_cast<Eigen::Index>(q), static_cast<Eigen::Index>(e));
            M_(static_cast<Eigen::Index>(k * r + a), static_cast<Eigen::Index>(l * r + b)) += v;
            if (k != l && a != b) M_(static_cast<Eigen::Index>(k * r + b), static_cast<Eigen::Index>(l * r + a)) += v;
          }
        }
      }
    }
  }

  bool cholesky() {
    llt_.compute(M_);  // reads the lower triangle
    pivoted_ = llt_.info() != Eigen::Success;
    if (!pivoted_) return true;
    ldlt_.compute(M_);
    if (ldlt_.info() == Eigen::Success) return true;
    // Late in the run d_ij spans many orders of magnitude and rounding can
    // cost M its (exact) positive definiteness: a relative ridge, grown until
    // Cholesky succeeds, gives an inexact Newton step, which the method
    // tolerates (the certificate judges the result anyway).
    pivoted_ = false;
    const double scale = M_.diagonal().cwiseAbs().maxCoeff();
    for (double ridge = 1e-14; ridge <= 1e-6; ridge *= 100) {
      M_.diagonal().array() += ridge * scale;
      llt_.compute(M_);
      if (llt_.info() == Eigen::Success) return true;
    }
    return false;
  }

  // One Newton direction for the complementarity residual rc_ (d, ū, D_i,
  // the factorisation and the other residuals fixed).
  void direction() {
    namespace ip = interior_point_detail;
    std::vector<double>& q = q_;  // −(Σ_j d g (u − ū) + ū r_ξ) per example
    q.assign(n_ * K(), 0.0);
    for (std::size_t i = 0; i < n_; ++i) {
      if (!live(i)) continue;
      for (std::size_t j = 0; j < J(); ++j) {
        const std::size_t e = i * J() + j;
        g_[e] = rs_[e] - rc_[e] / alpha_[e];
        for (std::size_t k = 0; k < K(); ++k) q[i * K() + k] -= d_[e] * g_[e] * (pr_.u[e * K() + k] - ubar_[i * K() + k]);
      }
      for (std::size_t k = 0; k < K(); ++k) q[i * K() + k] -= ubar_[i * K() + k] * rxi_[i];
    }
    Eigen::VectorXd rhs = -rw_;
    ip::scatter<kK>(pr_, q, rhs.data(), columns());
    dw_ = pivoted_ ? Eigen::VectorXd(ldlt_.solve(rhs)) : Eigen::VectorXd(llt_.solve(rhs));
    ip::scores<kK>(pr_, dw_.data(), S_);
    ip::constraint_values<kK, kJ>(pr_, S_, at_);  // a_ijᵀ Δw
    for (std::size_t i = 0; i < n_; ++i) {
      if (!live(i)) continue;
      double h = 0.0;
      for (std::size_t j = 0; j < J(); ++j) h += d_[i * J() + j] * (g_[i * J() + j] + at_[i * J() + j]);
      dxi_[i] = (h - rxi_[i]) / Di_[i];
      for (std::size_t j = 0; j < J(); ++j) {
        const std::size_t e = i * J() + j;
        da_[e] = d_[e] * (g_[e] - dxi_[i] + at_[e]);
        ds_[e] = (-rc_[e] - s_[e] * da_[e]) / alpha_[e];
      }
    }
  }

  // The longest step in [0, 1] that keeps α and the slacks non-negative.
  double max_step() const {
    double tau = 1.0;
    for (std::size_t e = 0; e < N_; ++e) {
      if (!live(e / J())) continue;
      if (da_[e] < 0.0) tau = std::min(tau, -alpha_[e] / da_[e]);
      if (ds_[e] < 0.0) tau = std::min(tau, -s_[e] / ds_[e]);
    }
    return tau;
  }

  // Predictor (affine scaling), then the corrector with centring
  // σ = (μ_aff/μ)³, then Gondzio's centrality correctors (Gondzio, Comput.
  // Optim. Appl. 6, 1996): while the step is short, aim at a longer trial
  // step and pull the products α_e·s_e it would give back into
  // [βmin·σμ, βmax·σμ], through the same factorisation; a corrector is kept
  // only if it lengthens the step. Mehrotra's step alone is cut short by a
  // handful of badly centred pairs on unscaled data (UCI Shuttle's
  // Crammer–Singer problem: steps of 0.05–0.4 for 80 iterations); with the
  // correctors it certifies (and Vehicle, Satellite, Glass take a third to a
  // half fewer iterations). The step stays 0.99 of the way to the boundary.
  void step(double mu) {
    for (std::size_t e = 0; e < N_; ++e) rc_[e] = alpha_[e] * s_[e];
    direction();
    const double tau_aff = max_step();
    double mu_aff = 0.0;
    for (std::size_t e = 0; e < N_; ++e) {
      if (live(e / J())) mu_aff += (alpha_[e] + tau_aff * da_[e]) * (s_[e] + tau_aff * ds_[e]);
    }
    const double sigma = std::pow(mu_aff / static_cast<double>(live_) / mu, 3);
    for (std::size_t e = 0; e < N_; ++e) rc_[e] = alpha_[e] * s_[e] + da_[e] * ds_[e] - sigma * mu;
    direction();
    double tau = std::min(1.0, 0.99 * max_step());
    const double target = sigma * mu, lo = kBetaMin * target, hi = kBetaMax * target;  // the products' band
    for (int c = 0; c < kCorrectors && tau < 1.0; ++c) {
      const double trial = std::min(1.0, 1.5 * tau + 0.1);
      saved_rc_ = rc_;
      saved_da_ = da_;
      saved_ds_ = ds_;
      saved_dxi_ = dxi_;
      saved_dw_ = dw_;
      for (std::size_t e = 0; e < N_; ++e) {
        if (!live(e / J())) continue;
        const double v = (alpha_[e] + trial * da_[e]) * (s_[e] + trial * ds_[e]);
        // The complementarity right-hand side moves by the distance to the
        // band (a large product is pulled down by at most βmax·σμ).
        rc_[e] -= v < lo ? lo - v : (v > hi ? std::max(hi - v, -hi) : 0.0);
      }
      direction();
      const double longer = std::min(1.0, 0.99 * max_step());
      if (longer >= 1.01 * tau) {
        tau = longer;
        continue;
      }
      std::swap(rc_, saved_rc_);
      std::swap(da_, saved_da_);
      std::swap(ds_, saved_ds_);
      std::swap(dxi_, saved_dxi_);
      std::swap(dw_, saved_dw_);
      break;
    }
    w_ += tau * dw_;
    for (std::size_t i = 0; i < n_; ++i) xi_[i] += tau * dxi_[i];
    for (std::size_t e = 0; e < N_; ++e) {
      if (!live(e / J())) continue;
      alpha_[e] += tau * da_[e];
      s_[e] += tau * ds_[e];
    }
  }

  static constexpr int kPatience = 25;
  static constexpr int kCorrectors = 8;  // each: one direction(), no new factorisation
  static constexpr double kBetaMin = 0.1, kBetaMax = 10.0;

  const InteriorPointProblem& pr_;
  std::size_t n_, K_, J_, m_, N_, live_ = 0;  // live_: multipliers that take part (U_i > 0)
  Eigen::VectorXd w_, rw_, dw_;
  std::vector<double> xi_, alpha_, s_;
  std::vector<double> q_, S_, at_, z_, d_, g_, Di_, ubar_, rxi_, rs_, rc_, da_, ds_, dxi_;
  std::vector<double> cz_, cS_, cat_;  // the certificate's scratch
  std::vector<double> saved_rc_, saved_da_, saved_ds_, saved_dxi_;  // a rejected corrector's undo
  Eigen::VectorXd saved_dw_;
  Eigen::MatrixXd M_;
  Eigen::LLT<Eigen::MatrixXd> llt_;
  Eigen::LDLT<Eigen::MatrixXd> ldlt_;
  bool pivoted_ = false, sparse_ = false, outer_ = false;
  std::vector<std::size_t> row_start_;  // cache_sparse_rows()
  std::vector<std::uint32_t> row_idx_;
  std::vector<double> row_val_;
  std::vector<char> row_increasing_;
  interior_point_detail::FeatureColumns columns_;  // the data by feature, for scatter()
  bool has_columns_ = false;
};

// Solve to a certified relative gap `target` or `max_iterations` Newton
// steps, whichever first. Returns the best certified point seen (the one with
// the smallest gap), never an infeasible one.
inline InteriorPointResult solve_interior_point(const InteriorPointProblem& pr, double target, int max_iterations) {
  // The binary problem (K = 1, J = 2) with its shape fixed at compile time:
  // the same operations in the same order, so the same bits, a fifth to a
  // third faster (bench/ipm_speed.cpp: UCI Pima at C = 1, 576 rows,
  // 1.9 -> 1.27 ms; Breast Cancer at C = 10, 3.1 -> 2.5 ms).
  if (pr.K == 1 && pr.J == 2) return InteriorPointSolver<1, 2>(pr).run(target, max_iterations);
  return InteriorPointSolver<>(pr).run(target, max_iterations);
}

}  // namespace pegasos
