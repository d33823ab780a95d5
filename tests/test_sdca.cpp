// The dual coordinate ascent solver (core/sdca.hpp) and the solver choice
// (core/solver.hpp, config "solver"): objectives against the independent
// reference solver, the duality-gap certificate, determinism, and which
// solver "auto" picks.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "core/errors.hpp"
#include "core/ova_trainer.hpp"
#include "core/sdca.hpp"
#include "core/solver.hpp"
#include "drivers/config.hpp"
#include "drivers/registry.hpp"
#include "objectives/hinge.hpp"
#include "objectives/multiclass_hinge.hpp"
#include "objectives/transfer_hinge.hpp"
#include "objectives/weighted_hinge.hpp"
#include "tests/fixtures.hpp"
#include "tests/reference/multiclass_subgradient.hpp"
#include "tests/test_util.hpp"

using namespace pegasos;
using testutil::bits;

namespace {

EngineSettings sdca(double lambda, BiasMode bias = BiasMode::kNone) {
  EngineSettings s;
  s.lambda = lambda;
  s.bias = bias;
  s.solver = Solver::kSdca;
  s.tolerance = 1e-6;
  s.max_epochs = 2000;
  return s;
}

// Converged at tolerance 1e-6 (sdca() above): the objective is the reference
// optimum to within the certified gap.
void check_certified(const TrainResult& r, const reference::Problem& p, double lambda) {
  const double p_star = reference::primal(p, reference::solve(p, lambda), lambda);
  INFO("P* " << p_star << " sdca " << r.objective);
  CHECK(r.converged);
  CHECK(r.objective <= p_star * (1 + 2e-6));
  CHECK(r.objective >= p_star * (1 - 1e-9));
}

}  // namespace

TEST_CASE("sdca: hinge objective meets the reference optimum, the gap certificate holds", "[sdca]") {
  // λn from 0.05 (where Pegasos cannot get close in 200 epochs) to 50.
  const double lambda = GENERATE(1e-4, 1e-3, 1e-2, 1e-1);
  const bool bias = GENERATE(false, true);
  CAPTURE(lambda, bias);
  const Dataset ds = fixtures::gaussian(500, 12, 7, 0.7);
  const reference::Problem p = fixtures::to_problem(ds, bias);
  const double p_star = reference::primal(p, reference::solve(p, lambda), lambda);
  EngineSettings s = sdca(lambda, bias ? BiasMode::kFeature : BiasMode::kNone);
  // At λn = 0.05 (C = 20 in LIBLINEAR's terms) coordinate ascent is slow to
  // reach 1e-6 too; ask for 1e-4 there.
  if (lambda < 1e-3) s.tolerance = 1e-4;
  const TrainResult r = train_sdca(ds, Hinge(1), s);
  INFO("P* " << p_star << " sdca " << r.objective << " epochs " << r.epochs);
  CHECK(r.converged);
  CHECK(std::string(r.solver) == "sdca");
  // Stopping at P − D ≤ tolerance·P certifies P ≤ P*(1 + ~tolerance).
  CHECK(r.objective <= p_star * (1 + 2 * s.tolerance));
  CHECK(r.objective >= p_star * (1 - 1e-9));
  // The reported objective is the objective of the returned weights.
  std::vector<double> w = r.weights;
  if (bias) w.push_back(r.bias[0]);
  CHECK(reference::primal(p, w, lambda) == Approx(r.objective).epsilon(1e-12));
}

