// The budget refit (drivers/budget_refit.hpp): the refitted model's objective
// recomputed from the definition (RBF values by hand, in double), no point of
// the support vectors' span more than the tolerance below it (random
// directions around the solution), below the budgeted iterate's objective,
// the same bits on one thread, and the settings.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

#include <nlohmann/json.hpp>
#include <tbb/global_control.h>

#include "drivers/any_model.hpp"
#include "drivers/budget_refit.hpp"
#include "drivers/config.hpp"
#include "io/kernel_model_json.hpp"
#include "io/model_sections_json.hpp"
#include "tests/fixtures.hpp"

using namespace pegasos;

// Names unique among the tests: the unity build (PEGASOS_UNITY) joins
// test files into one translation unit, where helpers of one name clash.
namespace {

std::vector<double> refit_dense_row(const RowView& x, std::uint32_t d) {
  std::vector<double> v(d, 0.0);
  for (std::uint32_t j = 0; j < x.nnz; ++j) v[x.indices[j]] = x.values[j];
  return v;
}

double refit_rbf(const std::vector<double>& a, const std::vector<double>& b, double gamma) {
  double d2 = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) d2 += (a[i] - b[i]) * (a[i] - b[i]);
  return std::exp(-gamma * d2);
}

// Σ_c [λ/2 (‖Σ_s β_sc φ(s)‖² + b_c²) + mean_i max(0, 1 − y_ic f_c(x_i))] with
// β = scale · coefficients, from the definition: the support vectors and
// rows as dense vectors, every kernel value computed here.
struct ByHand {
  std::vector<std::vector<double>> sv, rows;
  std::vector<std::vector<double>> k_ss, k_is;  // Gram matrix, rows × support vectors
  ByHand(const KernelModel& km, const Dataset& ds) {
    for (std::size_t s = 0; s < km.num_support_vectors(); ++s) sv.push_back(refit_dense_row(km.support_vector(s), ds.dimension));
    for (std::size_t i = 0; i < ds.size(); ++i) rows.push_back(refit_dense_row(ds.row(i), ds.dimension));
    for (const auto& a : sv) {
      k_ss.emplace_back();
      for (const auto& b : sv) k_ss.back().push_back(refit_rbf(a, b, km.kernel.gamma));
    }
    for (const auto& x : rows) {
      k_is.emplace_back();
      for (const auto& s : sv) k_is.back().push_back(refit_rbf(x, s, km.kernel.gamma));
    }
  }
  double objective(const KernelModel& km, const Dataset& ds, const std::vector<double>& beta,
                   const std::vector<double>& b) const {
    const std::size_t m = sv.size(), K = km.columns();
    double total = 0.0;
    for (std::size_t c = 0; c < K; ++c) {
      double reg = b.empty() ? 0.0 : b[c] * b[c];
      for (std::size_t s = 0; s < m; ++s) {
        for (std::size_t t = 0; t < m; ++t) reg += beta[s * K + c] * beta[t * K + c] * k_ss[s][t];
      }
      double loss = 0.0;
      for (std::size_t i = 0; i < rows.size(); ++i) {
        double f = b.empty() ? 0.0 : b[c];
        for (std::size_t s = 0; s < m; ++s) f += beta[s * K + c] * k_is[i][s];
        const bool positive = K == 1 ? ds.labels[i] == 1 : ds.labels[i] == static_cast<int>(c);
        loss += std::max(0.0, 1.0 - (positive ? f : -f));
      }
      total += km.lambda / 2 * reg + loss / static_cast<double>(rows.size());
    }
    return total;
  }
};

std::vector<double> scaled_coefficients(const KernelModel& km) {
  std::vector<double> beta = km.coefficients;
  for (double& v : beta) v *= km.decision_scale();
  return beta;
}

TrainConfig budget_config(nlohmann::json extra) {
  nlohmann::json j = {{"objective", "kernel_hinge"}, {"kernel", {{"type", "rbf"}, {"gamma", 0.8}}},
                      {"lambda", 2e-3},          {"max_support_vectors", 12},
                      {"epochs", 3},             {"kernel_cache_mb", 0}};
  if (extra.is_object()) j.update(extra);
  return config_from_json(j, "c.json");
}

}  // namespace

