// kernel_approximation: the RFF and Nyström maps (core/feature_map.hpp) against
// the exact RBF kernel, their determinism, the model file section and the
// settings it cannot be combined with.
#include <cmath>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <tbb/global_control.h>

#include "core/errors.hpp"
#include "core/feature_map.hpp"
#include "drivers/api.hpp"
#include "io/feature_map_json.hpp"
#include "io/model_json.hpp"
#include "tests/fixtures.hpp"
#include "tests/test_util.hpp"

namespace {

using pegasos::Dataset;
using pegasos::FeatureMap;
using pegasos::FeatureMapSettings;
using pegasos::FeatureMapType;

// exp(−γ‖x_i − x_j‖²) computed naively in double.
double rbf_entry(const Dataset& ds, std::size_t i, std::size_t j, double gamma) {
  std::vector<double> a(ds.dimension, 0.0), b(ds.dimension, 0.0);
  const pegasos::RowView x = ds.row(i), y = ds.row(j);
  for (std::uint32_t e = 0; e < x.nnz; ++e) a[x.indices[e]] = x.values[e];
  for (std::uint32_t e = 0; e < y.nnz; ++e) b[y.indices[e]] = y.values[e];
  double d2 = 0;
  for (std::size_t k = 0; k < a.size(); ++k) d2 += (a[k] - b[k]) * (a[k] - b[k]);
  return std::exp(-gamma * d2);
}

double mapped_dot(const Dataset& z, std::size_t i, std::size_t j) {
  double s = 0;
  for (std::uint32_t k = 0; k < z.dimension; ++k) {
    s += static_cast<double>(z.values[i * z.dimension + k]) * z.values[j * z.dimension + k];
  }
  return s;
}

FeatureMapSettings map_settings(FeatureMapType type, std::uint32_t m, double gamma) {
  FeatureMapSettings s;
  s.type = type;
  s.components = m;
  s.gamma = gamma;
  return s;
}

}  // namespace

TEST_CASE("Nyström with every row a landmark reproduces the exact kernel matrix", "[feature_map]") {
  const Dataset ds = fixtures::gaussian(40, 6, 3, 0.7);
  const double gamma = 0.8;
  const FeatureMap f = pegasos::fit_feature_map(map_settings(FeatureMapType::kNystroem, 40, gamma), ds, 11);
  REQUIRE(f.output_dimension() == 40);  // the 40×40 kernel matrix is well conditioned: nothing clipped
  const Dataset z = f.map(ds);
  double worst = 0;
  for (std::size_t i = 0; i < ds.size(); ++i) {
    for (std::size_t j = 0; j < ds.size(); ++j) worst = std::max(worst, std::abs(mapped_dot(z, i, j) - rbf_entry(ds, i, j, gamma)));
  }
  INFO("largest |z(x)·z(y) − k(x, y)| = " << worst);
  CHECK(worst < 1e-4);
}

// The fitted projection is L^{-1} (triangular: the map's cheaper product);
// any rotation of it, as a model's Λ^{-1/2}Uᵀ from before was, maps by the
// general product to the same inner products; and duplicate landmarks (a
// singular K_mm) still factor, with the shift.
TEST_CASE("Nyström: a triangular L^{-1}, rotations of it map to the same inner products", "[feature_map]") {
  Dataset ds = fixtures::gaussian(60, 5, 2, 0.9);
  const FeatureMap f = pegasos::fit_feature_map(map_settings(FeatureMapType::kNystroem, 30, 0.5), ds, 3);
  REQUIRE(f.projection_triangular);
  const std::size_t m = f.components;
  FeatureMap rotated = f;  // rows reversed, every other one negated: Q·L^{-1}, Q orthogonal
  for (std::size_t i = 0; i < m; ++i) {
    const double sign = i % 2 == 0 ? 1.0 : -1.0;
    for (std::size_t j = 0; j < m; ++j) rotated.projection[i * m + j] = static_cast<float>(sign * f.projection[(m - 1 - i) * m + j]);
  }
  rotated.finish();
  REQUIRE_FALSE(rotated.projection_triangular);
  const Dataset z = f.map(ds), zr = rotated.map(ds);
  double worst = 0;
  for (std::size_t i = 0; i < ds.size(); ++i) {
    for (std::size_t j = 0; j < ds.size(); ++j) worst = std::max(worst, std::abs(mapped_dot(z, i, j) - mapped_dot(zr, i, j)));
  }
  INFO("largest difference of inner products = " << worst);
  CHECK(worst < 1e-5);
  CHECK(mapped_dot(zr, 0, 1) != 0.0);

  // Every landmark twice: K_mm has rank m/2, the factor needs the shift.
  Dataset twice = fixtures::gaussian(10, 4, 2, 0.9);
  Dataset doubled;
  doubled.dimension = twice.dimension;
  doubled.classes = twice.classes;
  for (int copy = 0; copy < 2; ++copy) {
    for (std::size_t i = 0; i < twice.size(); ++i) {
      const pegasos::RowView x = twice.row(i);
      doubled.append_row({x.indices, x.nnz}, {x.values, x.nnz}, x.label);
    }
  }
  const FeatureMap g = pegasos::fit_feature_map(map_settings(FeatureMapType::kNystroem, 20, 0.5), doubled, 5);
  const Dataset zd = g.map(doubled);
  double off = 0;
  for (std::size_t i = 0; i < doubled.size(); ++i) {
    for (std::size_t j = 0; j < doubled.size(); ++j) off = std::max(off, std::abs(mapped_dot(zd, i, j) - rbf_entry(doubled, i, j, 0.5)));
  }
  INFO("duplicate landmarks: largest |z(x)·z(y) − k(x, y)| = " << off);
  CHECK(off < 1e-3);
}

