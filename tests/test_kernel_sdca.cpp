// Kernel SDCA (kernel/kernel_sdca.hpp): the dual optimum against an
// independent projected-gradient solver on a dense Gram matrix, KKT
// conditions, the certified gap, the objective re-evaluated from the model
// file by hand, the kernel + 1 intercept, determinism (seed, thread count),
// the linear kernel against the linear SDCA, the cap, and the config rules
// (solver auto, settings kernel_hinge does not use).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include <tbb/global_control.h>

#include "core/errors.hpp"
#include "core/sdca.hpp"
#include "drivers/config.hpp"
#include "io/kernel_model_json.hpp"
#include "kernel/kernel_sdca.hpp"
#include "objectives/hinge.hpp"
#include "tests/fixtures.hpp"
#include "tests/kernel_reference.hpp"

using namespace pegasos;
using namespace pegasos::kernel_reference;

namespace {

// The binary dual max_α (1/n) Σ α − 1/(2λn²) αᵀQα, Q_ij = y_i y_j (K_ij + shift),
// α ∈ [0, 1]ⁿ, by accelerated projected gradient (FISTA) with step 1/L,
// L ≥ λ_max(Q)/(λn²) bounded by the trace. Returns the optimal dual value.
struct Reference {
  std::vector<double> alpha;
  double dual = 0.0;
};
Reference projected_gradient(const Dataset& ds, const KernelParams& k, double lambda, double shift, int iterations) {
  const std::size_t n = ds.size();
  const Dense x = dense_rows(ds);
  Dense Q(n, std::vector<double>(n));
  double trace = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) Q[i][j] = label_sign(ds, i) * label_sign(ds, j) * (kernel_value(k, x[i], x[j]) + shift);
    trace += Q[i][i];
  }
  const double nn = static_cast<double>(n), ln2 = lambda * nn * nn;
  const double step = ln2 / trace;
  std::vector<double> a(n, 0.0), z(n, 0.0), prev(n, 0.0), Qz(n);
  double t = 1.0;
  auto dual = [&](const std::vector<double>& v) {
    double lin = 0.0, quad = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      lin += v[i];
      for (std::size_t j = 0; j < n; ++j) quad += v[i] * Q[i][j] * v[j];
    }
    return lin / nn - quad / (2 * ln2);
  };
  for (int it = 0; it < iterations; ++it) {
    for (std::size_t i = 0; i < n; ++i) {
      Qz[i] = 0.0;
      for (std::size_t j = 0; j < n; ++j) Qz[i] += Q[i][j] * z[j];
    }
    prev = a;
    for (std::size_t i = 0; i < n; ++i) a[i] = std::clamp(z[i] + step * (1.0 / nn - Qz[i] / ln2), 0.0, 1.0);
    const double t_next = (1 + std::sqrt(1 + 4 * t * t)) / 2;
    for (std::size_t i = 0; i < n; ++i) z[i] = a[i] + (t - 1) / t_next * (a[i] - prev[i]);
    t = t_next;
  }
  return {a, dual(a)};
}

}  // namespace

