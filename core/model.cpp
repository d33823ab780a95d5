#include "core/model.hpp"

#include <algorithm>
#include <cstdint>

namespace pegasos {

void Model::scores(const RowView& x, double* out) const {
  const std::size_t K = static_cast<std::size_t>(outputs);
  for (std::size_t k = 0; k < K; ++k) out[k] = bias[k];
  if (!weight_rows.empty()) {
    compact_scores(x, out);
    return;
  }
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

// scores() on the compact form, with the dense form's arithmetic: the same
// products added in the same order, and for a feature without weights the
// dense form's v·0 (it turns a −0 sum into +0), so scores are bit-identical
// (in the default build; with PEGASOS_NATIVE the compiler may fuse the
// multiply-adds of one loop into FMAs and not the other's).
void Model::compact_scores(const RowView& x, double* out) const {
  const std::size_t K = static_cast<std::size_t>(outputs);
  const auto row = [&](std::uint32_t f) -> const double* {
    const auto it = std::lower_bound(weight_rows.begin(), weight_rows.end(), f);
    return it != weight_rows.end() && *it == f ? &weights[static_cast<std::size_t>(it - weight_rows.begin()) * K] : nullptr;
  };
  constexpr double kZero = 0.0;
  if (K == 1) {
    double s = 0.0;
    for (std::uint32_t j = 0; j < x.nnz; ++j) {
      if (x.indices[j] >= dimension) continue;
      const double* w = row(x.indices[j]);
      s += static_cast<double>(x.values[j]) * (w ? *w : kZero);
    }
    out[0] += s;
    return;
  }
  for (std::uint32_t j = 0; j < x.nnz; ++j) {
    const std::uint32_t f = x.indices[j];
    if (f >= dimension) continue;
    const double v = x.values[j];
    const double* w = row(f);
    for (std::size_t k = 0; k < K; ++k) out[k] += v * (w ? w[k] : kZero);
  }
}

double Model::weight_squared_norm() const {
  double sq = 0.0;
  for (double w : weights) sq += w * w;
  return sq;
}

}  // namespace pegasos
