#include "core/feature_map.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include <Eigen/Dense>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "core/errors.hpp"
#include "core/jittered_cholesky.hpp"
#include "core/random.hpp"

namespace pegasos {
namespace {

using MatrixF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMapF = Eigen::Map<const MatrixF>;

// One padded block: the rows scattered into a dense kFeatureMapBlockRows × d
// matrix (rows past `count` and features ≥ d stay zero) and their squared
// norms (double, summed in index order over the block's dense row).
struct Block {
  MatrixF x;
  std::vector<double> norms;
};

void fill_block(const Dataset& data, const std::size_t* rows, std::size_t count, std::uint32_t d, Block& b) {
  b.x.setZero(static_cast<Eigen::Index>(kFeatureMapBlockRows), static_cast<Eigen::Index>(d));
  b.norms.assign(kFeatureMapBlockRows, 0.0);
  for (std::size_t r = 0; r < count; ++r) {
    const RowView x = data.row(rows[r]);
    for (std::uint32_t j = 0; j < x.nnz; ++j) {
      if (x.indices[j] < d) b.x(static_cast<Eigen::Index>(r), x.indices[j]) = x.values[j];
    }
    double sq = 0.0;
    for (std::uint32_t k = 0; k < d; ++k) {
      const double v = b.x(static_cast<Eigen::Index>(r), k);
      sq += v * v;
    }
    b.norms[r] = sq;
  }
}

ConstMapF basis_of(const FeatureMap& f) {
  return ConstMapF(f.basis.data(), static_cast<Eigen::Index>(f.components), static_cast<Eigen::Index>(f.input_dimension));
}

// Nyström: k(x_i, l_j) = exp(−γ (‖x_i‖² + ‖l_j‖² − 2 x_i·l_j)) for a block
// (the distance clipped at 0: rounding can make it slightly negative).
MatrixF landmark_kernel(const FeatureMap& f, const Block& b) {
  MatrixF p(b.x.rows(), static_cast<Eigen::Index>(f.components));
  p.noalias() = b.x * basis_of(f).transpose();
  for (Eigen::Index i = 0; i < p.rows(); ++i) {
    for (Eigen::Index j = 0; j < p.cols(); ++j) {
      const double dist = b.norms[static_cast<std::size_t>(i)] + f.landmark_norms[static_cast<std::size_t>(j)] -
                          2.0 * static_cast<double>(p(i, j));
      p(i, j) = static_cast<float>(std::exp(-f.gamma * std::max(dist, 0.0)));
    }
  }
  return p;
}

// RFF: sqrt(2/m) cos(ω_jᵀx_i + b_j) for a block.
MatrixF fourier_features(const FeatureMap& f, const Block& b) {
  MatrixF p(b.x.rows(), static_cast<Eigen::Index>(f.components));
  p.noalias() = b.x * basis_of(f).transpose();
  const double scale = std::sqrt(2.0 / static_cast<double>(f.components));
  for (Eigen::Index i = 0; i < p.rows(); ++i) {
    for (Eigen::Index j = 0; j < p.cols(); ++j) {
      p(i, j) = static_cast<float>(scale * std::cos(static_cast<double>(p(i, j)) + f.offset[static_cast<std::size_t>(j)]));
    }
  }
  return p;
}

// A standard normal pair by Box–Muller (platform-independent, unlike
// std::normal_distribution); u1 ∈ (0, 1] so the logarithm is finite.
std::pair<double, double> normal_pair(Rng& rng) {
  const double u1 = 1.0 - rng.uniform(), u2 = rng.uniform();
  const double radius = std::sqrt(-2.0 * std::log(u1)), angle = 2.0 * std::numbers::pi * u2;
  return {radius * std::cos(angle), radius * std::sin(angle)};
}

void fit_fourier(FeatureMap& f, Rng& rng) {
  const std::size_t count = std::size_t{f.components} * f.input_dimension;
  f.basis.resize(count);
  const double sigma = std::sqrt(2.0 * f.gamma);  // ω ~ N(0, 2γ I)
  for (std::size_t e = 0; e < count; e += 2) {
    const auto [a, b] = normal_pair(rng);
    f.basis[e] = static_cast<float>(sigma * a);
    if (e + 1 < count) f.basis[e + 1] = static_cast<float>(sigma * b);
  }
  f.offset.resize(f.components);
  for (double& b : f.offset) b = 2.0 * std::numbers::pi * rng.uniform();
}

// K_mm from the landmark rows (by the same block code that maps data rows, so
// a landmark's mapped kernel row is the matching row of K_mm), the Cholesky
// factor of K_mm + εI and the projection L^{-1} (see core/feature_map.hpp).
void fit_nystroem(FeatureMap& f, const Dataset& train, const std::vector<std::size_t>& landmarks) {
  const std::size_t m = f.components, d = f.input_dimension;
  f.basis.assign(m * d, 0.0f);
  for (std::size_t j = 0; j < m; ++j) {
    const RowView x = train.row(landmarks[j]);
    for (std::uint32_t e = 0; e < x.nnz; ++e) {
      if (x.indices[e] < d) f.basis[j * d + x.indices[e]] = x.values[e];
    }
  }
  f.finish();
  const auto M = static_cast<Eigen::Index>(m);
  Eigen::MatrixXd k(M, M);
  const std::size_t blocks = (m + kFeatureMapBlockRows - 1) / kFeatureMapBlockRows;
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, blocks, 1), [&](const tbb::blocked_range<std::size_t>& range) {
    for (std::size_t blk = range.begin(); blk != range.end(); ++blk) {  // each block its own rows of K_mm
      const std::size_t begin = blk * kFeatureMapBlockRows, count = std::min(kFeatureMapBlockRows, m - begin);
      Block b;
      fill_block(train, landmarks.data() + begin, count, f.input_dimension, b);
      const MatrixF kb = landmark_kernel(f, b);
      for (std::size_t r = 0; r < count; ++r) {
        for (std::size_t j = 0; j < m; ++j) {
          k(static_cast<Eigen::Index>(begin + r), static_cast<Eigen::Index>(j)) = kb(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(j));
        }
      }
    }
  });
  // K_mm + εI = L Lᵀ, ε grown while the float kernel values leave it indefinite.
  const Eigen::MatrixXd L = jittered_cholesky(0.5 * (k + k.transpose()), kNystroemJitter, kNystroemJitterTries, "Nyström: K_mm");
  // L^{-1} by columns in blocks of kBlockRows, in parallel: block [c, c + w)
  // of L^{-1} is zero above row c, and below it solves L[c:, c:] X = I[c:, c:c+w].
  // Fixed blocks: the same bits for any thread count. (m = 2000: 0.49 s for
  // the whole identity on one core, 0.1 here.)
  f.projection.assign(m * m, 0.0f);
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, blocks, 1), [&](const tbb::blocked_range<std::size_t>& range) {
    for (std::size_t blk = range.begin(); blk != range.end(); ++blk) {
      const std::size_t c = blk * kFeatureMapBlockRows, w = std::min(kFeatureMapBlockRows, m - c), rest = m - c;
      Eigen::MatrixXd x = Eigen::MatrixXd::Identity(static_cast<Eigen::Index>(rest), static_cast<Eigen::Index>(w));
      const auto R = static_cast<Eigen::Index>(rest);
      L.bottomRightCorner(R, R).triangularView<Eigen::Lower>().solveInPlace(x);
      for (std::size_t i = 0; i < rest; ++i) {
        for (std::size_t j = 0; j < w && j <= i; ++j) {
          f.projection[(c + i) * m + c + j] = static_cast<float>(x(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)));
        }
      }
    }
  });
  f.finish();
}

}  // namespace

