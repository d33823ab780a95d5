// Kernel SDCA with LIBSVM's unregularized intercept (`bias: unregularized`,
// kernel/kernel_pairs.hpp's pair_output_equality): the best intercept
// against a brute-force scan, the dual optimum against an independent
// projected-gradient solver on the box ∩ {Σ α y = 0}, the objective
// recomputed by hand from the model file (b outside the regulariser), the
// constraint in every output, and the settings it refuses.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <tbb/global_control.h>

#include "io/kernel_model_json.hpp"
#include "kernel/kernel_sdca.hpp"
#include "tests/fixtures.hpp"
#include "tests/kernel_reference.hpp"

using namespace pegasos;
using namespace pegasos::kernel_reference;

namespace {

double hinge_sum(const std::vector<double>& y, const std::vector<double>& g, double b) {
  double s = 0.0;
  for (std::size_t i = 0; i < y.size(); ++i) s += std::max(0.0, 1.0 - y[i] * (g[i] + b));
  return s;
}

// The projection of z onto {α ∈ [0, 1]ⁿ : Σ α_i y_i = 0}: α = clip(z − μ y),
// Σ y clip(z − μ y) falls as μ rises, so μ is found by bisection.
std::vector<double> project(const std::vector<double>& z, const std::vector<double>& y) {
  auto at = [&](double mu, std::vector<double>& a) {
    double s = 0.0;
    for (std::size_t i = 0; i < z.size(); ++i) {
      a[i] = std::clamp(z[i] - mu * y[i], 0.0, 1.0);
      s += a[i] * y[i];
    }
    return s;
  };
  std::vector<double> a(z.size());
  double lo = -1e6, hi = 1e6;
  for (int it = 0; it < 200; ++it) {
    const double mid = 0.5 * (lo + hi);
    (at(mid, a) > 0.0 ? lo : hi) = mid;
  }
  at(0.5 * (lo + hi), a);
  return a;
}

// max_α (1/n) Σ α − 1/(2λn²) αᵀQα over the box ∩ {Σ α y = 0}, Q_ij = y_i y_j
// K_ij, by accelerated projected gradient (FISTA). Returns the dual value.
double reference_dual(const Dataset& ds, const KernelParams& k, double lambda, int iterations) {
  const std::size_t n = ds.size();
  const Dense x = dense_rows(ds);
  std::vector<double> y(n);
  for (std::size_t i = 0; i < n; ++i) y[i] = label_sign(ds, i);
  Dense Q(n, std::vector<double>(n));
  double trace = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) Q[i][j] = y[i] * y[j] * kernel_value(k, x[i], x[j]);
    trace += Q[i][i];
  }
  const double nn = static_cast<double>(n), ln2 = lambda * nn * nn, step = ln2 / trace;
  std::vector<double> a(n, 0.0), z(n, 0.0), prev(n), grad(n);
  double t = 1.0;
  for (int it = 0; it < iterations; ++it) {
    for (std::size_t i = 0; i < n; ++i) {
      double qz = 0.0;
      for (std::size_t j = 0; j < n; ++j) qz += Q[i][j] * z[j];
      grad[i] = z[i] + step * (1.0 / nn - qz / ln2);
    }
    prev = a;
    a = project(grad, y);
    const double t_next = (1 + std::sqrt(1 + 4 * t * t)) / 2;
    for (std::size_t i = 0; i < n; ++i) z[i] = a[i] + (t - 1) / t_next * (a[i] - prev[i]);
    t = t_next;
  }
  double lin = 0.0, quad = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    lin += a[i];
    for (std::size_t j = 0; j < n; ++j) quad += a[i] * Q[i][j] * a[j];
  }
  return lin / nn - quad / (2 * ln2);
}

KernelSettings unregularized(double gamma) {
  KernelSettings ks = rbf(gamma, false);
  ks.unregularized_intercept = true;
  return ks;
}

}  // namespace