TEST_CASE("sdca: weighted hinge and transfer meet their reference optima", "[sdca]") {
  // λn = 0.4 and 40 (the latter with the growing first pass: takes_growing_first_pass).
  const double lambda = GENERATE(1e-3, 1e-1);
  CAPTURE(lambda);
  const Dataset ds = fixtures::gaussian(400, 10, 11, 0.8);
  SECTION("weighted hinge (costs 3 and 0.5)") {
    const std::vector<double> cost{0.5, 3.0};
    reference::Problem p = fixtures::to_problem(ds);
    double mean_cost = 0;
    for (std::size_t i = 0; i < ds.size(); ++i) {
      p.weight.push_back(cost[static_cast<std::size_t>(ds.labels[i])]);
      mean_cost += p.weight.back() / static_cast<double>(ds.size());
    }
    check_certified(train_sdca(ds, WeightedHinge(1, cost, mean_cost), sdca(lambda)), p, lambda);
  }
  SECTION("transfer (score offsets from a source model)") {
    const Dataset source = fixtures::gaussian(300, 10, 99, 0.8, 0.4);
    const TrainResult src = train_sdca(source, Hinge(1), sdca(lambda));
    const fixtures::SourceScores o = fixtures::source_scores(ds, src.weights);
    reference::Problem p = fixtures::to_problem(ds);
    p.offset = o.offset;
    check_certified(train_sdca(ds, TransferHinge(1, o.offset, o.source_loss), sdca(lambda)), p, lambda);
  }
}

TEST_CASE("sdca: the same seed gives the same weights bit for bit, another seed other ones", "[sdca]") {
  const Dataset ds = fixtures::gaussian(300, 8, 5, 0.6);
  EngineSettings s = sdca(1e-3);
  s.epochs = 3;  // fixed work, so that the visiting order shows
  const TrainResult a = train_sdca(ds, Hinge(1), s);
  const TrainResult b = train_sdca(ds, Hinge(1), s);
  CHECK(bits(a.weights) == bits(b.weights));
  CHECK(a.iterations == 900);
  s.seed = 7;
  const TrainResult c = train_sdca(ds, Hinge(1), s);
  CHECK(bits(a.weights) != bits(c.weights));
}

TEST_CASE("sdca: empty rows and a one-row class do not break it", "[sdca]") {
  Dataset ds = fixtures::gaussian(60, 4, 3);
  ds.row_ptr.push_back(ds.row_ptr.back());  // an empty row of class 1
  ds.labels.push_back(1);
  const reference::Problem p = fixtures::to_problem(ds);
  const double lambda = 1e-2;
  const double p_star = reference::primal(p, reference::solve(p, lambda), lambda);
  const TrainResult r = train_sdca(ds, Hinge(1), sdca(lambda));
  CHECK(r.converged);
  CHECK(r.objective == Approx(p_star).epsilon(1e-5));
}

TEST_CASE("sdca: one-vs-all trains each class with sdca", "[sdca][ova]") {
  const Dataset ds = fixtures::blobs(300, 6, 4, 17, 0.5);
  EngineSettings s = sdca(1e-3);
  s.epochs = 4;
  const std::vector<double> ones(4, 1.0);
  const TrainResult ova = train_one_vs_all(ds, 4, s, [&](int k) { return WeightedHinge(k, ones, 1.0); });
  CHECK(std::string(ova.solver) == "sdca");
  for (int k = 0; k < 4; ++k) {
    EngineSettings sk = s;
    sk.seed = derive_seed(s.seed, static_cast<std::uint64_t>(k));
    const TrainResult one = train_sdca(ds, Hinge(k), sk);
    for (std::uint32_t j = 0; j < ds.dimension; ++j) REQUIRE(ova.weights[j * 4 + k] == one.weights[j]);
  }
}

