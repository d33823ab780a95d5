// What training chooses by cross-validation on its own data (drivers/fit.hpp):
// Platt scaling against a brute-force minimum, the threshold searches against
// every candidate threshold, probabilities and their scores against direct
// formulas; lambda "auto" against `--cv --grid` on the same values; the
// stored threshold and probabilities through train, predict and eval.
#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "core/calibration.hpp"
#include "core/dataset.hpp"
#include "core/metrics.hpp"
#include "core/random.hpp"
#include "drivers/any_model.hpp"
#include "drivers/cross_validate.hpp"
#include "drivers/fit.hpp"
#include "tests/fixtures.hpp"
#include "tests/test_util.hpp"

namespace {

using Catch::Contains;
using nlohmann::json;
using testutil::pegasos_run;
using testutil::q;
using testutil::Run;
using testutil::TempDir;

// Scores that a classifier might give: positives around +m, negatives around −m, with noise.
void noisy_scores(std::size_t n, double m, std::uint64_t seed, std::vector<double>& s, std::vector<char>& positive) {
  pegasos::Rng rng(seed);
  s.clear();
  positive.clear();
  for (std::size_t i = 0; i < n; ++i) {
    const bool p = rng.uniform() < 0.3;
    positive.push_back(p);
    s.push_back((p ? m : -m) + 2.0 * (rng.uniform() - 0.5) + (rng.uniform() - 0.5));
  }
}

// Lines of a predict output split at tabs.
std::vector<std::vector<std::string>> table(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::size_t start = 0;
    for (std::size_t t; (t = line.find('\t', start)) != std::string::npos; start = t + 1) cells.push_back(line.substr(start, t - start));
    cells.push_back(line.substr(start));
    rows.push_back(cells);
  }
  return rows;
}

// Two well separated classes, a quarter positive, feature values of size
// `scale`: at the path's first λ (C = 0.01) every fold's model predicts the
// majority class, and the curve stays there for several points before the
// data can move w.
std::string small_separable(std::size_t n, double scale, std::uint64_t seed) {
  pegasos::Rng rng(seed);
  std::string text;
  char line[96];
  for (std::size_t i = 0; i < n; ++i) {
    const int y = i % 4 == 0 ? 1 : -1;
    std::snprintf(line, sizeof line, "%d 1:%.5f 2:%.5f\n", y, scale * (0.5 * y + 0.4 * (rng.uniform() - 0.5)),
                  scale * 2.0 * (rng.uniform() - 0.5));
    text += line;
  }
  return text;
}

json selection_of(const std::string& model) { return json::parse(testutil::read_text(model))["training"]["selection"]; }

// `train --cv FOLDS --grid lambda=VALUES` over the same values prints the same best as auto chose.
void check_grid_best(const TempDir& dir, const std::string& data, int folds, const std::string& values, const json& chosen) {
  const Run cv = pegasos_run(dir, "train --cv " + std::to_string(folds) + " --grid lambda=" + values + " " + q(data));
  REQUIRE(cv.code == 0);
  char best_line[64];
  std::snprintf(best_line, sizeof best_line, "best: lambda=%.6g ", chosen.get<double>());
  CHECK_THAT(cv.out, Contains(best_line));
}

}  // namespace

TEST_CASE("platt: the fit is the minimum of its loss (brute-force grid and local probes)", "[fit]") {
  std::vector<double> s;
  std::vector<char> positive;
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    noisy_scores(400, 0.4 * static_cast<double>(seed), seed, s, positive);
    const pegasos::Platt fit = pegasos::platt_fit(s, positive);
    const double at = pegasos::platt_loss(fit, s, positive);
    CHECK(fit.a < 0);  // higher score, more likely positive
    double grid_best = INFINITY;
    for (double a = -20; a <= 0; a += 0.05) {
      for (double b = -5; b <= 5; b += 0.05) grid_best = std::min(grid_best, pegasos::platt_loss({a, b}, s, positive));
    }
    CHECK(at <= grid_best + 1e-9);
    for (double da : {-1e-3, 0.0, 1e-3}) {
      for (double db : {-1e-3, 0.0, 1e-3}) CHECK(at <= pegasos::platt_loss({fit.a + da, fit.b + db}, s, positive) + 1e-12);
    }
  }
  // Separable scores: the loss has no finite minimum without the smoothed targets; the fit stays finite.
  const std::vector<double> sep = {-3, -2, -1, 1, 2, 3};
  const std::vector<char> lab = {0, 0, 0, 1, 1, 1};
  const pegasos::Platt p = pegasos::platt_fit(sep, lab);
  CHECK(std::isfinite(p.a));
  CHECK(std::isfinite(p.b));
  CHECK(p.probability(3) > 0.5);
  CHECK(p.probability(3) < 1.0);
  CHECK_THROWS_AS(pegasos::platt_fit({1, 2}, {1, 1}), std::invalid_argument);
}