TEST_CASE("kernel sdca: the best intercept minimises the hinge sum, against a scan of every kink", "[kernel][sdca]") {
  std::mt19937_64 rng(11);
  std::vector<double> t;
  for (int trial = 0; trial < 300; ++trial) {
    const std::size_t n = 1 + rng() % 40;
    const int mode = trial % 3;  // mixed labels, all positive, all negative
    std::vector<double> y(n), g(n);
    std::normal_distribution<double> normal(0.0, 2.0);
    for (std::size_t i = 0; i < n; ++i) {
      y[i] = mode == 1 ? 1.0 : mode == 2 ? -1.0 : (rng() % 2 ? 1.0 : -1.0);
      g[i] = trial % 7 == 0 ? std::round(normal(rng)) : normal(rng);  // ties among the kinks too
    }
    const double b = kernel_sdca_detail::best_intercept(n, [&](std::size_t i) { return y[i]; }, [&](std::size_t i) { return g[i]; }, t);
    double best = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < n; ++i) {
      for (const double shift : {-1e3, -1e-9, 0.0, 1e-9, 1e3}) best = std::min(best, hinge_sum(y, g, y[i] - g[i] + shift));
    }
    CHECK(hinge_sum(y, g, b) <= best + 1e-9 * (1.0 + best));
  }
}

TEST_CASE("kernel sdca, unregularized intercept: the dual optimum, the constraint, the objective from the file",
          "[kernel][sdca]") {
  // Shifted, imbalanced data: the best intercept is far from 0.
  Dataset ds = fixtures::gaussian(80, 4, 23, 1.0, 0.6);
  for (std::size_t i = 0; i < ds.size(); ++i) ds.labels[i] = i % 4 == 0 ? 1 : ds.labels[i] == 1 && i % 3 == 0 ? 1 : 0;
  for (const double lambda : {1e-1, 1e-2, 1e-3}) {
    CAPTURE(lambda);
    const KernelModel m = train_kernel_sdca(ds, unregularized(0.5), settings(lambda, 1e-6));
    REQUIRE(m.training.converged.value());
    CHECK_FALSE(m.intercept_regularized);
    double sum = 0.0, scale = 0.0;
    for (const double a : m.coefficients) {
      sum += a;
      scale += std::abs(a);
    }
    CHECK(std::abs(sum) <= 1e-9 * scale);  // Σ α y = 0
    const double reference = reference_dual(ds, m.kernel, lambda, 20000);
    const double primal = *m.training.objective;
    CHECK(*m.training.dual_objective >= reference - 1e-6 * primal);
    CHECK(primal - reference <= 2e-6 * primal);  // the certificate holds against the reference
    const std::string file = kernel_model_to_json(m);
    CHECK(file.find("\"intercept_regularized\": false") != std::string::npos);
    CHECK(objective_from_file(file, ds, lambda) == Approx(primal).epsilon(1e-9));
    CHECK(kernel_model_objective(kernel_model_from_json(file, "m.json"), ds) == Approx(primal).epsilon(1e-9));
  }
}

TEST_CASE("kernel sdca, unregularized intercept: one-vs-all keeps the constraint per output, and the refusals",
          "[kernel][sdca]") {
  const Dataset multi = fixtures::blobs(200, 5, 4, 41, 0.8);
  const KernelModel m = train_kernel_sdca(multi, unregularized(1.0), settings(1e-3, 1e-4));
  REQUIRE(m.outputs == 4);
  CHECK(m.intercept.size() == 4);
  CHECK(m.training.converged.value());
  for (int c = 0; c < 4; ++c) {
    double sum = 0.0;
    for (std::size_t s = 0; s < m.num_support_vectors(); ++s) sum += m.coefficients[s * 4 + static_cast<std::size_t>(c)];
    CHECK(std::abs(sum) <= 1e-9 * static_cast<double>(m.num_support_vectors()));
  }
  CHECK(kernel_model_objective(m, multi) == Approx(*m.training.objective).epsilon(1e-9));
  EngineSettings budget = settings(1e-3, 1e-4);
  budget.epochs = 3;
  CHECK_THROWS_AS(train_kernel_sdca(multi, unregularized(1.0), budget), std::invalid_argument);
}