TEST_CASE("random Fourier features approach the RBF kernel as m grows", "[feature_map]") {
  const Dataset ds = fixtures::gaussian(12, 5, 4);
  const double gamma = 2.0;
  // Each term of z(x)·z(y) lies in [−2/m, 2/m]: by Hoeffding
  // P(|z(x)·z(y) − k| ≥ t) ≤ 2 exp(−m t²/8); with m = 20000 and t = 0.08
  // that is 3e-7 per pair (66 pairs).
  const FeatureMap f = pegasos::fit_feature_map(map_settings(FeatureMapType::kRff, 20000, gamma), ds, 5);
  const Dataset z = f.map(ds);
  double worst = 0, sum = 0;
  for (std::size_t i = 0; i < ds.size(); ++i) {
    for (std::size_t j = i; j < ds.size(); ++j) {
      const double err = std::abs(mapped_dot(z, i, j) - rbf_entry(ds, i, j, gamma));
      worst = std::max(worst, err);
      sum += err;
    }
  }
  INFO("largest error " << worst << ", mean " << sum / 78);
  CHECK(worst < 0.08);
  // And far fewer features are visibly worse on average (the O(1/√m) rate).
  const Dataset z_small = pegasos::fit_feature_map(map_settings(FeatureMapType::kRff, 50, gamma), ds, 5).map(ds);
  double sum_small = 0;
  for (std::size_t i = 0; i < ds.size(); ++i) {
    for (std::size_t j = i; j < ds.size(); ++j) sum_small += std::abs(mapped_dot(z_small, i, j) - rbf_entry(ds, i, j, gamma));
  }
  CHECK(sum_small > 3 * sum);
}

TEST_CASE("feature maps are the same for any thread count, by seed, wherever a row falls", "[feature_map]") {
  const Dataset ds = fixtures::gaussian(700, 30, 8, 0.5);  // three blocks of rows, sparse
  for (FeatureMapType type : {FeatureMapType::kRff, FeatureMapType::kNystroem}) {
    const FeatureMapSettings s = map_settings(type, 64, 0.0);  // gamma "scale"
    std::vector<float> one, two;
    {
      tbb::global_control limit(tbb::global_control::max_allowed_parallelism, 1);
      one = pegasos::fit_feature_map(s, ds, 9).map(ds).values.own();
    }
    {
      tbb::global_control limit(tbb::global_control::max_allowed_parallelism, 2);
      two = pegasos::fit_feature_map(s, ds, 9).map(ds).values.own();
    }
    CHECK(one == two);
    const FeatureMap f = pegasos::fit_feature_map(s, ds, 9);
    CHECK(f.gamma == Approx(pegasos::scale_gamma(ds)));
    CHECK(pegasos::fit_feature_map(s, ds, 10).map(ds).values != one);
    // Rows 300..449 mapped on their own (as predict maps a batch) give the same bits.
    std::vector<float> part(150 * f.output_dimension());
    f.map_rows(ds, 300, 450, part.data());
    CHECK(std::equal(part.begin(), part.end(), one.begin() + 300 * f.output_dimension()));
  }
}