TEST_CASE("sample weights: Platt, log-loss, Brier and thresholds count a weight-k example k times", "[fit]") {
  std::vector<double> s, rs;  // rs, rpos: every example repeated weight times
  std::vector<char> positive, rpos;
  noisy_scores(300, 0.5, 7, s, positive);
  std::vector<float> w(s.size());
  pegasos::Rng rng(11);
  std::vector<int> truth, rtruth;
  for (std::size_t i = 0; i < s.size(); ++i) {
    w[i] = static_cast<float>(1 + static_cast<int>(rng.uniform() * 4));  // 1..4
    for (int k = 0; k < static_cast<int>(w[i]); ++k) {
      rs.push_back(s[i]);
      rpos.push_back(positive[i]);
      rtruth.push_back(positive[i] ? 1 : 0);
    }
    truth.push_back(positive[i] ? 1 : 0);
  }
  const pegasos::Platt weighted = pegasos::platt_fit(s, positive, w), repeated = pegasos::platt_fit(rs, rpos);
  const pegasos::Platt plain = pegasos::platt_fit(s, positive);
  CHECK(weighted.a == Approx(repeated.a).epsilon(1e-8));
  CHECK(weighted.b == Approx(repeated.b).epsilon(1e-8));
  CHECK(pegasos::platt_loss(weighted, s, positive, w) == Approx(pegasos::platt_loss(repeated, rs, rpos)).epsilon(1e-10));
  CHECK(std::abs(plain.a - weighted.a) > 1e-3);  // the weights change the fit
  // Weights all 1 are no weights, bit for bit.
  const pegasos::Platt ones = pegasos::platt_fit(s, positive, std::vector<float>(s.size(), 1.0f));
  CHECK(ones.a == plain.a);
  CHECK(ones.b == plain.b);

  std::vector<double> p, rp;
  for (double v : s) p.insert(p.end(), {1.0 - weighted.probability(v), weighted.probability(v)});
  for (double v : rs) rp.insert(rp.end(), {1.0 - weighted.probability(v), weighted.probability(v)});
  CHECK(pegasos::log_loss(p, truth, 2, w) == Approx(pegasos::log_loss(rp, rtruth, 2)).epsilon(1e-12));
  CHECK(pegasos::brier_score(p, truth, 2, w) == Approx(pegasos::brier_score(rp, rtruth, 2)).epsilon(1e-12));
  CHECK(pegasos::log_loss(p, truth, 2, std::vector<float>(s.size(), 1.0f)) == pegasos::log_loss(p, truth, 2));

  for (double fpr : {0.0, 0.01, 0.05, 0.2}) {
    const auto a = pegasos::threshold_for_fpr(s, positive, fpr, w), b = pegasos::threshold_for_fpr(rs, rpos, fpr);
    REQUIRE(a);
    REQUIRE(b);
    CHECK(a->threshold == b->threshold);
    CHECK(a->false_positive_rate == Approx(b->false_positive_rate).epsilon(1e-12));
    CHECK(a->recall == Approx(b->recall).epsilon(1e-12));
    CHECK(a->false_positive_rate <= fpr);
  }
  for (double recall : {0.5, 0.9, 0.99}) {
    const auto a = pegasos::threshold_for_recall(s, positive, recall, w), b = pegasos::threshold_for_recall(rs, rpos, recall);
    REQUIRE(a);
    REQUIRE(b);
    CHECK(a->threshold == b->threshold);
    CHECK(a->precision == Approx(b->precision).epsilon(1e-12));
    CHECK(a->recall >= recall);
  }
  CHECK_THROWS_AS(pegasos::platt_fit(s, positive, std::vector<float>(3, 1.0f)), std::invalid_argument);
  CHECK_THROWS_AS(pegasos::operating_point(s, positive, 0.0, std::vector<float>(3, 1.0f)), std::invalid_argument);
}

