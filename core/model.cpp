#include "core/model.hpp"

#include <cstdint>

namespace pegasos {

void Model::scores(const RowView& x, double* out) const {
  const std::size_t K = static_cast<std::size_t>(outputs);
  for (std::size_t k = 0; k < K; ++k) out[k] = bias[k];
  if (K == 1) {
    double s = 0.0;
    for (std::uint32_t j = 0; j < x.nnz; ++j) {
      if (x.indices[j] < dimension) s += static_cast<double>(x.values[j]) * weights[x.indices[j]];
    }
    out[0] += s;
    return;
  }
  for (std::uint32_t j = 0; j < x.nnz; ++j) {
    const std::uint32_t f = x.indices[j];
    if (f >= dimension) continue;
    const double v = x.values[j];
    for (std::size_t k = 0; k < K; ++k) out[k] += v * weights[f * K + k];
  }
}

double Model::weight_squared_norm() const {
  double sq = 0.0;
  for (double w : weights) sq += w * w;
  return sq;
}

}  // namespace pegasos
