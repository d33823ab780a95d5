// Classification metrics against hand-computed values; ROC-AUC and the
// FPR-constrained operating point against brute-force references.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "core/metrics.hpp"
#include "core/random.hpp"
#include "tests/test_util.hpp"

namespace {


using testutil::case_seed;

struct Scored {
  std::vector<double> scores;
  std::vector<char> positive;
};

// n scores with many ties (levels distinct values) or none (levels == 0).
Scored random_scored(std::uint64_t seed, std::size_t n, std::uint64_t levels, double positive_rate) {
  pegasos::Rng rng(seed);
  Scored s;
  for (std::size_t i = 0; i < n; ++i) {
    const bool pos = rng.uniform() < positive_rate;
    double score = levels ? static_cast<double>(rng.below(levels)) : rng.uniform();
    if (pos) score += levels ? static_cast<double>(rng.below(3)) : 0.3;  // some signal
    s.scores.push_back(score - 1.0);
    s.positive.push_back(pos ? 1 : 0);
  }
  return s;
}

// O(n²) pairwise count: P(score of a positive > score of a negative), ties ½.
std::optional<double> brute_force_auc(const Scored& s) {
  double wins = 0, pairs = 0;
  for (std::size_t i = 0; i < s.scores.size(); ++i) {
    if (!s.positive[i]) continue;
    for (std::size_t j = 0; j < s.scores.size(); ++j) {
      if (s.positive[j]) continue;
      pairs += 1;
      wins += s.scores[i] > s.scores[j] ? 1.0 : s.scores[i] == s.scores[j] ? 0.5 : 0.0;
    }
  }
  if (pairs == 0) return std::nullopt;
  return wins / pairs;
}

struct Counts {
  std::size_t tp = 0, fp = 0;
};

// Counts when predicting positive for every score >= cut.
Counts counts_at_or_above(const Scored& s, double cut) {
  Counts c;
  for (std::size_t i = 0; i < s.scores.size(); ++i) {
    if (s.scores[i] >= cut) ++(s.positive[i] ? c.tp : c.fp);
  }
  return c;
}

}  // namespace

TEST_CASE("metrics: hand-computed three-class example", "[metrics]") {
  // true:      a a a b b c c c c  (and one row without a label)
  // predicted: a b b b c c c a c
  // confusion [true][pred]: a: 1 2 0 / b: 0 1 1 / c: 1 0 3
  const std::vector<int> truth{0, 0, 0, 1, 1, 2, 2, 2, 2, -1};
  const std::vector<int> pred{0, 1, 1, 1, 2, 2, 2, 0, 2, 1};
  const pegasos::Metrics m = pegasos::classification_metrics(truth, pred, {"a", "b", "c"});
  CHECK(m.examples == 9);
  CHECK(m.accuracy == Approx(5.0 / 9.0));
  CHECK(m.balanced_accuracy == Approx((1.0 / 3 + 1.0 / 2 + 3.0 / 4) / 3));  // 19/36
  CHECK(m.macro_f1 == Approx((2.0 / 5 + 2.0 / 5 + 3.0 / 4) / 3));          // 31/60
  CHECK(m.weighted_f1 == Approx((3 * 2.0 / 5 + 2 * 2.0 / 5 + 4 * 3.0 / 4) / 9));
  CHECK(m.confusion == std::vector<std::vector<std::size_t>>{{1, 2, 0}, {0, 1, 1}, {1, 0, 3}});
  CHECK_FALSE(m.roc_auc.has_value());
  REQUIRE(m.per_class.size() == 3);
  const pegasos::ClassMetrics& a = m.per_class[0];
  const pegasos::ClassMetrics& b = m.per_class[1];
  const pegasos::ClassMetrics& c = m.per_class[2];
  CHECK(a.label == "a");
  CHECK(a.support == 3);
  CHECK(a.predicted == 2);
  CHECK(a.precision == Approx(1.0 / 2));
  CHECK(a.recall == Approx(1.0 / 3));
  CHECK(a.f1 == Approx(2.0 / 5));
  CHECK(b.label == "b");
  CHECK(b.support == 2);
  CHECK(b.predicted == 3);
  CHECK(b.precision == Approx(1.0 / 3));
  CHECK(b.recall == Approx(1.0 / 2));
  CHECK(b.f1 == Approx(2.0 / 5));
  CHECK(c.label == "c");
  CHECK(c.support == 4);
  CHECK(c.predicted == 4);
  CHECK(c.precision == Approx(3.0 / 4));
  CHECK(c.recall == Approx(3.0 / 4));
  CHECK(c.f1 == Approx(3.0 / 4));
}