TEST_CASE("kernel sdca: the reference dual optimum, KKT, a certified gap, the objective from the model file",
          "[kernel][sdca]") {
  const double lambda = GENERATE(1e-3, 3e-2);
  const bool intercept = GENERATE(false, true);
  CAPTURE(lambda, intercept);
  const Dataset ds = fixtures::gaussian(48, 4, 11, 1.0, 0.5);
  const KernelSettings ks = rbf(2.0, intercept);
  const KernelModel m = train_kernel_sdca(ds, ks, settings(lambda, 1e-6));
  const TrainingSummary& t = m.training;
  REQUIRE(t.converged.value());
  CHECK(*t.stopped_by == "tolerance");
  CHECK(*t.solver == "sdca");
  CHECK(*t.relative_gap <= 1e-6);
  CHECK(*t.objective - *t.dual_objective <= 1e-6 * *t.objective);

  const Reference ref = projected_gradient(ds, ks.kernel, lambda, intercept ? 1.0 : 0.0, 30000);
  // Weak duality both ways: the reference's dual value is below our primal, ours below its optimum.
  CHECK(ref.dual <= *t.objective * (1 + 1e-9));
  CHECK(*t.dual_objective <= ref.dual + 1e-7 * std::abs(ref.dual));
  CHECK(*t.objective == Approx(ref.dual).epsilon(2e-6));

  // KKT on the model's α (coefficient = α y): margins below 1 at α = 1, above at α = 0.
  const std::vector<double> f = m.scores(ds);
  std::vector<double> alpha(ds.size(), 0.0);
  std::size_t s = 0;
  for (std::size_t i = 0; i < ds.size() && s < m.num_support_vectors(); ++i) {
    const RowView sv = m.support_vector(s), x = ds.row(i);
    if (sv.nnz == x.nnz && std::equal(sv.values, sv.values + sv.nnz, x.values)) alpha[i] = m.coefficients[s++] * label_sign(ds, i);
  }
  REQUIRE(s == m.num_support_vectors());
  for (std::size_t i = 0; i < ds.size(); ++i) {
    const double margin = label_sign(ds, i) * f[i];
    INFO("row " << i << " alpha " << alpha[i] << " margin " << margin);
    CHECK(alpha[i] >= 0.0);
    CHECK(alpha[i] <= 1.0);
    if (alpha[i] == 0.0) CHECK(margin >= 1.0 - 2e-3);
    if (alpha[i] == 1.0) CHECK(margin <= 1.0 + 2e-3);
    if (alpha[i] > 0.0 && alpha[i] < 1.0) CHECK(std::abs(margin - 1.0) <= 2e-3);
  }

  const std::string file = kernel_model_to_json(m);
  CHECK(objective_from_file(file, ds, lambda) == Approx(*t.objective).epsilon(1e-9));
  CHECK(kernel_model_objective(kernel_model_from_json(file, "m.json"), ds) == Approx(*t.objective).epsilon(1e-9));
  CHECK((file.find("\"intercept\"") != std::string::npos) == intercept);
}

TEST_CASE("kernel sdca: the kernel + 1 intercept fits shifted, imbalanced data and is (1/(lambda n)) sum alpha y",
          "[kernel][sdca]") {
  // One feature around 3: class 1 above 3.2, class 0 below (75% of the rows).
  Dataset ds;
  ds.classes = {"-1", "1"};
  ds.source = "shifted";
  Rng rng(3);
  for (int i = 0; i < 80; ++i) {
    const int label = i % 4 == 0 ? 1 : 0;
    const float v = static_cast<float>(label ? 3.3 + 0.5 * rng.uniform() : 2.5 + 0.6 * rng.uniform());
    const std::vector<std::uint32_t> idx{0};
    const std::vector<float> val{v};
    ds.append_row(idx, val, label);
  }
  ds.dimension = 1;
  KernelSettings ks;
  ks.kernel.type = KernelType::kLinear;
  const double lambda = 1e-3;
  ks.intercept = false;
  const KernelModel none = train_kernel_sdca(ds, ks, settings(lambda, 1e-6));
  ks.intercept = true;
  const KernelModel with = train_kernel_sdca(ds, ks, settings(lambda, 1e-6));
  REQUIRE(with.intercept.size() == 1);
  CHECK(none.intercept.empty());
  // b = (1/(λn)) Σ_s α_s y_s, and f(x) = scale Σ a k + b, by hand.
  double sum = 0.0;
  for (double a : with.coefficients) sum += a;
  CHECK(with.intercept[0] == Approx(sum / (lambda * 80)).epsilon(1e-12));
  auto accuracy = [&](const KernelModel& m) {
    const std::vector<double> f = m.scores(ds);
    int right = 0;
    for (std::size_t i = 0; i < ds.size(); ++i) {
      double by_hand = m.intercept.empty() ? 0.0 : m.intercept[0];
      for (std::size_t s = 0; s < m.num_support_vectors(); ++s) {
        by_hand += m.decision_scale() * m.coefficients[s] * m.support_vector(s).values[0] * ds.row(i).values[0];
      }
      CHECK(f[i] == Approx(by_hand).epsilon(1e-9).margin(1e-12));
      right += (f[i] > 0) == (ds.labels[i] == 1);
    }
    return right / 80.0;
  };
  const double acc_none = accuracy(none), acc_with = accuracy(with);
  INFO("accuracy without intercept " << acc_none << ", with " << acc_with);
  CHECK(acc_none <= 0.8);  // through the origin: one class for every row
  CHECK(acc_with >= 0.95);
  CHECK(with.intercept[0] < -1.0);
}