std::string to_string(FeatureMapType t) { return t == FeatureMapType::kRff ? "rff" : "nystroem"; }

bool parse_feature_map_type(const std::string& name, FeatureMapType& out) {
  if (name == "rff") {
    out = FeatureMapType::kRff;
  } else if (name == "nystroem") {
    out = FeatureMapType::kNystroem;
  } else {
    return false;
  }
  return true;
}

std::uint32_t FeatureMap::output_dimension() const {
  if (type == FeatureMapType::kRff) return components;
  return components == 0 ? 0 : static_cast<std::uint32_t>(projection.size() / components);
}

void FeatureMap::finish() {
  if (type != FeatureMapType::kNystroem) return;
  // L^{-1} (fit_nystroem): square, nothing above the diagonal. Models from
  // before it hold Λ^{-1/2} Uᵀ (r × m, dense), which maps as it did.
  projection_triangular = projection.size() == std::size_t{components} * components;
  for (std::size_t i = 0; projection_triangular && i < components; ++i) {
    for (std::size_t j = i + 1; j < components; ++j) {
      if (projection[i * components + j] != 0.0f) {
        projection_triangular = false;
        break;
      }
    }
  }
  landmark_norms.assign(components, 0.0);
  for (std::size_t j = 0; j < components; ++j) {
    double sq = 0.0;
    for (std::size_t k = 0; k < input_dimension; ++k) {
      const double v = basis[j * input_dimension + k];
      sq += v * v;
    }
    landmark_norms[j] = sq;
  }
}