TEST_CASE("metrics: classes absent from the data", "[metrics]") {
  // 'c' never occurs; 'd' is predicted once but never true.
  const std::vector<int> truth{0, 0, 1, 1};
  const std::vector<int> pred{0, 3, 1, 1};
  const pegasos::Metrics m = pegasos::classification_metrics(truth, pred, {"a", "b", "c", "d"});
  CHECK(m.accuracy == Approx(0.75));
  // Balanced accuracy averages recall over the classes present (a: 1/2, b: 1).
  CHECK(m.balanced_accuracy == Approx(0.75));
  CHECK(m.per_class[3].predicted == 1);
  CHECK(m.per_class[3].precision == 0.0);
  CHECK(m.per_class[2].f1 == 0.0);
  CHECK(m.macro_f1 == Approx((2.0 / 3 + 1.0) / 4));
  CHECK(m.weighted_f1 == Approx((2 * 2.0 / 3 + 2 * 1.0) / 4));

  const pegasos::Metrics none = pegasos::classification_metrics({-1, -1}, {0, 1}, {"a", "b"});
  CHECK(none.examples == 0);
  CHECK(none.accuracy == 0.0);
  CHECK(none.balanced_accuracy == 0.0);
}

TEST_CASE("metrics: roc_auc equals the O(n^2) pairwise count", "[metrics]") {
  const std::uint64_t stream = GENERATE(1, 2, 3, 4, 5, 6);
  const std::uint64_t levels = GENERATE(as<std::uint64_t>{}, 0, 2, 5, 40);
  const std::uint64_t seed = case_seed(stream);
  CAPTURE(seed, levels);
  const Scored s = random_scored(seed, 50 + stream * 37, levels, 0.1 + 0.12 * static_cast<double>(stream));
  const auto expected = brute_force_auc(s);
  const auto auc = pegasos::roc_auc(s.scores, s.positive);
  REQUIRE(auc.has_value() == expected.has_value());
  if (expected) CHECK(*auc == Approx(*expected).epsilon(1e-12));
}

TEST_CASE("metrics: roc_auc special cases", "[metrics]") {
  CHECK(pegasos::roc_auc({1, 2, 3}, {1, 1, 1}) == std::nullopt);
  CHECK(pegasos::roc_auc({1, 2, 3}, {0, 0, 0}) == std::nullopt);
  CHECK(pegasos::roc_auc({}, {}) == std::nullopt);
  CHECK(pegasos::roc_auc({0.1, 0.2, 0.8, 0.9}, {0, 0, 1, 1}) == 1.0);
  CHECK(pegasos::roc_auc({0.1, 0.2, 0.8, 0.9}, {1, 1, 0, 0}) == 0.0);
  CHECK(pegasos::roc_auc({5, 5, 5, 5}, {1, 0, 1, 0}) == 0.5);
  // pos {3, 1}, neg {2, 2}: pairs (3>2)(3>2)(1<2)(1<2) = 2/4.
  CHECK(pegasos::roc_auc({3, 2, 1, 2}, {1, 0, 1, 0}) == 0.5);
  // pos {2, 1}, neg {1}: 1 + 0.5 over 2 pairs.
  CHECK(pegasos::roc_auc({2, 1, 1}, {1, 1, 0}) == 0.75);
}