TEST_CASE("kernel sdca: a linear kernel reaches the linear SDCA's objective (bias none and feature)", "[kernel][sdca]") {
  const bool bias = GENERATE(false, true);
  CAPTURE(bias);
  const Dataset ds = fixtures::gaussian(300, 8, 21, 1.0, 0.6);
  const double lambda = 2e-3;
  EngineSettings s = settings(lambda, 1e-6);
  s.bias = bias ? BiasMode::kFeature : BiasMode::kNone;
  s.max_epochs = 5000;
  const TrainResult lin = train_sdca(ds, Hinge(), s);
  REQUIRE(lin.relative_gap() <= 1e-6);
  KernelSettings ks;
  ks.kernel.type = KernelType::kLinear;
  ks.intercept = bias;
  const KernelModel km = train_kernel_sdca(ds, ks, s);
  REQUIRE(km.training.converged.value());
  CHECK(*km.training.objective == Approx(lin.objective).epsilon(3e-6));
  // The same decision function: w·x + b against the expansion.
  const std::vector<double> f = km.scores(ds);
  for (std::size_t i = 0; i < ds.size(); i += 37) {
    double lin_score = lin.bias[0];
    const RowView x = ds.row(i);
    for (std::uint32_t p = 0; p < x.nnz; ++p) lin_score += lin.weights[x.indices[p]] * x.values[p];
    CHECK(f[i] == Approx(lin_score).margin(5e-3));
  }
}

TEST_CASE("kernel sdca: the same model for the same seed and any thread count, another seed differs", "[kernel][sdca]") {
  // n > 4096 rows so that kernel rows and g updates run in parallel blocks.
  const Dataset ds = fixtures::gaussian(4500, 6, 31, 1.0, 0.6);
  EngineSettings s = settings(1e-3, 1e-3);
  s.epochs = 3;  // a fixed budget: quick, and the α of an unfinished run are the most order-sensitive
  const KernelSettings ks = rbf(0.5, true);
  std::string one, many, again;
  {
    tbb::global_control c(tbb::global_control::max_allowed_parallelism, 1);
    one = kernel_model_to_json(train_kernel_sdca(ds, ks, s));
  }
  {
    tbb::global_control c(tbb::global_control::max_allowed_parallelism, 4);
    many = kernel_model_to_json(train_kernel_sdca(ds, ks, s));
    again = kernel_model_to_json(train_kernel_sdca(ds, ks, s));
  }
  CHECK(one == many);
  CHECK(many == again);
  s.seed = 6;
  CHECK(kernel_model_to_json(train_kernel_sdca(ds, ks, s)) != one);
}

TEST_CASE("kernel sdca: a run stopped at the cap says so, one-vs-all converges with one gap over the classes",
          "[kernel][sdca]") {
  const Dataset ds = fixtures::gaussian(200, 5, 41, 1.0, 0.3);
  EngineSettings s = settings(1e-5, 1e-9);
  s.max_epochs = 2;
  const KernelModel capped = train_kernel_sdca(ds, rbf(1.0, true), s);
  CHECK_FALSE(capped.training.converged.value());
  CHECK(*capped.training.stopped_by == "max_epochs");
  CHECK(*capped.training.epochs >= 2.0);  // passes' worth of visits (two a pair step)
  CHECK(*capped.training.relative_gap > 1e-9);

  const Dataset multi = fixtures::blobs(240, 5, 4, 37, 0.8);
  const KernelModel m = train_kernel_sdca(multi, rbf(1.0, true), settings(1e-3, 1e-4));
  CHECK(m.outputs == 4);
  CHECK(m.intercept.size() == 4);
  CHECK(m.training.converged.value());
  CHECK(kernel_model_objective(m, multi) == Approx(*m.training.objective).epsilon(1e-9));
}