TEST_CASE("solver auto: sdca for the linear objectives, pegasos when a Pegasos setting has a non-default value",
          "[sdca][config]") {
  Dataset ds = fixtures::gaussian(200, 5, 6);  // n = 200
  auto solver_of = [&](const nlohmann::json& settings) {
    const TrainConfig c = config_from_json(settings, "test");
    return train_model(c, ds, {}).training.solver.value();
  };
  CHECK(solver_of({{"lambda", 1e-3}}) == "sdca");                 // λn = 0.2
  CHECK(solver_of({{"lambda", 0.1}}) == "sdca");                  // λn = 20
  CHECK(solver_of({{"lambda", 1e-3}, {"solver", "pegasos"}}) == "pegasos");
  CHECK(solver_of({{"lambda", 0.1}, {"solver", "sdca"}}) == "sdca");
  CHECK(solver_of({{"lambda", 1e-3}, {"output", "last"}}) == "pegasos");
  CHECK(solver_of({{"lambda", 1e-3}, {"batch_size", 4}}) == "pegasos");
  CHECK(solver_of({{"lambda", 1e-3}, {"iterations", 500}}) == "pegasos");
  CHECK(solver_of({{"lambda", 1e-3}, {"bias", "unregularized"}}) == "pegasos");
  CHECK(solver_of({{"lambda", 1e-3}, {"objective", "multiclass_hinge"}}) == "sdca");
  CHECK(solver_of({{"lambda", 0.1}, {"objective", "multiclass_hinge"}}) == "sdca");
  CHECK(solver_of({{"lambda", 1e-3}, {"objective", "weighted_hinge"}, {"class_weight", "balanced"}}) == "sdca");
  // Writing a Pegasos setting's default out changes nothing.
  CHECK(solver_of({{"lambda", 1e-3}, {"output", "average"}, {"batch_size", 1}, {"sampling", "permutation"},
                   {"projection", true}, {"average_gamma", 10.0}, {"iterations", 0}}) == "sdca");
  CHECK_NOTHROW(config_from_json({{"solver", "sdca"}, {"output", "average"}}, "c.json"));
}

TEST_CASE("solver sdca: settings it cannot honour are config errors naming the key", "[sdca][config]") {
  using Catch::Contains;
  // kernel_hinge has its own SDCA (kernel/kernel_sdca.hpp), but no budget.
  CHECK_THROWS_WITH(config_from_json({{"solver", "sdca"}, {"objective", "kernel_hinge"}, {"max_support_vectors", 50}}, "c.json"),
                    Contains("max_support_vectors") && Contains("sdca"));
  CHECK_THROWS_WITH(config_from_json({{"solver", "sdca"}, {"bias", "unregularized"}}, "c.json"),
                    Contains("solver") && Contains("unregularized"));
  CHECK_THROWS_WITH(config_from_json({{"solver", "sdca"}, {"batch_size", 8}}, "c.json"), Contains("batch_size"));
  CHECK_THROWS_WITH(config_from_json({{"solver", "sdca"}, {"output", "last"}}, "c.json"), Contains("output"));
  CHECK_THROWS_WITH(config_from_json({{"solver", "dual"}}, "c.json"), Contains("solver"));
}

TEST_CASE("sdca multiclass (Crammer-Singer): at the optimum by the reference's own primal", "[sdca][multiclass]") {
  const double lambda = GENERATE(1e-3, 3e-2);
  const bool bias = GENERATE(false, true);
  CAPTURE(lambda, bias);
  const Dataset ds = fixtures::blobs(240, 5, 4, 37, 0.8);
  reference::MulticlassProblem p;
  p.classes = 4;
  for (std::size_t i = 0; i < ds.size(); ++i) {
    std::vector<double> row(ds.dimension + (bias ? 1 : 0), 0.0);
    const RowView x = ds.row(i);
    for (std::uint32_t j = 0; j < x.nnz; ++j) row[x.indices[j]] = x.values[j];
    if (bias) row.back() = 1.0;
    p.x.push_back(row);
    p.y.push_back(ds.labels[i]);
  }
  EngineSettings s = sdca(lambda, bias ? BiasMode::kFeature : BiasMode::kNone);
  if (lambda < 1e-2) s.tolerance = 1e-4;  // λn = 0.24: as in the binary case, 1e-6 takes thousands of passes
  const TrainResult r = train_sdca_multiclass(ds, MulticlassHinge(4), s);
  CHECK(r.converged);
  CHECK(std::string(r.solver) == "sdca");
  // W as the reference sees it (one row per class, the bias as the last feature).
  std::vector<std::vector<double>> W(4, std::vector<double>(p.x[0].size(), 0.0));
  for (std::size_t m = 0; m < 4; ++m) {
    for (std::uint32_t j = 0; j < ds.dimension; ++j) W[m][j] = r.weights[j * 4 + m];
    if (bias) W[m].back() = r.bias[m];
  }
  const double P = reference::multiclass_primal(p, W, lambda);
  CHECK(P == Approx(r.objective).epsilon(1e-12));
  // Optimality, independently of the solver's own duality gap: P is convex, so
  // no small step in any direction may lower it (beyond the certified gap).
  testutil::check_no_small_step_lowers(W, P, 2 * s.tolerance, 5,
                                       [&](const auto& V) { return reference::multiclass_primal(p, V, lambda); });
  // And no worse than the reference's long sub-gradient run, nor than Pegasos.
  const double p_ref = reference::multiclass_primal(p, reference::multiclass_solve(p, lambda, 4000), lambda);
  CHECK(P <= p_ref * (1 + 2 * s.tolerance));
  EngineSettings peg = s;
  peg.solver = Solver::kPegasos;
  peg.max_epochs = 200;
  peg.tolerance = 5e-4;
  CHECK(P <= train(ds, MulticlassHinge(4), peg).objective * (1 + 2 * s.tolerance));
}

