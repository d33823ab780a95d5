// Per-example sample weights (Dataset::weights, README § Sample weights):
// the weighted objective is λ/2‖w‖² + (1/Σs) Σ s_i c_{y_i} ℓ_i, so integer
// weights are repeated rows, weight 0 is a removed row, equal weights are no
// weights (byte for byte), for every linear objective and both solvers.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/errors.hpp"
#include "drivers/any_model.hpp"
#include "drivers/api.hpp"
#include "drivers/config.hpp"
#include "drivers/experiment.hpp"
#include "tests/fixtures.hpp"
#include "tests/reference/dual_cd.hpp"
#include "tests/test_util.hpp"

using namespace pegasos;

namespace {

// Integer weights 0..3 (about a quarter each), every class keeping rows.
std::vector<double> integer_weights(std::size_t n) {
  std::vector<double> w(n);
  for (std::size_t i = 0; i < n; ++i) w[i] = static_cast<double>((i * 7 + i / 5) % 4);
  return w;
}

// Each row i of `ds` repeated w_i times (0: left out), in order.
Dataset repeated(const Dataset& ds, const std::vector<double>& w) {
  std::vector<std::size_t> rows;
  for (std::size_t i = 0; i < ds.size(); ++i) {
    for (int k = 0; k < static_cast<int>(w[i]); ++k) rows.push_back(i);
  }
  return subset(ds, rows);
}

Dataset weighted(Dataset ds, const std::vector<double>& w) {
  set_sample_weights(ds, w, "weights");
  return ds;
}

nlohmann::json train_json(Dataset ds, std::vector<std::string> sets) {
  return nlohmann::json::parse(api::train(api::Settings::load("", sets), std::move(ds)).to_json());
}

double objective_of(const nlohmann::json& model) { return model["training"]["objective"].get<double>(); }

// λ/2(‖w‖² + b²) + (1/Σs) Σ s_i max(0, 1 − y_i(w·x_i + b)), written out (bias feature).
double direct_objective(const Dataset& ds, const std::vector<double>& s, const pegasos::Model& model, double lambda) {
  const std::vector<double>& w = model.weights;
  const double b = model.bias[0];
  double sq = b * b, loss = 0.0, sum = 0.0;
  for (double v : w) sq += v * v;
  for (std::size_t i = 0; i < ds.size(); ++i) {
    const RowView x = ds.row(i);
    double score = b;
    for (std::uint32_t j = 0; j < x.nnz; ++j) score += w[x.indices[j]] * x.values[j];
    loss += s[i] * std::max(0.0, 1.0 - (ds.labels[i] == 1 ? 1.0 : -1.0) * score);
    sum += s[i];
  }
  return lambda / 2 * sq + loss / sum;
}

}  // namespace

TEST_CASE("sample weights: the objective is the weighted one, written out and from the reference solver",
          "[weights]") {
  const double lambda = 1e-2;
  const Dataset ds = fixtures::gaussian(300, 8, 3, 0.8);
  std::vector<double> s(ds.size());
  for (std::size_t i = 0; i < s.size(); ++i) s[i] = i % 5 == 0 ? 0.0 : 0.25 + 0.5 * static_cast<double>(i % 7);
  const Dataset wds = weighted(ds, s);
  REQUIRE(wds.size() == ds.size() - (ds.size() + 4) / 5);  // the rows of weight 0 are gone
  double mean = 0.0;
  for (float v : wds.weights) mean += v / static_cast<double>(wds.size());
  CHECK(mean == Approx(1.0).epsilon(1e-6));
  const api::Model trained =
      api::train(api::Settings::load("", {"objective=hinge", "lambda=0.01", "tolerance=1e-7", "max_epochs=5000"}), wds);
  const nlohmann::json m = nlohmann::json::parse(trained.to_json());
  REQUIRE(m["training"]["converged"].get<bool>());
  CHECK(objective_of(m) == Approx(direct_objective(ds, s, *trained.any().linear, lambda)).epsilon(1e-6));
  // The independent dual coordinate descent solver with per-example costs s_i·n/Σs.
  reference::Problem p = fixtures::to_problem(wds, true);
  for (std::size_t i = 0; i < wds.size(); ++i) p.weight.push_back(wds.row(i).weight);
  const double p_star = reference::primal(p, reference::solve(p, lambda), lambda);
  CHECK(objective_of(m) <= p_star * (1 + 1e-6));
  CHECK(objective_of(m) >= p_star * (1 - 1e-9));
}

