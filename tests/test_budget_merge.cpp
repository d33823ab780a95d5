// Budget maintenance by merging (kernel/budget_merge.hpp): the merge's
// algebra against explicit vectors and kernel values from the definition; h
// against a fine grid; training against a brute-force α-count loop that
// merges dense vectors; merging against removal; determinism; the settings.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include <tbb/global_control.h>

#include "core/errors.hpp"
#include "core/random.hpp"
#include "drivers/config.hpp"
#include "io/kernel_model_json.hpp"
#include "kernel/budget_merge.hpp"
#include "kernel/kernel_trainer.hpp"
#include "tests/fixtures.hpp"

using namespace pegasos;

namespace {

double rbf(const std::vector<double>& a, const std::vector<double>& b, double gamma) {
  double d2 = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) d2 += (a[i] - b[i]) * (a[i] - b[i]);
  return std::exp(-gamma * d2);
}

// ‖Σ_c (a_mc φ(x_m) + a_nc φ(x_n) − a_zc φ(z))‖² from the Gram matrix of the three points.
double explicit_loss(const std::vector<double>& xm, const std::vector<double>& xn, const std::vector<double>& z,
                     const std::vector<double>& am, const std::vector<double>& an, const std::vector<double>& az,
                     double gamma) {
  const double kmn = rbf(xm, xn, gamma), kmz = rbf(xm, z, gamma), knz = rbf(xn, z, gamma);
  double e = 0.0;
  for (std::size_t c = 0; c < am.size(); ++c) {
    e += am[c] * am[c] + an[c] * an[c] + az[c] * az[c] + 2 * am[c] * an[c] * kmn - 2 * am[c] * az[c] * kmz -
         2 * an[c] * az[c] * knz;
  }
  return e;
}

EngineSettings merge_pegasos_settings(double lambda, double epochs) {
  EngineSettings s;
  s.lambda = lambda;
  s.epochs = epochs;
  s.sampling = Sampling::kUniform;
  s.bias = BiasMode::kNone;
  return s;
}