TEST_CASE("sdca multiclass: an empty row does not keep it from converging", "[sdca][multiclass]") {
  Dataset ds = fixtures::blobs(200, 4, 3, 41, 0.8);
  ds.row_ptr.push_back(ds.row_ptr.back());  // an empty row of class 2: its loss is 1 whatever W is
  ds.labels.push_back(2);
  EngineSettings s = sdca(1e-2);
  s.tolerance = 1e-5;
  const TrainResult r = train_sdca_multiclass(ds, MulticlassHinge(3), s);
  CHECK(r.converged);
  CHECK(r.epochs < 500);
  EngineSettings peg = s;
  peg.solver = Solver::kPegasos;
  peg.max_epochs = 200;
  peg.tolerance = 5e-4;
  CHECK(r.objective <= train(ds, MulticlassHinge(3), peg).objective * (1 + 2e-5));
}

TEST_CASE("sdca multiclass: with class shrinking (10 classes, class costs) still at the optimum", "[sdca][multiclass]") {
  // 10 classes around 6 centres (classes k and k + 6 overlap): most examples
  // end with a few competing classes, so most (example, class) pairs are shrunk.
  const double lambda = GENERATE(1e-4, 1e-3, 1e-2);
  const bool costs = GENERATE(false, true);
  CAPTURE(lambda, costs);
  const std::size_t K = 10;
  const Dataset ds = fixtures::blobs(500, 6, static_cast<int>(K), 43, 0.9);
  std::vector<double> cost;
  double mean_cost = 1.0;
  if (costs) {
    cost = {0.5, 2.0, 1.0, 1.5, 0.7, 1.0, 3.0, 1.0, 0.9, 1.2};
    mean_cost = 0.0;
    for (std::size_t i = 0; i < ds.size(); ++i) mean_cost += cost[static_cast<std::size_t>(ds.labels[i])] / 500.0;
  }
  const MulticlassHinge objective(static_cast<int>(K), cost, mean_cost);
  EngineSettings s = sdca(lambda, BiasMode::kFeature);
  s.tolerance = 1e-5;
  const TrainResult r = train_sdca_multiclass(ds, objective, s);
  CHECK(r.converged);
  const auto W = fixtures::class_rows(r, ds.dimension, K);
  const double P = fixtures::cs_primal(ds, W, lambda, cost);
  CHECK(P == Approx(r.objective).epsilon(1e-12));
  // Optimal independently of the solver's own gap: no small step lowers P.
  testutil::check_no_small_step_lowers(W, P, 2 * s.tolerance, 9,
                                       [&](const auto& V) { return fixtures::cs_primal(ds, V, lambda, cost); });
  if (!costs) {  // no worse than the reference's long sub-gradient run (by its own primal)
    reference::MulticlassProblem ref;
    ref.classes = static_cast<int>(K);
    for (std::size_t i = 0; i < ds.size(); ++i) {
      std::vector<double> row(ds.dimension + 1, 0.0);
      const RowView x = ds.row(i);
      for (std::uint32_t j = 0; j < x.nnz; ++j) row[x.indices[j]] = x.values[j];
      row.back() = 1.0;
      ref.x.push_back(row);
      ref.y.push_back(ds.labels[i]);
    }
    CHECK(reference::multiclass_primal(ref, W, lambda) == Approx(P).epsilon(1e-12));
    CHECK(P <= reference::multiclass_primal(ref, reference::multiclass_solve(ref, lambda, 4000), lambda) *
                   (1 + 2 * s.tolerance));
  }
  // A fixed number of passes (no shrinking: every class of every example is
  // visited each pass) reaches the same objective.
  EngineSettings fixed = s;
  fixed.epochs = 1500;
  const TrainResult plain = train_sdca_multiclass(ds, objective, fixed);
  CHECK(r.objective <= plain.objective * (1 + 2 * s.tolerance));
  CHECK(plain.objective <= r.objective * (1 + 2 * s.tolerance));
  CHECK(r.epochs < 0.5 * plain.epochs);
}

