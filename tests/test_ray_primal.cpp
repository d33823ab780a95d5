// The best multiple θ*·w of a dual solver's primal point (core/ray_primal.hpp):
// the kink walk against a brute-force scan of P(θ), and the solvers' use of
// it — the returned model's objective recomputed from its own weights, and
// the certificate P − D ≤ tolerance·P that the run claims.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "core/random.hpp"
#include "core/ray_primal.hpp"
#include "core/sdca.hpp"
#include "core/solver.hpp"
#include "objectives/hinge.hpp"
#include "objectives/multiclass_hinge.hpp"
#include "tests/fixtures.hpp"

using namespace pegasos;

namespace {

double ray_value(double quad, const std::vector<double>& a, const std::vector<double>& b,
                 const std::vector<double>& c, double theta) {
  double loss = 0.0;
  for (std::size_t i = 0; i < b.size(); ++i) loss += c[i] * std::max(0.0, a[i] + theta * b[i]);
  return quad / 2 * theta * theta + loss / static_cast<double>(b.size());
}

}  // namespace

TEST_CASE("ray primal: the kink walk finds the minimum of P(theta) brute force finds", "[ray]") {
  Rng rng(7);
  std::vector<std::pair<double, double>> kinks;
  for (int trial = 0; trial < 200; ++trial) {
    const std::size_t n = 1 + static_cast<std::size_t>(rng.uniform() * 60);
    std::vector<double> a(n), b(n), c(n);
    for (std::size_t i = 0; i < n; ++i) {
      // Margins around 1 (kinks near θ = 1), some rows without a kink, some without cost.
      a[i] = rng.uniform() < 0.8 ? 1.0 : 2 * rng.uniform() - 0.5;
      b[i] = rng.uniform() < 0.1 ? 0.0 : -(0.3 + 2.5 * rng.uniform()) * (rng.uniform() < 0.85 ? 1.0 : -1.0);
      c[i] = rng.uniform() < 0.05 ? 0.0 : 0.2 + 3 * rng.uniform();
    }
    const double quad = std::pow(10.0, -3 + 4 * rng.uniform());
    const RayPoint r = best_ray_point(
        quad, b, [&](std::size_t i) { return a[i]; }, [&](std::size_t i) { return c[i]; }, kinks);
    INFO("trial " << trial << " n " << n << " quad " << quad << " theta " << r.theta);
    REQUIRE(std::isfinite(r.primal));
    REQUIRE(r.theta >= kRayLow);
    REQUIRE(r.theta <= kRayHigh);
    CHECK(r.primal == Approx(ray_value(quad, a, b, c, r.theta)).epsilon(1e-12));
    // Brute force: P is quadratic between consecutive kinks, so its minimum
    // over the range is the least of the minima of the pieces, each found by
    // golden-section search (P is convex).
    std::vector<double> cuts = {kRayLow, kRayHigh};
    for (std::size_t i = 0; i < n; ++i) {
      if (b[i] != 0.0 && -a[i] / b[i] > kRayLow && -a[i] / b[i] < kRayHigh) cuts.push_back(-a[i] / b[i]);
    }
    std::sort(cuts.begin(), cuts.end());
    double best = std::numeric_limits<double>::infinity();
    for (std::size_t j = 0; j + 1 < cuts.size(); ++j) {
      double lo = cuts[j], hi = cuts[j + 1];
      const double g = (std::sqrt(5.0) - 1) / 2;
      for (int it = 0; it < 200 && hi - lo > 1e-15; ++it) {
        const double m1 = hi - g * (hi - lo), m2 = lo + g * (hi - lo);
        if (ray_value(quad, a, b, c, m1) <= ray_value(quad, a, b, c, m2)) {
          hi = m2;
        } else {
          lo = m1;
        }
      }
      best = std::min({best, ray_value(quad, a, b, c, cuts[j]), ray_value(quad, a, b, c, cuts[j + 1]),
                       ray_value(quad, a, b, c, (lo + hi) / 2)});
    }
    CHECK(r.primal == Approx(best).epsilon(1e-10));
    // And never above P(1), the point it offers to replace.
    CHECK(r.primal <= ray_value(quad, a, b, c, 1.0) * (1 + 1e-15));
  }
}

