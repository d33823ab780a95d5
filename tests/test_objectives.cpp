// Objective plugins: loss/sub-gradient vs brute force, equivalences, and
// convergence to independent references (weighted, transfer, multiclass).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>

#include <tbb/global_control.h>

#include "core/engine.hpp"
#include "core/model.hpp"
#include "core/ova_trainer.hpp"
#include "drivers/config.hpp"
#include "drivers/registry.hpp"
#include "io/model_json.hpp"
#include "objectives/hinge.hpp"
#include "objectives/multiclass_hinge.hpp"
#include "objectives/transfer_hinge.hpp"
#include "objectives/weighted_hinge.hpp"
#include "tests/fixtures.hpp"
#include "tests/reference/multiclass_subgradient.hpp"

using namespace pegasos;

namespace {

EngineSettings plain(double lambda) {
  EngineSettings s;
  s.lambda = lambda;
  s.bias = BiasMode::kNone;
  return s;
}

// Numerical directional check: loss(s + h·e_k) − loss(s) ≈ h·coeff[k] away from kinks.
template <class O>
void check_subgradient(const O& o, const RowView& x, std::vector<double> scores) {
  const int K = o.num_outputs();
  std::vector<double> coeff(K);
  o.subgradient(x, scores.data(), coeff.data());
  const double base = o.loss(x, scores.data());
  for (int k = 0; k < K; ++k) {
    const double h = 1e-7;
    scores[k] += h;
    const double up = o.loss(x, scores.data());
    scores[k] -= h;
    CHECK((up - base) / h == Approx(coeff[k]).margin(1e-5));
  }
}

}  // namespace

TEST_CASE("loss and sub-gradient of every objective match brute force", "[objective]") {
  const float v[] = {0.5f};
  const std::uint32_t i[] = {0};
  Rng rng(GENERATE(1u, 2u, 3u, 4u, 5u));
  for (int trial = 0; trial < 50; ++trial) {
    const int label = static_cast<int>(rng.below(3));
    const RowView x{v, i, 1, label, 0};
    std::vector<double> s3 = {rng.uniform() * 4 - 2, rng.uniform() * 4 - 2, rng.uniform() * 4 - 2};
    // Multiclass: 1 + max_{r≠y} s_r − s_y, by brute force.
    double worst = -1e9;
    for (int r = 0; r < 3; ++r) {
      if (r != label) worst = std::max(worst, s3[r]);
    }
    const std::vector<double> cost = {1.0, 2.0, 0.5};
    MulticlassHinge mc(3, cost, 1.0);
    CHECK(mc.loss(x, s3.data()) == Approx(cost[label] * std::max(0.0, 1 + worst - s3[label])));
    check_subgradient(mc, x, s3);

    const RowView xb{v, i, 1, label % 2, 0};
    std::vector<double> s1 = {s3[0]};
    const double y = xb.label == 1 ? 1 : -1;
    CHECK(Hinge(1).loss(xb, s1.data()) == Approx(std::max(0.0, 1 - y * s1[0])));
    check_subgradient(Hinge(1), xb, s1);
    WeightedHinge wh(1, {3.0, 0.25}, 1.0);
    CHECK(wh.loss(xb, s1.data()) == Approx((xb.label == 1 ? 0.25 : 3.0) * std::max(0.0, 1 - y * s1[0])));
    check_subgradient(wh, xb, s1);
    TransferHinge th(1, {0.7}, 1.0);
    std::vector<double> shifted = s1;
    th.add_offset(xb, shifted.data());
    CHECK(shifted[0] == Approx(s1[0] + 0.7));
    check_subgradient(th, xb, s1);
  }
}

TEST_CASE("weighted hinge with unit costs is plain hinge, bit for bit", "[objective]") {
  const Dataset ds = fixtures::gaussian(300, 10, 4, 0.7);
  EngineSettings s = plain(1e-2);
  s.epochs = 5;
  const TrainResult a = train(ds, Hinge(1), s);
  const TrainResult b = train(ds, WeightedHinge(1, {1.0, 1.0}, 1.0), s);
  CHECK(a.weights == b.weights);
  CHECK(a.objective == b.objective);
}

