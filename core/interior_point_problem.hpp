// The problem the interior-point solver (core/interior_point.hpp) solves,
// its result, its cost, how its normal matrix is summed, and the products with
// the data its iterations share.
//
// The problem, in the form shared by the binary and Crammer–Singer duals:
//   min_w ½‖w‖² + Σ_i U_i ξ_i   s.t.  ξ_i ≥ b_ij + a_ijᵀ w  (j < J),
//   a_ij = u_ij ⊗ x̃_i  (u_ij ∈ ℝ^K, x̃_i = (x_i, B)),  w = (w_0, …, w_{K−1}), w_k ∈ ℝ^r.
// Its Lagrange dual: α_ij ≥ 0, Σ_j α_ij = U_i, w(α) = −Σ α_ij a_ij,
//   D(α) = Σ α_ij b_ij − ½‖w(α)‖².
// Binary hinge (J = 2, K = 1): u_i0 = −y_i, b_i0 = 1 − y_i·o_i (o_i: a fixed
// offset such as transfer's w_R·x_i), u_i1 = 0, b_i1 = 0, U_i = c_i/(λn).
// Crammer–Singer (J = K): u_ij = e_j − e_{y_i}, b_ij = [j ≠ y_i], U_i = c_i/(λn).
// (The objectives of this project are λ× these.)
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/dataset.hpp"

namespace pegasos {

// How the solver sums its normal matrix M = I + Σ_i M_i ⊗ x̃_i x̃_iᵀ: by dense
// blocks of rows (r² products a row and block, BLAS-3), row by row over each
// row's non-zero pairs (p̄²), or (kOuter) as one product of the rows' weights
// M_i[k, l] with their r(r+1)/2 products x̃_a x̃_b; kAuto: the sparse sum where
// kDenseSpeedup·p̄² < r² (one-hot rows: UCI Breast Cancer, DNA, Spambase), else
// the outer one for K ≥ 3 and r(r+1)/2 ≤ kMaxOuterPairs (UCI Letter's
// Crammer–Singer problem, r = 17, K = 26: 30% less time), else dense blocks.
enum class NormalMatrix { kAuto, kDense, kSparse, kOuter };

// The most non-zeros the solver copies into by-feature columns (scatter(), 8
// bytes a non-zero: 64 MB at most) and the sparse sum's rows (12 bytes a
// non-zero with the bias: 96 MB at most).
inline constexpr std::size_t kMaxColumnsNnz = std::size_t{1} << 23;

struct InteriorPointProblem {
  NormalMatrix normal_matrix = NormalMatrix::kAuto;
  // Above this many non-zeros the solver reads the rows as they are (the same
  // sums in the same order, only slower); tests set 0 to compare the two.
  std::size_t copy_nnz = kMaxColumnsNnz;
  const Dataset* data = nullptr;
  double B = 0.0;        // the bias feature's value (0: no bias feature)
  std::size_t K = 1, J = 2;
  std::vector<double> U;  // n: the mass of each example's multipliers (0: left out)
  std::vector<double> b;  // n × J
  std::vector<double> u;  // n × J × K

