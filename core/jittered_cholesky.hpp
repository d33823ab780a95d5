// The Cholesky factor of a kernel matrix made positive definite by a small
// shift: L Lᵀ = K + εI with ε = relative · (a bound on λ_max, the largest
// absolute row sum: Gershgorin), grown 10× up to `tries` times while the
// factorisation fails. K's rounding makes directions with eigenvalues below
// its relative error noise, which the shift keeps 1/√λ from amplifying. Used
// by the Nyström map (core/feature_map.cpp, float kernel values) and the
// budget refit (drivers/budget_refit.cpp, double kernel values).
#pragma once

#include <algorithm>
#include <stdexcept>
#include <string>

#include <Eigen/Cholesky>
#include <Eigen/Core>

namespace pegasos {

// `what` names the matrix in the error thrown when every shift fails.
inline Eigen::MatrixXd jittered_cholesky(Eigen::MatrixXd sym, double relative, int tries, const std::string& what) {
  const double bound = std::max(sym.cwiseAbs().rowwise().sum().maxCoeff(), 1e-300);
  double eps = relative * bound;
  double added = 0.0;  // the shift sym's diagonal holds
  Eigen::LLT<Eigen::MatrixXd> llt;
  for (int attempt = 0;; ++attempt) {
    sym.diagonal().array() += eps - added;
    added = eps;
    llt.compute(sym);
    if (llt.info() == Eigen::Success) break;
    if (attempt == tries) throw std::runtime_error(what + " + εI is not positive definite even at ε = " + std::to_string(eps));
    eps *= 10;
  }
  return llt.matrixL();
}

}  // namespace pegasos
