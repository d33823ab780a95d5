#include "kernel/kernel_model.hpp"

#include <stdexcept>

namespace pegasos {

void KernelModel::prepare() {
  const std::size_t m = num_support_vectors();
  sv_sq_norms.assign(m, 0.0);
  if (kernel.type != KernelType::kRbf) return;
  for (std::size_t s = 0; s < m; ++s) sv_sq_norms[s] = row_squared_norm(support_vector(s));
}

void KernelModel::raw_scores(const RowView& x, double* out) const {
  const std::size_t m = num_support_vectors();
  const std::size_t K = columns();
  if (sv_sq_norms.size() != m) throw std::logic_error("KernelModel::prepare() was not called");
  KernelQuery q{x, nullptr, kernel.type == KernelType::kRbf ? row_squared_norm(x, dimension) : 0.0};
  // Scatter x when zeroing the dense array costs no more than the evaluations.
  std::vector<double> dense;
  if (dimension <= kDenseQueryMaxDimension && dimension <= sv_values.size()) {
    dense.assign(dimension, 0.0);
    for (std::uint32_t p = 0; p < x.nnz; ++p) {
      if (x.indices[p] < dimension) dense[x.indices[p]] = x.values[p];
    }
    q.dense = dense.data();
  }
  expansion_scores(kernel, m, [this](std::size_t s) { return support_vector(s); }, sv_sq_norms.data(),
                   sv_values.size(), coefficients.data(), K, std::span<const KernelQuery>(&q, 1), out);
}

template <class RowOf>
void KernelModel::raw_scores_of(std::size_t count, const RowOf& row, double* out) const {
  const std::size_t m = num_support_vectors();
  const std::size_t K = columns();
  if (sv_sq_norms.size() != m) throw std::logic_error("KernelModel::prepare() was not called");
  // Rows per chunk: each support vector, once loaded, serves this many rows.
  constexpr std::size_t kRowsPerChunk = 32;
  const bool scatter = dimension <= kDenseQueryMaxDimension && dimension <= sv_values.size();
  const bool rbf = kernel.type == KernelType::kRbf;
  const std::size_t chunks = (count + kRowsPerChunk - 1) / kRowsPerChunk;
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, chunks, 1), [&](const tbb::blocked_range<std::size_t>& r) {
    std::vector<double> dense(scatter ? kRowsPerChunk * static_cast<std::size_t>(dimension) : 0, 0.0);
    std::vector<KernelQuery> queries;
    for (std::size_t c = r.begin(); c != r.end(); ++c) {
      const std::size_t first = c * kRowsPerChunk, last = std::min(count, first + kRowsPerChunk);
      queries.clear();
      for (std::size_t i = first; i < last; ++i) {
        const RowView x = row(i);
        KernelQuery q{x, nullptr, rbf ? row_squared_norm(x, dimension) : 0.0};
        if (scatter) {
          double* d = &dense[(i - first) * dimension];
          for (std::uint32_t p = 0; p < x.nnz; ++p) {
            if (x.indices[p] < dimension) d[x.indices[p]] = x.values[p];
          }
          q.dense = d;
        }
        queries.push_back(q);
      }
      expansion_scores(kernel, m, [this](std::size_t s) { return support_vector(s); }, sv_sq_norms.data(),
                       sv_values.size(), coefficients.data(), K, std::span<const KernelQuery>(queries), &out[first * K]);
      if (scatter) {
        for (std::size_t i = first; i < last; ++i) {
          const RowView& x = queries[i - first].row;
          double* d = &dense[(i - first) * dimension];
          for (std::uint32_t p = 0; p < x.nnz; ++p) {
            if (x.indices[p] < dimension) d[x.indices[p]] = 0.0;
          }
        }
      }
    }
  });
}

std::vector<double> KernelModel::decision_values(const Dataset& data) const {
  const std::size_t K = columns();
  std::vector<double> out(data.size() * K);
  raw_scores_of(data.size(), [&](std::size_t i) { return data.row(i); }, out.data());
  const double scale = decision_scale();
  for (double& v : out) v *= scale;
  if (!intercept.empty()) {
    for (std::size_t i = 0; i < out.size(); ++i) out[i] += intercept[i % K];
  }
  return out;
}

std::vector<double> KernelModel::scores(const Dataset& data) const {
  std::vector<double> values = decision_values(data);
  if (!one_vs_one) return values;
  const std::size_t K = static_cast<std::size_t>(outputs), P = columns();
  std::vector<double> out(data.size() * K);
  for (std::size_t i = 0; i < data.size(); ++i) ovo_class_scores(&values[i * P], K, &out[i * K]);
  return out;
}

void KernelModel::scores(const RowView& x, double* out) const {
  const std::size_t P = columns();
  std::vector<double> pairs(one_vs_one ? P : 0);
  double* f = one_vs_one ? pairs.data() : out;
  raw_scores(x, f);
  const double scale = decision_scale();
  for (std::size_t c = 0; c < P; ++c) f[c] *= scale;
  if (!intercept.empty()) {
    for (std::size_t c = 0; c < P; ++c) f[c] += intercept[c];
  }
  if (one_vs_one) ovo_class_scores(f, static_cast<std::size_t>(outputs), out);
}

double KernelModel::regularizer() const {
  // ‖w_c‖² = scale² Σ_s a_sc (Σ_s' a_s'c k(sv_s', sv_s)): the raw scores of the
  // support vectors themselves, summed in support-vector order.
  const std::size_t m = num_support_vectors();
  const std::size_t K = columns();
  std::vector<double> raw(m * K);
  raw_scores_of(m, [this](std::size_t s) { return support_vector(s); }, raw.data());
  double sq = 0.0;
  for (std::size_t i = 0; i < m * K; ++i) sq += coefficients[i] * raw[i];
  const double scale = decision_scale();
  double b2 = 0.0;
  if (intercept_regularized) {
    for (const double b : intercept) b2 += b * b;
  }
  return lambda / 2 * (scale * scale * sq + b2);
}

}  // namespace pegasos