TEST_CASE("a kernel-approximation model round-trips: the file predicts what the model in memory does", "[feature_map][io]") {
  const Dataset ds = fixtures::blobs(300, 8, 3, 21, 0.3);
  for (const char* type : {"rff", "nystroem"}) {
    const std::string set = std::string("kernel_approximation={\"type\": \"") + type + "\", \"components\": 40}";
    const auto settings = pegasos::api::Settings::load("", {set, "objective=ova", "lambda=0.001"});
    const pegasos::api::Model in_memory = pegasos::api::train(settings, ds);
    const std::string text = in_memory.to_json();
    CHECK(nlohmann::json::parse(text)["format_version"] == pegasos::kModelFormatVersionFeatureMap);
    const pegasos::api::Model loaded = pegasos::api::Model::parse(text, "model.json");
    CHECK(loaded.scores(ds) == in_memory.scores(ds));
    CHECK(loaded.to_json() == text);
    std::size_t right = 0;
    const std::vector<double> s = loaded.scores(ds);
    for (std::size_t i = 0; i < ds.size(); ++i) right += loaded.predict_class(&s[i * 3]) == ds.labels[i];
    CHECK(right > 0.9 * ds.size());
  }
}

TEST_CASE("a corrupt feature_map section names its field", "[feature_map][io]") {
  const Dataset ds = fixtures::gaussian(50, 4, 2);
  const auto settings = pegasos::api::Settings::load("", {"kernel_approximation={\"type\": \"nystroem\", \"components\": 5}"});
  const nlohmann::json good = nlohmann::json::parse(pegasos::api::train(settings, ds).to_json());
  auto broken = [&](const char* field, const nlohmann::json& value) {
    nlohmann::json j = good;
    j["feature_map"][field] = value;
    return j.dump();
  };
  using Catch::Contains;
  CHECK_THROWS_WITH(pegasos::api::Model::parse(broken("gamma", "x"), "m"), Contains("m: /feature_map/gamma"));
  CHECK_THROWS_WITH(pegasos::api::Model::parse(broken("projection", {1.0, 2.0}), "m"), Contains("/feature_map/projection"));
  CHECK_THROWS_WITH(pegasos::api::Model::parse(broken("basis", 3), "m"), Contains("/feature_map/basis"));
  CHECK_THROWS_WITH(pegasos::api::Model::parse(broken("input_dimension", 2), "m"), Contains("/feature_map/basis"));
  CHECK_THROWS_WITH(pegasos::api::Model::parse(broken("type", "rff"), "m"), Contains("/feature_map/offset"));
  nlohmann::json j = good;
  j["feature_map"].erase("seed");
  CHECK_THROWS_WITH(pegasos::api::Model::parse(j.dump(), "m"), Contains("/feature_map/seed: missing"));
}

TEST_CASE("kernel_approximation refuses what it cannot do, naming the setting", "[feature_map][config]") {
  using Catch::Contains;
  using pegasos::api::Settings;
  CHECK_THROWS_WITH(Settings::load("", {"objective=kernel_hinge", "kernel_approximation=rff"}), Contains("kernel_approximation"));
  CHECK_THROWS_WITH(Settings::load("", {"kernel_approximation={\"type\": \"rff\", \"components\": 0}"}),
                    Contains("kernel_approximation/components"));
  CHECK_THROWS_WITH(Settings::load("", {"kernel_approximation={\"type\": \"rbf\"}"}), Contains("kernel_approximation/type"));
  CHECK_THROWS_WITH(Settings::load("", {"kernel_approximation={\"type\": \"rff\", \"gamma\": -1}"}),
                    Contains("kernel_approximation/gamma"));
  CHECK_THROWS_WITH(Settings::load("", {"kernel_approximation={\"type\": \"rff\", \"m\": 3}"}), Contains("kernel_approximation/m"));
  CHECK_THROWS_WITH(Settings::load("", {"objective=transfer", "source_model=x.json", "kernel_approximation=rff"}),
                    Contains("kernel_approximation"));
  // A warm start keeps the old map: a different one, or none, is an error.
  const Dataset ds = fixtures::gaussian(60, 4, 6);
  testutil::TempDir dir;
  const std::string old = dir.file("old.json");
  pegasos::api::train(Settings::load("", {"kernel_approximation={\"type\": \"rff\", \"components\": 16}"}), ds).save(old);
  CHECK_THROWS_WITH(
      pegasos::api::train(Settings::load("", {"init_model=" + old, "kernel_approximation={\"type\": \"rff\", \"components\": 8}"}), ds),
      Contains("kernel_approximation: differs from the warm-start model's feature_map"));
  CHECK_THROWS_WITH(pegasos::api::train(Settings::load("", {"init_model=" + old}), ds), Contains("init_model"));
  const pegasos::api::Model warm =
      pegasos::api::train(Settings::load("", {"init_model=" + old, "kernel_approximation={\"type\": \"rff\", \"components\": 16}"}), ds);
  CHECK(nlohmann::json::parse(warm.to_json())["feature_map"] == nlohmann::json::parse(pegasos::api::Model::load(old).to_json())["feature_map"]);
}
