// Kernels for kernel Pegasos, on sparse rows (pegasos::RowView, sorted indices):
//
//   linear       k(x, x') = x·x'
//   polynomial   k(x, x') = (γ x·x' + c₀)^p                 p = degree ≥ 1
//   rbf          k(x, x') = exp(−γ ‖x − x'‖²)
//                ‖x − x'‖² = ‖x‖² + ‖x'‖² − 2 x·x'          (squared norms cached)
//
// so every kernel costs one sparse dot product plus O(1). The RBF distance is
// clamped at 0: the three-term formula can come out slightly negative for
// nearly equal rows. For x = x' it is exactly 0 (hence k = 1), because ‖x‖²
// is the same canonical dot product x·x.
//
// Canonical dot product x·x' (x a support vector or training row, x' the
// query). Each product of two float32 values is exact in double (24 + 24
// bits ≤ 53). The products are summed over the non-zeros of x in index order
// in 8 lanes by position (the p-th non-zero of x goes to lane p mod 8), and
// the lanes are combined pairwise. A product with an absent feature of x' is
// an exact zero and never changes a lane, so the merge-join of two sparse
// rows and the gather of x against a scattered (dense) x' give the same bits:
// training and prediction may pick whichever is fastest without changing a
// single decision. The 8 register lanes also break the add-latency chain of
// a single running sum (1.4× faster on Fashion-MNIST rows). The
// order depends on which operand is first: x·x' and x'·x may differ in the
// last bit, so callers always put the support vector (or training row) first.
//
// References: Shalev-Shwartz, Singer, Srebro, Cotter, "Pegasos", Math.
// Program. 2011, Sec. 4 (kernels); the parameterisation (γ, c₀, degree) is
// LIBSVM's (Chang & Lin, "LIBSVM: a library for support vector machines",
// 2011, Sec. 2), so `svm-train -t 1/2 -g γ -r c₀ -d p` means the same kernel.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "core/dataset.hpp"

namespace pegasos {

enum class KernelType { kLinear, kPolynomial, kRbf };

struct KernelParams {
  KernelType type = KernelType::kRbf;
  // γ > 0 (polynomial, rbf). 0 means "not chosen yet": the trainer resolves it
  // to 1/dimension, LIBSVM's default. A model always stores the value used.
  double gamma = 0.0;
  int degree = 3;      // polynomial only
  double coef0 = 0.0;  // polynomial only
};

// Upper bound on the polynomial degree (beyond it everything overflows).
inline constexpr int kMaxKernelDegree = 100;

inline std::string to_string(KernelType t) {
  switch (t) {
    case KernelType::kLinear: return "linear";
    case KernelType::kPolynomial: return "polynomial";
    case KernelType::kRbf: return "rbf";
  }
  return "?";
}

// "linear" | "polynomial" | "rbf" → type; false for anything else.
inline bool parse_kernel_type(const std::string& name, KernelType& out) {
  if (name == "linear") out = KernelType::kLinear;
  else if (name == "polynomial") out = KernelType::kPolynomial;
  else if (name == "rbf") out = KernelType::kRbf;
  else return false;
  return true;
}

namespace detail {
inline constexpr std::uint32_t kDotLanes = 8;
inline double combine_lanes(const double* lane) {
  return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}
}  // namespace detail

// x·x' by merge-join over the two sorted index lists. O(nnz(x) + nnz(x')).
inline double sparse_dot(const RowView& x, const RowView& xq) {
  double lane[detail::kDotLanes] = {};
  std::uint32_t i = 0, j = 0;
  while (i < x.nnz && j < xq.nnz) {
    const std::uint32_t fa = x.indices[i], fb = xq.indices[j];
    if (fa == fb) {
      lane[i & (detail::kDotLanes - 1)] += static_cast<double>(x.values[i]) * static_cast<double>(xq.values[j]);
      ++i;
      ++j;
    } else if (fa < fb) {
      ++i;
    } else {
      ++j;
    }
  }
  return detail::combine_lanes(lane);
}

// x·q for a sparse row x and a dense vector q holding float32 values (zeros
// elsewhere); requires every index of x to be below q's length. Same bits as
// sparse_dot(x, sparse form of q). O(nnz(x)), lanes in registers.
inline double sparse_dense_dot(const RowView& x, const double* q) {
  double l0 = 0, l1 = 0, l2 = 0, l3 = 0, l4 = 0, l5 = 0, l6 = 0, l7 = 0;
  const float* v = x.values;
  const std::uint32_t* f = x.indices;
  std::uint32_t p = 0;
  for (; p + 8 <= x.nnz; p += 8) {
    l0 += static_cast<double>(v[p]) * q[f[p]];
    l1 += static_cast<double>(v[p + 1]) * q[f[p + 1]];
    l2 += static_cast<double>(v[p + 2]) * q[f[p + 2]];
    l3 += static_cast<double>(v[p + 3]) * q[f[p + 3]];
    l4 += static_cast<double>(v[p + 4]) * q[f[p + 4]];
    l5 += static_cast<double>(v[p + 5]) * q[f[p + 5]];
    l6 += static_cast<double>(v[p + 6]) * q[f[p + 6]];
    l7 += static_cast<double>(v[p + 7]) * q[f[p + 7]];
  }
  double lane[detail::kDotLanes] = {l0, l1, l2, l3, l4, l5, l6, l7};
  for (; p < x.nnz; ++p) lane[p & (detail::kDotLanes - 1)] += static_cast<double>(v[p]) * q[f[p]];
  return detail::combine_lanes(lane);
}

// ‖x‖² over the features below `size` (for a row whose features are all
// below `size`, exactly sparse_dot(x, x)).
inline double row_squared_norm(const RowView& x, std::uint32_t size = std::numeric_limits<std::uint32_t>::max()) {
  double lane[detail::kDotLanes] = {};
  for (std::uint32_t p = 0; p < x.nnz; ++p) {
    if (x.indices[p] >= size) continue;
    const double v = x.values[p];
    lane[p & (detail::kDotLanes - 1)] += v * v;
  }
  return detail::combine_lanes(lane);
}

// z^p by binary exponentiation (deterministic, unlike a libm pow whose last
// bit may differ between platforms). p ≥ 1.
inline double integer_power(double z, int p) {
  double result = 1.0;
  while (p > 0) {
    if (p & 1) result *= z;
    z *= z;
    p >>= 1;
  }
  return result;
}

// k(x, x') from x·x' and the squared norms (only the RBF reads the norms).
inline double kernel_from_dot(const KernelParams& k, double dot, double sq_a, double sq_b) {
  switch (k.type) {
    case KernelType::kLinear:
      return dot;
    case KernelType::kPolynomial:
      return integer_power(k.gamma * dot + k.coef0, k.degree);
    case KernelType::kRbf:
      return std::exp(-k.gamma * std::max(0.0, sq_a + sq_b - 2.0 * dot));
  }
  return 0.0;
}

// k(x, x') directly (computes the norms; for tests and one-off use; x first
// as in the canonical dot product).
inline double kernel_value(const KernelParams& k, const RowView& a, const RowView& b) {
  const bool rbf = k.type == KernelType::kRbf;
  return kernel_from_dot(k, sparse_dot(a, b), rbf ? row_squared_norm(a) : 0.0, rbf ? row_squared_norm(b) : 0.0);
}

}  // namespace pegasos