TEST_CASE("probabilities: in [0, 1], monotone in the score, multiclass rows sum to 1, log-loss and Brier by formula",
          "[fit]") {
  const std::vector<pegasos::Platt> one = {{-2.0, 0.3}};
  double prev = -1;
  for (double score = -50; score <= 50; score += 0.25) {
    double p[2];
    pegasos::calibrated_probabilities(one, &score, 1, p);
    CHECK(p[1] >= 0);
    CHECK(p[1] <= 1);
    CHECK(p[0] + p[1] == Approx(1.0));
    CHECK(p[1] >= prev);
    prev = p[1];
  }
  const std::vector<pegasos::Platt> three = {{-1.0, 0.0}, {-3.0, 0.5}, {-0.5, -0.2}};
  const double scores[3] = {0.2, -0.4, 1.3};
  double p[3];
  pegasos::calibrated_probabilities(three, scores, 3, p);
  CHECK(p[0] + p[1] + p[2] == Approx(1.0));
  const double raise[3] = {0.9, -0.4, 1.3};
  double q[3];
  pegasos::calibrated_probabilities(three, raise, 3, q);
  CHECK(q[0] > p[0]);  // its own score up: its probability up
  const double huge[3] = {-1e6, -1e6, -2e6};  // every sigmoid underflows
  pegasos::calibrated_probabilities(three, huge, 3, q);
  CHECK(q[0] + q[1] + q[2] == Approx(1.0));

  // Two rows, binary: truth 1 with p1 = 0.8, truth 0 with p1 = 0.4.
  const std::vector<double> probs = {0.2, 0.8, 0.6, 0.4};
  const std::vector<int> truth = {1, 0};
  CHECK(pegasos::log_loss(probs, truth, 2) == Approx(-(std::log(0.8) + std::log(0.6)) / 2));
  CHECK(pegasos::brier_score(probs, truth, 2) == Approx((0.04 + 0.16) / 2));
  // Three classes: Σ_k (p_k − y_k)².
  const std::vector<double> p3 = {0.7, 0.2, 0.1};
  CHECK(pegasos::brier_score(p3, {0}, 3) == Approx(0.09 + 0.04 + 0.01));
  CHECK(pegasos::log_loss({0.0, 1.0}, {0}, 2) == Approx(-std::log(1e-15)));  // clipped, finite
}

TEST_CASE("threshold_for_recall: the highest threshold reaching the recall, by brute force over every cut", "[fit]") {
  std::vector<double> s;
  std::vector<char> positive;
  noisy_scores(300, 0.5, 9, s, positive);
  for (double& v : s) v = std::round(v * 20) / 20;  // ties
  for (double target : {0.1, 0.5, 0.9, 0.99, 1.0}) {
    INFO(target);
    const auto op = pegasos::threshold_for_recall(s, positive, target);
    REQUIRE(op);
    CHECK(op->recall >= target);
    // No threshold above it reaches the target: try every distinct score as a cut.
    std::vector<double> cuts = s;
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    for (double c : cuts) {
      if (c <= op->threshold) continue;
      CHECK(pegasos::operating_point(s, positive, c).recall < target);
    }
  }
}

