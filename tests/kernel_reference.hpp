// Independent pieces for testing kernel solvers: dense copies of the rows
// and the kernel written out from its definition (not objectives/kernels.hpp).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/dataset.hpp"
#include "objectives/kernels.hpp"

namespace pegasos::kernel_reference {

using Dense = std::vector<std::vector<double>>;

inline Dense dense_rows(const Dataset& ds) {
  Dense x(ds.size(), std::vector<double>(ds.dimension, 0.0));
  for (std::size_t i = 0; i < ds.size(); ++i) {
    const RowView r = ds.row(i);
    for (std::uint32_t p = 0; p < r.nnz; ++p) x[i][r.indices[p]] = r.values[p];
  }
  return x;
}

// The kernel written out from its definition (not objectives/kernels.hpp).
inline double kernel_value(const KernelParams& k, const std::vector<double>& a, const std::vector<double>& b) {
  double dot = 0.0, dist = 0.0;
  for (std::size_t j = 0; j < a.size(); ++j) {
    dot += a[j] * b[j];
    dist += (a[j] - b[j]) * (a[j] - b[j]);
  }
  if (k.type == KernelType::kRbf) return std::exp(-k.gamma * dist);
  if (k.type == KernelType::kPolynomial) return std::pow(k.gamma * dot + k.coef0, k.degree);
  return dot;
}

inline double label_sign(const Dataset& ds, std::size_t i) { return ds.labels[i] == 1 ? 1.0 : -1.0; }

}  // namespace pegasos::kernel_reference