TEST_CASE("weighted hinge with integer costs optimises the duplicated-rows objective", "[objective]") {
  // (1/n) Σ c_i h_i + λ/2‖w‖²  =  (n'/n)·[ (1/n') Σ_dup h + (λn/n')/2 ‖w‖² ]
  // with every row of class k repeated c_k times (n' rows in all).
  const Dataset ds = fixtures::gaussian(200, 8, 12, 0.8);
  const std::vector<double> cost = {1.0, 3.0};
  const double lambda = 1e-2;
  reference::Problem dup;
  const reference::Problem base = fixtures::to_problem(ds);
  for (std::size_t i = 0; i < base.x.size(); ++i) {
    for (int c = 0; c < static_cast<int>(cost[ds.labels[i]]); ++c) {
      dup.x.push_back(base.x[i]);
      dup.y.push_back(base.y[i]);
    }
  }
  const double n = double(base.x.size()), n_dup = double(dup.x.size());
  const double lambda_dup = lambda * n / n_dup;
  const double p_star = n_dup / n * reference::primal(dup, reference::solve(dup, lambda_dup), lambda_dup);

  double cbar = 0;
  for (int y : ds.labels) cbar += cost[y] / n;
  const TrainResult r = train(ds, WeightedHinge(1, cost, cbar), plain(lambda));
  INFO("P* via duplication " << p_star << ", weighted engine " << r.objective);
  CHECK(r.objective <= p_star * 1.01);
  CHECK(r.objective >= p_star * (1 - 1e-6));
}

TEST_CASE("class_weight \"balanced\" gives n/(2 n_k) and label costs go to the right class", "[objective]") {
  Dataset ds = fixtures::gaussian(10, 3, 1);
  for (std::size_t i = 0; i < ds.size(); ++i) ds.labels[i] = i < 2 ? 1 : 0;  // 2 positives, 8 negatives
  ds.classes = {"ham", "spam"};
  TrainConfig c = config_from_json({{"objective", "weighted_hinge"}, {"class_weight", "balanced"}, {"epochs", 1}}, "test");
  prepare_labels(c, ds);
  Model m = train_model(c, ds, {});
  const std::vector<double> cost = m.training.class_cost.value();
  CHECK(cost[0] == Approx(10.0 / 16));  // ham
  CHECK(cost[1] == Approx(10.0 / 4));   // spam

  c = config_from_json({{"objective", "weighted_hinge"}, {"class_weight", {{"spam", 5}}}, {"epochs", 1}}, "test");
  m = train_model(c, ds, {});
  CHECK(m.training.class_cost.value() == std::vector<double>{1.0, 5.0});

  c = config_from_json({{"objective", "weighted_hinge"}, {"class_weight", {{"eggs", 5}}}, {"epochs", 1}}, "test");
  CHECK_THROWS_WITH(train_model(c, ds, {}), Catch::Contains("eggs") && Catch::Contains("does not occur"));
}

TEST_CASE("transfer: w_R = 0 is plain hinge, objective matches an independent reference", "[objective]") {
  const Dataset ds = fixtures::gaussian(250, 10, 8, 0.8);
  const double lambda = 1e-2;
  EngineSettings s = plain(lambda);
  s.epochs = 4;
  const TrainResult plain_run = train(ds, Hinge(1), s);
  const TrainResult zero_source = train(ds, TransferHinge(1, std::vector<double>(ds.size(), 0.0), 1.0), s);
  CHECK(plain_run.weights == zero_source.weights);

  // A source model trained on other data from a related distribution.
  const Dataset source = fixtures::gaussian(250, 10, 99, 0.8, 0.4);
  const TrainResult src = train(source, Hinge(1), plain(lambda));
  const fixtures::SourceScores o = fixtures::source_scores(ds, src.weights);
  reference::Problem p = fixtures::to_problem(ds);
  p.offset = o.offset;
  const double p_star = reference::primal(p, reference::solve(p, lambda), lambda);  // in u = w − w_R
  const TrainResult r = train(ds, TransferHinge(1, o.offset, o.source_loss), plain(lambda));
  INFO("transfer P* " << p_star << " engine " << r.objective);
  CHECK(r.objective <= p_star * 1.01);
  CHECK(r.objective >= p_star * (1 - 1e-6));
}

