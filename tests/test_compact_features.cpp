// Training in the used feature space (core/compact_features.hpp): on data
// whose used features are scattered over a large dimension (hashed text), the
// dual solvers give bit for bit the weights they give with compaction off
// (EngineSettings::compact_features), binary, multiclass, one-vs-all and warm
// starts whose old weights reach features the data does not use; and
// compaction is skipped where a decision sized by the dimension would differ.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <vector>

#include "core/compact_features.hpp"
#include "core/ova_trainer.hpp"
#include "core/random.hpp"
#include "core/solver.hpp"
#include "objectives/hinge.hpp"
#include "objectives/multiclass_hinge.hpp"
#include "objectives/weighted_hinge.hpp"

using namespace pegasos;

namespace {

// n rows of ~10 entries drawn from `used` features spread over `dimension`,
// labels from a random linear model (K classes) with 10% flipped; and the
// same rows with feature f renumbered to its rank among the used ones.
struct Pair {
  Dataset wide, dense;
  std::vector<std::uint32_t> used;  // dense index → wide index
};
Pair scattered(std::size_t n, std::uint32_t dimension, std::uint32_t used, int K, std::uint64_t seed) {
  Rng rng(seed);
  Pair p;
  std::map<std::uint32_t, bool> chosen;
  while (chosen.size() < used) chosen[static_cast<std::uint32_t>(rng.uniform() * dimension) % dimension] = true;
  for (const auto& [f, unused] : chosen) p.used.push_back(f);
  std::vector<double> truth(std::size_t{used} * static_cast<std::size_t>(K));
  for (double& v : truth) v = rng.uniform() - 0.5;
  for (Dataset* d : {&p.wide, &p.dense}) {
    for (int k = 0; k < K; ++k) d->classes.push_back("c" + std::to_string(k));
    d->source = "scattered";
  }
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<std::uint32_t> rank;
    for (int q = 0; q < 10; ++q) rank.push_back(static_cast<std::uint32_t>(rng.uniform() * used) % used);
    std::sort(rank.begin(), rank.end());
    rank.erase(std::unique(rank.begin(), rank.end()), rank.end());
    std::vector<float> val;
    std::vector<double> score(static_cast<std::size_t>(K), 0.0);
    std::vector<std::uint32_t> wide_idx;
    for (const std::uint32_t r : rank) {
      val.push_back(static_cast<float>(rng.uniform() * 0.5));
      wide_idx.push_back(p.used[r]);
      for (int k = 0; k < K; ++k) score[static_cast<std::size_t>(k)] += val.back() * truth[r * K + k];
    }
    int label = static_cast<int>(std::max_element(score.begin(), score.end()) - score.begin());
    if (rng.uniform() < 0.1) label = static_cast<int>(rng.uniform() * K) % K;
    p.wide.append_row(wide_idx, val, label);
    p.dense.append_row(rank, val, label);
  }
  p.wide.dimension = dimension;
  p.dense.dimension = used;
  return p;
}

// The first index where a and b differ (bit for bit; a length difference
// counts at the shorter length), or -1; a failure prints one index, not the
// vectors' hundreds of thousands of entries.
long first_difference(const std::vector<double>& a, const std::vector<double>& b) {
  const auto [ia, ib] = std::mismatch(a.begin(), a.end(), b.begin(), b.end());
  return ia == a.end() && ib == b.end() ? -1 : static_cast<long>(ia - a.begin());
}

void check_same(const TrainResult& on, const TrainResult& off) {
  CHECK(on.dimension == off.dimension);
  CHECK(first_difference(on.weights, off.weights) == -1);
  CHECK(on.bias == off.bias);
  CHECK(on.objective == off.objective);
  CHECK(on.dual_objective == off.dual_objective);
  CHECK(on.iterations == off.iterations);
  CHECK(first_difference(on.alpha, off.alpha) == -1);
}

}  // namespace