TEST_CASE("kernel_hinge settings: auto picks sdca, Pegasos settings pick pegasos, unused settings are errors",
          "[kernel][sdca][config]") {
  using Catch::Contains;
  const nlohmann::json kernel = {{"objective", "kernel_hinge"}};
  auto with = [&](const nlohmann::json& extra) {
    nlohmann::json j = kernel;
    if (extra.is_object()) j.update(extra);
    return config_from_json(j, "c.json");
  };
  const TrainConfig defaults = with({});
  CHECK(defaults.engine.solver == Solver::kSdca);
  // Kernel SDCA's default intercept is LIBSVM's (unregularized), recorded as used.
  CHECK(defaults.kernel.unregularized_intercept);
  CHECK_FALSE(defaults.kernel.intercept);
  CHECK(defaults.resolved["bias"] == "unregularized");
  CHECK(defaults.kernel.one_vs_one);  // and LIBSVM's one-vs-one for multiclass data
  CHECK(defaults.resolved["multiclass"] == "ovo");
  CHECK_FALSE(with({{"multiclass", "ova"}}).kernel.one_vs_one);
  CHECK_FALSE(with({{"bias", "feature"}}).kernel.one_vs_one);
  CHECK_FALSE(with({{"solver", "pegasos"}}).kernel.one_vs_one);
  CHECK_THROWS_WITH(with({{"multiclass", "ovo"}, {"solver", "pegasos"}}), Contains("multiclass"));
  CHECK_THROWS_WITH(with({{"multiclass", "ovr"}}), Contains("multiclass"));
  CHECK_THROWS_WITH(config_from_json({{"objective", "ova"}, {"multiclass", "ovo"}}, "c.json"), Contains("multiclass"));
  CHECK_FALSE(config_from_json({{"objective", "ova"}}, "c.json").resolved.contains("multiclass"));  // linear: not echoed
  CHECK(with({{"bias", "feature"}}).kernel.intercept);  // the kernel + 1 trick when asked for
  CHECK(with({{"epochs", 3}}).kernel.intercept);        // a fixed budget: random passes keep the kernel + 1 trick
  CHECK(with({{"solver", "pegasos"}}).kernel.intercept);
  CHECK(defaults.resolved["sampling"] == "permutation");  // the documented default, recorded as used
  CHECK(with({{"batch_size", 4}}).engine.solver == Solver::kPegasos);
  CHECK(with({{"max_support_vectors", 100}}).engine.solver == Solver::kPegasos);
  CHECK(with({{"sampling", "uniform"}}).engine.solver == Solver::kPegasos);
  CHECK_FALSE(with({{"bias", "none"}}).kernel.intercept);
  CHECK(with({{"bias", "unregularized"}}).kernel.unregularized_intercept);
  CHECK_THROWS_AS(with({{"bias", "unregularized"}, {"solver", "pegasos"}}), ConfigError);
  CHECK_THROWS_WITH(with({{"bias", "unregularized"}, {"solver", "pegasos"}}), Contains("bias"));
  CHECK_THROWS_WITH(with({{"bias", "unregularized"}, {"epochs", 3}}), Contains("bias"));
  CHECK_THROWS_WITH(with({{"output", "last"}}), Contains("output"));
  CHECK_THROWS_WITH(with({{"projection", false}}), Contains("projection"));
  CHECK_THROWS_WITH(with({{"average_gamma", 0}}), Contains("average_gamma"));
  CHECK_THROWS_WITH(with({{"keep_duals", false}}), Contains("keep_duals"));
  CHECK_THROWS_WITH(with({{"solver", "pegasos"}, {"tolerance", 2e-3}}), Contains("tolerance"));
  CHECK_THROWS_WITH(with({{"solver", "pegasos"}, {"max_epochs", 10}}), Contains("max_epochs"));
  CHECK_THROWS_WITH(with({{"solver", "sdca"}, {"max_support_vectors", 10}}), Contains("max_support_vectors"));
  CHECK(with({{"tolerance", 1e-3}, {"max_epochs", 10}}).engine.max_epochs == 10);
}

TEST_CASE("kernel sdca: a small LRU row cache changes the cost, not the model", "[kernel][sdca]") {
  const Dataset ds = fixtures::gaussian(300, 6, 51, 1.0, 0.5);
  KernelSettings big = rbf(1.0, true), tiny = big;
  tiny.cache_megabytes = 10 * 300 * 8 / 1048576.0;  // 10 rows of 300 values
  const KernelModel a = train_kernel_sdca(ds, big, settings(1e-3, 1e-4));
  const KernelModel b = train_kernel_sdca(ds, tiny, settings(1e-3, 1e-4));
  CHECK(kernel_model_to_json(a) != "");
  CHECK(a.coefficients == b.coefficients);
  CHECK(a.intercept == b.intercept);
  CHECK(*a.training.objective == *b.training.objective);
  CHECK(*b.training.kernel_evaluations > *a.training.kernel_evaluations);  // rows were evicted and recomputed
}