TEST_CASE("sample weights: integer weights give the optimum of the repeated rows", "[weights]") {
  const std::string objective = GENERATE("hinge", "weighted_hinge", "ova", "multiclass_hinge");
  const std::string solver = GENERATE("sdca", "pegasos");
  CAPTURE(objective, solver);
  const bool multiclass = objective == "ova" || objective == "multiclass_hinge";
  const Dataset ds = multiclass ? fixtures::blobs(150, 5, 3, 8, 0.8) : fixtures::gaussian(150, 6, 4, 0.8);
  const std::vector<double> w = integer_weights(ds.size());
  const double tolerance = solver == "sdca" ? 1e-6 : 1e-3;
  std::vector<std::string> sets{"objective=" + objective, "solver=" + solver, "lambda=0.01",
                                "tolerance=" + std::to_string(tolerance), "max_epochs=3000"};
  if (objective == "weighted_hinge") sets.push_back(R"(class_weight={"1": 3, "-1": 0.5})");
  if (objective == "ova") sets.push_back("class_weight=\"balanced\"");
  const nlohmann::json a = train_json(weighted(ds, w), sets);
  const nlohmann::json b = train_json(repeated(ds, w), sets);
  INFO("weighted " << a["training"].dump() << "\nrepeated " << b["training"].dump());
  REQUIRE(a["training"]["converged"].get<bool>());
  REQUIRE(b["training"]["converged"].get<bool>());
  // Both within the certified gap of one optimum P*: |P_a − P_b| ≤ tolerance·P*.
  CHECK(std::abs(objective_of(a) - objective_of(b)) <= 2 * tolerance * objective_of(b));
}

TEST_CASE("sample weights: an ill-conditioned weighted problem certifies through the polish / interior point",
          "[weights]") {
  // Glass-like conditioning at C = 10: the binary fixture is tests/test_box_qp.cpp's, where
  // coordinate ascent alone needed 13791 passes unweighted. The hand-overs see the weighted box
  // bounds (signed_cost, C_i) and must still certify (measured here: 62 and 72 passes).
  const std::string objective = GENERATE("hinge", "multiclass_hinge");
  CAPTURE(objective);
  const Dataset ds = objective == "hinge" ? fixtures::ill_conditioned(fixtures::gaussian(200, 5, 4, 1.0))
                                          : fixtures::ill_conditioned(fixtures::blobs(200, 4, 3, 5, 0.9));
  const std::vector<double> w = integer_weights(ds.size());
  const std::vector<std::string> sets{"objective=" + objective, "lambda=" + std::to_string(0.1 / 200),
                                      "tolerance=5e-4"};
  const nlohmann::json a = train_json(weighted(ds, w), sets);
  const nlohmann::json b = train_json(repeated(ds, w), sets);
  INFO("weighted " << a["training"].dump() << "\nrepeated " << b["training"].dump());
  REQUIRE(a["training"]["converged"].get<bool>());
  REQUIRE(b["training"]["converged"].get<bool>());
  CHECK(a["training"]["epochs"].get<double>() < 2000);
  CHECK(std::abs(objective_of(a) - objective_of(b)) <= 1e-3 * objective_of(b));
}

TEST_CASE("sample weights: weight 0 removes the row, equal weights are no weights, byte for byte", "[weights]") {
  const Dataset ds = fixtures::gaussian(200, 6, 5, 0.8);
  const std::vector<std::string> sets{"lambda=0.001"};
  const std::string plain = train_json(ds, sets).dump();
  CHECK(train_json(weighted(ds, std::vector<double>(ds.size(), 1.0)), sets).dump() == plain);
  CHECK(train_json(weighted(ds, std::vector<double>(ds.size(), 2.5)), sets).dump() == plain);
  // 0/1 weights: exactly the subset (the same rows in the same order).
  std::vector<double> keep(ds.size());
  std::vector<std::size_t> rows;
  for (std::size_t i = 0; i < ds.size(); ++i) {
    keep[i] = i % 4 == 1 ? 0.0 : 1.0;
    if (keep[i] > 0) rows.push_back(i);
  }
  CHECK(train_json(weighted(ds, keep), sets).dump() == train_json(subset(ds, rows), sets).dump());
  // With other weights: weight 0 = the row removed, the rest weighted alike.
  std::vector<double> w = integer_weights(ds.size());
  for (std::size_t i = 0; i < ds.size(); ++i) w[i] = keep[i] * (1.0 + w[i]);
  std::vector<double> w_kept;
  for (std::size_t i : rows) w_kept.push_back(w[i]);
  const nlohmann::json with_zeros = train_json(weighted(ds, w), sets);
  CHECK(with_zeros.dump() == train_json(weighted(subset(ds, rows), w_kept), sets).dump());
  CHECK(with_zeros["training"]["sample_weights"].get<std::string>().find("scaled to mean 1") == 0);
}

