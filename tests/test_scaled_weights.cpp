// ScaledWeights after random operation sequences vs a plain dense reference.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "core/random.hpp"
#include "core/scaled_weights.hpp"
#include "core/training.hpp"
#include "objectives/hinge.hpp"

using namespace pegasos;

namespace {

struct SparseRow {
  std::vector<std::uint32_t> idx;
  std::vector<float> val;
  RowView view() const { return RowView{val.data(), idx.data(), static_cast<std::uint32_t>(idx.size()), 0, 0}; }
};

SparseRow random_row(Rng& rng, std::size_t rows) {
  SparseRow r;
  for (std::uint32_t j = 0; j < rows; ++j) {
    if (rng.uniform() < 0.3) {
      r.idx.push_back(j);
      r.val.push_back(static_cast<float>(rng.uniform() * 2 - 1));
    }
  }
  return r;
}

}  // namespace

TEST_CASE("ScaledWeights matches dense updates, averaging included", "[engine]") {
  const int K = GENERATE(1, 3);
  const std::uint64_t seed = GENERATE(1u, 2u, 3u);
  // Laid out for averaging from the start, or re-laid out when it starts.
  const bool laid_out = GENERATE(false, true);
  const std::size_t rows = 17;
  Rng rng(seed);
  ScaledWeights w(rows, K, laid_out);
  std::vector<double> dense(rows * K, 0.0), avg(rows * K, 0.0);
  bool averaging = false;
  for (int step = 1; step <= 3000; ++step) {
    const double op = rng.uniform();
    if (op < 0.4) {
      SparseRow r = random_row(rng, rows + 2);  // indices beyond rows are ignored
      std::vector<double> coeff(K);
      for (auto& c : coeff) c = rng.uniform() < 0.2 ? 0.0 : rng.uniform() * 4 - 2;
      w.add(r.view(), coeff.data());
      for (std::size_t j = 0; j < r.idx.size(); ++j) {
        if (r.idx[j] >= rows) continue;
        for (int k = 0; k < K; ++k) dense[r.idx[j] * K + k] += coeff[k] * r.val[j];
      }
    } else if (op < 0.75) {
      // Pegasos-like shrinks, sometimes tiny to force renormalisation.
      const double c = rng.uniform() < 0.05 ? 1e-6 : 1.0 - 1.0 / (step + 1.0);
      w.scale_by(c);
      for (auto& v : dense) v *= c;
    } else if (op < 0.77) {
      w.scale_by(0.0);
      std::fill(dense.begin(), dense.end(), 0.0);
    } else {
      const double mu = averaging ? (rng.uniform() < 0.1 ? 1e-3 : 4.0 / (step + 3.0)) : 1.0;
      if (!averaging) {
        w.start_averaging();
        avg = dense;
        averaging = true;
      } else {
        w.average_step(mu);
        for (std::size_t i = 0; i < avg.size(); ++i) avg[i] = (1 - mu) * avg[i] + mu * dense[i];
      }
    }
    double sq = 0.0, scale = 1.0;
    for (double v : dense) sq += v * v;
    for (double v : dense) scale = std::max(scale, std::abs(v));
    REQUIRE(w.squared_norm() == Approx(sq).margin(1e-9 * scale * scale));
    const std::vector<double> got = w.weights();
    for (std::size_t i = 0; i < dense.size(); ++i) REQUIRE(got[i] == Approx(dense[i]).margin(1e-9 * scale));
    if (averaging) {
      const std::vector<double> got_avg = w.average_weights();
      for (std::size_t i = 0; i < avg.size(); ++i) REQUIRE(got_avg[i] == Approx(avg[i]).margin(1e-9 * scale));
    }
  }
}

// row_dot (SDCA's score, and dense_scores' for one output) against a long
// double reference: sparse and dense rows on both sides of kSplitDot, which
// below it is the one running sum in index order, bit for bit.
TEST_CASE("row_dot: partial sums on long rows, the plain running sum on short ones", "[engine]") {
  Rng rng(7);
  const std::size_t d = 300;
  std::vector<double> w(d);
  for (double& v : w) v = rng.uniform() * 2 - 1;
  for (std::size_t len : {std::size_t{0}, std::size_t{5}, std::size_t{kSplitDot - 1}, std::size_t{kSplitDot},
                          std::size_t{kSplitDot + 3}, std::size_t{101}, d}) {
    SparseRow r;
    for (std::uint32_t j = 0; j < d && r.idx.size() < len; ++j) {
      if (len == d || rng.uniform() < 0.5) {
        r.idx.push_back(j);
        r.val.push_back(static_cast<float>(rng.uniform() * 2 - 1));
      }
    }
    const RowView x = r.view();
    long double ref = 0.25L;
    double sequential = 0.25;
    for (std::uint32_t j = 0; j < x.nnz; ++j) {
      ref += static_cast<long double>(x.values[j]) * w[x.indices[j]];
      sequential += static_cast<double>(x.values[j]) * w[x.indices[j]];
    }
    const double got = row_dot<false>(x, w.data(), 0.25);
    CHECK(std::abs(got - static_cast<double>(ref)) <= 1e-13);
    if (x.nnz < kSplitDot) CHECK(got == sequential);
    if (x.nnz == d) CHECK(row_dot<true>(x, w.data(), 0.25) == got);  // dense rows: the same sums
    // dense_scores for one output (hinge): the same score as the pass's.
    double s = 0.0;
    dense_scores(Hinge{}, w, std::vector<double>{0.25}, static_cast<std::uint32_t>(d), x, &s);
    CHECK(s == got);
  }
}

// squared_norm (SDCA's ‖x_i‖², summed by its first pass) against a long
// double reference, on both sides of kSplitSum: below it the one running sum
// in index order, bit for bit; from it on the four partial sums, within
// rounding of the exact sum, and with the start added.
TEST_CASE("squared_norm: partial sums on long rows, the plain running sum on short ones", "[engine]") {
  Rng rng(11);
  for (std::size_t len : {std::size_t{0}, std::size_t{1}, std::size_t{kSplitSum - 1}, std::size_t{kSplitSum},
                          std::size_t{kSplitSum + 1}, std::size_t{kSplitSum + 3}, std::size_t{70}, std::size_t{784}}) {
    SparseRow r;
    for (std::uint32_t j = 0; j < len; ++j) {
      r.idx.push_back(2 * j);
      r.val.push_back(static_cast<float>((rng.uniform() * 2 - 1) * (j % 7 == 0 ? 1000.0 : 1.0)));
    }
    const RowView x = r.view();
    long double ref = 2.5L;
    double sequential = 2.5;
    for (std::uint32_t j = 0; j < x.nnz; ++j) {
      ref += static_cast<long double>(x.values[j]) * x.values[j];
      sequential += static_cast<double>(x.values[j]) * x.values[j];
    }
    const double got = squared_norm(x, 2.5);
    CHECK(std::abs(got - static_cast<double>(ref)) <= 1e-15 * static_cast<double>(ref) * static_cast<double>(len + 1));
    if (x.nnz < kSplitSum) CHECK(got == sequential);
    CHECK(squared_norm(x) == Approx(got - 2.5).epsilon(1e-14));
  }
}