// Brute-force binary α-count Pegasos whose full budget merges (the rule of
// kernel/budget_merge.hpp), support vectors as dense float vectors.
struct NaiveMerge {
  std::vector<std::vector<float>> sv;
  std::vector<int> label;
  std::vector<double> coef;
  std::uint64_t evictions = 0;
};
NaiveMerge naive_merging(const Dataset& ds, double gamma, const EngineSettings& s, std::size_t budget) {
  auto dense = [&](std::size_t i) {
    std::vector<float> x(ds.dimension, 0.0f);
    const RowView r = ds.row(i);
    for (std::uint32_t p = 0; p < r.nnz; ++p) x[r.indices[p]] = r.values[p];
    return x;
  };
  auto k = [&](const std::vector<float>& a, const std::vector<float>& b) {
    return rbf(std::vector<double>(a.begin(), a.end()), std::vector<double>(b.begin(), b.end()), gamma);
  };
  NaiveMerge r;
  std::vector<long> row_of;  // training row of each support vector, −1 when merged
  Sampler sampler(ds, s.sampling, derive_seed(s.seed, 1));
  const auto T = static_cast<std::uint64_t>(std::ceil(s.epochs * static_cast<double>(ds.size())));
  for (std::uint64_t t = 1; t <= T; ++t) {
    const std::size_t j = sampler.next();
    const std::vector<float> xj = dense(j);
    double sum = 0.0;
    for (std::size_t i = 0; i < r.sv.size(); ++i) sum += r.coef[i] * k(r.sv[i], xj);
    const double y = ds.labels[j] == 1 ? 1.0 : -1.0;
    const double score = t == 1 ? 0.0 : sum / (s.lambda * static_cast<double>(t - 1));
    if (y * score >= 1.0) continue;
    auto it = std::find(row_of.begin(), row_of.end(), static_cast<long>(j));
    if (it == row_of.end()) {
      if (r.sv.size() == budget) {
        std::size_t m = 0;
        for (std::size_t i = 1; i < r.sv.size(); ++i) {
          if (std::abs(r.coef[i]) < std::abs(r.coef[m])) m = i;
        }
        std::size_t partner = r.sv.size();
        double least = 1e300;
        for (std::size_t n = 0; n < r.sv.size(); ++n) {
          if (n == m || r.label[n] != r.label[m]) continue;
          const double h0 = std::abs(r.coef[m]) / (std::abs(r.coef[m]) + std::abs(r.coef[n]));
          const double kmn = k(r.sv[m], r.sv[n]);
          const double az = r.coef[m] * std::pow(kmn, (1 - h0) * (1 - h0)) + r.coef[n] * std::pow(kmn, h0 * h0);
          const double e = r.coef[m] * r.coef[m] + r.coef[n] * r.coef[n] + 2 * kmn * r.coef[m] * r.coef[n] - az * az;
          if (e < least) {
            least = e;
            partner = n;
          }
        }
        REQUIRE(partner < r.sv.size());  // the fixture always has one
        const double kmn = k(r.sv[m], r.sv[partner]);
        const double h = budget_merge::best_h(&r.coef[m], &r.coef[partner], 1, kmn);
        std::vector<float> z(ds.dimension);
        for (std::size_t f = 0; f < z.size(); ++f) {
          z[f] = static_cast<float>(h * r.sv[m][f] + (1 - h) * r.sv[partner][f]);
        }
        const double az = r.coef[m] * std::pow(kmn, (1 - h) * (1 - h)) + r.coef[partner] * std::pow(kmn, h * h);
        const int lab = r.label[m];
        for (const std::size_t gone : {std::max(m, partner), std::min(m, partner)}) {
          r.sv.erase(r.sv.begin() + static_cast<std::ptrdiff_t>(gone));
          r.label.erase(r.label.begin() + static_cast<std::ptrdiff_t>(gone));
          r.coef.erase(r.coef.begin() + static_cast<std::ptrdiff_t>(gone));
          row_of.erase(row_of.begin() + static_cast<std::ptrdiff_t>(gone));
        }
        r.sv.push_back(z);
        r.label.push_back(lab);
        r.coef.push_back(az);
        row_of.push_back(-1);
        ++r.evictions;
      }
      r.sv.push_back(xj);
      r.label.push_back(ds.labels[j]);
      r.coef.push_back(0.0);
      row_of.push_back(static_cast<long>(j));
      it = row_of.end() - 1;
    }
    r.coef[static_cast<std::size_t>(it - row_of.begin())] += y;
  }
  return r;
}

}  // namespace

TEST_CASE("budget merge: the degradation formula is the explicit loss, h beats a fine grid and removal", "[kernel]") {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> unit(0.1, 3.0);
  for (int trial = 0; trial < 50; ++trial) {
    const std::size_t d = 5, K = 1 + static_cast<std::size_t>(trial % 3);
    const double gamma = 0.05 + 0.1 * (trial % 5);
    std::vector<double> xm(d), xn(d), am(K), an(K);
    for (std::size_t i = 0; i < d; ++i) {
      xm[i] = normal(rng);
      xn[i] = xm[i] + 0.7 * normal(rng);
    }
    const double sign = trial % 2 ? 1.0 : -1.0;
    for (std::size_t c = 0; c < K; ++c) {
      am[c] = sign * unit(rng);
      an[c] = sign * unit(rng);
    }
    const double kmn = rbf(xm, xn, gamma);
    auto merged = [&](double h, std::vector<double>& z, std::vector<double>& az) {
      z.resize(d);
      for (std::size_t i = 0; i < d; ++i) z[i] = h * xm[i] + (1 - h) * xn[i];
      az.resize(K);
      for (std::size_t c = 0; c < K; ++c) az[c] = am[c] * rbf(xm, z, gamma) + an[c] * rbf(xn, z, gamma);
    };
    std::vector<double> z, az;
    const double h = budget_merge::best_h(am.data(), an.data(), K, kmn);
    merged(h, z, az);
    const double e = budget_merge::degradation(am.data(), an.data(), K, kmn, h);
    CHECK(e == Approx(explicit_loss(xm, xn, z, am, an, az, gamma)).margin(1e-9));
    double removal = 0.0;
    for (double a : am) removal += a * a;
    CHECK(e <= removal + 1e-12);
    for (int g = 0; g <= 1000; ++g) {
      const double hg = g / 1000.0;
      CHECK(e <= budget_merge::degradation(am.data(), an.data(), K, kmn, hg) + 1e-7);
    }
  }
}

