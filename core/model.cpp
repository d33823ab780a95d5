#include "core/model.hpp"

#include <algorithm>
#include <cstdint>

namespace pegasos {

namespace {

// out[k] += Σ_j v_j·w_k(f_j) over the row's features below `dimension`, in
// the row's order; row(f) gives feature f's K weights, or null for a feature
// without any (its products v·0 are added all the same, as a dense zero row
// gives them: they turn a −0 sum into +0). The dense and the compact form
// share it, so their scores are bit-identical (in the default build; with
// PEGASOS_NATIVE the compiler may still contract the two instantiations'
// multiply-adds differently).
template <class Row>
void add_row_scores(const RowView& x, std::uint32_t dimension, std::size_t K, double* out, Row&& row) {
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

}  // namespace

void Model::scores(const RowView& x, double* out) const {
  const std::size_t K = static_cast<std::size_t>(outputs);
  for (std::size_t k = 0; k < K; ++k) out[k] = bias[k];
  if (weight_rows.empty()) {
    add_row_scores(x, dimension, K, out, [&](std::uint32_t f) { return &weights[f * K]; });
    return;
  }
  // The compact form: feature f's row by binary search in weight_rows.
  add_row_scores(x, dimension, K, out, [&](std::uint32_t f) -> const double* {
    const auto it = std::lower_bound(weight_rows.begin(), weight_rows.end(), f);
    return it != weight_rows.end() && *it == f ? &weights[static_cast<std::size_t>(it - weight_rows.begin()) * K] : nullptr;
  });
}

double Model::weight_squared_norm() const {
  double sq = 0.0;
  for (double w : weights) sq += w * w;
  return sq;
}

}  // namespace pegasos