TEST_CASE("transfer with a huge lambda returns the source model", "[objective]") {
  char dir_template[] = "/tmp/pegasos-transfer-XXXXXX";
  const std::string dir = mkdtemp(dir_template);
  Dataset source = fixtures::gaussian(300, 6, 3, 1.0, 0.8);
  TrainConfig sc = config_from_json({{"lambda", 1e-2}, {"bias", "none"}}, "test");
  Model src = train_model(sc, source, {});
  save_model(src, dir + "/source.json");

  Dataset target = fixtures::gaussian(50, 8, 4, 1.0, 0.8);  // two more features than the source
  TrainConfig tc = config_from_json(
      {{"objective", "transfer"}, {"source_model", dir + "/source.json"}, {"lambda", 1e4}, {"bias", "none"}, {"epochs", 5}},
      "test");
  const Model m = train_model(tc, target, {});
  REQUIRE(m.dimension == 8);
  for (std::uint32_t j = 0; j < 6; ++j) CHECK(m.weights[j] == Approx(src.weights[j]).margin(1e-3));
  CHECK(std::abs(m.weights[6]) < 1e-3);

  // A source model with other labels is refused, naming the labels.
  target.classes = {"ham", "spam"};
  CHECK_THROWS_WITH(train_model(tc, target, {}), Catch::Contains("labels"));
  std::remove((dir + "/source.json").c_str());
  rmdir(dir.c_str());
}

namespace {
// Two features u, v ∈ [0, 1): label u > 0.7 (flipped with probability 0.05),
// so a separating model needs an intercept well away from 0.
Dataset shifted_threshold(std::size_t n, std::uint64_t seed) {
  Rng rng(seed);
  Dataset ds;
  ds.classes = {"-1", "1"};
  ds.source = "shifted";
  for (std::size_t i = 0; i < n; ++i) {
    const float u = static_cast<float>(rng.uniform()), v = static_cast<float>(rng.uniform());
    int label = u > 0.7f ? 1 : 0;
    if (rng.uniform() < 0.05) label = 1 - label;
    const std::uint32_t idx[] = {0, 1};
    const float val[] = {u, v};
    ds.append_row(idx, val, label);
  }
  return ds;
}
}  // namespace

TEST_CASE("transfer regularises toward the source model's intercept too", "[objective]") {
  char dir_template[] = "/tmp/pegasos-transfer-XXXXXX";
  const std::string dir = mkdtemp(dir_template);
  const Dataset source = shifted_threshold(400, 5);
  Model src = train_model(config_from_json({{"lambda", 1e-3}, {"bias", "feature"}}, "test"), source, {});
  REQUIRE(src.bias[0] < -0.5);  // the source needs its intercept
  save_model(src, dir + "/source.json");
  const Dataset target = shifted_threshold(60, 6);

  // A huge λ returns the source model, intercept included (with bias none the
  // intercept is the prior's, b = b_R exactly).
  for (const char* bias : {"feature", "none"}) {
    INFO("bias " << bias);
    const Model m = train_model(
        config_from_json({{"objective", "transfer"}, {"source_model", dir + "/source.json"}, {"lambda", 1e5}, {"bias", bias}},
                         "test"),
        target, {});
    for (std::uint32_t j = 0; j < 2; ++j) CHECK(m.weights[j] == Approx(src.weights[j]).margin(1e-3));
    CHECK(m.bias[0] == Approx(src.bias[0]).margin(1e-3));
  }

  // At a moderate λ the model minimises λ/2 (‖w − w_R‖² + (b − b_R)²) + mean hinge:
  // an independent dual solver on the target with a constant feature 1 and the
  // source's whole score as the offset gives P*.
  const double lambda = 1e-2;
  const Model m = train_model(
      config_from_json({{"objective", "transfer"}, {"source_model", dir + "/source.json"}, {"lambda", lambda},
                        {"bias", "feature"}, {"tolerance", 1e-6}},
                       "test"),
      target, {});
  reference::Problem p = fixtures::to_problem(target, true);
  for (std::size_t i = 0; i < target.size(); ++i) {
    p.offset.push_back(src.bias[0] + src.weights[0] * p.x[i][0] + src.weights[1] * p.x[i][1]);
  }
  const double p_star = reference::primal(p, reference::solve(p, lambda), lambda);
  double reg = 0.0, loss = 0.0;
  for (std::uint32_t j = 0; j < 2; ++j) reg += (m.weights[j] - src.weights[j]) * (m.weights[j] - src.weights[j]);
  reg += (m.bias[0] - src.bias[0]) * (m.bias[0] - src.bias[0]);
  for (std::size_t i = 0; i < target.size(); ++i) {
    const double s = m.bias[0] + m.weights[0] * p.x[i][0] + m.weights[1] * p.x[i][1];
    loss += std::max(0.0, 1.0 - p.y[i] * s) / static_cast<double>(target.size());
  }
  const double p_model = lambda / 2 * reg + loss;
  INFO("P(model) " << p_model << " P* " << p_star);
  CHECK(p_model == Approx(p_star).epsilon(1e-4));
  CHECK(m.training.objective == Approx(p_model).epsilon(1e-9));
  std::remove((dir + "/source.json").c_str());
  rmdir(dir.c_str());
}