void FeatureMap::map_rows(const Dataset& data, std::size_t begin, std::size_t end, float* out) const {
  const std::size_t width = output_dimension();
  std::vector<std::size_t> rows(kFeatureMapBlockRows);
  Block b;
  for (std::size_t start = begin; start < end; start += kFeatureMapBlockRows) {
    const std::size_t count = std::min(kFeatureMapBlockRows, end - start);
    for (std::size_t r = 0; r < count; ++r) rows[r] = start + r;
    fill_block(data, rows.data(), count, input_dimension, b);
    MatrixF z;
    if (type == FeatureMapType::kRff) {
      z = fourier_features(*this, b);
    } else {
      const ConstMapF p(projection.data(), static_cast<Eigen::Index>(width), static_cast<Eigen::Index>(components));
      z.resize(b.x.rows(), static_cast<Eigen::Index>(width));
      if (projection_triangular) {  // L^{-1}: half the multiply-adds
        z.noalias() = landmark_kernel(*this, b) * p.transpose().triangularView<Eigen::Upper>();
      } else {
        z.noalias() = landmark_kernel(*this, b) * p.transpose();
      }
    }
    for (std::size_t r = 0; r < count; ++r) {
      std::copy_n(z.row(static_cast<Eigen::Index>(r)).data(), width, out + (start - begin + r) * width);
    }
  }
}

Dataset FeatureMap::map(const Dataset& data) const {
  const std::size_t n = data.size(), width = output_dimension();
  Dataset out = dense_rows_like(data, static_cast<std::uint32_t>(width));
  std::vector<float>& values = out.values.own();
  const std::size_t blocks = (n + kFeatureMapBlockRows - 1) / kFeatureMapBlockRows;
  // Each block's first row with a value that is not finite (n: none): rows
  // far outside the float range the map computes in (3e38 through Nyström's
  // kernel) must not reach a solver or a score.
  std::vector<std::size_t> first_bad(blocks, n);
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, blocks, 1), [&](const tbb::blocked_range<std::size_t>& range) {
    for (std::size_t blk = range.begin(); blk != range.end(); ++blk) {
      const std::size_t begin = blk * kFeatureMapBlockRows, end = std::min(n, begin + kFeatureMapBlockRows);
      map_rows(data, begin, end, values.data() + begin * width);
      for (std::size_t i = begin; i < end; ++i) {
        const float* row = values.data() + i * width;
        if (first_bad[blk] == n && !std::all_of(row, row + width, [](float v) { return std::isfinite(v); })) first_bad[blk] = i;
      }
    }
  });
  if (const std::size_t bad = first_bad.empty() ? n : *std::min_element(first_bad.begin(), first_bad.end()); bad < n) {
    throw InputError(data.source + ": " + data.row_name(bad) + ": kernel_approximation maps it to values " +
                     "that are not finite (its features are too large for the map; scale them)");
  }
  return out;
}

double scale_gamma(const Dataset& train) {
  const double n = static_cast<double>(train.size()), d = static_cast<double>(train.dimension);
  if (n == 0 || d == 0) return 1.0;
  double sum = 0.0, sum_sq = 0.0;
  for (float v : train.values) {
    sum += v;
    sum_sq += static_cast<double>(v) * v;
  }
  const double entries = n * d, mean = sum / entries;
  const double variance = sum_sq / entries - mean * mean;
  return variance > 0 ? 1.0 / (d * variance) : 1.0;
}

FeatureMap fit_feature_map(const FeatureMapSettings& settings, const Dataset& train, std::uint64_t seed) {
  FeatureMap f;
  f.type = settings.type;
  f.components = settings.components;
  f.input_dimension = train.dimension;
  f.seed = seed;
  f.gamma = settings.gamma > 0 ? settings.gamma : scale_gamma(train);
  const std::string where = "kernel_approximation/components: ";
  if (std::uint64_t{f.components} * std::max<std::uint32_t>(f.input_dimension, 1) > kMaxFeatureMapFloats) {
    throw InputError(where + std::to_string(f.components) + " components × " + std::to_string(f.input_dimension) +
                     " features is more than the map's limit of 2^28 floats; use fewer components");
  }
  Rng rng(seed);
  if (f.type == FeatureMapType::kRff) {
    fit_fourier(f, rng);
    return f;
  }
  if (f.components > train.size()) {
    throw InputError(where + "nystroem samples " + std::to_string(f.components) + " landmark rows but " +
                     train.source + " has " + std::to_string(train.size()));
  }
  fit_nystroem(f, train, rng.sample_indices(train.size(), f.components));
  if (!std::all_of(f.projection.begin(), f.projection.end(), [](float v) { return std::isfinite(v); })) {
    throw InputError(train.source + ": kernel_approximation: the Nyström map fitted on these rows is not finite (their " +
                     "features are too large for the kernel's float arithmetic; scale them)");
  }
  return f;
}

}  // namespace pegasos