TEST_CASE("compact features: training with and without compaction is bit-identical", "[compact]") {
  const Pair p = scattered(600, 1u << 18, 3000, 3, 5);
  EngineSettings s;
  s.lambda = 1e-3;
  s.bias = BiasMode::kFeature;
  s.solver = Solver::kSdca;
  EngineSettings off = s;
  off.compact_features = false;
  REQUIRE(CompactFeatures::of(p.wide, s, {1, false}).has_value());
  REQUIRE(CompactFeatures::of(p.wide, s, {3, true}).has_value());
  REQUIRE_FALSE(CompactFeatures::of(p.wide, off, {1, false}).has_value());
  SECTION("binary, and a warm start with weights off the data's features") {
    const std::vector<double> cost{1.0, 2.0, 1.0};
    const WeightedHinge obj(1, cost, 1.2);
    const TrainResult on_r = train_with_solver(p.wide, obj, s), off_r = train_with_solver(p.wide, obj, off);
    REQUIRE(on_r.converged);
    check_same(on_r, off_r);
    WarmStart w;
    w.weights = on_r.weights;
    w.bias = on_r.bias;
    // Weights on features no row uses (the old model's point is the
    // certificate's first candidate, Pegasos starts from it).
    for (std::size_t j = 0; j < w.weights.size(); j += 997) {
      if (w.weights[j] == 0.0) w.weights[j] = 1e-9;
    }
    const TrainResult warm_on = train_with_solver(p.wide, obj, s, {}, &w);
    check_same(warm_on, train_with_solver(p.wide, obj, off, {}, &w));
    s.lambda = off.lambda = 5e-4;  // and at another lambda
    check_same(train_with_solver(p.wide, obj, s, {}, &w), train_with_solver(p.wide, obj, off, {}, &w));
  }
  SECTION("multiclass") {
    const std::vector<double> ones(3, 1.0);
    check_same(train_with_solver(p.wide, MulticlassHinge(3, ones, 1.0), s),
               train_with_solver(p.wide, MulticlassHinge(3, ones, 1.0), off));
  }
  SECTION("one-vs-all") {
    const std::vector<double> ones(3, 1.0);
    const auto make = [&](int k) { return WeightedHinge(k, ones, 1.0); };
    check_same(train_one_vs_all(p.wide, 3, s, make), train_one_vs_all(p.wide, 3, off, make));
  }
}

TEST_CASE("compact features: Pegasos with and without compaction is bit-identical", "[compact]") {
  // In full, ⌈d·K / nnz⌉ = 16 epochs between checks, compact 1 or 2: the
  // same checks only with the data's dimension kept (check_dimension).
  const Pair p = scattered(600, 1u << 18, 3000, 3, 21);
  EngineSettings s;
  s.lambda = 1e-2;
  s.solver = Solver::kPegasos;
  s.bias = BiasMode::kFeature;
  s.max_epochs = 300;
  EngineSettings off = s;
  off.compact_features = false;
  REQUIRE(CompactFeatures::of(p.wide, s, {1, false, false}).has_value());
  const std::vector<double> ones(3, 1.0);
  const Hinge hinge(1, 1.0);
  SECTION("binary, certified, and a warm start with weights off the data's features") {
    const TrainResult on_r = train_with_solver(p.wide, hinge, s), off_r = train_with_solver(p.wide, hinge, off);
    CHECK(on_r.epochs > 16);  // several checks
    check_same(on_r, off_r);
    WarmStart w;
    w.weights = on_r.weights;
    w.bias = on_r.bias;
    w.steps = on_r.iterations;
    for (std::size_t j = 0; j < w.weights.size(); j += 997) {
      if (w.weights[j] == 0.0) w.weights[j] = 1e-4;
    }
    s.lambda = off.lambda = 5e-3;
    check_same(train_with_solver(p.wide, hinge, s, {}, &w), train_with_solver(p.wide, hinge, off, {}, &w));
  }
  SECTION("unregularised bias, averaged and random iterates") {
    for (const OutputIterate out : {OutputIterate::kAverage, OutputIterate::kRandom, OutputIterate::kLast}) {
      s.bias = off.bias = BiasMode::kUnregularized;
      s.output = off.output = out;
      check_same(train_with_solver(p.wide, hinge, s), train_with_solver(p.wide, hinge, off));
    }
  }
  SECTION("multiclass and one-vs-all") {
    check_same(train_with_solver(p.wide, MulticlassHinge(3, ones, 1.0), s),
               train_with_solver(p.wide, MulticlassHinge(3, ones, 1.0), off));
    const auto make = [&](int k) { return WeightedHinge(k, ones, 1.0); };
    check_same(train_one_vs_all(p.wide, 3, s, make), train_one_vs_all(p.wide, 3, off, make));
  }
  SECTION("few used features: no interior-point hand-over in Pegasos' dual passes, so it compacts") {
    const Pair few = scattered(200, 1u << 17, 50, 2, 9);
    REQUIRE(CompactFeatures::of(few.wide, s, {1, false, false}).has_value());
    check_same(train_with_solver(few.wide, hinge, s), train_with_solver(few.wide, hinge, off));
  }
}

