// A primal–dual interior-point solver for the hinge problems of the dual
// solvers (core/sdca.hpp), for when dual coordinate ascent stalls on badly
// conditioned, low-dimensional data (unscaled dense features: UCI Vehicle,
// Satellite, Glass, where coordinate ascent ends 20000 passes with a gap near
// 100%). Its iterations barely depend on the conditioning; each costs
// O(n·K²·p² + (rK)³) (p non-zeros a row, r rows of W, K outputs), so it pays
// only where r·K is small; see interior_point_flops().
//
// The problem, in the form shared by the binary and Crammer–Singer duals:
//   min_w ½‖w‖² + Σ_i U_i ξ_i   s.t.  ξ_i ≥ b_ij + a_ijᵀ w  (j < J),
//   a_ij = u_ij ⊗ x̃_i  (u_ij ∈ ℝ^K, x̃_i = (x_i, B)),  w = (w_0, …, w_{K−1}), w_k ∈ ℝ^r.
// Its Lagrange dual: α_ij ≥ 0, Σ_j α_ij = U_i, w(α) = −Σ α_ij a_ij,
//   D(α) = Σ α_ij b_ij − ½‖w(α)‖².
// Binary hinge (J = 2, K = 1): u_i0 = −y_i, b_i0 = 1 − y_i·o_i (o_i: a fixed
// offset such as transfer's w_R·x_i), u_i1 = 0, b_i1 = 0, U_i = c_i/(λn).
// Crammer–Singer (J = K): u_ij = e_j − e_{y_i}, b_ij = [j ≠ y_i], U_i = c_i/(λn).
// (The objectives of this project are λ× these.)
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

namespace pegasos {

struct InteriorPointProblem {
  const Dataset* data = nullptr;
  double B = 0.0;        // the bias feature's value (0: no bias feature)
  std::size_t K = 1, J = 2;
  std::vector<double> U;  // n: the mass of each example's multipliers (0: left out)
  std::vector<double> b;  // n × J
  std::vector<double> u;  // n × J × K