TEST_CASE("kernel sdca: dense kernel rows equal the kernel written out, symmetric to the bit, whatever the block",
          "[kernel][sdca]") {
  using kernel_sdca_detail::RowCache;
  const Dataset ds = fixtures::gaussian(60, 7, 61, 1.0, 0.5);  // dense rows: the dense block path
  KernelParams k;
  k.type = KernelType::kRbf;
  k.gamma = 0.3;
  std::vector<double> sq(ds.size());
  for (std::size_t i = 0; i < ds.size(); ++i) sq[i] = row_squared_norm(ds.row(i));
  const Dense x = dense_rows(ds);
  RowCache blocks(ds, k, 1.0, sq, 1 << 20), single(ds, k, 1.0, sq, 1 << 20);
  std::vector<std::size_t> upcoming(ds.size());
  std::iota(upcoming.begin(), upcoming.end(), std::size_t{0});
  std::reverse(upcoming.begin(), upcoming.end());
  for (std::size_t i = 0; i < ds.size(); ++i) {
    const std::vector<double> a(blocks.row(i, upcoming), blocks.row(i, upcoming) + ds.size());
    const double* b = single.row(i);
    for (std::size_t j = 0; j < ds.size(); ++j) {
      CHECK(a[j] == b[j]);  // a row computed in a block of 16 or alone: the same bits
      CHECK(a[j] == Approx(kernel_value(k, x[j], x[i]) + 1.0).epsilon(1e-13));
    }
  }
  for (std::size_t i = 0; i < ds.size(); ++i) {
    for (std::size_t j = 0; j < ds.size(); ++j) CHECK(single.row(i)[j] == single.row(j)[i]);
  }
  CHECK(blocks.evaluations() == ds.size() * ds.size());  // prefetched rows are computed once
}

TEST_CASE("kernel sdca: a converged one-vs-all run by pair steps is the same for 1 and 4 threads, gap re-checked",
          "[kernel][sdca]") {
  // > 2048 rows: kernel rows computed in parallel blocks (the pair sweeps go parallel above 4096).
  const Dataset ds = fixtures::blobs(2600, 4, 3, 71, 0.9);
  const EngineSettings s = settings(1e-3, 1e-3);
  const KernelSettings ks = rbf(0.5, true);
  KernelModel one, many;
  {
    tbb::global_control c(tbb::global_control::max_allowed_parallelism, 1);
    one = train_kernel_sdca(ds, ks, s);
  }
  {
    tbb::global_control c(tbb::global_control::max_allowed_parallelism, 4);
    many = train_kernel_sdca(ds, ks, s);
  }
  CHECK(kernel_model_to_json(one) == kernel_model_to_json(many));
  REQUIRE(one.training.converged.value());
  // The certificate from the saved model (its own kernel code, not the trainer's rows): P(model) is
  // within the tolerance of the dual value the trainer reported.
  const double P = kernel_model_objective(one, ds);
  CHECK(P == Approx(*one.training.objective).epsilon(1e-9));
  CHECK((P - *one.training.dual_objective) / P <= 1e-3 * (1 + 1e-9));
}

TEST_CASE("kernel sdca: pair steps certify where single random steps crawl, at the optimum the random passes reach",
          "[kernel][sdca]") {
  // A near-constant RBF kernel (small gamma) with the kernel + 1 intercept at
  // C = 100: the dual's Hessian has one huge near-constant direction.
  const Dataset ds = fixtures::gaussian(120, 4, 71, 1.0, 0.5);
  const KernelSettings ks = rbf(0.05, true);
  const double lambda = 1.0 / (100.0 * static_cast<double>(ds.size()));
  const KernelModel pairs = train_kernel_sdca(ds, ks, settings(lambda, 1e-4));
  REQUIRE(pairs.training.converged.value());
  CHECK(*pairs.training.relative_gap <= 1e-4);
  EngineSettings budget = settings(lambda, 1e-4);
  budget.epochs = 4000;  // the paper's random passes, a fixed number
  const KernelModel random = train_kernel_sdca(ds, ks, budget);
  CHECK(*random.training.stopped_by == "budget");
  // Weak duality across the two runs, and the same optimum.
  CHECK(*random.training.dual_objective <= *pairs.training.objective * (1 + 1e-12));
  CHECK(*pairs.training.dual_objective <= *random.training.objective * (1 + 1e-12));
  CHECK(*pairs.training.objective == Approx(*random.training.objective).epsilon(2e-4));
  // The pair run's objective re-evaluated from its model by hand.
  CHECK(objective_from_file(kernel_model_to_json(pairs), ds, lambda) == Approx(*pairs.training.objective).epsilon(1e-9));
  // Fewer coordinate visits than the random passes needed (counts, not times).
  CHECK(*pairs.training.iterations * 20 < *random.training.iterations);
}

