// "converged" is a certificate (core/solver.hpp): Pegasos' dual coefficients
// mirror its weights exactly, every reported dual objective is a lower bound
// on the independent reference optimum, a run that says "converged" is within
// its tolerance of that optimum, and plateaus where the progress estimate
// fires far from the optimum (a label-sorted file read in order, large C) are
// not reported as converged.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include "core/engine.hpp"
#include "core/ova_trainer.hpp"
#include "core/solver.hpp"
#include "objectives/hinge.hpp"
#include "objectives/multiclass_hinge.hpp"
#include "objectives/weighted_hinge.hpp"
#include "tests/fixtures.hpp"

using namespace pegasos;

namespace {

using fixtures::reference_optimum;

EngineSettings pegasos_settings(double lambda, BiasMode bias) {
  EngineSettings s;
  s.lambda = lambda;
  s.bias = bias;
  s.solver = Solver::kPegasos;
  return s;
}

// The claim, checked against the reference optimum P*: the dual objective is
// a lower bound, the objective an upper one, and "converged" means within the
// tolerance.
void check_claim(const TrainResult& r, double p_star, double tolerance) {
  INFO("P* " << p_star << " P " << r.objective << " D " << r.dual_objective << " converged " << r.converged
             << " stopped by " << to_string(r.stopped_by) << " epochs " << r.epochs);
  CHECK(r.objective >= p_star * (1 - 1e-9));
  REQUIRE(std::isfinite(r.dual_objective));
  CHECK(r.dual_objective <= p_star * (1 + 1e-9));
  CHECK(r.converged == (r.relative_gap() <= tolerance));
  if (r.converged) CHECK(r.objective - p_star <= tolerance * r.objective * (1 + 1e-6));
}

}  // namespace

TEST_CASE("Pegasos' dual coefficients mirror its weights exactly", "[certificate]") {
  const Dataset ds = fixtures::gaussian(300, 8, 3, 0.8);
  const double lambda = 1e-2;
  EngineSettings s = pegasos_settings(lambda, BiasMode::kFeature);
  s.epochs = 3;
  s.output = GENERATE(OutputIterate::kLast, OutputIterate::kAverage);
  s.projection = GENERATE(false, true);
  CAPTURE(s.output == OutputIterate::kLast, s.projection);
  PegasosHooks hooks;
  hooks.track_dual = true;
  const TrainResult r = train(ds, Hinge(1), s, {}, hooks);
  REQUIRE(r.dual_coefficients.size() == ds.size());
  // w = Σ_i A_i x̃_i, recomputed naively (x̃ = x with the constant feature 1).
  std::vector<double> w(ds.dimension, 0.0);
  double b = 0.0;
  for (std::size_t i = 0; i < ds.size(); ++i) {
    const RowView x = ds.row(i);
    for (std::uint32_t j = 0; j < x.nnz; ++j) w[x.indices[j]] += r.dual_coefficients[i] * x.values[j];
    b += r.dual_coefficients[i];
  }
  for (std::uint32_t j = 0; j < ds.dimension; ++j) CHECK(w[j] == Approx(r.weights[j]).margin(1e-12).epsilon(1e-9));
  CHECK(b == Approx(r.bias[0]).margin(1e-12).epsilon(1e-9));
  // The last iterate after whole epochs of permutation sampling: each
  // α_i = λn·y_i·A_i = (uses of i)/(epochs) is already inside [0, 1]. (The
  // average also weighs early iterates, whose α lie outside: it is clipped.)
  for (std::size_t i = 0; i < ds.size() && s.output == OutputIterate::kLast; ++i) {
    const double alpha = lambda * static_cast<double>(ds.size()) * (ds.labels[i] == 1 ? 1.0 : -1.0) *
                         r.dual_coefficients[i];
    CHECK(alpha >= -1e-12);
    CHECK(alpha <= 1 + 1e-9);
  }
}

TEST_CASE("Pegasos says converged only within its tolerance of the reference optimum", "[certificate]") {
  const double lambda = GENERATE(1e-1, 1e-2, 1e-3);
  const bool bias_feature = GENERATE(false, true);
  CAPTURE(lambda, bias_feature);
  const Dataset ds = fixtures::gaussian(500, 12, 7, 0.7);
  const double p_star = reference_optimum(ds, lambda, bias_feature);
  const EngineSettings s = pegasos_settings(lambda, bias_feature ? BiasMode::kFeature : BiasMode::kNone);
  const TrainResult r = train_with_solver(ds, Hinge(1), s);
  check_claim(r, p_star, s.tolerance);
  if (lambda >= 1e-2) CHECK(r.converged);  // λn ≥ 5: certified well before the cap
  CHECK(r.objective <= p_star * 1.01);
}

