// The visit order of `sampling: permutation` (core/visit_order.hpp): the
// class-order test, blocked passes as permutations, and training on data large
// enough for blocks against the uniform permutation (`sampling: shuffle`), on
// shuffled and on label-sorted rows.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <span>
#include <vector>

#include "core/engine.hpp"
#include "core/sdca.hpp"
#include "core/visit_order.hpp"
#include "objectives/hinge.hpp"
#include "tests/fixtures.hpp"
#include "tests/test_util.hpp"

using namespace pegasos;
using testutil::bits;

namespace {

// Class ids drawn independently with the given shares.
std::vector<int> random_labels(std::size_t n, const std::vector<double>& shares, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<int> labels(n);
  for (int& l : labels) {
    double u = rng.uniform();
    l = 0;
    while (l + 1 < static_cast<int>(shares.size()) && u >= shares[static_cast<std::size_t>(l)]) {
      u -= shares[static_cast<std::size_t>(l)];
      ++l;
    }
  }
  return labels;
}


// Large enough for blocks: 220k rows of about 9 of 30 features (17 MB of rows).
const Dataset& large() {
  static const Dataset ds = fixtures::gaussian(220000, 30, 11, 0.3);
  return ds;
}

EngineSettings sdca_settings(Sampling sampling, std::uint64_t seed = 42) {
  EngineSettings s;
  s.lambda = 1e-5;  // λn = 2.2: SDCA's regime, several passes
  s.bias = BiasMode::kNone;
  s.solver = Solver::kSdca;
  s.sampling = sampling;
  s.seed = seed;
  return s;
}

}  // namespace

TEST_CASE("visit order: labels in a random order pass the class-order test, sorted or regrouped ones fail",
          "[visit_order]") {
  const std::uint64_t seed = GENERATE(range(1, 21));
  CAPTURE(seed);
  const std::vector<double> binary{0.7, 0.3}, rare{0.97, 0.03};
  const std::vector<double> many{0.3, 0.2, 0.15, 0.1, 0.1, 0.05, 0.05, 0.03, 0.018, 0.002};
  for (const auto* shares : {&binary, &rare, &many}) {
    std::vector<int> labels = random_labels(100000, *shares, seed);
    CHECK(classes_look_shuffled(labels, shares->size()));
    std::vector<int> sorted = labels;
    std::sort(sorted.begin(), sorted.end());
    CHECK_FALSE(classes_look_shuffled(sorted, shares->size()));
    // Rows in groups of 4 blocks of one class each (a weaker grouping).
    std::vector<int> grouped = labels;
    const std::size_t group = 4 * kVisitBlock;
    for (std::size_t at = 0; at + group <= grouped.size(); at += group) {
      std::sort(grouped.begin() + static_cast<std::ptrdiff_t>(at), grouped.begin() + static_cast<std::ptrdiff_t>(at + group));
    }
    CHECK_FALSE(classes_look_shuffled(grouped, shares->size()));
  }
  // Two files of different class mixes, concatenated.
  std::vector<int> two = random_labels(50000, {0.8, 0.2}, seed);
  const std::vector<int> second = random_labels(50000, {0.6, 0.4}, seed + 100);
  two.insert(two.end(), second.begin(), second.end());
  CHECK_FALSE(classes_look_shuffled(two, 2));
  // Too few rows, or one class: nothing to judge.
  CHECK(classes_look_shuffled(std::vector<int>(kVisitBlock, 1), 2));
  CHECK(classes_look_shuffled(std::vector<int>(10000, 0), 2));
}

