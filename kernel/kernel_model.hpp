// A trained kernel model: f_c(x) = 1/(λ T k) · Σ_s a_sc · k(sv_s, x), where the
// support vectors sv_s are the training rows with a non-zero count and
// a_sc = α_sc y_sc their per-output coefficients (see objectives/kernel_hinge.hpp),
// plus an intercept b_c when trained with `bias: feature` (the kernel + 1
// trick: b_c is the weight of a regularised constant feature, so λ/2 b_c² is
// part of the regulariser), or with `bias: unregularized` (kernel SDCA,
// LIBSVM's form: b_c outside the regulariser; the model's settings say
// which); without one (`bias: none`, older files) b_c = 0. Binary: one output, a positive score means classes[1]; multiclass
// (one-vs-all): K outputs, the prediction is the argmax — the same conventions
// as pegasos::Model, so predict/eval treat both kinds alike.
//
// File format (format_version 1):
//   { "format_version": 1, "kind": "kernel", "objective": "kernel_hinge",
//     "classes": [...], "dimension": d, "outputs": K,
//     "kernel": {"type": "rbf", "gamma": γ, "degree": p, "coef0": c₀},
//     "lambda": λ, "iterations": T, "batch_size": k,
//     "support_vectors": ["3:0.25 17:1 ...", ...],   LIBSVM-style rows, 1-based indices,
//                                                    float32 values in shortest round-trip form
//     "coefficients": [[a_1c, ..., a_mc] for each output c],
//     "intercept": [b_1, ..., b_K],                  only when trained with one
//     "intercept_regularized": false,                only for `bias: unregularized`
//     "multiclass": "ovo",                            only for one-vs-one: the intercept is then
//                                                    per pair of classes, the coefficients K − 1
//                                                    arrays (slot t of each support vector, see
//                                                    KernelModel::sv_class) and
//     "support_vector_classes": [c_1, ..., c_m],      each support vector's class (index in classes)
//     "settings": {...}, "data": {...}, "training": {...} }
// Writing then reading a model is exact (values are float32 written with
// std::to_chars, coefficients and parameters doubles written round-trip).
//
// Evaluating the expansion. Σ_s a_sc k(sv_s, x) is summed in fixed blocks of
// kExpansionBlock support vectors; the blocks are evaluated in parallel (TBB)
// when there is enough work and their partial sums added in block order, so
// the result does not depend on the number of threads. The trainer computes
// the same kernel values (objectives/kernels.hpp: every dot-product variant
// gives the same bits) and sums them in the same block order
// (combine_expansion), so a model's decision values are bit-for-bit those the
// training loop would compute.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "core/dataset.hpp"
#include "core/model_header.hpp"
#include "core/objective_table.hpp"
#include "objectives/kernels.hpp"