TEST_CASE("a plateau that fooled the progress estimate is not called converged", "[certificate]") {
  // A label-sorted file read in order at C = 1/(λn) = 20: an epoch sweeps all
  // negatives, then all positives, and the averaged iterate moves so little
  // between epochs that P_{E/2} − P_E looks like convergence.
  const Dataset ds = fixtures::sorted_by_label(fixtures::gaussian(400, 10, 5, 0.8));
  const double lambda = 1.0 / (20.0 * 400.0);
  const double p_star = reference_optimum(ds, lambda, true);
  EngineSettings s = pegasos_settings(lambda, BiasMode::kFeature);
  s.sampling = Sampling::kSequential;
  // The estimate alone (no certificate): it fires far above the optimum.
  const TrainResult fooled = train(ds, Hinge(1), s);
  INFO("estimate stopped at P " << fooled.objective << ", P* " << p_star << ", epoch " << fooled.epochs);
  REQUIRE(fooled.stopped_by == StopReason::kEstimate);
  REQUIRE_FALSE(fooled.converged);
  REQUIRE(fooled.objective > p_star * 1.05);
  // Certified Pegasos: not fooled; the default solver: converged at P*.
  check_claim(train_with_solver(ds, Hinge(1), s), p_star, s.tolerance);
  EngineSettings automatic = s;
  automatic.solver = Solver::kAuto;
  automatic.sampling = Sampling::kPermutation;
  const TrainResult r = train_with_solver(ds, Hinge(1), automatic);
  check_claim(r, p_star, s.tolerance);
  CHECK(r.converged);
}

TEST_CASE("class-weighted, one-vs-all and multiclass runs report valid bounds", "[certificate]") {
  const Dataset ds = fixtures::blobs(300, 6, 3, 9, 0.9);
  const double lambda = 1.0 / (10.0 * 300.0);  // C = 10
  const std::vector<double> cost{1.0, 4.0, 0.5};
  double cbar = 0.0;
  for (std::size_t i = 0; i < ds.size(); ++i) cbar += cost[static_cast<std::size_t>(ds.labels[i])] / 300.0;
  EngineSettings tight;
  tight.lambda = lambda;
  tight.solver = Solver::kSdca;
  tight.tolerance = 1e-9;
  tight.max_epochs = 1000000;
  const Solver solver = GENERATE(Solver::kPegasos, Solver::kSdca, Solver::kAuto);
  CAPTURE(static_cast<int>(solver));
  EngineSettings s;
  s.lambda = lambda;
  s.solver = solver;
  SECTION("multiclass hinge") {
    const MulticlassHinge objective(3, cost, cbar);
    const TrainResult best = train_with_solver(ds, objective, tight);
    REQUIRE(best.converged);
    check_claim(train_with_solver(ds, objective, s), best.dual_objective, s.tolerance);
  }
  SECTION("one-vs-all (the sum of the K binary problems)") {
    auto make = [&](int k) { return WeightedHinge(k, cost, cbar); };
    const TrainResult best = train_one_vs_all(ds, 3, tight, make);
    REQUIRE(best.converged);
    check_claim(train_one_vs_all(ds, 3, s, make), best.dual_objective, s.tolerance);
  }
}

TEST_CASE("a run stopped by its cap says so and keeps its gap", "[certificate]") {
  const Dataset ds = fixtures::gaussian(500, 12, 7, 0.7);
  const double lambda = 1e-4;  // C = 20: far from the optimum after 3 passes
  const double p_star = reference_optimum(ds, lambda, true);
  EngineSettings s;
  s.lambda = lambda;
  s.max_epochs = 3;
  s.solver = GENERATE(Solver::kPegasos, Solver::kSdca);
  const TrainResult r = train_with_solver(ds, Hinge(1), s);
  check_claim(r, p_star, s.tolerance);
  CHECK_FALSE(r.converged);
  CHECK(r.stopped_by == StopReason::kMaxEpochs);
  CHECK(r.relative_gap() > s.tolerance);
}

template <class O>
void check_best_point_at_cap(const Dataset& ds, const O& objective) {
  EngineSettings s;
  s.lambda = 1.0 / (100.0 * static_cast<double>(ds.size()));  // C = 100: far from certified after 30 passes
  s.solver = Solver::kSdca;
  s.max_epochs = 30;
  const TrainResult r = train_with_solver(ds, objective, s);
  REQUIRE_FALSE(r.converged);
  REQUIRE(r.stopped_by == StopReason::kMaxEpochs);
  double best_checked = std::numeric_limits<double>::infinity();
  for (const EpochInfo& e : r.trace) {
    if (e.has_objective) best_checked = std::min(best_checked, e.sample_objective);
  }
  REQUIRE(std::isfinite(best_checked));
  CHECK(r.objective <= best_checked);
  // The reported objective is that of the returned weights, and the bound holds.
  CHECK(r.objective == Approx(primal_objective(ds, objective, s, r.weights, r.bias)).epsilon(1e-12));
  CHECK(r.dual_objective <= r.objective);
}

TEST_CASE("a dual run stopped at its cap returns the best point it checked", "[certificate][multiclass]") {
  SECTION("multiclass") { check_best_point_at_cap(fixtures::blobs(300, 6, 3, 9, 0.9), MulticlassHinge(3)); }
  SECTION("binary") { check_best_point_at_cap(fixtures::gaussian(500, 12, 7, 0.7), Hinge(1)); }
}