TEST_CASE("ray primal: nothing to scale", "[ray]") {
  std::vector<std::pair<double, double>> kinks;
  const std::vector<double> b = {-1.0, -0.9, -1.1};
  const auto one = [](std::size_t) { return 1.0; };
  CHECK(std::isinf(best_ray_point(0.0, b, one, one, kinks).primal));  // w = 0
  CHECK(std::isinf(best_ray_point(1.0, {}, one, one, kinks).primal));
  CHECK(std::isfinite(best_ray_point(1e-3, b, one, one, kinks).primal));
}

TEST_CASE("ray primal: many kinks to a bin give the minimum a walk through all of them sorted gives", "[ray]") {
  // Margins packed near 1 (hundreds of kinks in each of a few bins), against
  // the plain algorithm: every kink sorted and walked in order.
  Rng rng(11);
  std::vector<std::pair<double, double>> kinks;
  for (int trial = 0; trial < 20; ++trial) {
    const std::size_t n = 3000;
    std::vector<double> b(n);
    const double spread = trial < 10 ? 0.01 : 0.5;
    for (double& v : b) v = -1.0 / (1.0 + spread * (2 * rng.uniform() - 1)) * (rng.uniform() < 0.9 ? 1.0 : -1.0);
    const double quad = std::pow(10.0, -2 + 2 * rng.uniform());
    const auto one = [](std::size_t) { return 1.0; };
    const RayPoint r = best_ray_point(quad, b, one, one, kinks);
    // The reference walk.
    std::vector<std::pair<double, double>> all;
    double slope = quad * kRayLow;
    for (const double bi : b) {
      if (1.0 + kRayLow * bi > 0.0) slope += bi / static_cast<double>(n);
      if (-1.0 / bi > kRayLow && -1.0 / bi < kRayHigh) all.emplace_back(-1.0 / bi, std::abs(bi) / static_cast<double>(n));
    }
    std::sort(all.begin(), all.end());
    double theta = kRayLow;
    bool found = slope >= 0.0;
    for (std::size_t j = 0; j < all.size() && !found; ++j) {
      if (theta - slope / quad <= all[j].first) {
        theta -= slope / quad;
        found = true;
      } else {
        slope += quad * (all[j].first - theta) + all[j].second;
        theta = all[j].first;
        found = slope >= 0.0;
      }
    }
    if (!found) theta = std::min(theta - slope / quad, kRayHigh);
    INFO("trial " << trial << " quad " << quad);
    CHECK(r.theta == Approx(theta).epsilon(1e-9));
    std::vector<double> a(n, 1.0), c(n, 1.0);
    CHECK(r.primal == Approx(ray_value(quad, a, b, c, theta)).epsilon(1e-12));
  }
}

// The run certified: its objective is its own weights', and its gap holds.
template <class O>
void check_ray_certified(const Dataset& ds, const O& o, const EngineSettings& s, const TrainResult& r) {
  INFO("lambda " << s.lambda << " objective " << r.objective << " dual " << r.dual_objective);
  REQUIRE(r.converged);
  const double p = primal_objective(ds, o, s, r.weights, r.bias);
  CHECK(r.objective == Approx(p).epsilon(1e-9));
  CHECK(p - r.dual_objective <= s.tolerance * p);
}

TEST_CASE("ray primal: SDCA's certified models hold their own objective and gap", "[ray]") {
  // Large C on separable-looking data: the checks' w(α) leaves rows just
  // inside their margins, the case the best multiple is for.
  EngineSettings s;
  s.solver = Solver::kSdca;
  s.bias = BiasMode::kFeature;
  s.bias_feature_value = 1.0;
  const Dataset binary = fixtures::gaussian(400, 20, 3, 1.0, 1.5), blobs = fixtures::blobs(300, 12, 4, 5, 0.4);
  for (const double C : {1.0, 100.0}) {
    s.lambda = 1.0 / (C * static_cast<double>(binary.size()));
    check_ray_certified(binary, Hinge(), s, train_sdca(binary, Hinge(), s));
    s.lambda = 1.0 / (C * static_cast<double>(blobs.size()));
    check_ray_certified(blobs, MulticlassHinge(4), s, train_sdca_multiclass(blobs, MulticlassHinge(4), s));
  }
}