  std::size_t rows() const { return data->dimension + (B != 0.0 ? 1 : 0); }
  std::size_t unknowns() const { return rows() * K; }
};

struct InteriorPointResult {
  std::vector<double> alpha;  // n × J, dual feasible: α ≥ 0, Σ_j α_ij = U_i
  std::vector<double> w;      // w(alpha), class-major (w_k = w[k·r .. k·r + r))
  double primal = std::numeric_limits<double>::infinity();  // P(w(alpha)), in the ½‖w‖² units above
  double dual = -std::numeric_limits<double>::infinity();   // D(alpha)
  int iterations = 0;  // Newton steps taken
  double work = 0.0;   // in Newton steps on the whole problem (core/interior_point_screen.hpp solves parts)
  bool certified = false;  // primal − dual ≤ target·|primal|
};

// Floating-point operations of one iteration, for the caller's decision
// whether the solver pays (forming the normal matrix, factorising it).
inline double interior_point_flops(std::size_t n, double nnz_per_row, std::size_t K, std::size_t unknowns) {
  const double p = nnz_per_row + 1.0, k = static_cast<double>(K), m = static_cast<double>(unknowns);
  return static_cast<double>(n) * (k * (k + 1) / 2 * p * p + 4 * k * p) + m * m * m / 3;
}

// Whether the solver sums the normal matrix row by row (NormalMatrix): a
// product in a dense block product is taken as kDenseSpeedup times cheaper.
// Whole runs at C = 10, sparse sum vs dense: UCI Breast Cancer (p̄ = 10 of
// r = 82) 12.9 -> 7.8 ms, DNA 316 -> 248 ms, Spambase (15 of 58) 80 -> 65 ms.
inline constexpr double kDenseSpeedup = 8.0;
inline bool sums_sparse_normal_matrix(const InteriorPointProblem& pr) {
  if (pr.normal_matrix != NormalMatrix::kAuto) return pr.normal_matrix == NormalMatrix::kSparse;
  const double n = static_cast<double>(std::max<std::size_t>(pr.data->size(), 1));
  const double p = static_cast<double>(pr.data->nnz()) / n + (pr.B != 0.0 ? 1.0 : 0.0);
  const double r = static_cast<double>(pr.rows());
  return kDenseSpeedup * p * p < r * r;
}

inline constexpr std::size_t kMaxOuterPairs = 4096;  // 256 rows' products held at a time
inline bool sums_outer_normal_matrix(const InteriorPointProblem& pr) {
  if (pr.normal_matrix != NormalMatrix::kAuto) return pr.normal_matrix == NormalMatrix::kOuter;
  const std::size_t r = pr.rows();
  return !sums_sparse_normal_matrix(pr) && pr.K >= 3 && r * (r + 1) / 2 <= kMaxOuterPairs;
}

namespace interior_point_detail {

// S[i·K + k] = w_k · x̃_i. For K = 1 two rows at a time: each row's sum is
// taken in its own order, the two chains of additions interleaved (four
// measured no faster).
template <std::size_t kK = 0>
inline void scores(const InteriorPointProblem& pr, const double* w, std::vector<double>& S) {
  const Dataset& data = *pr.data;
  const std::size_t n = data.size(), K = kK != 0 ? kK : pr.K, r = pr.rows(), dim = data.dimension;
  S.assign(n * K, 0.0);
  std::size_t i = 0;
  if constexpr (kK == 1) {
    const double start = pr.B != 0.0 ? w[dim] * pr.B : 0.0;
    for (; i + 1 < n; i += 2) {
      const RowView x = data.row(i), y = data.row(i + 1);
      double s = start, t = start;
      const std::uint32_t both = std::min(x.nnz, y.nnz);
      std::uint32_t j = 0;
      for (; j < both; ++j) {
        s += static_cast<double>(x.values[j]) * w[x.indices[j]];
        t += static_cast<double>(y.values[j]) * w[y.indices[j]];
      }
      for (std::uint32_t a = j; a < x.nnz; ++a) s += static_cast<double>(x.values[a]) * w[x.indices[a]];
      for (std::uint32_t a = j; a < y.nnz; ++a) t += static_cast<double>(y.values[a]) * w[y.indices[a]];
      S[i] = s;
      S[i + 1] = t;
    }
  }
  for (; i < n; ++i) {
    const RowView x = data.row(i);
    for (std::size_t k = 0; k < K; ++k) {
      const double* wk = w + k * r;
      double s = pr.B != 0.0 ? wk[dim] * pr.B : 0.0;
      for (std::uint32_t j = 0; j < x.nnz; ++j) s += static_cast<double>(x.values[j]) * wk[x.indices[j]];
      S[i * K + k] = s;
    }
  }
}

// The data by feature (the transpose of its rows: for each feature, the rows
// where it is non-zero, in row order, and its values there), for scatter():
// made once per solve, where it is at most InteriorPointProblem::copy_nnz
// non-zeros.
struct FeatureColumns {
  std::vector<std::size_t> start;  // dimension + 1
  std::vector<std::uint32_t> row;
  std::vector<float> value;
};
inline bool make_feature_columns(const InteriorPointProblem& pr, FeatureColumns& c) {
  const Dataset& data = *pr.data;
  const std::size_t n = data.size(), dim = data.dimension, nnz = data.nnz();
  if (nnz > pr.copy_nnz || n > std::numeric_limits<std::uint32_t>::max()) return false;
  c.start.assign(dim + 1, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const RowView x = data.row(i);
    for (std::uint32_t j = 0; j < x.nnz; ++j) ++c.start[x.indices[j] + 1];
  }
  for (std::size_t f = 0; f < dim; ++f) c.start[f + 1] += c.start[f];
  c.row.resize(nnz);
  c.value.resize(nnz);
  std::vector<std::size_t> at(c.start.begin(), c.start.end() - 1);
  for (std::size_t i = 0; i < n; ++i) {
    const RowView x = data.row(i);
    for (std::uint32_t j = 0; j < x.nnz; ++j) {
      const std::size_t p = at[x.indices[j]]++;
      c.row[p] = static_cast<std::uint32_t>(i);
      c.value[p] = x.values[j];
    }
  }
  return true;
}

// out += Σ_i z_i ⊗ x̃_i  (z: n × K). With the data by feature (`columns`),
// each output is summed in a register over its rows in row order: the same
// additions in the same order as row by row, without a store and reload of
// the output between rows (one-hot data: consecutive rows hit the same few).
template <std::size_t kK = 0>
inline void scatter(const InteriorPointProblem& pr, const std::vector<double>& z, double* out,
                    const FeatureColumns* columns = nullptr) {
  const Dataset& data = *pr.data;
  const std::size_t n = data.size(), K = kK != 0 ? kK : pr.K, r = pr.rows(), dim = data.dimension;
  if (columns != nullptr) {
    const std::uint32_t* row = columns->row.data();
    const float* value = columns->value.data();
    for (std::size_t k = 0; k < K; ++k) {
      double* ok = out + k * r;
      // Entry p of a column added to its output's sum (rows of z = 0 add nothing).
      const auto add = [&](double& acc, std::size_t p) {
        const double c = z[row[p] * K + k];
        if (c != 0.0) acc += c * static_cast<double>(value[p]);
      };
      // Two features at a time: two independent chains of additions (four
      // measured no faster).
      std::size_t f = 0;
      for (; f + 1 < dim; f += 2) {
        std::size_t p = columns->start[f], q = columns->start[f + 1];
        const std::size_t p_end = q, q_end = columns->start[f + 2];
        double a = ok[f], b = ok[f + 1];
        for (; p < p_end && q < q_end; ++p, ++q) {
          add(a, p);
          add(b, q);
        }
        for (; p < p_end; ++p) add(a, p);
        for (; q < q_end; ++q) add(b, q);
        ok[f] = a;
        ok[f + 1] = b;
      }
      for (; f < dim; ++f) {
        double a = ok[f];
        for (std::size_t p = columns->start[f]; p < columns->start[f + 1]; ++p) add(a, p);
        ok[f] = a;
      }
    }
    if (pr.B != 0.0) {
      for (std::size_t k = 0; k < K; ++k) {
        double acc = out[k * r + dim];
        for (std::size_t i = 0; i < n; ++i) {
          const double c = z[i * K + k];
          if (c != 0.0) acc += c * pr.B;
        }
        out[k * r + dim] = acc;
      }
    }
    return;
  }
  for (std::size_t i = 0; i < n; ++i) {
    const RowView x = data.row(i);
    for (std::size_t k = 0; k < K; ++k) {
      const double c = z[i * K + k];
      if (c == 0.0) continue;
      double* ok = out + k * r;
      for (std::uint32_t j = 0; j < x.nnz; ++j) ok[x.indices[j]] += c * static_cast<double>(x.values[j]);
      if (pr.B != 0.0) ok[dim] += c * pr.B;
    }
  }
}

// at[i·J + j] = a_ijᵀ w = Σ_k u_ijk S_ik.
template <std::size_t kK = 0, std::size_t kJ = 0>
inline void constraint_values(const InteriorPointProblem& pr, const std::vector<double>& S, std::vector<double>& at) {
  const std::size_t n = pr.data->size(), K = kK != 0 ? kK : pr.K, J = kJ != 0 ? kJ : pr.J;
  at.assign(n * J, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < J; ++j) {
      const double* u = &pr.u[(i * J + j) * K];
      double v = 0.0;
      for (std::size_t k = 0; k < K; ++k) v += u[k] * S[i * K + k];
      at[i * J + j] = v;
    }
  }
}

// The exact certificate of a dual point: α scaled onto Σ_j α_ij = U_i,
// w(α), P(w(α)) and D(α).
template <std::size_t kK = 0, std::size_t kJ = 0>
inline void certify(const InteriorPointProblem& pr, const std::vector<double>& alpha, InteriorPointResult& out,
                    std::vector<double>& z, std::vector<double>& S, std::vector<double>& at,
                    const FeatureColumns* columns = nullptr) {
  const std::size_t n = pr.data->size(), K = kK != 0 ? kK : pr.K, J = kJ != 0 ? kJ : pr.J;
  std::vector<double> a(alpha.size());
  z.assign(n * K, 0.0);
  double lin = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    double sum = 0.0;
    for (std::size_t j = 0; j < J; ++j) sum += alpha[i * J + j];
    const double scale = sum > 0.0 ? pr.U[i] / sum : 0.0;
    for (std::size_t j = 0; j < J; ++j) {
      const double v = alpha[i * J + j] * scale;
      a[i * J + j] = v;
      lin += v * pr.b[i * J + j];
      const double* u = &pr.u[(i * J + j) * K];
      for (std::size_t k = 0; k < K; ++k) z[i * K + k] -= v * u[k];  // w = −Σ α a
    }
  }
  std::vector<double> w(pr.unknowns(), 0.0);
  scatter<kK>(pr, z, w.data(), columns);
  scores<kK>(pr, w.data(), S);
  constraint_values<kK, kJ>(pr, S, at);
  double sq = 0.0;
  for (const double v : w) sq += v * v;
  double loss = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    if (pr.U[i] == 0.0) continue;
    double m = -std::numeric_limits<double>::infinity();
    for (std::size_t j = 0; j < J; ++j) m = std::max(m, pr.b[i * J + j] + at[i * J + j]);
    loss += pr.U[i] * m;
  }
  out.primal = sq / 2 + loss;
  out.dual = lin - sq / 2;
  out.alpha = std::move(a);
  out.w = std::move(w);
}

}  // namespace interior_point_detail

}  // namespace pegasos
