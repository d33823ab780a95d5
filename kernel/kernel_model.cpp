#include "kernel/kernel_model.hpp"

#include <stdexcept>

namespace pegasos {

void KernelModel::prepare() {
  const std::size_t m = num_support_vectors();
  if (one_vs_one && (sv_class.size() != m || coefficients.size() != m * coefficient_width())) {
    throw std::logic_error("kernel model: one-vs-one support vector classes or coefficients do not match");
  }
  ovo_pair.clear();
  if (one_vs_one) {
    const auto K = static_cast<std::size_t>(outputs);
    ovo_pair.resize(K * (K - 1));
    for (std::size_t c = 0; c < K; ++c) {
      for (std::size_t j = 0; j < K; ++j) {
        if (j != c) ovo_pair[c * (K - 1) + ovo_slot(c, j)] = ovo_pair_of(c, j, K);
      }
    }
  }
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
  if (!one_vs_one) {
    expansion_scores(kernel, m, [this](std::size_t s) { return support_vector(s); }, sv_sq_norms.data(),
                     sv_values.size(), coefficients.data(), K, std::span<const KernelQuery>(&q, 1), out);
    return;
  }
  std::vector<double> kv(m);
  kernel_values(m, std::span<const KernelQuery>(&q, 1), kv.data());
  ovo_combine(kv.data(), out);
}

// kv[q·m + s] = k(sv_s, query_q); parallel over blocks of support vectors
// when there is enough work (each value is computed alone: the same bits).
void KernelModel::kernel_values(std::size_t m, std::span<const KernelQuery> queries, double* kv) const {
  const std::size_t Q = queries.size(), blocks = (m + kExpansionBlock - 1) / kExpansionBlock;
  auto run_block = [&](std::size_t b) {
    const std::size_t end = std::min(m, (b + 1) * kExpansionBlock);
    for (std::size_t s = b * kExpansionBlock; s < end; ++s) {
      const RowView x = support_vector(s);
      for (std::size_t q = 0; q < Q; ++q) kv[q * m + s] = query_kernel(kernel, x, sv_sq_norms[s], queries[q]);
    }
  };
  if (blocks > 1 && (m * Q > kParallelKernelEvaluations || sv_values.size() * Q > kParallelMultiplyAdds)) {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, blocks, 1), [&](const tbb::blocked_range<std::size_t>& r) {
      for (std::size_t b = r.begin(); b != r.end(); ++b) run_block(b);
    });
  } else {
    for (std::size_t b = 0; b < blocks; ++b) run_block(b);
  }
}

void KernelModel::ovo_combine(const double* kv, double* out) const {
  const std::size_t W = coefficient_width(), m = num_support_vectors();
  std::fill(out, out + columns(), 0.0);
  for (std::size_t s = 0; s < m; ++s) {
    const double* a = &coefficients[s * W];
    const std::size_t* pairs = &ovo_pair[sv_class[s] * W];
    for (std::size_t t = 0; t < W; ++t) out[pairs[t]] += a[t] * kv[s];
  }
}

template <class RowOf, class Fn>
void KernelModel::for_query_chunks(std::size_t count, const RowOf& row, const Fn& fn) const {
  if (sv_sq_norms.size() != num_support_vectors()) throw std::logic_error("KernelModel::prepare() was not called");
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
      fn(first, std::span<const KernelQuery>(queries));
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

template <class RowOf>
void KernelModel::raw_scores_of(std::size_t count, const RowOf& row, double* out) const {
  const std::size_t m = num_support_vectors();
  const std::size_t K = columns();
  for_query_chunks(count, row, [&](std::size_t first, std::span<const KernelQuery> queries) {
    if (one_vs_one) {
      std::vector<double> kv(queries.size() * m);
      kernel_values(m, queries, kv.data());
      for (std::size_t q = 0; q < queries.size(); ++q) ovo_combine(&kv[q * m], &out[(first + q) * K]);
    } else {
      expansion_scores(kernel, m, [this](std::size_t s) { return support_vector(s); }, sv_sq_norms.data(),
                       sv_values.size(), coefficients.data(), K, queries, &out[first * K]);
    }
  });
}

void KernelModel::kernel_rows(const Dataset& data, std::size_t begin, std::size_t end, double* out) const {
  const std::size_t m = num_support_vectors();
  for_query_chunks(end - begin, [&](std::size_t i) { return data.row(begin + i); },
                   [&](std::size_t first, std::span<const KernelQuery> queries) {
                     kernel_values(m, queries, &out[first * m]);
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
  // One-vs-one: a support vector's K − 1 coefficients meet its pairs' sums.
  const std::size_t m = num_support_vectors();
  const std::size_t K = columns(), W = coefficient_width();
  std::vector<double> raw(m * K);
  raw_scores_of(m, [this](std::size_t s) { return support_vector(s); }, raw.data());
  double sq = 0.0;
  for (std::size_t s = 0; s < m; ++s) {
    for (std::size_t t = 0; t < W; ++t) {
      const std::size_t col = one_vs_one ? ovo_pair[sv_class[s] * W + t] : t;
      sq += coefficients[s * W + t] * raw[s * K + col];
    }
  }
  const double scale = decision_scale();
  double b2 = 0.0;
  if (intercept_regularized) {
    for (const double b : intercept) b2 += b * b;
  }
  return lambda / 2 * (scale * scale * sq + b2);
}

}  // namespace pegasos