TEST_CASE("budget merge: kernel Pegasos equals a brute-force merging loop, merging beats removal", "[kernel]") {
  const Dataset ds = fixtures::gaussian(160, 5, 41, 1.0);
  const double gamma = 0.4;
  const EngineSettings s = merge_pegasos_settings(1e-3, 4);
  KernelSettings k;
  k.kernel.type = KernelType::kRbf;
  k.kernel.gamma = gamma;
  k.cache_megabytes = 0;
  k.max_support_vectors = 15;
  k.merge_budget = true;
  const KernelModel km = train_kernel(ds, k, s);
  const NaiveMerge ref = naive_merging(ds, gamma, s, k.max_support_vectors);
  INFO(ref.sv.size() << " support vectors, " << ref.evictions << " merges");
  REQUIRE(ref.evictions > 20);
  REQUIRE(km.num_support_vectors() == ref.sv.size());
  CHECK(km.training.evictions.value() == ref.evictions);
  for (std::size_t i = 0; i < ref.sv.size(); ++i) {
    const RowView x = km.support_vector(i);
    std::vector<float> got(ds.dimension, 0.0f);
    for (std::uint32_t p = 0; p < x.nnz; ++p) got[x.indices[p]] = x.values[p];
    for (std::size_t f = 0; f < got.size(); ++f) CHECK(got[f] == Approx(ref.sv[i][f]).margin(1e-5));
    CHECK(km.coefficients[i] == Approx(ref.coef[i]).margin(1e-6));
  }
  // The summary's objective (the Gram sum over merged points) is the model's.
  CHECK(*km.training.objective == Approx(kernel_model_objective(km, ds)).epsilon(1e-9));
  // Deterministic, and the same on one thread; the file keeps the merged points.
  const std::string text = kernel_model_to_json(km);
  CHECK(kernel_model_to_json(train_kernel(ds, k, s)) == text);
  {
    const tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
    CHECK(kernel_model_to_json(train_kernel(ds, k, s)) == text);
  }
  CHECK(kernel_model_objective(kernel_model_from_json(text, "m.json"), ds) ==
        Approx(*km.training.objective).epsilon(1e-9));
  // Removal drops what merging keeps: a higher training objective.
  k.merge_budget = false;
  const KernelModel removed = train_kernel(ds, k, s);
  CHECK(*km.training.objective < *removed.training.objective);
}

TEST_CASE("budget_maintenance: merge by default for rbf with a budget, errors name the setting", "[kernel][config]") {
  auto with = [](nlohmann::json j) {
    j["objective"] = "kernel_hinge";
    return config_from_json(j, "c.json");
  };
  CHECK(with({{"max_support_vectors", 100}}).kernel.merge_budget);
  CHECK(with({{"max_support_vectors", 100}}).resolved["budget_maintenance"] == "merge");
  CHECK_FALSE(with({{"max_support_vectors", 100}, {"budget_maintenance", "remove"}}).kernel.merge_budget);
  CHECK_FALSE(with({{"max_support_vectors", 100}, {"kernel", "polynomial"}}).kernel.merge_budget);
  CHECK_FALSE(with({}).kernel.merge_budget);
  CHECK_FALSE(with({}).resolved.contains("budget_maintenance"));
  CHECK_THROWS_WITH(with({{"max_support_vectors", 100}, {"kernel", "linear"}, {"budget_maintenance", "merge"}}),
                    Catch::Contains("c.json: budget_maintenance: merge needs the rbf kernel"));
  CHECK_THROWS_WITH(with({{"budget_maintenance", "merge"}}), Catch::Contains("c.json: budget_maintenance: only used with a budget"));
  CHECK_THROWS_WITH(with({{"max_support_vectors", 10}, {"budget_maintenance", "merg"}}),
                    Catch::Contains("c.json: budget_maintenance: expected \"merge\" or \"remove\""));
  CHECK_THROWS_WITH(config_from_json({{"budget_maintenance", "merge"}}, "c.json"),
                    Catch::Contains("c.json: budget_maintenance: only used by objective"));
}