TEST_CASE("kernel one-vs-one: class scores vote, the tie-break never outvotes", "[kernel][sdca]") {
  std::mt19937_64 rng(3);
  std::normal_distribution<double> normal(0.0, 1.0);
  for (int trial = 0; trial < 500; ++trial) {
    const std::size_t K = 3 + rng() % 6, P = K * (K - 1) / 2;
    std::vector<double> f(P), votes(K, 0.0), out(K);
    for (double& v : f) v = trial % 5 == 0 ? std::round(normal(rng)) * 0.5 : normal(rng);
    for (std::size_t a = 0, p = 0; a < K; ++a) {
      for (std::size_t b = a + 1; b < K; ++b, ++p) votes[f[p] > 0.0 ? b : a] += 1.0;
    }
    ovo_class_scores(f.data(), K, out.data());
    for (std::size_t c = 0; c < K; ++c) CHECK(std::abs(out[c] - votes[c]) < 0.5 / static_cast<double>(K) + 1e-12);
    const std::size_t winner = static_cast<std::size_t>(std::max_element(out.begin(), out.end()) - out.begin());
    CHECK(votes[winner] == *std::max_element(votes.begin(), votes.end()));
  }
}

TEST_CASE("kernel one-vs-one: each pair is the binary problem on its two classes' rows at the same C",
          "[kernel][sdca]") {
  const Dataset multi = fixtures::blobs(180, 4, 4, 29, 0.9);
  KernelSettings ks = unregularized(0.7);
  ks.one_vs_one = true;
  const double lambda = 2e-3;
  const KernelModel m = train_kernel_sdca(multi, ks, settings(lambda, 1e-5));
  REQUIRE(m.one_vs_one);
  REQUIRE(m.columns() == 6);
  CHECK(m.training.converged.value());
  // Each pair against a binary model trained by hand on the pair's rows.
  const std::vector<double> f = m.decision_values(multi);
  std::vector<double> votes(multi.size() * 4, 0.0);
  double objective = 0.0;
  for (int a = 0, p = 0; a < 4; ++a) {
    for (int b = a + 1; b < 4; ++b, ++p) {
      std::vector<std::size_t> rows;
      const Dataset sub = kernel_sdca_detail::pair_rows(multi, a, b, rows);
      const double weight = static_cast<double>(sub.size()) / static_cast<double>(multi.size());
      const KernelModel pair = train_kernel_sdca(sub, unregularized(0.7), settings(lambda / weight, 1e-5));
      objective += weight * *pair.training.objective;
      const std::vector<double> g = pair.scores(multi);
      for (std::size_t i = 0; i < multi.size(); ++i) {
        CHECK(f[i * 6 + static_cast<std::size_t>(p)] == Approx(g[i]).margin(1e-9));
        votes[i * 4 + static_cast<std::size_t>(g[i] > 0.0 ? b : a)] += 1.0;
      }
    }
  }
  CHECK(*m.training.objective == Approx(objective).epsilon(1e-12));
  {  // the pairs run in parallel: one thread gives the same file
    const tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
    CHECK(kernel_model_to_json(train_kernel_sdca(multi, ks, settings(lambda, 1e-5))) == kernel_model_to_json(m));
  }
  CHECK(kernel_model_objective(m, multi) == Approx(*m.training.objective).epsilon(1e-9));
  // The file keeps the pairs: the same scores after a round trip, the winner has the most votes.
  const KernelModel back = kernel_model_from_json(kernel_model_to_json(m), "m.json");
  CHECK(back.one_vs_one);
  const std::vector<double> s = m.scores(multi), t = back.scores(multi);
  CHECK(s == t);
  for (std::size_t i = 0; i < multi.size(); ++i) {
    const auto top = std::max_element(s.begin() + static_cast<std::ptrdiff_t>(i * 4), s.begin() + static_cast<std::ptrdiff_t>(i * 4 + 4));
    const std::size_t winner = static_cast<std::size_t>(top - s.begin()) - i * 4;
    CHECK(votes[i * 4 + winner] == *std::max_element(votes.begin() + static_cast<std::ptrdiff_t>(i * 4),
                                                      votes.begin() + static_cast<std::ptrdiff_t>(i * 4 + 4)));
  }
}