TEST_CASE("one-vs-all equals K independent binary runs with derived seeds, for any thread count", "[objective][ova]") {
  const Dataset ds = fixtures::blobs(300, 6, 4, 17, 0.5);
  EngineSettings s = plain(1e-3);
  s.epochs = 3;
  const std::vector<double> ones(4, 1.0);
  const TrainResult ova = train_one_vs_all(ds, 4, s, [&](int k) { return WeightedHinge(k, ones, 1.0); });
  for (int k = 0; k < 4; ++k) {
    EngineSettings sk = s;
    sk.seed = derive_seed(s.seed, static_cast<std::uint64_t>(k));
    const TrainResult one = train(ds, Hinge(k), sk);
    for (std::uint32_t j = 0; j < ds.dimension; ++j) REQUIRE(ova.weights[j * 4 + k] == one.weights[j]);
  }
  TrainResult serial;
  {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, 1);
    serial = train_one_vs_all(ds, 4, s, [&](int k) { return WeightedHinge(k, ones, 1.0); });
  }
  CHECK(serial.weights == ova.weights);
  CHECK(serial.bias == ova.bias);
}

TEST_CASE("one-vs-all with two classes is the binary model", "[objective][ova]") {
  Dataset ds = fixtures::gaussian(200, 5, 6);
  const TrainConfig binary = config_from_json({{"epochs", 3}}, "test");
  const TrainConfig ova = config_from_json({{"epochs", 3}, {"objective", "ova"}}, "test");
  const Model a = train_model(binary, ds, {});
  const Model b = train_model(ova, ds, {});
  CHECK(a.weights == b.weights);
  CHECK(a.bias == b.bias);
}

TEST_CASE("both multiclass objectives separate a separable 3-class problem", "[objective][ova]") {
  Dataset ds = fixtures::blobs(300, 5, 3, 23, 0.05);
  for (const char* objective : {"ova", "multiclass_hinge"}) {
    const TrainConfig c = config_from_json({{"objective", objective}, {"lambda", 1e-4}}, "test");
    const Model m = train_model(c, ds, {});
    std::size_t correct = 0;
    std::vector<double> scores(3);
    for (std::size_t i = 0; i < ds.size(); ++i) {
      m.scores(ds.row(i), scores.data());
      correct += m.predict_class(scores.data()) == ds.labels[i];
    }
    INFO(objective);
    CHECK(correct == ds.size());
  }
}

TEST_CASE("multiclass hinge objective within 1% of an independent reference", "[objective]") {
  const Dataset ds = fixtures::blobs(90, 5, 3, 31, 0.6);
  const double lambda = 0.05;
  reference::MulticlassProblem p;
  p.classes = 3;
  for (std::size_t i = 0; i < ds.size(); ++i) {
    std::vector<double> row(ds.dimension, 0.0);
    const RowView x = ds.row(i);
    for (std::uint32_t j = 0; j < x.nnz; ++j) row[x.indices[j]] = x.values[j];
    p.x.push_back(row);
    p.y.push_back(ds.labels[i]);
  }
  const double p_ref = reference::multiclass_primal(p, reference::multiclass_solve(p, lambda, 20000), lambda);
  const TrainResult r = train(ds, MulticlassHinge(3), plain(lambda));
  INFO("reference " << p_ref << " engine " << r.objective);
  CHECK(r.objective == Approx(p_ref).epsilon(0.01));
}