TEST_CASE("lambda auto: the grid, the curve as --cv --grid gives it, the model at the best point", "[fit]") {
  const std::vector<double> grid = pegasos::auto_lambda_grid(1000);
  REQUIRE(grid.size() == 16);
  CHECK(grid.front() == Approx(1.0 / (0.01 * 1000)));
  CHECK(grid.back() == Approx(1.0 / (1000.0 * 1000)).epsilon(1e-5));
  CHECK(std::is_sorted(grid.rbegin(), grid.rend()));

  TempDir dir("fit");
  const std::string data = dir.write("d.svm", fixtures::libsvm_text(fixtures::gaussian(300, 8, 21, 1.0, 0.4)));
  const std::string model = dir.file("auto.json");
  const Run r = pegasos_run(dir, "train " + q(data) + " " + q(model) + " --set lambda=auto --set cv_folds=4");
  REQUIRE(r.code == 0);
  CHECK_THAT(r.err, Contains("lambda auto: chose lambda"));
  const json m = json::parse(testutil::read_text(model));
  const json& sel = m["training"]["selection"];
  CHECK(sel["folds"] == 4);
  CHECK(m["settings"]["lambda"] == sel["value"]);
  CHECK(m["settings"]["cv_folds"] == 4);
  // The best point of the curve (ties: the first, the larger λ).
  std::size_t best = 0;
  for (std::size_t i = 0; i < sel["curve"].size(); ++i) {
    if (sel["curve"][i]["mean"].get<double>() > sel["curve"][best]["mean"].get<double>()) best = i;
  }
  CHECK(sel["curve"][best]["value"] == sel["value"]);
  // The path stopped by its rule, recomputed from the curve: every point run, or the last 4
  // below the best, or (the best past the first point) the last 2 below it by more than
  // its standard error.
  const auto& curve = sel["curve"];
  const std::size_t run = curve.size();
  CHECK(sel["auto"]["points_run"] == run);
  if (run < 16) {
    const double b = curve[best]["mean"].get<double>(), se = curve[best]["std"].get<double>() / std::sqrt(4.0);
    std::size_t moved = 0;  // the first point off the curve's first value (the rules count from there)
    while (moved < run && curve[moved]["mean"] == curve[0]["mean"]) ++moved;
    const bool four_below = run - std::max(best + 1, moved) >= 4;
    const bool two_clearly = b > curve[0]["mean"].get<double>() && run - 1 - best >= 2 &&
                             curve[run - 1]["mean"].get<double>() < b - se &&
                             curve[run - 2]["mean"].get<double>() < b - se;
    CHECK((four_below || two_clearly));
  }
  // The same values through --cv --grid: the same curve (the path runs the same folds, warm-started alike).
  std::string values;
  for (const auto& p : sel["curve"]) values += (values.empty() ? "" : ",") + p["value"].dump();
  check_grid_best(dir, data, 4, values, sel["value"]);
  // The model is the plain fit at the chosen λ.
  const std::string plain = dir.file("plain.json");
  REQUIRE(pegasos_run(dir, "train " + q(data) + " " + q(plain) + " --set lambda=" + sel["value"].dump()).code == 0);
  CHECK(json::parse(testutil::read_text(plain))["weights"] == m["weights"]);
  // Deterministic for any thread count.
  const std::string two = dir.file("two.json");
  REQUIRE(pegasos_run(dir, "train " + q(data) + " " + q(two) + " --set lambda=auto --set cv_folds=4 --set threads=1").code == 0);
  CHECK(testutil::read_text(two) == testutil::read_text(model));
  // Too few examples of a class for the folds: exit 2 naming the setting.
  const std::string tiny = dir.write("tiny.svm", "1 1:1\n-1 1:-1\n-1 1:0.5\n-1 1:-0.5\n-1 1:0.7\n-1 1:-0.2\n");
  const Run few = pegasos_run(dir, "train " + q(tiny) + " " + q(dir.file("t.json")) + " --set lambda=auto");
  CHECK(few.code == 2);
  CHECK_THAT(few.err, Contains("cv_folds") && Contains("fewer folds"));
  // Nested cross-validation is refused with a way out.
  const Run nested = pegasos_run(dir, "train --cv 3 --set lambda=auto " + q(data));
  CHECK(nested.code == 2);
  CHECK_THAT(nested.err, Contains("--grid lambda="));
}