TEST_CASE("sample weights: weights past float's range are relative too (1e39, 1e-45), never an internal error",
          "[weights]") {
  const Dataset ds = fixtures::gaussian(200, 6, 5, 0.8);
  const std::vector<std::string> sets{"lambda=0.001"};
  std::vector<double> w = integer_weights(ds.size());
  for (double& v : w) v += 1.0;  // 1..4
  const std::string plain = train_json(weighted(ds, w), sets).dump();
  for (double scale : {1e39, 1e300, 1e-40, 1e-300}) {
    INFO("scale " << scale);
    std::vector<double> big = w;
    for (double& v : big) v *= scale;
    const nlohmann::json m = train_json(weighted(ds, big), sets);
    CHECK(std::isfinite(objective_of(m)));
    // Divided by the largest first: the same relative weights up to float rounding.
    CHECK(objective_of(m) == Approx(objective_of(nlohmann::json::parse(plain))).epsilon(1e-5));
  }
  // One huge weight among ones: the others are ~1e-39 of it or less, stored
  // as float's smallest numbers (rows of negligible weight, not left out:
  // no "every row of class -1 has weight 0"), and training still succeeds.
  std::vector<double> one(ds.size(), 1.0);
  one[6] = 1e39;
  CHECK(std::isfinite(objective_of(train_json(weighted(ds, one), sets))));
  one[6] = 1e300;
  CHECK(std::isfinite(objective_of(train_json(weighted(ds, one), {"lambda=0.001", "objective=multiclass_hinge"}))));
}

TEST_CASE("sample weights: bad weights and the kernel objective are refused", "[weights]") {
  Dataset ds = fixtures::gaussian(20, 3, 6);
  using Catch::Contains;
  CHECK_THROWS_WITH(set_sample_weights(ds, std::vector<double>(19, 1.0), "w.txt"),
                    Contains("w.txt: 19 weights for 20 training rows"));
  std::vector<double> w(20, 1.0);
  w[3] = -1.0;
  CHECK_THROWS_WITH(set_sample_weights(ds, w, "w.txt"), Contains("weight of row 4"));
  w[3] = std::nan("");
  CHECK_THROWS_AS(set_sample_weights(ds, w, "w.txt"), InputError);
  CHECK_THROWS_WITH(set_sample_weights(ds, std::vector<double>(20, 0.0), "w.txt"), Contains("every weight is 0"));
  CHECK_THROWS_WITH(api::Settings::load("", {"objective=kernel_hinge", "weights_file=\"w.txt\""}),
                    Contains("weights_file"));
  std::vector<double> s(20, 1.0);
  s[0] = 2.0;
  CHECK_THROWS_WITH(api::train(api::Settings::load("", {"objective=kernel_hinge"}), weighted(ds, s)),
                    Contains("does not support per-example weights"));
}

TEST_CASE("sample weights: cross-validation folds and lambda auto carry the weights", "[weights]") {
  const Dataset ds = fixtures::gaussian(200, 6, 9, 0.8);
  std::vector<double> w = integer_weights(ds.size());
  for (double& v : w) v += 1.0;
  // Subsets keep their rows' weights, scaled to mean 1 again.
  const Dataset wds = weighted(ds, w);
  const Dataset part = subset(wds, {0, 1, 2, 3});
  double sum = 0.0;
  for (float v : part.weights) sum += v;
  CHECK(sum == Approx(4.0).epsilon(1e-6));
  CHECK(part.weights[1] / part.weights[0] == Approx(wds.weights[1] / wds.weights[0]).epsilon(1e-6));
  // lambda auto: the weighted and the repeated data choose along the same kind of curve and both certify.
  const nlohmann::json m = train_json(wds, {"lambda=\"auto\"", "cv_folds=3"});
  CHECK(m["training"]["converged"].get<bool>());
  CHECK(m["training"].contains("selection"));
}