TEST_CASE("sdca multiclass: with shrinking the same seed gives the same weights bit for bit", "[sdca][multiclass]") {
  const Dataset ds = fixtures::blobs(300, 12, 10, 47, 0.9);
  EngineSettings s = sdca(3e-3, BiasMode::kFeature);
  s.tolerance = 1e-4;
  const TrainResult a = train_sdca_multiclass(ds, MulticlassHinge(10), s);
  const TrainResult b = train_sdca_multiclass(ds, MulticlassHinge(10), s);
  CHECK(a.converged);
  CHECK(bits(a.weights) == bits(b.weights));
  CHECK(bits(a.bias) == bits(b.bias));
  CHECK(a.iterations == b.iterations);
  s.seed = 7;
  const TrainResult c = train_sdca_multiclass(ds, MulticlassHinge(10), s);
  CHECK(bits(a.weights) != bits(c.weights));
}

TEST_CASE("sdca: unscaled dense features (an ill-conditioned dual) converge, to the reference optimum", "[sdca]") {
  // Columns scaled 1 to 43 (as raw measurements): the free examples are
  // nearly dependent, and coordinate ascent alone needed 10k (C = 10) to 43k
  // (C = 100) passes for a gap of 1e-4; with the free-face CG steps about 2k
  // to 3.6k.
  Dataset ds = fixtures::gaussian(300, 8, 21, 1.0, 0.8);
  for (std::size_t i = 0; i < ds.size(); ++i) {
    for (std::uint64_t k = ds.row_ptr[i]; k < ds.row_ptr[i + 1]; ++k) {
      ds.values.own()[k] = static_cast<float>(ds.values[k] * (1.0 + 6.0 * ds.indices[k]));
    }
  }
  const bool weighted = GENERATE(false, true);
  const double C = GENERATE(10.0, 100.0);
  CAPTURE(weighted, C);
  const double lambda = 1.0 / (C * static_cast<double>(ds.size()));
  reference::Problem p = fixtures::to_problem(ds, true);
  EngineSettings s = sdca(lambda, BiasMode::kFeature);
  s.tolerance = 1e-4;
  s.max_epochs = 8000;
  TrainResult r;
  if (weighted) {
    const std::vector<double> cost{0.7, 1.6};  // about "balanced" for 60/40
    double mean_cost = 0;
    for (std::size_t i = 0; i < ds.size(); ++i) {
      p.weight.push_back(cost[static_cast<std::size_t>(ds.labels[i])]);
      mean_cost += p.weight.back() / static_cast<double>(ds.size());
    }
    r = train_sdca(ds, WeightedHinge(1, cost, mean_cost), s);
  } else {
    r = train_sdca(ds, Hinge(1), s);
  }
  // The reference's dual coordinate descent is not at its tolerance after
  // 200k sweeps here either: the certificate is the solver's own gap; the
  // reference checks the objective of the weights and that it is no worse.
  const double p_ref = reference::primal(p, reference::solve(p, lambda, 1e-10, 200000), lambda);
  INFO("reference " << p_ref << " sdca " << r.objective << " epochs " << r.epochs);
  CHECK(r.converged);
  CHECK(r.epochs < 5000);
  std::vector<double> w = r.weights;
  w.push_back(r.bias[0]);
  CHECK(reference::primal(p, w, lambda) == Approx(r.objective).epsilon(1e-12));
  CHECK(r.objective <= p_ref * (1 + 2 * s.tolerance));
}