TEST_CASE("calibrate and max_fpr: stored in the model, used by predict and eval, overridable", "[fit]") {
  TempDir dir("fit");
  const std::string train = dir.write("train.svm", fixtures::libsvm_text(fixtures::gaussian(600, 10, 31, 1.0, 0.5)));
  const std::string test = dir.write("test.svm", fixtures::libsvm_text(fixtures::gaussian(400, 10, 32, 1.0, 0.5)));
  const std::string model = dir.file("m.json");
  const Run r = pegasos_run(dir, "train " + q(train) + " " + q(model) + " --calibrate --max-fpr 0.05");
  REQUIRE(r.code == 0);
  CHECK_THAT(r.err, Contains("calibrated: Platt") && Contains("threshold: score >"));
  const json m = json::parse(testutil::read_text(model));
  REQUIRE(m["calibration"]["a"].size() == 1);
  CHECK(m["calibration"]["a"][0].get<double>() < 0);
  CHECK(m["threshold"]["out_of_fold"]["false_positive_rate"].get<double>() <= 0.05);
  CHECK(m["settings"]["calibrate"] == true);
  const double t = m["threshold"]["score"].get<double>();

  // predict: the class is score > stored threshold; --proba gives P(positive), monotone in the score.
  const Run scores = pegasos_run(dir, "predict " + q(model) + " " + q(test));
  REQUIRE(scores.code == 0);
  const Run proba = pegasos_run(dir, "predict --proba " + q(model) + " " + q(test));
  REQUIRE(proba.code == 0);
  const auto S = table(scores.out), P = table(proba.out);
  REQUIRE(S.size() == 400);
  REQUIRE(P.size() == 400);
  std::vector<std::pair<double, double>> pairs;
  std::size_t above = 0;
  for (std::size_t i = 0; i < S.size(); ++i) {
    const double s = std::stod(S[i][1]), p = std::stod(P[i][1]);
    CHECK(S[i][0] == (s > t ? "1" : "-1"));
    CHECK(P[i][0] == S[i][0]);
    CHECK(p >= 0);
    CHECK(p <= 1);
    pairs.emplace_back(s, p);
    above += s > 0 && s <= t;
  }
  std::sort(pairs.begin(), pairs.end());
  for (std::size_t i = 1; i < pairs.size(); ++i) CHECK(pairs[i].second >= pairs[i - 1].second);
  // --threshold 0 overrides the stored one.
  const Run zero = pegasos_run(dir, "predict --threshold 0 " + q(model) + " " + q(test));
  const auto Z = table(zero.out);
  for (std::size_t i = 0; i < Z.size(); ++i) CHECK(Z[i][0] == (std::stod(Z[i][1]) > 0 ? "1" : "-1"));
  if (t > 0 && above > 0) CHECK(zero.out != scores.out);

  // eval: probabilities judged, the stored threshold's FPR and recall reported (JSON matches a direct count).
  const std::string report = dir.file("eval.json");
  const Run ev = pegasos_run(dir, "eval " + q(model) + " " + q(test) + " --json " + q(report));
  REQUIRE(ev.code == 0);
  CHECK_THAT(ev.out, Contains("log-loss") && Contains("Brier") && Contains("at the model's threshold"));
  const json e = json::parse(testutil::read_text(report));
  double fp = 0, neg = 0, brier = 0;
  const auto truth = table(testutil::read_text(test));
  for (std::size_t i = 0; i < S.size(); ++i) {
    const std::string label = truth[i][0].substr(0, truth[i][0].find(' '));
    const bool pos = label == "1";
    neg += !pos;
    fp += !pos && std::stod(S[i][1]) > t;
    const double p = std::stod(P[i][1]);
    brier += (p - (pos ? 1.0 : 0.0)) * (p - (pos ? 1.0 : 0.0));
  }
  CHECK(e["at_threshold"]["false_positive_rate"].get<double>() == Approx(fp / neg));
  CHECK(e["probabilities"]["brier"].get<double>() == Approx(brier / 400).epsilon(1e-6));

  // inspect shows both (text and JSON).
  const Run ins = pegasos_run(dir, "inspect " + q(model) + " --top 0");
  CHECK_THAT(ins.out, Contains("proba      Platt sigmoid") && Contains("threshold  score > "));
  const Run insj = pegasos_run(dir, "inspect " + q(model) + " --json --top 0");
  CHECK(json::parse(insj.out)["threshold"]["score"].get<double>() == t);

  // Errors: --proba without calibration, --threshold on a multiclass model, corrupt blocks.
  const std::string plain = dir.file("plain.json");
  REQUIRE(pegasos_run(dir, "train " + q(train) + " " + q(plain)).code == 0);
  const Run no = pegasos_run(dir, "predict --proba " + q(plain) + " " + q(test));
  CHECK(no.code == 2);
  CHECK_THAT(no.err, Contains("--calibrate"));
  json bad = m;
  bad["calibration"]["a"] = json::array({"x"});
  const std::string corrupt = dir.write("corrupt.json", bad.dump());
  const Run c = pegasos_run(dir, "predict " + q(corrupt) + " " + q(test));
  CHECK(c.code == 2);
  CHECK_THAT(c.err, Contains("/calibration/a/0"));
  bad = m;
  bad["threshold"] = json::object();
  const Run c2 = pegasos_run(dir, "predict " + q(dir.write("corrupt2.json", bad.dump())) + " " + q(test));
  CHECK(c2.code == 2);
  CHECK_THAT(c2.err, Contains("/threshold/score"));
}

