// Datasets made of another's rows: a subset of them (cross-validation folds,
// splits, the interior point's screened problem) and dense rows of the same
// examples (kernel approximation).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/dataset.hpp"
#include "core/parallel.hpp"

namespace pegasos {

Dataset subset(const Dataset& data, const std::vector<std::size_t>& rows) {
  Dataset out;
  out.classes = data.classes;
  out.dimension = data.dimension;
  out.source = data.source;
  std::uint64_t nnz = 0;
  for (std::size_t i : rows) nnz += data.row_ptr[i + 1] - data.row_ptr[i];
  out.row_ptr.reserve(rows.size() + 1);
  const bool unit = data.has_unit_values();  // the subset's values are ones too: none stored
  out.indices.reserve(nnz);
  if (!unit) out.values.reserve(nnz);
  out.labels.reserve(rows.size());
  for (std::size_t i : rows) {
    const auto b = static_cast<std::ptrdiff_t>(data.row_ptr[i]), e = static_cast<std::ptrdiff_t>(data.row_ptr[i + 1]);
    out.indices.append(data.indices.begin() + b, data.indices.begin() + e);
    if (!unit) out.values.append(data.values.begin() + b, data.values.begin() + e);
    out.row_ptr.push_back(out.indices.size());
    out.labels.push_back(data.labels[i]);
    if (!data.weights.empty()) out.weights.push_back(data.weights[i]);
  }
  normalize_sample_weights(out);  // the subset's weights, again of mean 1
  if (unit) set_unit_values(out);
  return out;
}

Dataset dense_rows_like(const Dataset& like, std::uint32_t width) {
  const std::size_t n = like.size();
  Dataset out;
  out.labels = like.labels;
  out.weights = like.weights;  // per-example sample weights stay with their rows
  out.classes = like.classes;
  out.source = like.source;
  out.first_row = like.first_row;
  out.row_lines = like.row_lines;
  out.dimension = width;
  out.values.own().assign(n * width, 0.0f);
  std::vector<std::uint32_t>& indices = out.indices.own();
  indices.resize(n * width);
  std::vector<std::uint64_t>& row_ptr = out.row_ptr.own();
  row_ptr.resize(n + 1);
  for (std::size_t i = 0; i <= n; ++i) row_ptr[i] = i * width;
  parallel_for_index(n, [&](std::size_t i) {
    for (std::uint32_t j = 0; j < width; ++j) indices[i * width + j] = j;
  }, kSerialRows);
  return out;
}

}  // namespace pegasos