TEST_CASE("visit order: a blocked pass visits every given row once, in runs of consecutive blocks", "[visit_order]") {
  const std::size_t n = 10000;
  // A shrunk active set: every third row, in a scrambled order.
  std::vector<std::uint32_t> active;
  for (std::uint32_t i = 0; i < n; i += 3) active.push_back(i);
  Rng scramble(5);
  scramble.shuffle(std::span<std::uint32_t>(active));
  std::vector<std::uint32_t> sorted = active;
  std::sort(sorted.begin(), sorted.end());

  PassOrder order(true, n);
  Rng rng(7);
  std::vector<std::uint32_t> previous;
  for (int pass = 0; pass < 3; ++pass) {
    order.arrange(std::span<std::uint32_t>(active), rng);
    std::vector<std::uint32_t> check = active;
    std::sort(check.begin(), check.end());
    REQUIRE(check == sorted);
    // Each run of kVisitBlock visits is one block of the sorted set.
    std::vector<bool> block_seen((sorted.size() + kVisitBlock - 1) / kVisitBlock, false);
    for (std::size_t at = 0; at < active.size();) {
      const std::size_t first = static_cast<std::size_t>(
          std::lower_bound(sorted.begin(), sorted.end(), active[at]) - sorted.begin());
      REQUIRE(first % kVisitBlock == 0);
      const std::size_t len = std::min(kVisitBlock, sorted.size() - first);
      for (std::size_t k = 0; k < len; ++k) REQUIRE(active[at + k] == sorted[first + k]);
      REQUIRE_FALSE(block_seen[first / kVisitBlock]);
      block_seen[first / kVisitBlock] = true;
      at += len;
    }
    CHECK(active != previous);  // a fresh order each pass
    previous = active;
  }
  // The same seed, the same passes (whatever order the rows come in: a pass
  // starts from the sorted set).
  Rng rng2(7);
  PassOrder order2(true, n);
  std::vector<std::uint32_t> replay = sorted;
  for (int pass = 0; pass < 3; ++pass) order2.arrange(std::span<std::uint32_t>(replay), rng2);
  CHECK(replay == previous);
  // Unblocked: exactly the uniform shuffle.
  std::vector<std::uint32_t> a = sorted, b = sorted;
  Rng r1(9), r2(9);
  PassOrder(false, n).arrange(std::span<std::uint32_t>(a), r1);
  r2.shuffle(std::span<std::uint32_t>(b));
  CHECK(a == b);
}

TEST_CASE("visit order: on large shuffled data blocks reach the uniform permutation's optimum, sorted data keeps it",
          "[visit_order][sdca]") {
  const Dataset& ds = large();
  REQUIRE(block_order_pays(ds));
  const TrainResult blocks = train_sdca(ds, Hinge(1), sdca_settings(Sampling::kPermutation));
  const TrainResult shuffle = train_sdca(ds, Hinge(1), sdca_settings(Sampling::kShuffle));
  INFO("blocks P " << blocks.objective << " D " << blocks.dual_objective << " passes " << blocks.epochs
                   << "; shuffle P " << shuffle.objective << " D " << shuffle.dual_objective << " passes "
                   << shuffle.epochs);
  REQUIRE(blocks.converged);
  REQUIRE(shuffle.converged);
  // Each run's objective lies above the other's certified lower bound, within
  // both certificates: P_b − D_s ≤ (P_b − P*) + (P* − D_s) ≤ tol·(P_b + P_s).
  const double tol = sdca_settings(Sampling::kPermutation).tolerance;
  CHECK(blocks.objective >= shuffle.dual_objective);
  CHECK(shuffle.objective >= blocks.dual_objective);
  CHECK(blocks.objective - shuffle.dual_objective <= tol * (blocks.objective + shuffle.objective));
  CHECK(blocks.epochs <= 1.5 * shuffle.epochs);
  CHECK(bits(blocks.weights) != bits(shuffle.weights));  // the blocks were used
  // Deterministic by seed.
  CHECK(bits(train_sdca(ds, Hinge(1), sdca_settings(Sampling::kPermutation)).weights) == bits(blocks.weights));

  // The same rows sorted by label fail the class-order test: the uniform
  // permutation, bit for bit, and the same optimum.
  const Dataset sorted = fixtures::sorted_by_label(ds);
  CHECK_FALSE(block_order_pays(sorted));
  const TrainResult on_sorted = train_sdca(sorted, Hinge(1), sdca_settings(Sampling::kPermutation));
  CHECK(bits(on_sorted.weights) == bits(train_sdca(sorted, Hinge(1), sdca_settings(Sampling::kShuffle)).weights));
  REQUIRE(on_sorted.converged);
  CHECK(on_sorted.objective >= blocks.dual_objective);
  CHECK(blocks.objective >= on_sorted.dual_objective);
}