TEST_CASE("kernel one-vs-one files: K - 1 coefficients per support vector, the first format still read, bad classes refused",
          "[kernel][io]") {
  const Dataset multi = fixtures::blobs(150, 3, 5, 31, 0.9);
  KernelSettings ks = unregularized(0.5);
  ks.one_vs_one = true;
  const KernelModel m = train_kernel_sdca(multi, ks, settings(3e-3, 1e-4));
  const std::size_t K = 5, P = 10, n_sv = m.num_support_vectors();
  REQUIRE(m.sv_class.size() == n_sv);
  const nlohmann::json j = nlohmann::json::parse(kernel_model_to_json(m));
  REQUIRE(j["coefficients"].size() == K - 1);
  // Every support vector is a training row of its recorded class.
  for (std::size_t s = 0; s < n_sv; ++s) {
    const RowView sv = m.support_vector(s);
    bool found = false;
    for (std::size_t i = 0; i < multi.size() && !found; ++i) {
      const RowView x = multi.row(i);
      found = x.nnz == sv.nnz && std::equal(x.values, x.values + x.nnz, sv.values) &&
              static_cast<std::uint32_t>(multi.labels[i]) == m.sv_class[s];
    }
    CHECK(found);
  }
  // The first one-vs-one files: one array per pair, zero outside a support
  // vector's pairs. Written here by hand from the compact layout.
  nlohmann::json legacy = j;
  legacy.erase("support_vector_classes");
  legacy["coefficients"] = nlohmann::json::array();
  for (std::size_t a = 0; a < K; ++a) {
    for (std::size_t b = a + 1; b < K; ++b) {
      nlohmann::json column = nlohmann::json::array();
      for (std::size_t s = 0; s < n_sv; ++s) {
        const std::size_t c = m.sv_class[s];
        column.push_back(c == a || c == b ? j["coefficients"][ovo_slot(c, c == a ? b : a)][s] : nlohmann::json(0));
      }
      legacy["coefficients"].push_back(column);
    }
  }
  REQUIRE(legacy["coefficients"].size() == P);
  const KernelModel old = kernel_model_from_json(legacy.dump(), "old.json");
  CHECK(old.scores(multi) == m.scores(multi));
  CHECK(old.regularizer() == Approx(m.regularizer()).epsilon(1e-12));
  CHECK(old.regularizer() == Approx(*m.training.regularizer).epsilon(1e-9));
  const auto expect_error = kernel_reference::expect_model_error;
  nlohmann::json bad = j;
  bad["support_vector_classes"][0] = K;
  expect_error(bad, "/support_vector_classes/0");
  bad["support_vector_classes"] = {0, 1};
  expect_error(bad, "/support_vector_classes");
  bad = j;
  bad["coefficients"].erase(0);
  expect_error(bad, "/coefficients");
  // A legacy support vector in pairs (0,1) and (2,3) belongs to no single class.
  bad = legacy;
  for (std::size_t p = 0; p < P; ++p) bad["coefficients"][p][0] = 0;
  bad["coefficients"][0][0] = 1.0;
  bad["coefficients"][7][0] = 1.0;  // pair (2,3)
  expect_error(bad, "/coefficients");
}
