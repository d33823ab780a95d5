// Conjugate-gradient steps on the free face of the binary hinge dual, the
// hand-over binary SDCA (core/sdca_binary.hpp) takes on badly conditioned
// problems between passes of coordinate ascent.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "core/dataset.hpp"

namespace pegasos {

// Conjugate gradient on the free face of the binary dual, between passes of
// coordinate ascent. With the examples at a bound held there, the dual is a
// concave quadratic in the free α_F (0 < α_i < c_i):
//     D(α_F + Δ) − D(α_F) = (gᵀΔ − ½ ΔᵀHΔ)/n,  g_i = 1 − y_i (w·x_i + o_i),
//     H_ij = y_i y_j x_i·x_j / (λn)  (x with the constant feature),
// and CG maximises it from Δ = 0, each iterate higher than the last, until
// it converges or a step would take a free α past a bound: that step stops
// at the bound (still higher: the quadratic increases all along a CG step)
// and CG ends there (restarting on the smaller face measured worse).
// Coordinate ascent needs thousands of passes where the free examples are
// about as many as the features they use, nearly dependent (dense raw,
// unscaled features): H_FF is then ill-conditioned, and CG takes it in about
// |F| iterations. Where the free rows use many more features than there are
// of them (text), H_FF is well conditioned and coordinate ascent does fine:
// then (|F| < kMinFreePerFeature × features used) CG is not run.
// Each iteration reads the free rows twice (H p = Y X (Xᵀ Y p) / (λn)); the
// rows read (also for the features used, g and applying Δ) are counted
// against `budget`. `scratch` (dim zeros, left zero) holds Xᵀ Y p.
struct FreeFaceCg {
  std::uint64_t rows_read = 0;
  bool well_conditioned = false;  // not run: too few free examples per feature used
};
inline constexpr double kMinFreePerFeature = 0.25;

namespace free_face_detail {

inline double dot(const RowView& x, const double* v, double start) {
  for (std::uint32_t j = 0; j < x.nnz; ++j) start += static_cast<double>(x.values[j]) * v[x.indices[j]];
  return start;
}

// The number of features the rows F use (the constant one included), marked
// in scratch and cleared again.
inline std::size_t features_used(const Dataset& data, const std::vector<std::uint32_t>& F, double B,
                                 std::vector<double>& scratch) {
  std::size_t features = B != 0.0 ? 1 : 0;
  for (const std::uint32_t i : F) {
    const RowView x = data.row(i);
    for (std::uint32_t j = 0; j < x.nnz; ++j) {
      if (scratch[x.indices[j]] == 0.0) {
        scratch[x.indices[j]] = 1.0;
        ++features;
      }
    }
  }
  for (const std::uint32_t i : F) {
    const RowView x = data.row(i);
    for (std::uint32_t j = 0; j < x.nnz; ++j) scratch[x.indices[j]] = 0.0;
  }
  return features;
}

// q = H p on the face F: u = Σ_k p_k y_k x_k / (λn) into scratch (cleared
// again), then q_k = y_k x_k·u. Returns pᵀq.
inline double face_product(const Dataset& data, const std::vector<std::uint32_t>& F, const std::vector<double>& y,
                           double B, double lambda_n, const std::vector<double>& p, std::vector<double>& q,
                           std::vector<double>& scratch) {
  const std::size_t f = F.size();
  double u_bias = 0.0;
  for (std::size_t k = 0; k < f; ++k) {
    const RowView x = data.row(F[k]);
    const double coef = p[k] * y[k] / lambda_n;
    for (std::uint32_t j = 0; j < x.nnz; ++j) scratch[x.indices[j]] += coef * x.values[j];
    u_bias += coef * B;
  }
  double pq = 0.0;
  for (std::size_t k = 0; k < f; ++k) {
    q[k] = y[k] * dot(data.row(F[k]), scratch.data(), u_bias * B);
    pq += p[k] * q[k];
  }
  for (const std::uint32_t i : F) {
    const RowView x = data.row(i);
    for (std::uint32_t j = 0; j < x.nnz; ++j) scratch[x.indices[j]] = 0.0;
  }
  return pq;
}

}  // namespace free_face_detail

template <class Weights>
FreeFaceCg free_face_cg(const Dataset& data, double B, double lambda_n, const std::vector<double>& signed_cost,
                        const std::vector<double>& offset, const std::vector<double>& sq,
                        std::span<const std::uint32_t> candidates, std::uint64_t budget, std::vector<double>& alpha,
                        Weights& w, double& wb, double& linear, double& sq_norm, std::vector<double>& scratch) {
  namespace fd = free_face_detail;
  FreeFaceCg out;
  std::vector<std::uint32_t> F;
  for (const std::uint32_t i : candidates) {
    if (alpha[i] > 0.0 && alpha[i] < std::abs(signed_cost[i]) && sq[i] > 0.0) F.push_back(i);
  }
  const std::size_t f = F.size();
  // The features used (f rows), the gradient (f), one iteration (2f), applying Δ (2f).
  if (f < 2 || 6 * f > budget) return out;
  const std::size_t features = fd::features_used(data, F, B, scratch);
  out.rows_read = f;
  if (static_cast<double>(f) < kMinFreePerFeature * static_cast<double>(features)) {
    out.well_conditioned = true;
    return out;
  }
  std::vector<double> y(f), r(f), q(f), delta(f, 0.0);
  for (std::size_t k = 0; k < f; ++k) {
    y[k] = signed_cost[F[k]] >= 0 ? 1.0 : -1.0;
    r[k] = 1.0 - y[k] * (fd::dot(data.row(F[k]), w.data(), wb * B) + offset[F[k]]);
  }
  out.rows_read += f;
  std::vector<double> p = r;
  double rr = 0.0;
  for (const double v : r) rr += v * v;
  const double rr_start = rr;
  for (std::size_t it = 0; it < 2 * f && rr > 1e-24 * rr_start && out.rows_read + 4 * f <= budget; ++it) {
    const double pq = fd::face_product(data, F, y, B, lambda_n, p, q, scratch);
    out.rows_read += 2 * f;
    if (!(pq > 0.0)) break;
    const double step = rr / pq;
    double tau = step;  // the longest step that keeps every α_F within [0, c]
    for (std::size_t k = 0; k < f; ++k) {
      const double a = alpha[F[k]] + delta[k];
      if (p[k] > 0.0) tau = std::min(tau, (std::abs(signed_cost[F[k]]) - a) / p[k]);
      if (p[k] < 0.0) tau = std::min(tau, -a / p[k]);
    }
    tau = std::max(tau, 0.0);
    for (std::size_t k = 0; k < f; ++k) delta[k] += tau * p[k];
    if (tau < step) break;  // at a bound
    double rr_next = 0.0;
    for (std::size_t k = 0; k < f; ++k) {
      r[k] -= step * q[k];
      rr_next += r[k] * r[k];
    }
    const double beta = rr_next / rr;
    rr = rr_next;
    for (std::size_t k = 0; k < f; ++k) p[k] = r[k] + beta * p[k];
  }
  // Apply Δ row by row, as coordinate steps would (w and the running sums).
  for (std::size_t k = 0; k < f; ++k) {
    const std::uint32_t i = F[k];
    const double a = std::clamp(alpha[i] + delta[k], 0.0, std::abs(signed_cost[i]));
    const double d = a - alpha[i];
    if (d == 0.0) continue;
    const RowView x = data.row(i);
    const double score = fd::dot(x, w.data(), wb * B);
    alpha[i] = a;
    linear += d * (1.0 - y[k] * offset[i]);
    const double st = d * y[k] / lambda_n;
    for (std::uint32_t j = 0; j < x.nnz; ++j) w[x.indices[j]] += st * x.values[j];
    wb += st * B;
    sq_norm += 2.0 * st * score + st * st * sq[i];
  }
  out.rows_read += 2 * f;
  return out;
}

}  // namespace pegasos