TEST_CASE("calibrate: multiclass probabilities sum to 1 and a model reads and writes back byte for byte", "[fit]") {
  TempDir dir("fit");
  const std::string train = dir.write("train.svm", fixtures::libsvm_text(fixtures::blobs(300, 6, 3, 41, 1.5)));
  const std::string model = dir.file("m.json");
  REQUIRE(pegasos_run(dir, "train " + q(train) + " " + q(model) + " --set objective=ova --calibrate").code == 0);
  const Run p = pegasos_run(dir, "predict --proba " + q(model) + " " + q(train));
  REQUIRE(p.code == 0);
  for (const auto& row : table(p.out)) {
    REQUIRE(row.size() == 4);
    double sum = 0;
    for (std::size_t k = 1; k < 4; ++k) sum += std::stod(row[k]);
    CHECK(sum == Approx(1.0).epsilon(1e-6));
  }
  const Run t = pegasos_run(dir, "predict --threshold 0.5 " + q(model) + " " + q(train));
  CHECK(t.code == 2);
  CHECK_THAT(t.err, Contains("binary"));
  const Run bad = pegasos_run(dir, "train " + q(train) + " " + q(dir.file("x.json")) + " --set objective=ova --max-fpr 0.01");
  CHECK(bad.code == 2);
  CHECK_THAT(bad.err, Contains("max_fpr") && Contains("binary"));
  // Round trip through the API: the same bytes.
  const auto loaded = pegasos::AnyModel::load(model);
  const std::string again = dir.file("again.json");
  loaded.save(again);
  CHECK(testutil::read_text(again) == testutil::read_text(model));
}

TEST_CASE("lambda auto: a flat start is not a reason to stop (majority-class folds at the largest lambdas)", "[fit]") {
  TempDir dir("fit");
  const std::string data = dir.write("flat.svm", small_separable(40, 0.2, 7));
  const std::string model = dir.file("auto.json");
  REQUIRE(pegasos_run(dir, "train -q " + q(data) + " " + q(model) + " --set lambda=auto").code == 0);
  const json sel = selection_of(model);
  const auto& curve = sel["curve"];
  // The case: the first points all score the majority rate (30 of 40), more of them
  // than the 4 the path waits for below its best...
  std::size_t flat = 0;
  while (flat < curve.size() && curve[flat]["mean"] == curve[0]["mean"]) ++flat;
  REQUIRE(curve[0]["mean"].get<double>() == Approx(0.75));
  REQUIRE(flat > 4);
  // ...and the path goes on to where the classes separate, and chooses there (the
  // best of the whole curve, as --cv --grid over all 16 values finds it).
  std::size_t best = 0;
  for (std::size_t i = 0; i < curve.size(); ++i) {
    if (curve[i]["mean"].get<double>() > curve[best]["mean"].get<double>()) best = i;
  }
  CHECK(curve[best]["mean"].get<double>() > 0.75);
  CHECK(sel["value"] == curve[best]["value"]);
  std::string values;
  for (const double v : pegasos::auto_lambda_grid(40)) values += (values.empty() ? "" : ",") + json(v).dump();
  check_grid_best(dir, data, 5, values, sel["value"]);
  const std::string report = dir.file("eval.json");
  REQUIRE(pegasos_run(dir, "eval " + q(model) + " " + q(data) + " --json " + q(report)).code == 0);
  CHECK(json::parse(testutil::read_text(report))["accuracy"].get<double>() > 0.75);
}