TEST_CASE("visit order: the Pegasos engine's blocked epochs reach the uniform permutation's objective",
          "[visit_order][engine]") {
  const Dataset& ds = large();
  EngineSettings s;
  s.lambda = 1e-3;  // λn = 220: Pegasos' regime
  s.bias = BiasMode::kNone;
  s.epochs = 5;
  s.sampling = Sampling::kPermutation;
  const TrainResult blocks = train(ds, Hinge(1), s);
  s.sampling = Sampling::kShuffle;
  const TrainResult shuffle = train(ds, Hinge(1), s);
  EngineSettings exact = sdca_settings(Sampling::kShuffle);
  exact.lambda = s.lambda;
  exact.tolerance = 1e-6;
  const TrainResult optimum = train_sdca(ds, Hinge(1), exact);
  REQUIRE(optimum.converged);
  const double excess_blocks = blocks.objective - optimum.dual_objective;
  const double excess_shuffle = shuffle.objective - optimum.dual_objective;
  INFO("P* >= " << optimum.dual_objective << ", blocks +" << excess_blocks << ", shuffle +" << excess_shuffle);
  CHECK(bits(blocks.weights) != bits(shuffle.weights));
  CHECK(excess_blocks >= 0.0);
  CHECK(excess_blocks <= 2e-3 * optimum.objective);
  CHECK(excess_blocks <= 2.0 * excess_shuffle + 1e-4 * optimum.objective);
}

TEST_CASE("visit order: long rows keep the uniform permutation however large the data", "[visit_order][sdca]") {
  // 11000 rows of 200 non-zeros: 1600 bytes a row, 17.6 MB of rows (past kBlockedBytes).
  const Dataset dense = fixtures::gaussian(11000, 200, 23, 1.0);
  const std::uint64_t row_bytes = dense.nnz() * 8;
  REQUIRE(row_bytes >= kBlockedBytes);
  REQUIRE(row_bytes >= kLongRowBytes * dense.size());
  REQUIRE(classes_look_shuffled(dense.labels, dense.classes.size()));
  CHECK_FALSE(block_order_pays(dense));
  CHECK_FALSE(PassOrder(dense, Sampling::kPermutation).blocked());
  // Training with permutation sampling is then the uniform permutation, bit for bit.
  EngineSettings s = sdca_settings(Sampling::kPermutation);
  s.max_epochs = 3;
  const TrainResult permutation = train_sdca(dense, Hinge(1), s);
  s.sampling = Sampling::kShuffle;
  CHECK(bits(permutation.weights) == bits(train_sdca(dense, Hinge(1), s).weights));
  // Short rows of the same size in bytes are visited in blocks (the test above).
  CHECK(block_order_pays(large()));
  CHECK(large().nnz() * 8 < kLongRowBytes * large().size());
}

TEST_CASE("SDCA on rows that hold every feature skips their indices: the same model bit for bit", "[sdca]") {
  const Dataset dense = fixtures::gaussian(3000, 20, 29, 1.0);
  REQUIRE(dense.rows_hold_every_feature());
  // The same rows in a dataset one feature wider (a feature no row has): the
  // indexed path. Their problems have the same solution, padded with a 0.
  Dataset wider = dense;
  wider.dimension = dense.dimension + 1;
  REQUIRE_FALSE(wider.rows_hold_every_feature());
  Dataset holed = dense;  // and one row short of a feature is not dense either
  holed.row_ptr.own()[1] -= 1;
  CHECK_FALSE(holed.rows_hold_every_feature());
  for (const BiasMode bias : {BiasMode::kNone, BiasMode::kFeature}) {
    EngineSettings s = sdca_settings(Sampling::kPermutation);
    s.lambda = 1e-4;
    s.bias = bias;
    const TrainResult a = train_sdca(dense, Hinge(1), s);
    TrainResult b = train_sdca(wider, Hinge(1), s);
    REQUIRE(a.converged);
    REQUIRE(b.weights.size() == a.weights.size() + 1);
    CHECK(b.weights.back() == 0.0);
    b.weights.pop_back();
    CHECK(bits(a.weights) == bits(b.weights));
    CHECK(bits(a.bias) == bits(b.bias));
    CHECK(a.epochs == b.epochs);
  }
}