namespace pegasos {

// Support vectors per block of the expansion sum (fixed: it defines the
// summation order, so it must not depend on the machine).
inline constexpr std::size_t kExpansionBlock = 128;
// Evaluate blocks in parallel above this many kernel evaluations, or this
// many multiply-adds of the dot products (≈ 30 µs), per call; below both the
// TBB overhead (a few µs) outweighs the work. Either way the result is the same.
inline constexpr std::size_t kParallelKernelEvaluations = 2048;
inline constexpr std::uint64_t kParallelMultiplyAdds = std::uint64_t{1} << 16;
// Scatter a query into a dense array when the dimension is at most this
// (32 MB of doubles); beyond it the merge-join is used. Same bits either way.
inline constexpr std::uint32_t kDenseQueryMaxDimension = std::uint32_t{1} << 22;

// One query row of an expansion evaluation.
struct KernelQuery {
  RowView row;                     // features at or beyond the dimension are ignored
  const double* dense = nullptr;   // row scattered into dense[0..dimension), or nullptr (merge-join)
  double squared_norm = 0.0;       // ‖row‖² over features < dimension (read by the RBF only)
};

// k(x, query) for a support row x with squared norm sq_x.
// x's features must be below the query's dense length (true of support
// vectors and training rows).
inline double query_kernel(const KernelParams& kernel, const RowView& x, double sq_x, const KernelQuery& query) {
  const double dot = query.dense ? sparse_dense_dot(x, query.dense) : sparse_dot(x, query.row);
  return kernel_from_dot(kernel, dot, sq_x, query.squared_norm);
}

// raw[c] = Σ_{s < m} coef[s·K + c] · kv[s] from precomputed kernel values
// kv[s] = k(sv(s), query), in the canonical block order: the same bits as
// expansion_scores for that query. Parallel over blocks when m·K is large.
inline void combine_expansion(const double* coef, std::size_t K, std::size_t m, const double* kv, double* raw) {
  std::fill(raw, raw + K, 0.0);
  if (m == 0) return;
  const std::size_t blocks = (m + kExpansionBlock - 1) / kExpansionBlock;
  std::vector<double> partial(blocks * K, 0.0);
  auto run_block = [&](std::size_t b) {
    double* o = &partial[b * K];
    const std::size_t end = std::min(m, (b + 1) * kExpansionBlock);
    for (std::size_t s = b * kExpansionBlock; s < end; ++s) {
      const double* a = coef + s * K;
      for (std::size_t c = 0; c < K; ++c) o[c] += a[c] * kv[s];
    }
  };
  if (blocks > 1 && m * K > kParallelMultiplyAdds) {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, blocks, 1), [&](const tbb::blocked_range<std::size_t>& r) {
      for (std::size_t b = r.begin(); b != r.end(); ++b) run_block(b);
    });
  } else {
    for (std::size_t b = 0; b < blocks; ++b) run_block(b);
  }
  for (std::size_t b = 0; b < blocks; ++b) {
    for (std::size_t c = 0; c < K; ++c) raw[c] += partial[b * K + c];
  }
}

// raw[q·K + c] = Σ_{s < m} coef[s·K + c] · k(sv(s), query_q) for every query,
// in the canonical block order (see above). sv(s) returns a RowView, sv_sq[s]
// its squared norm; sv_nnz = Σ_s nnz(sv(s)) only decides whether to go
// parallel. Cost O(Q · sv_nnz) (dense queries) or O(Q · (sv_nnz + m · nnz(query)))
// (merge-join), parallel over blocks of support vectors.
template <class SupportRow>
void expansion_scores(const KernelParams& kernel, std::size_t m, const SupportRow& sv,
                      const double* sv_sq, std::uint64_t sv_nnz, const double* coef, std::size_t K,
                      std::span<const KernelQuery> queries, double* raw) {
  const std::size_t Q = queries.size();
  std::fill(raw, raw + Q * K, 0.0);
  if (m == 0 || Q == 0) return;
  const std::size_t blocks = (m + kExpansionBlock - 1) / kExpansionBlock;
  std::vector<double> partial(blocks * Q * K, 0.0);
  auto run_block = [&](std::size_t b) {
    double* out = &partial[b * Q * K];
    const std::size_t end = std::min(m, (b + 1) * kExpansionBlock);
    for (std::size_t s = b * kExpansionBlock; s < end; ++s) {
      const RowView x = sv(s);
      const double* a = coef + s * K;
      for (std::size_t q = 0; q < Q; ++q) {
        const double kv = query_kernel(kernel, x, sv_sq[s], queries[q]);
        double* o = out + q * K;
        for (std::size_t c = 0; c < K; ++c) o[c] += a[c] * kv;
      }
    }
  };
  if (blocks > 1 && (m * Q > kParallelKernelEvaluations || sv_nnz * Q > kParallelMultiplyAdds)) {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, blocks, 1), [&](const tbb::blocked_range<std::size_t>& r) {
      for (std::size_t b = r.begin(); b != r.end(); ++b) run_block(b);
    });
  } else {
    for (std::size_t b = 0; b < blocks; ++b) run_block(b);
  }
  for (std::size_t b = 0; b < blocks; ++b) {
    const double* p = &partial[b * Q * K];
    for (std::size_t i = 0; i < Q * K; ++i) raw[i] += p[i];
  }
}