namespace {

// w(α) = (1/(λn)) Σ α_i y_i x_i and D(α) = (1/n) Σ α_i − λ/2 ‖w(α)‖², from
// the rows themselves (plain hinge, no bias): what a dual point gives.
void dual_point_of(const Dataset& ds, const std::vector<double>& alpha, double lambda, std::vector<double>& w,
                   double& dual) {
  const std::size_t n = ds.size();
  w.assign(ds.dimension, 0.0);
  double sum = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const RowView x = ds.row(i);
    const double y = x.label == 1 ? 1.0 : -1.0;
    for (std::uint32_t k = 0; k < x.nnz; ++k) w[x.indices[k]] += alpha[i] * y * x.values[k];
    sum += alpha[i];
  }
  double sq = 0.0;
  for (double& v : w) {
    v /= lambda * static_cast<double>(n);
    sq += v * v;
  }
  dual = sum / static_cast<double>(n) - lambda / 2 * sq;
}

// After 1 and 2 passes of fixed work (no check stops them early), the relative
// gap `gap_of(settings)` of a run with the growing first pass is under half
// that of the plain one.
template <class GapOf>
void check_growing_halves_the_gap(double lambda, const GapOf& gap_of) {
  for (const int passes : {1, 2}) {
    CAPTURE(passes);
    double gap[2] = {0.0, 0.0};
    for (const bool growing : {false, true}) {
      CAPTURE(growing);
      EngineSettings s = sdca(lambda);
      s.epochs = passes;
      s.growing_first_pass = growing;
      gap[growing ? 1 : 0] = gap_of(s);
    }
    INFO("relative gap after the passes: plain " << gap[0] << ", growing " << gap[1]);
    CHECK(gap[1] < gap[0] / 2);
  }
}

}  // namespace

TEST_CASE("sdca: the growing first pass leaves a dual point of the problem, nearer the optimum where lambda n is large",
          "[sdca]") {
  const Dataset ds = fixtures::gaussian(20000, 20, 3, 0.5);
  const reference::Problem p = fixtures::to_problem(ds);
  const double lambda = 100.0 / static_cast<double>(ds.size());  // λn = 100 (C = 0.01)
  const double p_star = reference::primal(p, reference::solve(p, lambda, 1e-10), lambda);
  check_growing_halves_the_gap(lambda, [&](const EngineSettings& s) {
    const TrainResult r = train_sdca(ds, Hinge(1), s);
    REQUIRE(r.alpha.size() == ds.size());
    for (double a : r.alpha) REQUIRE((a >= 0.0 && a <= 1.0));  // inside the box
    std::vector<double> w;
    double dual = 0.0;
    dual_point_of(ds, r.alpha, lambda, w, dual);
    for (std::size_t j = 0; j < w.size(); ++j) CHECK(r.weights[j] == Approx(w[j]).epsilon(1e-9).margin(1e-12));
    CHECK(r.objective == Approx(reference::primal(p, r.weights, lambda)).epsilon(1e-12));
    CHECK(dual <= p_star * (1 + 1e-9));  // a lower bound, as a dual point's value must be
    return (r.objective - dual) / r.objective;
  });
}

TEST_CASE("sdca: warm starts do not take the growing first pass (the same bits either way)", "[sdca]") {
  const Dataset ds = fixtures::gaussian(2000, 12, 9, 0.7);
  EngineSettings s = sdca(1e-2);
  s.epochs = 2;
  const TrainResult first = train_sdca(ds, Hinge(1), s);
  s.epochs = 3;
  s.growing_first_pass = true;
  const TrainResult a = train_sdca(ds, Hinge(1), s, {}, &first.alpha);
  s.growing_first_pass = false;
  const TrainResult b = train_sdca(ds, Hinge(1), s, {}, &first.alpha);
  CHECK(bits(a.weights) == bits(b.weights));
  CHECK(bits(a.alpha) == bits(b.alpha));
}