TEST_CASE("sample weights: a warm start from a weighted model resumes at its optimum, transfer is weighted too",
          "[weights]") {
  const testutil::TempDir dir("weights-warm");
  const Dataset ds = fixtures::gaussian(200, 6, 21, 0.8);
  std::vector<double> w = integer_weights(ds.size());
  for (double& v : w) v = 0.5 + v;
  const std::vector<std::string> sets{"lambda=0.01", "tolerance=1e-6"};
  const api::Model cold = api::train(api::Settings::load("", sets), weighted(ds, w));
  cold.save(dir.file("cold.json"));
  std::vector<std::string> warm_sets = sets;
  warm_sets.push_back("init_model=\"" + dir.file("cold.json") + "\"");
  const nlohmann::json a = nlohmann::json::parse(cold.to_json());
  const nlohmann::json b = train_json(weighted(ds, w), warm_sets);
  REQUIRE(b["training"]["converged"].get<bool>());
  CHECK(b["training"]["epochs"].get<double>() <= 3.0);  // stored duals: fractions of the weighted box bounds
  CHECK(objective_of(b) == Approx(objective_of(a)).epsilon(2e-6));
  // Transfer: the weighted hinge in u = w − w_R with offsets, against the reference solver.
  cold.save(dir.file("source.json"));
  const nlohmann::json t = train_json(weighted(ds, w), {"objective=transfer", "lambda=0.1", "tolerance=1e-7",
                                                        "source_model=\"" + dir.file("source.json") + "\""});
  REQUIRE(t["training"]["converged"].get<bool>());
  const Dataset wds = weighted(ds, w);
  const pegasos::Model& source = *cold.any().linear;
  reference::Problem p = fixtures::to_problem(wds, true);
  for (std::size_t i = 0; i < wds.size(); ++i) {
    const RowView x = wds.row(i);
    double o = source.bias[0];  // the source model's whole score: w_R·x + b_R
    for (std::uint32_t j = 0; j < x.nnz; ++j) o += source.weights[x.indices[j]] * x.values[j];
    p.offset.push_back(o);
    p.weight.push_back(x.weight);
  }
  const double p_star = reference::primal(p, reference::solve(p, 0.1), 0.1);
  // The model's objective is λ/2 (‖w − w_R‖² + (b − b_R)²) + weighted loss: the reference's in (u, u_b).
  CHECK(objective_of(t) == Approx(p_star).epsilon(1e-6));
}

#ifdef PEGASOS_BINARY
TEST_CASE("sample weights: pegasos train --weights, the file's errors exit 2 naming file:line", "[weights][cli]") {
  using Catch::Contains;
  const testutil::TempDir dir("weights");
  const Dataset ds = fixtures::gaussian(40, 4, 12, 0.9);
  const std::string data = dir.write("d.svm", fixtures::libsvm_text(ds));
  std::string text, doubled;
  for (std::size_t i = 0; i < ds.size(); ++i) text += i % 3 == 0 ? "+2\n" : " 0.5 \r\n";
  for (std::size_t i = 0; i < ds.size(); ++i) doubled += i % 3 == 0 ? "4\n" : "1\n";  // the same, times 2
  const std::string good = dir.write("w.txt", text), same = dir.write("w2.txt", doubled);
  const std::string model = dir.file("m.json"), model2 = dir.file("m2.json");
  const testutil::Run ok = testutil::pegasos_run(dir, "train -q --weights " + testutil::q(good) + " " +
                                                          testutil::q(data) + " " + testutil::q(model));
  REQUIRE(ok.code == 0);
  REQUIRE(testutil::pegasos_run(dir, "train -q --set weights_file=" + testutil::q("\"" + same + "\"") + " " +
                                         testutil::q(data) + " " + testutil::q(model2))
              .code == 0);
  CHECK(testutil::read_text(model) == testutil::read_text(model2));  // relative weights; the path is not stored
  // A UTF-8 byte-order mark before the first weight is skipped (it read as "weight '1' is not a number").
  const std::string bom = dir.write("w_bom.txt", "\xEF\xBB\xBF" + doubled), model3 = dir.file("m3.json");
  REQUIRE(testutil::pegasos_run(dir, "train -q --weights " + testutil::q(bom) + " " + testutil::q(data) + " " +
                                         testutil::q(model3))
              .code == 0);
  CHECK(testutil::read_text(model3) == testutil::read_text(model2));
  CHECK(testutil::read_text(model).find("sample_weights") != std::string::npos);
  auto fails = [&](const std::string& name, const std::string& content, const std::string& message) {
    const std::string path = dir.write(name, content);
    const testutil::Run r = testutil::pegasos_run(dir, "train --weights " + testutil::q(path) + " " +
                                                           testutil::q(data) + " " + testutil::q(dir.file("x.json")));
    INFO(r.err);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains(path + message));
  };
  fails("short.txt", "1\n2\n", ": 2 weights (lines) but");
  fails("neg.txt", "1\n1\n-1\n", ":3: weight '-1' must be a number from 0 to 1e15");
  fails("nan.txt", "1\nnan\n", ":2: weight 'nan' must be a number from 0 to 1e15");
  fails("word.txt", "1\nheavy\n", ":2: weight 'heavy' is not a number");
  fails("blank.txt", "1\n\n1\n", ":2: empty line");
}
#endif