struct KernelModel : ModelHeader {
  KernelModel() : ModelHeader(std::string(objective_row(ObjectiveId::kKernelHinge).name)) {}

  KernelParams kernel;             // resolved: gamma > 0 for polynomial / rbf
  double lambda = 1e-4;
  std::uint64_t iterations = 1;    // T
  int batch_size = 1;              // k
  // Support vectors as CSR rows (0-based feature indices < dimension) and
  // coefficients a_sc = α_sc y_sc, row-major: coefficients[s·columns() + c].
  std::vector<std::uint64_t> sv_ptr{0};
  std::vector<std::uint32_t> sv_indices;
  std::vector<float> sv_values;
  std::vector<double> coefficients;
  // b_c per output, added to the scaled expansion; empty = none (all zero).
  std::vector<double> intercept;
  // false: trained with `bias: unregularized` (kernel SDCA), so λ/2 b_c² is
  // not part of the regulariser.
  bool intercept_regularized = true;
  // One-vs-one (`multiclass: ovo`, LIBSVM's scheme; outputs = K ≥ 3 classes):
  // one binary expansion per pair of classes a < b, in the order (0,1),
  // (0,2), …, (0,K−1), (1,2), …, its decision value > 0 a vote for b.
  // coefficients and intercept then have columns() = K(K−1)/2 entries per
  // support vector / in all; scores() turns the pairs' votes into K class
  // scores (ovo_class_scores).
  bool one_vs_one = false;
  std::size_t columns() const {
    const auto K = static_cast<std::size_t>(outputs);
    return one_vs_one ? K * (K - 1) / 2 : K;
  }
  // One-vs-one stores LIBSVM's layout: a support vector of class c takes part
  // only in the K − 1 pairs with c, so it has K − 1 coefficients
  // (coefficients[s·coefficient_width() + t], t = ovo_slot(c, j) for the
  // other class j) and sv_class[s] = c. Otherwise sv_class is empty and each
  // support vector has one coefficient per output.
  std::vector<std::uint32_t> sv_class;
  std::size_t coefficient_width() const {
    return one_vs_one ? static_cast<std::size_t>(outputs) - 1 : columns();
  }
  // settings (the training configuration), data (reader settings: format,
  // label_column, normalize) and training (iterations, support vectors,
  // evictions, kernel evaluations, objective, regularizer).
  std::string settings = "{}";
  std::string data = "{}";
  TrainingSummary training;

  std::size_t num_support_vectors() const { return sv_ptr.size() - 1; }
  RowView support_vector(std::size_t s) const {
    const std::uint64_t begin = sv_ptr[s];
    return RowView{sv_values.data() + begin, sv_indices.data() + begin,
                   static_cast<std::uint32_t>(sv_ptr[s + 1] - begin), -1, s};
  }
  // 1/(λ T k): turns the integer-count expansion into ⟨w, φ(x)⟩.
  double decision_scale() const {
    return 1.0 / (lambda * static_cast<double>(iterations) * static_cast<double>(batch_size));
  }