TEST_CASE("metrics: threshold_for_fpr finds the best recall within the FPR budget", "[metrics]") {
  const std::uint64_t stream = GENERATE(1, 2, 3, 4, 5);
  const std::uint64_t levels = GENERATE(as<std::uint64_t>{}, 0, 3, 30);
  const double max_fpr = GENERATE(0.0, 0.05, 0.1, 0.3, 0.5, 0.99, 1.0);
  const std::uint64_t seed = case_seed(stream);
  CAPTURE(seed, levels, max_fpr);
  const Scored s = random_scored(seed, 40 + stream * 23, levels, 0.4);
  std::size_t pos = 0, neg = 0;
  for (char p : s.positive) ++(p ? pos : neg);
  REQUIRE(pos > 0);
  REQUIRE(neg > 0);

  // Brute force: every way of predicting positive for the scores >= some cut
  // (plus predicting nothing), keep the largest recall with FPR <= max_fpr.
  double best_recall = 0.0;
  for (double cut : std::set<double>(s.scores.begin(), s.scores.end())) {
    const Counts c = counts_at_or_above(s, cut);
    if (static_cast<double>(c.fp) / static_cast<double>(neg) <= max_fpr) {
      best_recall = std::max(best_recall, static_cast<double>(c.tp) / static_cast<double>(pos));
    }
  }

  const auto op = pegasos::threshold_for_fpr(s.scores, s.positive, max_fpr);
  REQUIRE(op.has_value());
  CHECK(op->recall == best_recall);
  CHECK(op->false_positive_rate <= max_fpr);
  // The reported numbers are those of predicting positive for score > threshold.
  const pegasos::OperatingPoint check = pegasos::operating_point(s.scores, s.positive, op->threshold);
  CHECK(op->recall == check.recall);
  CHECK(op->false_positive_rate == check.false_positive_rate);
  CHECK(op->precision == check.precision);
  // The threshold lies strictly between distinct scores, never on one --
  // except "predict nothing" (the top group alone breaks the budget), which
  // puts it on the largest score.
  const double top = *std::max_element(s.scores.begin(), s.scores.end());
  if (op->recall == 0.0 && op->false_positive_rate == 0.0) {
    CHECK(op->threshold >= top);
  } else {
    for (double x : s.scores) CHECK(x != op->threshold);
  }
}

TEST_CASE("metrics: threshold_for_fpr with adjacent or extreme scores", "[metrics]") {
  // The midpoint of two adjacent doubles rounds to one of them; the threshold
  // must still separate them.
  const double hi = 1.0;
  const double lo = std::nextafter(1.0, 0.0);
  auto op = pegasos::threshold_for_fpr({hi, lo}, {1, 0}, 0.0);
  REQUIRE(op.has_value());
  CHECK(op->recall == 1.0);
  CHECK(op->false_positive_rate == 0.0);
  CHECK(op->threshold < hi);
  CHECK(op->threshold >= lo);

  const double big = std::numeric_limits<double>::max();
  op = pegasos::threshold_for_fpr({big, std::nextafter(big, 0.0)}, {1, 0}, 0.0);  // big + next overflows
  REQUIRE(op.has_value());
  CHECK(op->recall == 1.0);
  CHECK(op->false_positive_rate == 0.0);
  CHECK(std::isfinite(op->threshold));

  CHECK(pegasos::threshold_for_fpr({1, 2}, {1, 1}, 0.5) == std::nullopt);
  CHECK(pegasos::threshold_for_fpr({1, 2}, {0, 0}, 0.5) == std::nullopt);
}

TEST_CASE("metrics: operating_point by hand", "[metrics]") {
  // scores > 0.5: 0.9 (pos), 0.8 (neg), 0.6 (pos) -> tp 2, fp 1; pos 3, neg 2.
  const auto p = pegasos::operating_point({0.9, 0.8, 0.6, 0.5, 0.1}, {1, 0, 1, 0, 1}, 0.5);
  CHECK(p.threshold == 0.5);
  CHECK(p.recall == Approx(2.0 / 3));
  CHECK(p.precision == Approx(2.0 / 3));
  CHECK(p.false_positive_rate == Approx(1.0 / 2));
  const auto none = pegasos::operating_point({0.9, 0.1}, {1, 0}, 1.0);
  CHECK(none.recall == 0.0);
  CHECK(none.precision == 0.0);
  CHECK(none.false_positive_rate == 0.0);
}
