// Explicit feature maps that approximate the RBF kernel k(x, y) = exp(−γ‖x − y‖²),
// so the LINEAR solvers (SDCA, Pegasos, one-vs-all, Crammer–Singer, class
// weights) train a kernel-like model in time linear in n (the setting
// `kernel_approximation`, README § Multiclass, kernels, experiments).
//
//   Random Fourier features (Rahimi & Recht, "Random Features for Large-Scale
//   Kernel Machines", NIPS 2007, Alg. 1): by Bochner's theorem the RBF kernel
//   is the Fourier transform of N(0, 2γI), so with ω_j ~ N(0, 2γI) and
//   b_j ~ U[0, 2π), z(x) = sqrt(2/m) [cos(ω_jᵀx + b_j)]_j has E[z(x)·z(y)] = k(x, y)
//   and, the terms being bounded by 2/m, z(x)·z(y) − k(x, y) = O(1/√m) (Hoeffding).
//
//   Nyström features (Williams & Seeger, "Using the Nyström Method to Speed Up
//   Kernel Machines", NIPS 2001): m landmark rows l_j sampled from the training
//   data, K_mm = [k(l_i, l_j)], k_m(x) = [k(x, l_j)]_j, and any z(x) = A k_m(x)
//   with AᵀA = K_mm^{-1} gives z(x)·z(y) = k_m(x)ᵀ K_mm^{-1} k_m(y): exact on the
//   landmarks (z(l_i)·z(l_j) = k(l_i, l_j)) and the best approximation in the
//   landmarks' span elsewhere. Here A = L^{-1} with K_mm + εI = L Lᵀ
//   (Cholesky), ε = kNystroemJitter times a bound on λ_max: the kernel values
//   are float products (relative error ~1e-7 an entry), so directions of K_mm
//   with smaller eigenvalues are rounding noise, which the shift keeps 1/√λ
//   from amplifying. The map has m outputs. Any two such A differ by a
//   rotation (A = Λ^{-1/2} Uᵀ from the eigendecomposition, the form of
//   models written before, is one), which changes no inner product and so no
//   L2-regularised linear model's decisions; the Cholesky factor costs m³/3
//   where the eigendecomposition took about 30× as long (m = 2000: 12 s), and
//   a triangular A halves the mapping's second product.
//
// Cost: both maps are two dense matrix products per block of kBlockRows rows
// (Eigen, float): X·Ωᵀ (RFF: n·d·m) or X·Lᵀ then K·Aᵀ (Nyström: n·d·m + n·m²/2);
// fitting Nyström adds the m×m Cholesky factor and its inverse (O(m³)). Blocks run in
// parallel (oneTBB); every block is padded to kBlockRows rows, so a row's
// mapped values depend only on the row, never on the thread count, the block
// it falls in or its neighbours: training, `predict` in batches and Python
// produce the same bits. Memory: the map holds m·d floats (Nyström also r·m).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/dataset.hpp"

namespace pegasos {

enum class FeatureMapType { kRff, kNystroem };
std::string to_string(FeatureMapType t);
bool parse_feature_map_type(const std::string& name, FeatureMapType& out);

// What the setting `kernel_approximation` asks for. gamma 0 = "scale":
// γ = 1/(d · Var(X)), Var over all n·d entries of the training matrix (zeros
// included; the variance scikit-learn's gamma='scale' uses); γ = 1 when that
// variance is 0.
struct FeatureMapSettings {
  FeatureMapType type = FeatureMapType::kRff;
  std::uint32_t components = 1000;
  double gamma = 0.0;
};

// Rows per block of the mapping; also the padding unit (see above).
inline constexpr std::size_t kFeatureMapBlockRows = 256;
// Nyström: the shift ε of K_mm + εI as a fraction of λ_max's bound (see
// above), and how many times it may grow 10× when the factorisation fails.
inline constexpr double kNystroemJitter = 1e-6;
inline constexpr int kNystroemJitterTries = 6;
// The largest accepted map: components × input dimension floats (1 GiB).
inline constexpr std::uint64_t kMaxFeatureMapFloats = std::uint64_t{1} << 28;
inline constexpr std::uint32_t kMaxFeatureMapComponents = 100000;

// A fitted map (typed; its file form is io/feature_map_json.hpp).
struct FeatureMap {
  FeatureMapType type = FeatureMapType::kRff;
  double gamma = 0.0;                 // the resolved γ > 0
  std::uint32_t input_dimension = 0;  // d: features at or beyond it are ignored
  std::uint32_t components = 0;       // m: frequencies (RFF) or landmarks (Nyström)
  std::uint64_t seed = 0;             // the stream that drew ω, b or the landmarks
  // m × d, row-major: the frequencies ω_j (RFF) or the landmark rows l_j (Nyström).
  std::vector<float> basis;
  std::vector<double> offset;         // RFF: b_j ∈ [0, 2π), m values
  std::vector<double> landmark_norms; // Nyström: ‖l_j‖², m values (computed, not stored)
  std::vector<float> projection;      // Nyström: r × m, row-major: L^{-1} (r = m), or Λ^{-1/2} Uᵀ in older models
  bool projection_triangular = false; // Nyström: projection is L^{-1} (computed by finish(), not stored)

  // The number of mapped features: m (RFF) or r (Nyström).
  std::uint32_t output_dimension() const;
  // Rows [begin, end) of `data` mapped into out ((end − begin) × output_dimension()
  // floats, row-major). Sequential; map() runs blocks of it in parallel.
  void map_rows(const Dataset& data, std::size_t begin, std::size_t end, float* out) const;
  // Every row mapped: a dense Dataset (every one of output_dimension() columns
  // present) with data's labels, classes and source.
  Dataset map(const Dataset& data) const;
  // After reading a stored map: recompute landmark_norms and
  // projection_triangular (Nyström).
  void finish();
};

// γ for "scale" (see FeatureMapSettings) on the training rows.
double scale_gamma(const Dataset& train);

// Fit the map on the training rows. RFF draws ω (Box–Muller) and b from the
// stream `seed`; Nyström samples `components` distinct rows with it. Throws
// InputError naming kernel_approximation/components when the map would be
// too large or (Nyström) there are fewer rows than landmarks.
FeatureMap fit_feature_map(const FeatureMapSettings& settings, const Dataset& train, std::uint64_t seed);

}  // namespace pegasos