TEST_CASE("compact features: skipped where it does not pay or a trace reads the weights", "[compact]") {
  // Rows of 8 consecutive features covering the first `covered` of 2^17:
  // at most half used compacts, more does not.
  const auto covering = [](std::uint32_t covered) {
    Dataset d;
    d.classes = {"a", "b"};
    d.source = "covering";
    for (std::uint32_t f = 0; f < covered; f += 8) {
      std::vector<std::uint32_t> idx;
      for (std::uint32_t j = f; j < std::min(f + 8, covered); ++j) idx.push_back(j);
      d.append_row(idx, std::vector<float>(idx.size(), 0.5f), static_cast<int>((f / 8) % 2));
    }
    d.dimension = 1u << 17;
    return d;
  };
  EngineSettings s;
  const std::optional<CompactFeatures> half = CompactFeatures::of(covering(1u << 16), s, {1, false});
  REQUIRE(half.has_value());
  CHECK(half->data().dimension == (1u << 16));
  CHECK_FALSE(CompactFeatures::of(covering((1u << 16) + 1), s, {1, false}).has_value());
  // At most 1024 unknowns: the interior-point hand-over becomes possible, so no.
  CHECK_FALSE(CompactFeatures::of(scattered(100, 1u << 17, 50, 2, 9).wide, s, {1, false}).has_value());
  // The multiclass dual's smoothed point affordable compact but not in full: no
  // (for the binary dual, which has no such point, yes).
  const Pair mid = scattered(1000, 1u << 18, 2100, 3, 13);
  CHECK_FALSE(CompactFeatures::of(mid.wide, s, {3, true}).has_value());
  CHECK(CompactFeatures::of(mid.wide, s, {1, false}).has_value());
  const Pair sparse = scattered(3000, 1u << 17, 1100, 2, 9);
  s.trace_objective = true;
  CHECK_FALSE(CompactFeatures::of(sparse.wide, s, {1, false}).has_value());
  s.trace_objective = false;
  const std::optional<CompactFeatures> d = CompactFeatures::of(sparse.wide, s, {1, false});
  REQUIRE(d.has_value());
  std::vector<bool> seen(sparse.wide.dimension, false);
  for (std::size_t e = 0; e < sparse.wide.nnz(); ++e) seen[sparse.wide.indices[e]] = true;
  CHECK(d->data().dimension == static_cast<std::uint32_t>(std::count(seen.begin(), seen.end(), true)));
  // The renumbered rows keep their values and order, indices by rank (all
  // 1100 features drawn: the hand-made numbering is the same).
  REQUIRE(d->data().dimension == 1100);
  for (std::size_t i = 0; i < sparse.wide.size(); ++i) {
    const RowView a = sparse.dense.row(i), b = d->data().row(i);
    REQUIRE(a.nnz == b.nnz);
    for (std::uint32_t j = 0; j < a.nnz; ++j) {
      CHECK(a.indices[j] == b.indices[j]);
      CHECK(a.values[j] == b.values[j]);
    }
  }
}