TEST_CASE("lambda auto with transfer: ties go to the smaller lambda, plain objectives keep the larger", "[fit]") {
  TempDir dir("fit");
  // A source that separates the target's rows: every point of the target's path scores 1.
  const std::string source_data = dir.write("source.svm", small_separable(200, 1.0, 11));
  const std::string source = dir.file("source.json");
  REQUIRE(pegasos_run(dir, "train -q " + q(source_data) + " " + q(source) + " --set lambda=1e-4").code == 0);
  const std::string target = dir.write("target.svm", small_separable(20, 1.0, 12));
  const std::string model = dir.file("transfer.json");
  REQUIRE(pegasos_run(dir, "train -q " + q(target) + " " + q(model) +
                               " --set objective=transfer --set lambda=auto --set cv_folds=4 --set source_model=" +
                               q(source)).code == 0);
  const json sel = selection_of(model);
  const auto& curve = sel["curve"];
  REQUIRE(curve.size() == 16);  // a tie is the new best: no stopping rule fires
  for (const auto& p : curve) REQUIRE(p["mean"] == curve[0]["mean"]);
  CHECK(sel["value"] == curve.back()["value"]);
  CHECK(sel["auto"]["ties"] == "smaller lambda");
  // One validation example of the smallest fold (20 rows, 4 folds of 5) is a tie too.
  CHECK(sel["auto"]["tie_margin"].get<double>() == Approx(1.0 / 20));
  // Hinge on the source's rows, whose curve ties at its top: the tie stays at the first (largest) λ.
  const std::string plain = dir.file("plain.json");
  REQUIRE(pegasos_run(dir, "train -q " + q(source_data) + " " + q(plain) + " --set lambda=auto").code == 0);
  const json ps = selection_of(plain);
  CHECK(ps["auto"]["ties"] == "larger lambda");
  std::size_t first_best = 0;
  for (std::size_t i = 0; i < ps["curve"].size(); ++i) {
    if (ps["curve"][i]["mean"].get<double>() > ps["curve"][first_best]["mean"].get<double>()) first_best = i;
  }
  CHECK(ps["value"] == ps["curve"][first_best]["value"]);
  std::size_t at_top = 0;
  for (const auto& p : ps["curve"]) at_top += p["mean"] == ps["curve"][first_best]["mean"];
  REQUIRE(at_top >= 2);
  CHECK_FALSE(ps["auto"].contains("tie_margin"));
}

namespace {
struct PathOutcome {
  std::size_t best = 0, points = 0;  // the chosen point; how many points ran
};
PathOutcome walk(const std::vector<double>& means, const pegasos::PathControl& control, double std_dev = 0) {
  pegasos::PathSelector selector(control, 5);
  PathOutcome out;
  for (const double m : means) {
    ++out.points;
    const auto step = selector.add(m, std_dev);
    if (step.chosen) out.best = out.points - 1;
    if (step.stop) break;
  }
  CHECK(selector.best() == out.best);
  return out;
}
}  // namespace

TEST_CASE("lambda auto's path rules: ties, the tie margin of transfer, and where the path stops", "[fit]") {
  pegasos::PathControl plain;
  plain.patience = 4;
  plain.clear_patience = 2;
  pegasos::PathControl later = plain;
  later.ties_to_later = true;
  pegasos::PathControl margin = later;
  margin.tie_margin = 0.04 + 1e-12;  // 25 examples in 5 folds of 5
  // Equal tops: the first for plain objectives, the last with ties_to_later.
  const std::vector<double> rise = {0.80, 0.90, 0.90, 0.90, 0.70};
  CHECK(walk(rise, plain).best == 1);
  CHECK(walk(rise, later).best == 3);
  // 25 target mails: the source-side points one mail above the rest (README § Transfer).
  std::vector<double> one_mail = {0.88, 0.88, 0.88};
  one_mail.resize(16, 0.84);
  const PathOutcome strict = walk(one_mail, later);
  CHECK(strict.best == 2);       // the largest λ of the top...
  CHECK(strict.points == 7);     // ...and four points below it end the path
  const PathOutcome tied = walk(one_mail, margin);
  CHECK(tied.best == 15);        // one mail below the top is a tie: the smallest λ
  CHECK(tied.points == 16);
  // Two mails below the top is below: the last point within one mail is chosen,
  // and the path ends four points past it.
  const std::vector<double> two_mails = {0.96, 0.96, 0.92, 0.92, 0.88, 0.88, 0.88, 0.88, 0.88, 0.96};
  const PathOutcome two = walk(two_mails, margin);
  CHECK(two.best == 3);
  CHECK(two.points == 8);
  // "Clearly below" (by more than the top's standard error and the margin)
  // twice in a row ends a path that has risen.
  const std::vector<double> peak = {0.70, 0.80, 0.90, 0.70, 0.70, 0.95};
  const PathOutcome clear = walk(peak, margin, 0.05);
  CHECK(clear.best == 2);
  CHECK(clear.points == 5);
  // A flat start never stops the path, whatever its length.
  std::vector<double> flat(10, 0.75);
  flat.push_back(0.90);
  CHECK(walk(flat, plain).best == 10);
}