TEST_CASE("sdca: below lambda n = 30 the first pass is the plain one (the same bits either way)", "[sdca]") {
  const Dataset ds = fixtures::gaussian(2000, 12, 9, 0.7);
  EngineSettings s = sdca(20.0 / static_cast<double>(ds.size()));  // λn = 20
  s.epochs = 2;
  s.growing_first_pass = true;
  const TrainResult a = train_sdca(ds, Hinge(1), s);
  s.growing_first_pass = false;
  const TrainResult b = train_sdca(ds, Hinge(1), s);
  CHECK(bits(a.weights) == bits(b.weights));
  s.lambda = 50.0 / static_cast<double>(ds.size());  // λn = 50: the growing pass
  s.growing_first_pass = true;
  const TrainResult c = train_sdca(ds, Hinge(1), s);
  s.growing_first_pass = false;
  const TrainResult d = train_sdca(ds, Hinge(1), s);
  CHECK(bits(c.weights) != bits(d.weights));
  const Dataset mc = fixtures::blobs(1000, 6, 3, 5, 0.5);
  EngineSettings m = sdca(20.0 / static_cast<double>(mc.size()));  // λn = 20: the plain pass
  m.epochs = 2;
  const TrainResult e = train_sdca_multiclass(mc, MulticlassHinge(3), m);
  m.growing_first_pass = false;
  const TrainResult f = train_sdca_multiclass(mc, MulticlassHinge(3), m);
  CHECK(bits(e.weights) == bits(f.weights));
}

TEST_CASE("sdca multiclass: the growing first pass leaves a dual point, nearer the optimum where lambda n is large",
          "[sdca][multiclass]") {
  const Dataset ds = fixtures::blobs(6000, 8, 5, 21, 0.4);
  const std::size_t n = ds.size(), K = 5;
  const double lambda = 100.0 / static_cast<double>(n);  // λn = 100
  check_growing_halves_the_gap(lambda, [&](const EngineSettings& s) {
    const TrainResult r = train_sdca_multiclass(ds, MulticlassHinge(static_cast<int>(K)), s);
    REQUIRE(r.alpha.size() == n * K);
    // Feasible (Σ_m α_i^m = 0, α_i^m ≤ 0 off the label, α_i^y ≤ 1/(λn)) and
    // D(α) = λ(Σ α_i^y − ½‖Σ_i α_i x_iᵀ‖²), summed here from the rows.
    std::vector<double> W(std::size_t{ds.dimension} * K, 0.0);
    double sum_y = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      const RowView x = ds.row(i);
      const double* a = &r.alpha[i * K];
      double total = 0.0;
      for (std::size_t m = 0; m < K; ++m) {
        total += a[m];
        if (m == static_cast<std::size_t>(x.label)) {
          REQUIRE(a[m] <= 1.0 / (lambda * static_cast<double>(n)) * (1 + 1e-12));
        } else {
          REQUIRE(a[m] <= 0.0);
        }
        for (std::uint32_t j = 0; j < x.nnz; ++j) W[std::size_t{x.indices[j]} * K + m] += a[m] * x.values[j];
      }
      REQUIRE(std::abs(total) <= 1e-12 / lambda);
      sum_y += a[x.label];
    }
    double sq = 0.0;
    for (std::size_t e = 0; e < W.size(); ++e) {
      CHECK(r.weights[e] == Approx(W[e]).epsilon(1e-9).margin(1e-12));
      sq += W[e] * W[e];
    }
    const double dual = lambda * (sum_y - sq / 2);
    CHECK(dual == Approx(r.dual_objective).epsilon(1e-9));
    CHECK(dual <= r.objective);
    return (r.objective - dual) / r.objective;
  });
}
