// Small synthetic datasets for engine tests, built directly in memory.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/dataset.hpp"
#include "core/random.hpp"
#include "core/training.hpp"
#include "tests/reference/dual_cd.hpp"

namespace fixtures {

// `ds` as a LIBSVM file's text, labels the class names (values written so
// they read back to the same floats: the file holds exactly `ds`).
inline std::string libsvm_text(const pegasos::Dataset& ds) { return pegasos::to_libsvm_text(ds, ds.classes); }

// The rows of a binary `ds` with class 0 first, then class 1 (each in file
// order): a file sorted by label.
inline pegasos::Dataset sorted_by_label(const pegasos::Dataset& ds) {
  pegasos::Dataset out;
  out.classes = ds.classes;
  out.source = ds.source + " (sorted by label)";
  for (int label = 0; label < 2; ++label) {
    for (std::size_t i = 0; i < ds.size(); ++i) {
      const pegasos::RowView x = ds.row(i);
      if (x.label != label) continue;
      out.append_row(std::span<const std::uint32_t>(x.indices, x.nnz), std::span<const float>(x.values, x.nnz), label);
    }
  }
  out.dimension = ds.dimension;
  return out;
}

// Two overlapping Gaussian classes in d dimensions; each feature is present
// with probability `density`; rows scaled to norm ≤ 1. Labels are class ids
// 0/1 (1 = positive). Not separable, so the hinge optimum is non-trivial.
inline pegasos::Dataset gaussian(std::size_t n, std::uint32_t d, std::uint64_t seed, double density = 1.0,
                                 double separation = 0.6) {
  pegasos::Rng rng(seed);
  pegasos::Dataset ds;
  ds.classes = {"-1", "1"};
  ds.source = "gaussian";
  auto normal = [&] {
    const double u1 = rng.uniform() + 1e-12, u2 = rng.uniform();
    return std::sqrt(-2 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  };
  for (std::size_t i = 0; i < n; ++i) {
    const int label = rng.uniform() < 0.4 ? 1 : 0;
    std::vector<std::uint32_t> idx;
    std::vector<float> val;
    for (std::uint32_t j = 0; j < d; ++j) {
      if (rng.uniform() >= density) continue;
      const double mean = (j % 3 == 0 ? separation : 0.0) * (label ? 1 : -1);
      idx.push_back(j);
      val.push_back(static_cast<float>(mean + normal()));
    }
    double sq = 0;
    for (float v : val) sq += double(v) * v;
    const double scale = sq > 0 ? 1.0 / std::sqrt(sq) * (0.5 + 0.5 * rng.uniform()) : 1.0;
    for (float& v : val) v = static_cast<float>(v * scale);
    ds.append_row(idx, val, label);
  }
  ds.dimension = d;
  return ds;
}

// K Gaussian blobs (class k centred at 2·e_k scaled by `spread`⁻¹), rows
// scaled to norm ≤ 1. Small `spread` makes the classes separable.
inline pegasos::Dataset blobs(std::size_t n, std::uint32_t d, int K, std::uint64_t seed, double spread) {
  pegasos::Rng rng(seed);
  pegasos::Dataset ds;
  for (int k = 0; k < K; ++k) ds.classes.push_back("c" + std::to_string(k));
  ds.source = "blobs";
  auto normal = [&] {
    const double u1 = rng.uniform() + 1e-12, u2 = rng.uniform();
    return std::sqrt(-2 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  };
  for (std::size_t i = 0; i < n; ++i) {
    const int label = static_cast<int>(i % static_cast<std::size_t>(K));
    std::vector<std::uint32_t> idx;
    std::vector<float> val;
    for (std::uint32_t j = 0; j < d; ++j) {
      idx.push_back(j);
      val.push_back(static_cast<float>((j == static_cast<std::uint32_t>(label) % d ? 1.0 : 0.0) + spread * normal()));
    }
    double sq = 0;
    for (float v : val) sq += double(v) * v;
    for (float& v : val) v = static_cast<float>(v / std::sqrt(sq));
    ds.append_row(idx, val, label);
  }
  ds.dimension = d;
  return ds;
}

// The Gram matrix of UCI Glass-like data (a feature ≈ 72 on every row): feature
// 0 of every row scaled by `scale` and shifted by `shift`, so the rows (with
// the bias feature) have one huge common direction and dual coordinate
// ascent crawls.
inline pegasos::Dataset ill_conditioned(pegasos::Dataset ds, double scale = 30.0, double shift = 20.0) {
  std::vector<float>& values = ds.values.own();
  for (std::size_t i = 0; i < ds.size(); ++i) {
    for (std::uint64_t k = ds.row_ptr[i]; k < ds.row_ptr[i + 1]; ++k) {
      if (ds.indices[k] == 0) values[k] = static_cast<float>(values[k] * scale + shift);
    }
  }
  return ds;
}

// Dense copy for the reference solver; `bias_feature` appends a constant 1.
inline reference::Problem to_problem(const pegasos::Dataset& ds, bool bias_feature = false) {
  reference::Problem p;
  for (std::size_t i = 0; i < ds.size(); ++i) {
    std::vector<double> row(ds.dimension + (bias_feature ? 1 : 0), 0.0);
    const pegasos::RowView x = ds.row(i);
    for (std::uint32_t j = 0; j < x.nnz; ++j) row[x.indices[j]] = x.values[j];
    if (bias_feature) row.back() = 1.0;
    p.x.push_back(std::move(row));
    p.y.push_back(ds.labels[i] == 1 ? 1.0 : -1.0);
  }
  return p;
}

// P*: the reference solver's optimum of the binary hinge problem at lambda.
inline double reference_optimum(const pegasos::Dataset& ds, double lambda, bool bias_feature) {
  const reference::Problem p = to_problem(ds, bias_feature);
  return reference::primal(p, reference::solve(p, lambda), lambda);
}

// Transfer: the source model's score o_i = w_R·x_i on each row of ds, and its
// mean hinge loss L_R there (labels: class 1 is +1).
struct SourceScores {
  std::vector<double> offset;
  double source_loss = 0.0;
};
inline SourceScores source_scores(const pegasos::Dataset& ds, const std::vector<double>& w_r) {
  SourceScores s;
  s.offset.assign(ds.size(), 0.0);
  for (std::size_t i = 0; i < ds.size(); ++i) {
    const pegasos::RowView x = ds.row(i);
    for (std::uint32_t j = 0; j < x.nnz; ++j) s.offset[i] += double(x.values[j]) * w_r[x.indices[j]];
    s.source_loss += std::max(0.0, 1 - (ds.labels[i] == 1 ? 1 : -1) * s.offset[i]) / double(ds.size());
  }
  return s;
}

// The Crammer-Singer primal with class costs (none: 1), computed densely here
// (no code shared with the engine): λ/2 ‖W‖² (bias included) + mean c_{y_i} ξ_i.
// W[m] = class m's weights over ds.dimension features, then its bias.
inline double cs_primal(const pegasos::Dataset& ds, const std::vector<std::vector<double>>& W, double lambda,
                        const std::vector<double>& cost = {}) {
  double sq = 0.0, loss = 0.0;
  for (const auto& w : W) {
    for (double v : w) sq += v * v;
  }
  for (std::size_t i = 0; i < ds.size(); ++i) {
    const pegasos::RowView x = ds.row(i);
    std::vector<double> s(W.size(), 0.0);
    for (std::size_t m = 0; m < W.size(); ++m) {
      s[m] = W[m].back();
      for (std::uint32_t j = 0; j < x.nnz; ++j) s[m] += W[m][x.indices[j]] * x.values[j];
    }
    double worst = -1e300;
    for (std::size_t m = 0; m < W.size(); ++m) {
      if (static_cast<int>(m) != x.label) worst = std::max(worst, s[m]);
    }
    const double c = cost.empty() ? 1.0 : cost[static_cast<std::size_t>(x.label)];
    loss += c * std::max(0.0, 1.0 + worst - s[static_cast<std::size_t>(x.label)]);
  }
  return lambda / 2 * sq + loss / static_cast<double>(ds.size());
}

// A multiclass result's weights as class rows for cs_primal: W[m] = class m's
// weights over `dim` features, then its bias.
inline std::vector<std::vector<double>> class_rows(const pegasos::TrainResult& r, std::uint32_t dim, std::size_t K) {
  std::vector<std::vector<double>> W(K, std::vector<double>(dim + 1, 0.0));
  for (std::size_t m = 0; m < K; ++m) {
    for (std::uint32_t j = 0; j < dim; ++j) W[m][j] = r.weights[j * K + m];
    W[m][dim] = r.bias[m];
  }
  return W;
}

}  // namespace fixtures