TEST_CASE("lambda auto in a pegasos run grid: the run records the chosen lambda", "[fit]") {
  TempDir dir("fit");
  const std::string train = dir.write("train.svm", fixtures::libsvm_text(fixtures::gaussian(200, 6, 51, 1.0, 0.5)));
  const std::string test = dir.write("test.svm", fixtures::libsvm_text(fixtures::gaussian(100, 6, 52, 1.0, 0.5)));
  const json experiment = {{"name", "auto"},
                           {"data", {{"train", train}, {"test", test}}},
                           {"config", {{"cv_folds", 3}}},
                           {"grid", {{"lambda", {"auto", 0.01}}}}};
  const std::string path = dir.write("auto.json", experiment.dump());
  const Run r = pegasos_run(dir, "run " + q(path) + " --quiet --output " + q(dir.file("out")));
  REQUIRE(r.code == 0);
  const json results = json::parse(testutil::read_text(dir.file("out/results.json")));
  std::size_t seen = 0;
  for (const json& run : results["runs"]) {
    if (run["params"]["lambda"] == "auto") {
      const double chosen = run["training"]["lambda_chosen"].get<double>();
      const std::vector<double> grid = pegasos::auto_lambda_grid(200);
      CHECK(std::find(grid.begin(), grid.end(), chosen) != grid.end());
      ++seen;
    } else {
      CHECK_FALSE(run["training"].contains("lambda_chosen"));
    }
  }
  CHECK(seen == 1);
}

TEST_CASE("train --strict on kernel_hinge: a certified kernel SDCA model is written, kernel Pegasos refused", "[fit]") {
  TempDir dir("fit");
  const std::string data = dir.write("d.svm", fixtures::libsvm_text(fixtures::gaussian(200, 5, 61, 1.0, 0.6)));
  const std::string model = dir.file("k.json");
  const Run sdca = pegasos_run(dir, "train --strict --set objective=kernel_hinge " + q(data) + " " + q(model));
  REQUIRE(sdca.code == 0);
  CHECK_THAT(sdca.err, Contains("(sdca, converged: relative duality gap"));
  CHECK(json::parse(testutil::read_text(model))["training"]["converged"] == true);
  const std::string refused = dir.file("p.json");
  const Run peg = pegasos_run(dir, "train --strict --set objective=kernel_hinge --set solver=pegasos --set epochs=2 " +
                                       q(data) + " " + q(refused));
  CHECK(peg.code == 3);
  CHECK_THAT(peg.err, Contains("kernel Pegasos has no dual bound"));
  CHECK_FALSE(std::filesystem::exists(refused));
}

TEST_CASE("progress status line: drawn and erased on a terminal, absent from files and with --quiet", "[fit]") {
  TempDir dir("fit");
  const std::string data = dir.write("d.svm", fixtures::libsvm_text(fixtures::gaussian(200, 5, 71, 1.0, 0.6)));
  const std::string cv = q(PEGASOS_BINARY) + " train --cv 3 --grid lambda=1e-3,1e-2 " + q(data);
  // Not a terminal: the scores and the summary only.
  const Run plain = pegasos_run(dir, "train --cv 3 --grid lambda=1e-3,1e-2 " + q(data));
  REQUIRE(plain.code == 0);
  CHECK(plain.err.find('\r') == std::string::npos);
  CHECK(plain.err.find("done") == std::string::npos);
  // A terminal (util-linux script gives the command a pseudo-terminal; its output is the terminal's).
  const std::string typescript = dir.file("tty.txt");
  const std::string command = "script -qec " + q(cv + " >/dev/null") + " /dev/null > " + q(typescript) + " 2>&1";
  REQUIRE(std::system(command.c_str()) == 0);
  const std::string tty = testutil::read_text(typescript);
  CHECK_THAT(tty, Contains("\r--cv: 1/2 done (lambda=1e-2)") && Contains("\r--cv: 2/2 done (lambda=1e-3)"));
  CHECK_THAT(tty, Contains("\r\033[K"));  // erased before the closing line
  const std::string quiet = "script -qec " + q(cv + " --quiet >/dev/null") + " /dev/null > " + q(typescript) + " 2>&1";
  REQUIRE(std::system(quiet.c_str()) == 0);
  CHECK(testutil::read_text(typescript).find("done") == std::string::npos);
}