TEST_CASE("budget refit: objective by hand, nothing better nearby in the span, below the budgeted iterate", "[kernel]") {
  const Dataset binary = fixtures::gaussian(150, 4, 17, 1.0);
  const Dataset three = fixtures::blobs(150, 4, 3, 23, 0.6);
  // A small γ on unit-norm rows: K_SS close to all ones, condition number
  // ~1e8 (a float map refitted such sets far above the span's optimum).
  const nlohmann::json flat = {{"kernel", {{"type", "rbf"}, {"gamma", 0.02}}}, {"lambda", 1e-6}};
  for (const auto& [ds, extra] : {std::pair{&binary, nlohmann::json::object()}, std::pair{&three, nlohmann::json::object()},
                                  std::pair{&binary, flat}}) {
    INFO(ds->source << " " << extra.dump());
    const KernelModel km = *train_any_model(budget_config(extra), *ds, nullptr, {}).kernel;
    nlohmann::json off = extra;
    off["budget_refit"] = false;
    const KernelModel iterate = *train_any_model(budget_config(off), *ds, nullptr, {}).kernel;
    REQUIRE(km.num_support_vectors() == 12);
    REQUIRE(iterate.num_support_vectors() == 12);
    const nlohmann::json refit = json_object_of(km.training.extra).at("budget_refit");
    CHECK(refit.at("converged") == true);
    CHECK(refit.at("relative_gap").get<double>() <= 1e-3);
    CHECK_FALSE(json_object_of(iterate.training.extra.empty() ? "{}" : iterate.training.extra).contains("budget_refit"));
    // The same support vectors: the refit changes coefficients only.
    for (std::size_t s = 0; s < 12; ++s) CHECK(km.support_vector(s).nnz == iterate.support_vector(s).nnz);

    const ByHand hand(km, *ds);
    const std::vector<double> beta = scaled_coefficients(km);
    const double p = hand.objective(km, *ds, beta, km.intercept);
    CHECK(p == Approx(*km.training.objective).epsilon(1e-6));
    CHECK(p < hand.objective(iterate, *ds, scaled_coefficients(iterate), iterate.intercept));
    // A certified gap of 1e-3: no point of the span (β, b) is lower by more.
    std::mt19937_64 rng(5);
    std::normal_distribution<double> normal;
    int tried = 0;
    for (double step : {1e-3, 1e-2, 1e-1, 1.0}) {
      for (int trial = 0; trial < 40; ++trial, ++tried) {
        std::vector<double> b2 = beta, i2 = km.intercept;
        for (double& v : b2) v += step * normal(rng);
        for (double& v : i2) v += step * normal(rng);
        CHECK(hand.objective(km, *ds, b2, i2) >= p * (1 - 1e-3));
      }
    }
    CHECK(tried == 160);
    // The certificate's two problems agree: the features' objective is the kernel one.
    CHECK(refit.at("objective_on_features").get<double>() == Approx(p).epsilon(5e-4));
  }
}

TEST_CASE("budget refit: the same model on one thread and in its file", "[kernel]") {
  const Dataset ds = fixtures::blobs(200, 5, 4, 3, 0.7);
  const std::string text = kernel_model_to_json(*train_any_model(budget_config({}), ds, nullptr, {}).kernel);
  const tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
  CHECK(kernel_model_to_json(*train_any_model(budget_config({}), ds, nullptr, {}).kernel) == text);
  const KernelModel back = kernel_model_from_json(text, "m.json");
  CHECK(json_object_of(back.training.extra).contains("budget_refit"));
}

TEST_CASE("budget_refit: rbf's default with a budget, echoed only then, errors name the setting", "[kernel][config]") {
  auto with = [](nlohmann::json j) {
    j["objective"] = "kernel_hinge";
    return config_from_json(j, "c.json");
  };
  CHECK(with({{"max_support_vectors", 100}}).kernel.budget_refit);
  CHECK(with({{"max_support_vectors", 100}}).resolved["budget_refit"] == true);
  CHECK_FALSE(with({{"max_support_vectors", 100}, {"budget_refit", false}}).kernel.budget_refit);
  CHECK_FALSE(with({{"max_support_vectors", 100}, {"kernel", "polynomial"}}).kernel.budget_refit);
  CHECK_FALSE(with({{"max_support_vectors", 100}, {"kernel", "polynomial"}}).resolved.contains("budget_refit"));
  CHECK_FALSE(with({}).resolved.contains("budget_refit"));
  CHECK_THROWS_WITH(with({{"max_support_vectors", 100}, {"kernel", "linear"}, {"budget_refit", true}}),
                    Catch::Contains("c.json: budget_refit: needs the rbf kernel"));
  CHECK_THROWS_WITH(with({{"budget_refit", true}}), Catch::Contains("c.json: budget_refit: only used with a budget"));
  CHECK_THROWS_WITH(with({{"max_support_vectors", 10}, {"budget_refit", "yes"}}),
                    Catch::Contains("c.json: budget_refit: expected true or false"));
  // Class-balanced sampling: the refit (unweighted) is off by default, an error when asked for.
  CHECK_FALSE(with({{"max_support_vectors", 100}, {"sampling", "balanced"}}).kernel.budget_refit);
  CHECK(with({{"max_support_vectors", 100}, {"sampling", "balanced"}}).resolved["budget_refit"] == false);
  CHECK_THROWS_WITH(with({{"max_support_vectors", 100}, {"sampling", "balanced"}, {"budget_refit", true}}),
                    Catch::Contains("c.json: budget_refit: solves the unweighted problem"));
  CHECK_THROWS_WITH(config_from_json({{"budget_refit", false}}, "c.json"),
                    Catch::Contains("c.json: budget_refit: only used by objective"));
}

TEST_CASE("budget refit: above its limit the iterate stays and the record says why", "[kernel]") {
  const Dataset ds = fixtures::gaussian(120, 4, 9, 1.0);
  const TrainConfig c = budget_config({{"budget_refit", false}});
  KernelModel km = *train_any_model(c, ds, nullptr, {}).kernel;
  const std::vector<double> before = km.coefficients;
  const double objective = *km.training.objective;
  km.training.objective.reset();  // as train_any_model leaves it when a refit is planned
  km.training.regularizer.reset();
  refit_budget(c, ds, km, 120 * 12 - 1);
  CHECK(km.coefficients == before);
  REQUIRE(km.training.objective);  // a skipped refit still reports the iterate's objective
  CHECK(*km.training.objective == Approx(objective).epsilon(1e-9));
  const std::string why = json_object_of(km.training.extra).at("budget_refit").at("skipped");
  CHECK_THAT(why, Catch::Contains("120 rows × 12 support vectors") && Catch::Contains("1439 mapped values"));
  refit_budget(c, ds, km, 120 * 12);  // at the limit: refitted
  CHECK(km.coefficients != before);
  CHECK(json_object_of(km.training.extra).at("budget_refit").at("converged") == true);
}
