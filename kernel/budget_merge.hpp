// Budget maintenance by merging (Wang, Crammer & Vucetic, "Breaking the curse
// of kernelization: budgeted stochastic gradient descent for large-scale SVM
// training", JMLR 13, 2012, Sec. 4.3), for the RBF kernel: when the budget is
// full, the weakest support vector m (smallest Σ_c |a_mc|) and a partner n are
// replaced by one point on the segment between them,
//
//   z = h x_m + (1 − h) x_n,   a_zc = a_mc k(x_m, z) + a_nc k(x_n, z),
//
// a_z being the projection of a_m φ(x_m) + a_n φ(x_n) on φ(z) per output
// (k(z, z) = 1). With k_mn = k(x_m, x_n) = exp(−γ d²): k(x_m, z) = k_mn^{(1−h)²}
// and k(x_n, z) = k_mn^{h²}, so everything is a function of h and k_mn. The
// weight degradation ‖Σ_c (a_mc φ_m + a_nc φ_n − a_zc φ_z)‖² is
//
//   E(h) = Σ_c (a_mc² + a_nc² + 2 k_mn a_mc a_nc − a_zc(h)²),
//
// minimised over h ∈ [0, 1] by golden-section search (Σ_c a_zc(h)² is
// unimodal in h when the coefficients agree in sign, which the partner rule
// ensures: partners are support vectors of the same class). The partner is the
// one of least E at the screening point h₀ = |a_m| / (|a_m| + |a_n|) (exact as
// k_mn → 1); its h is then refined. Removal (the rule this replaces) loses
// E = Σ_c a_mc² outright; a merge never loses more (h = 0 gives z = x_n,
// a_z = a_n + k_mn a_m, E = (1 − k_mn²) Σ_c a_mc², and best_h keeps the ends
// in view).
#pragma once

#include <cmath>
#include <cstddef>
#include <limits>

namespace pegasos::budget_merge {

// Σ_c a_zc(h)² for the merge of coefficient vectors am, an (K outputs).
inline double merged_mass(const double* am, const double* an, std::size_t K, double kmn, double h) {
  const double log_k = std::log(kmn);
  const double km = std::exp(log_k * (1.0 - h) * (1.0 - h)), kn = std::exp(log_k * h * h);
  double sq = 0.0;
  for (std::size_t c = 0; c < K; ++c) {
    const double az = am[c] * km + an[c] * kn;
    sq += az * az;
  }
  return sq;
}

// E(h): the squared norm lost by the merge at h.
inline double degradation(const double* am, const double* an, std::size_t K, double kmn, double h) {
  double before = 0.0;
  for (std::size_t c = 0; c < K; ++c) before += am[c] * am[c] + an[c] * an[c] + 2.0 * kmn * am[c] * an[c];
  return before - merged_mass(am, an, K, kmn, h);
}

// The h ∈ [0, 1] of least degradation, by golden-section search to `tol`.
inline double best_h(const double* am, const double* an, std::size_t K, double kmn, double tol = 1e-4) {
  if (!(kmn > 0.0)) {  // k_mn underflowed: z can only sit on one of the two
    return merged_mass(am, an, K, kmn, 1.0) >= merged_mass(am, an, K, kmn, 0.0) ? 1.0 : 0.0;
  }
  const double ratio = (std::sqrt(5.0) - 1.0) / 2.0;
  double lo = 0.0, hi = 1.0;
  double x1 = hi - ratio * (hi - lo), x2 = lo + ratio * (hi - lo);
  double f1 = merged_mass(am, an, K, kmn, x1), f2 = merged_mass(am, an, K, kmn, x2);
  while (hi - lo > tol) {
    if (f1 < f2) {
      lo = x1;
      x1 = x2;
      f1 = f2;
      x2 = lo + ratio * (hi - lo);
      f2 = merged_mass(am, an, K, kmn, x2);
    } else {
      hi = x2;
      x2 = x1;
      f2 = f1;
      x1 = hi - ratio * (hi - lo);
      f1 = merged_mass(am, an, K, kmn, x1);
    }
  }
  double h = 0.5 * (lo + hi), best = merged_mass(am, an, K, kmn, h);
  for (const double end : {0.0, 1.0}) {
    const double f = merged_mass(am, an, K, kmn, end);
    if (f > best) {
      best = f;
      h = end;
    }
  }
  return h;
}

// The screening point h₀ = |a_m| / (|a_m| + |a_n|) (masses Σ_c |a_c|).
inline double screening_h(const double* am, const double* an, std::size_t K) {
  double mm = 0.0, mn = 0.0;
  for (std::size_t c = 0; c < K; ++c) {
    mm += std::abs(am[c]);
    mn += std::abs(an[c]);
  }
  return mm + mn > 0.0 ? mm / (mm + mn) : 0.5;
}

}  // namespace pegasos::budget_merge