  std::size_t rows() const { return data->dimension + (B != 0.0 ? 1 : 0); }
  std::size_t unknowns() const { return rows() * K; }
};

struct InteriorPointResult {
  std::vector<double> alpha;  // n × J, dual feasible: α ≥ 0, Σ_j α_ij = U_i
  std::vector<double> w;      // w(alpha), class-major (w_k = w[k·r .. k·r + r))
  double primal = std::numeric_limits<double>::infinity();  // P(w(alpha)), in the ½‖w‖² units above
  double dual = -std::numeric_limits<double>::infinity();   // D(alpha)
  int iterations = 0;  // Newton steps taken
  bool certified = false;  // primal − dual ≤ target·|primal|
};

// Floating-point operations of one iteration, for the caller's decision
// whether the solver pays (forming the normal matrix, factorising it).
inline double interior_point_flops(std::size_t n, double nnz_per_row, std::size_t K, std::size_t unknowns) {
  const double p = nnz_per_row + 1.0, k = static_cast<double>(K), m = static_cast<double>(unknowns);
  return static_cast<double>(n) * (k * (k + 1) / 2 * p * p + 4 * k * p) + m * m * m / 3;
}

namespace interior_point_detail {

// S[i·K + k] = w_k · x̃_i.
inline void scores(const InteriorPointProblem& pr, const double* w, std::vector<double>& S) {
  const Dataset& data = *pr.data;
  const std::size_t n = data.size(), K = pr.K, r = pr.rows(), dim = data.dimension;
  S.assign(n * K, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    const RowView x = data.row(i);
    for (std::size_t k = 0; k < K; ++k) {
      const double* wk = w + k * r;
      double s = pr.B != 0.0 ? wk[dim] * pr.B : 0.0;
      for (std::uint32_t j = 0; j < x.nnz; ++j) s += static_cast<double>(x.values[j]) * wk[x.indices[j]];
      S[i * K + k] = s;
    }
  }
}

// out += Σ_i z_i ⊗ x̃_i  (z: n × K).
inline void scatter(const InteriorPointProblem& pr, const std::vector<double>& z, double* out) {
  const Dataset& data = *pr.data;
  const std::size_t n = data.size(), K = pr.K, r = pr.rows(), dim = data.dimension;
  for (std::size_t i = 0; i < n; ++i) {
    const RowView x = data.row(i);
    for (std::size_t k = 0; k < K; ++k) {
      const double c = z[i * K + k];
      if (c == 0.0) continue;
      double* ok = out + k * r;
      for (std::uint32_t j = 0; j < x.nnz; ++j) ok[x.indices[j]] += c * static_cast<double>(x.values[j]);
      if (pr.B != 0.0) ok[dim] += c * pr.B;
    }
  }
}

// at[i·J + j] = a_ijᵀ w = Σ_k u_ijk S_ik.
inline void constraint_values(const InteriorPointProblem& pr, const std::vector<double>& S, std::vector<double>& at) {
  const std::size_t n = pr.data->size(), K = pr.K, J = pr.J;
  at.assign(n * J, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < J; ++j) {
      const double* u = &pr.u[(i * J + j) * K];
      double v = 0.0;
      for (std::size_t k = 0; k < K; ++k) v += u[k] * S[i * K + k];
      at[i * J + j] = v;
    }
  }
}

// The exact certificate of a dual point: α scaled onto Σ_j α_ij = U_i,
// w(α), P(w(α)) and D(α).
inline void certify(const InteriorPointProblem& pr, const std::vector<double>& alpha, InteriorPointResult& out,
                    std::vector<double>& z, std::vector<double>& S, std::vector<double>& at) {
  const std::size_t n = pr.data->size(), K = pr.K, J = pr.J;
  std::vector<double> a(alpha.size());
  z.assign(n * K, 0.0);
  double lin = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    double sum = 0.0;
    for (std::size_t j = 0; j < J; ++j) sum += alpha[i * J + j];
    const double scale = sum > 0.0 ? pr.U[i] / sum : 0.0;
    for (std::size_t j = 0; j < J; ++j) {
      const double v = alpha[i * J + j] * scale;
      a[i * J + j] = v;
      lin += v * pr.b[i * J + j];
      const double* u = &pr.u[(i * J + j) * K];
      for (std::size_t k = 0; k < K; ++k) z[i * K + k] -= v * u[k];  // w = −Σ α a
    }
  }
  std::vector<double> w(pr.unknowns(), 0.0);
  scatter(pr, z, w.data());
  scores(pr, w.data(), S);
  constraint_values(pr, S, at);
  double sq = 0.0;
  for (const double v : w) sq += v * v;
  double loss = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    if (pr.U[i] == 0.0) continue;
    double m = -std::numeric_limits<double>::infinity();
    for (std::size_t j = 0; j < J; ++j) m = std::max(m, pr.b[i * J + j] + at[i * J + j]);
    loss += pr.U[i] * m;
  }
  out.primal = sq / 2 + loss;
  out.dual = lin - sq / 2;
  out.alpha = std::move(a);
  out.w = std::move(w);
}

}  // namespace interior_point_detail