  // Recompute derived data (squared norms of the support vectors). Required
  // after changing the support vectors by hand; training and loading call it.
  void prepare();
  // Unscaled Σ_s a_sc k(sv_s, x) for every column (features of x at or beyond
  // `dimension` are ignored). Cost O(m · nnz); parallel for large m.
  void raw_scores(const RowView& x, double* out) const;
  // out[c] = f_c(x) = decision_scale() · raw + b_c (one-vs-one: the class
  // scores of the pairs' decision values, ovo_class_scores).
  void scores(const RowView& x, double* out) const;
  // decision_scale() · raw + b_j for every column j of every row of `data`
  // (size() × columns(), row-major): the pairs' own values for one-vs-one.
  std::vector<double> decision_values(const Dataset& data) const;
  // Scores of every row of `data` (size() × outputs, row-major), the same
  // bits as scores(row) row by row but faster: chunks of rows share each
  // block of support vectors while it is in cache; parallel over chunks.
  std::vector<double> scores(const Dataset& data) const;
  // λ/2 Σ_c (‖w_c‖² + b_c²) by the O(m²) Gram sum (the training summary stores
  // it); without b_c² when the intercept is not regularised.
  double regularizer() const;
  // out[(i − begin)·m + s] = k(sv_s, row i) for rows [begin, end) of `data`, in
  // double: the kernel values the model's scores are made of (the budget
  // refit's Nyström map, drivers/budget_refit.hpp). Parallel; the same bits
  // for any thread count.
  void kernel_rows(const Dataset& data, std::size_t begin, std::size_t end, double* out) const;

  std::vector<double> sv_sq_norms;  // derived, see prepare()
  // One-vs-one, derived (prepare()): ovo_pair[c·(K−1) + t] is the pair of
  // slot t of a class-c support vector.
  std::vector<std::size_t> ovo_pair;

 private:
  // Unscaled scores of rows row(0..count) into out (count × columns()).
  template <class RowOf>
  void raw_scores_of(std::size_t count, const RowOf& row, double* out) const;
  // Rows row(0..count) as queries, in chunks (in parallel): fn(first, queries)
  // for each chunk of rows first, first + 1, ...
  template <class RowOf, class Fn>
  void for_query_chunks(std::size_t count, const RowOf& row, const Fn& fn) const;
  // One-vs-one: the pairs' unscaled sums from the kernel values kv[s] of one
  // query against every support vector, in support-vector order.
  void ovo_combine(const double* kv, double* out) const;
  // kv[q·m + s] = k(sv_s, query_q) for the m support vectors.
  void kernel_values(std::size_t m, std::span<const KernelQuery> queries, double* kv) const;
};

// One-vs-one: the index of the pair of classes a < b among K (pairs in the
// order (0,1), (0,2), …, (0,K−1), (1,2), …), and the slot of the pair (c, j)
// among a class-c support vector's K − 1 coefficients (LIBSVM's order).
inline std::size_t ovo_pair_index(std::size_t a, std::size_t b, std::size_t K) {
  return a * (2 * K - a - 1) / 2 + (b - a - 1);
}
inline std::size_t ovo_slot(std::size_t c, std::size_t j) { return j < c ? j : j - 1; }
// The pair of classes c ≠ j, in either order.
inline std::size_t ovo_pair_of(std::size_t c, std::size_t j, std::size_t K) {
  return ovo_pair_index(std::min(c, j), std::max(c, j), K);
}

// One-vs-one class scores from the K(K−1)/2 pairs' decision values f (in
// KernelModel::one_vs_one's order): out[c] = the votes for c plus a
// tie-breaker of at most 1/(2K) in size: the mean over c's pairs of its decision value
// clipped to [−1, 1] (oriented towards c), over 2K. The argmax is the class
// with the most votes (LIBSVM's rule), ties going to the class its pairs
// favour most (LIBSVM's go to the class that first appears in the training
// file). On the kernel grid's multiclass sets this tie-break scored better
// than the tied classes' wins against each other (mean 0.5643 vs 0.5625).
inline void ovo_class_scores(const double* f, std::size_t K, double* out) {
  std::fill(out, out + K, 0.0);
  std::vector<double> lean(K, 0.0);
  for (std::size_t a = 0, p = 0; a < K; ++a) {
    for (std::size_t b = a + 1; b < K; ++b, ++p) {
      out[f[p] > 0.0 ? b : a] += 1.0;
      const double v = std::clamp(f[p], -1.0, 1.0);
      lean[b] += v;
      lean[a] -= v;
    }
  }
  for (std::size_t c = 0; c < K; ++c) out[c] += lean[c] / static_cast<double>((K - 1) * 2 * K);
}

}  // namespace pegasos