TEST_CASE("kernel sdca: a pair step is the maximum over its box, against a fine grid", "[kernel][sdca]") {
  using kernel_sdca_detail::pair_gain;
  std::mt19937_64 rng(17);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int trial = 0; trial < 400; ++trial) {
    CAPTURE(trial);
    // Curvatures from a positive semi-definite 2×2 kernel block (sometimes
    // singular: equal rows, or a zero diagonal), slopes of either sign, α on
    // or off the bounds.
    const double kii = trial % 7 == 0 ? 0.0 : 0.1 + 3.0 * u(rng);
    const double kjj = trial % 5 == 0 ? kii : 0.1 + 3.0 * u(rng);
    const double rho = trial % 5 == 0 ? 1.0 : 2.0 * u(rng) - 1.0;
    const double scale = 1.0 / (0.01 + u(rng));  // 1/(λn)
    const double sign = u(rng) < 0.5 ? -1.0 : 1.0;
    const double a = kii * scale, c = kjj * scale, b = sign * rho * std::sqrt(kii * kjj) * scale;
    const double Gi = 4.0 * u(rng) - 2.0, Gj = 4.0 * u(rng) - 2.0;
    auto pick = [&](double r) { return r < 0.25 ? 0.0 : r > 0.75 ? 1.0 : u(rng); };
    const double ai = pick(u(rng)), aj = pick(u(rng));
    double x = 0.0, y = 0.0;
    const double gain = pair_gain(Gi, Gj, a, a > 0 ? 1 / a : 0.0, b, c, c > 0 ? 1 / c : 0.0, ai, aj, x, y);
    // Feasible, and the gain is q at the returned step.
    CHECK(ai + x >= -1e-12);
    CHECK(ai + x <= 1.0 + 1e-12);
    CHECK(aj + y >= -1e-12);
    CHECK(aj + y <= 1.0 + 1e-12);
    auto q = [&](double s, double t) { return Gi * s + Gj * t - 0.5 * (a * s * s + 2 * b * s * t + c * t * t); };
    CHECK(gain == Approx(q(x, y)).margin(1e-9));
    CHECK(gain >= -1e-12);  // the zero step is feasible
    // No point of a 201 × 201 grid over the box, nor of its refinement around
    // the grid's best, is better.
    double grid_best = -1e300, bs = 0, bt = 0;
    for (int p = 0; p <= 200; ++p) {
      for (int r = 0; r <= 200; ++r) {
        const double s = -ai + p / 200.0, t = -aj + r / 200.0, v = q(s, t);
        if (v > grid_best) {
          grid_best = v;
          bs = s;
          bt = t;
        }
      }
    }
    for (int p = -100; p <= 100; ++p) {
      for (int r = -100; r <= 100; ++r) {
        const double s = std::clamp(bs + p / 20000.0, -ai, 1 - ai), t = std::clamp(bt + r / 20000.0, -aj, 1 - aj);
        grid_best = std::max(grid_best, q(s, t));
      }
    }
    CHECK(gain >= grid_best - 1e-9 * std::max(1.0, std::abs(grid_best)));
  }
}

TEST_CASE("kernel sdca: a nearly singular pair with its maximum inside the box is not sent to a bound",
          "[kernel][sdca]") {
  // Near-equal rows (det / (a c) ≈ 2e-13), both α free, the free maximum at
  // (1e-4, 1e-4): the edges alone would move both α to a bound and lower D.
  const double a = 200.0, c = 200.0, b = -200.0 * (1.0 - 1e-13);
  const double Gi = a * 1e-4 + b * 1e-4, Gj = b * 1e-4 + c * 1e-4;
  double x = 0.0, y = 0.0;
  const double gain = kernel_sdca_detail::pair_gain(Gi, Gj, a, 1 / a, b, c, 1 / c, 0.5, 0.5, x, y);
  CHECK(gain >= 0.0);
  CHECK(std::abs(x) < 1e-2);
  CHECK(std::abs(y) < 1e-2);
}