// Solve to a certified relative gap `target` or `max_iterations` Newton
// steps, whichever first. Returns the best certified point seen (the one with
// the smallest gap), never an infeasible one.
inline InteriorPointResult solve_interior_point(const InteriorPointProblem& pr, double target, int max_iterations) {
  namespace ip = interior_point_detail;
  const Dataset& data = *pr.data;
  const std::size_t n = data.size(), K = pr.K, J = pr.J, r = pr.rows(), m = pr.unknowns(), dim = data.dimension;
  const std::size_t N = n * J;
  // Start: w = 0, ξ_i one above its largest b_ij (slacks ≥ 1), α_ij = U_i/J.
  Eigen::VectorXd w = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(m));
  std::vector<double> xi(n), alpha(N), s(N);
  std::size_t live = 0;  // multipliers that take part (U_i > 0)
  for (std::size_t i = 0; i < n; ++i) {
    double top = -std::numeric_limits<double>::infinity();
    for (std::size_t j = 0; j < J; ++j) top = std::max(top, pr.b[i * J + j]);
    xi[i] = top + 1.0;
    for (std::size_t j = 0; j < J; ++j) {
      alpha[i * J + j] = pr.U[i] / static_cast<double>(J);
      s[i * J + j] = xi[i] - pr.b[i * J + j];
    }
    if (pr.U[i] > 0.0) live += J;
  }
  InteriorPointResult best;
  if (live == 0) return best;
  std::vector<double> S, at, z(n * K), d(N), g(N), Di(n), ubar(n * K), rxi(n), rs(N), rc(N);
  std::vector<double> da(N), ds(N), dxi(n), da_aff(N), ds_aff(N), cz, cS, cat;
  Eigen::VectorXd rw(static_cast<Eigen::Index>(m)), rhs(static_cast<Eigen::Index>(m)), dw;
  Eigen::MatrixXd M(static_cast<Eigen::Index>(m), static_cast<Eigen::Index>(m));
  Eigen::LLT<Eigen::MatrixXd> llt;
  Eigen::LDLT<Eigen::MatrixXd> ldlt;  // when rounding leaves the huge late-stage M not positive definite
  bool pivoted = false;
  std::vector<double> Mi(K * K);

  // One Newton direction for complementarity residual rc (d, ū, D_i, the
  // factorisation and the other residuals fixed).
  auto direction = [&] {
    std::fill(z.begin(), z.end(), 0.0);
    for (std::size_t i = 0; i < n; ++i) {
      if (pr.U[i] == 0.0) continue;
      for (std::size_t j = 0; j < J; ++j) {
        const std::size_t e = i * J + j;
        g[e] = rs[e] - rc[e] / alpha[e];
        const double* u = &pr.u[e * K];
        for (std::size_t k = 0; k < K; ++k) z[i * K + k] += d[e] * g[e] * (u[k] - ubar[i * K + k]);
      }
      for (std::size_t k = 0; k < K; ++k) z[i * K + k] += ubar[i * K + k] * rxi[i];
    }
    rhs = -rw;
    std::vector<double> zneg(z.size());
    for (std::size_t e = 0; e < z.size(); ++e) zneg[e] = -z[e];
    ip::scatter(pr, zneg, rhs.data());
    dw = pivoted ? Eigen::VectorXd(ldlt.solve(rhs)) : Eigen::VectorXd(llt.solve(rhs));
    ip::scores(pr, dw.data(), S);
    ip::constraint_values(pr, S, at);  // at = a_ijᵀ Δw
    for (std::size_t i = 0; i < n; ++i) {
      if (pr.U[i] == 0.0) {
        dxi[i] = 0.0;
        for (std::size_t j = 0; j < J; ++j) da[i * J + j] = ds[i * J + j] = 0.0;
        continue;
      }
      double h = 0.0;
      for (std::size_t j = 0; j < J; ++j) h += d[i * J + j] * (g[i * J + j] + at[i * J + j]);
      dxi[i] = (h - rxi[i]) / Di[i];
      for (std::size_t j = 0; j < J; ++j) {
        const std::size_t e = i * J + j;
        da[e] = d[e] * (g[e] - dxi[i] + at[e]);
        ds[e] = (-rc[e] - s[e] * da[e]) / alpha[e];
      }
    }
  };
  auto max_step = [&] {
    double tau = 1.0;
    for (std::size_t e = 0; e < N; ++e) {
      if (pr.U[e / J] == 0.0) continue;
      if (da[e] < 0.0) tau = std::min(tau, -alpha[e] / da[e]);
      if (ds[e] < 0.0) tau = std::min(tau, -s[e] / ds[e]);
    }
    return tau;
  };

  for (int it = 0; it < max_iterations; ++it) {
    // Residuals at the current point.
    ip::scores(pr, w.data(), S);
    ip::constraint_values(pr, S, at);
    std::fill(z.begin(), z.end(), 0.0);
    double mu = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      rxi[i] = pr.U[i];
      for (std::size_t j = 0; j < J; ++j) {
        const std::size_t e = i * J + j;
        rxi[i] -= alpha[e];
        rs[e] = s[e] - xi[i] + pr.b[e] + at[e];
        if (pr.U[i] == 0.0) continue;
        mu += alpha[e] * s[e];
        const double* u = &pr.u[e * K];
        for (std::size_t k = 0; k < K; ++k) z[i * K + k] += alpha[e] * u[k];
      }
    }
    mu /= static_cast<double>(live);
    rw = w;
    ip::scatter(pr, z, rw.data());

    // The certificate of the current multipliers; keep the best.
    InteriorPointResult now;
    ip::certify(pr, alpha, now, cz, cS, cat);
    const double gap = now.primal - now.dual;
    now.certified = gap <= target * std::abs(now.primal);
    if (std::isfinite(gap) && !(best.primal - best.dual <= gap)) best = std::move(now);
    best.iterations = it;
    if (best.certified) break;

    // The normal matrix I + Σ_i M_i ⊗ x̃_i x̃_iᵀ (lower block triangle).
    M.setIdentity();
    for (std::size_t i = 0; i < n; ++i) {
      if (pr.U[i] == 0.0) continue;
      double D = 0.0;
      for (std::size_t k = 0; k < K; ++k) ubar[i * K + k] = 0.0;
      for (std::size_t j = 0; j < J; ++j) {
        const std::size_t e = i * J + j;
        d[e] = alpha[e] / s[e];
        D += d[e];
        for (std::size_t k = 0; k < K; ++k) ubar[i * K + k] += d[e] * pr.u[e * K + k];
      }
      Di[i] = D;
      for (std::size_t k = 0; k < K; ++k) ubar[i * K + k] /= D;
      std::fill(Mi.begin(), Mi.end(), 0.0);
      for (std::size_t j = 0; j < J; ++j) {
        const std::size_t e = i * J + j;
        for (std::size_t k = 0; k < K; ++k) {
          const double ck = d[e] * (pr.u[e * K + k] - ubar[i * K + k]);
          if (ck == 0.0) continue;
          for (std::size_t l = 0; l <= k; ++l) Mi[k * K + l] += ck * (pr.u[e * K + l] - ubar[i * K + l]);
        }
      }
      const RowView x = data.row(i);
      for (std::size_t k = 0; k < K; ++k) {
        for (std::size_t l = 0; l <= k; ++l) {
          const double c = Mi[k * K + l];
          if (c == 0.0) continue;
          auto block = M.block(static_cast<Eigen::Index>(k * r), static_cast<Eigen::Index>(l * r),
                               static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(r));
          for (std::uint32_t p = 0; p < x.nnz; ++p) {
            const double cp = c * static_cast<double>(x.values[p]);
            for (std::uint32_t q = 0; q < x.nnz; ++q) block(x.indices[p], x.indices[q]) += cp * x.values[q];
            if (pr.B != 0.0) {
              block(x.indices[p], dim) += cp * pr.B;
              block(dim, x.indices[p]) += cp * pr.B;
            }
          }
          if (pr.B != 0.0) block(dim, dim) += c * pr.B * pr.B;
        }
      }
    }
    llt.compute(M);  // reads the lower triangle
    pivoted = llt.info() != Eigen::Success;
    if (pivoted) {
      ldlt.compute(M);
      if (ldlt.info() != Eigen::Success) break;
    }

    // Predictor (affine scaling), then Mehrotra's corrector with centring
    // σ = (μ_aff/μ)³.
    for (std::size_t e = 0; e < N; ++e) rc[e] = alpha[e] * s[e];
    direction();
    const double tau_aff = max_step();
    double mu_aff = 0.0;
    for (std::size_t e = 0; e < N; ++e) {
      if (pr.U[e / J] == 0.0) continue;
      mu_aff += (alpha[e] + tau_aff * da[e]) * (s[e] + tau_aff * ds[e]);
    }
    mu_aff /= static_cast<double>(live);
    const double sigma = std::pow(mu_aff / mu, 3);
    da_aff = da;
    ds_aff = ds;
    for (std::size_t e = 0; e < N; ++e) rc[e] = alpha[e] * s[e] + da_aff[e] * ds_aff[e] - sigma * mu;
    direction();
    // Stay strictly inside: 0.99 of the way to the boundary.
    const double tau = std::min(1.0, 0.99 * max_step());
    w += tau * dw;
    for (std::size_t i = 0; i < n; ++i) xi[i] += tau * dxi[i];
    for (std::size_t e = 0; e < N; ++e) {
      if (pr.U[e / J] == 0.0) continue;
      alpha[e] += tau * da[e];
      s[e] += tau * ds[e];
    }
  }
  return best;
}

}  // namespace pegasos
