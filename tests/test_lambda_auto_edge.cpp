// lambda "auto" at the edge of its range (drivers/fit.cpp): where the best
// point is the range's first (C = 0.01) and the curve falls after it, the
// range extends to C = 1e-4 by a warm path of its own; the chosen λ is the
// best of the whole curve, which the model records. And `--cv --grid` notes a
// best value at the edge of its grid.
#include <cmath>
#include <cstdio>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "core/random.hpp"
#include "drivers/fit.hpp"
#include "tests/test_util.hpp"

namespace {

using Catch::Contains;
using nlohmann::json;
using testutil::pegasos_run;
using testutil::q;
using testutil::Run;
using testutil::TempDir;

// 300 rows of 40 raw features of size ~10 (two of them shifted by the class,
// the rest noise), 20% of the labels flipped: noisy data whose features are
// large, best fitted with more regularisation than C = 0.01 gives.
std::string noisy_large_features(std::uint64_t seed) {
  pegasos::Rng rng(seed);
  const auto normal = [&] {
    const double u1 = rng.uniform() + 1e-12, u2 = rng.uniform();
    return std::sqrt(-2 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  };
  std::string text;
  char buf[64];
  for (int i = 0; i < 300; ++i) {
    const int y = rng.uniform() < 0.4 ? 1 : -1;
    const int shown = rng.uniform() < 0.2 ? -y : y;
    text += shown > 0 ? "1" : "-1";
    for (int j = 0; j < 40; ++j) {
      const double shift = j == 0 ? 0.8 * y : (j == 1 ? 0.5 * y : 0.0);
      std::snprintf(buf, sizeof buf, " %d:%.4f", j + 1, 10.0 * (normal() + shift));
      text += buf;
    }
    text += "\n";
  }
  return text;
}

}  // namespace

TEST_CASE("lambda auto: a best point at the range's largest lambda extends the range", "[fit]") {
  TempDir dir("auto_edge");
  const std::string data = dir.write("d.svm", noisy_large_features(5));
  const std::string model = dir.file("m.json");
  const Run r = pegasos_run(dir, "train " + q(data) + " " + q(model) + " --set lambda=auto");
  REQUIRE(r.code == 0);
  const json m = json::parse(testutil::read_text(model));
  const json& sel = m["training"]["selection"];
  const json& curve = sel["curve"];
  const double first = pegasos::auto_lambda_grid(300).front();  // C = 0.01
  INFO(sel.dump());
  // The range was extended: C_min below 0.01, the curve starts above C = 0.01's λ, largest λ first.
  CHECK(sel["auto"]["C_min"].get<double>() < 0.01 / 2);
  REQUIRE(curve.size() >= 3);
  // C_min is the C of the curve's first (largest) λ, however far the extension's path ran.
  CHECK(sel["auto"]["C_min"].get<double>() == Approx(1.0 / (curve[0]["value"].get<double>() * 300)).epsilon(1e-5));
  CHECK(curve[0]["value"].get<double>() > first);
  for (std::size_t i = 1; i < curve.size(); ++i) CHECK(curve[i]["value"].get<double>() < curve[i - 1]["value"].get<double>());
  // The extension's points: those above C = 0.01's λ, a warm path of their own.
  std::string values;
  std::size_t extension = 0;
  while (extension < curve.size() && curve[extension]["value"].get<double>() > first * (1 + 1e-9)) {
    values += (values.empty() ? "" : ",") + curve[extension]["value"].dump();
    ++extension;
  }
  REQUIRE(extension >= 2);
  REQUIRE(extension < curve.size());
  // The chosen λ: the extension's best (the first of equal means) where it
  // scores strictly above C = 0.01, else C = 0.01; beyond C = 0.01 here.
  std::size_t best = 0;
  for (std::size_t i = 0; i < extension; ++i) {
    if (curve[i]["mean"].get<double>() > curve[best]["mean"].get<double>()) best = i;
  }
  if (!(curve[best]["mean"].get<double>() > curve[extension]["mean"].get<double>())) best = extension;
  CHECK(sel["value"] == curve[best]["value"]);
  CHECK(m["settings"]["lambda"] == sel["value"]);
  CHECK(sel["value"].get<double>() > first);
  for (std::size_t i = extension; i < curve.size(); ++i) CHECK(curve[i]["mean"].get<double>() < curve[best]["mean"].get<double>());
  // --cv --grid over the extension's values gives the same means.
  const Run cv = pegasos_run(dir, "train --cv 5 --grid lambda=" + values + " " + q(data));
  REQUIRE(cv.code == 0);
  for (std::size_t i = 0; i < extension; ++i) {
    char line[96];
    std::snprintf(line, sizeof line, "%.4f ± %.4f", curve[i]["mean"].get<double>(), curve[i]["std"].get<double>());
    CHECK_THAT(cv.out, Contains(line));
  }
}

TEST_CASE("train --cv --grid: a best value at the edge of the grid is noted, an inner one is not", "[fit]") {
  TempDir dir("grid_edge");
  const std::string data = dir.write("d.svm", noisy_large_features(5));
  // On these rows the CV accuracy peaks near λ = 15 (0.677, against 0.667 at
  // λ = 33 and 0.663 at λ = 7.2; more regularisation helps, up to a point).
  const Run edge = pegasos_run(dir, "train --cv 5 --grid lambda=15.472,7.18145,3.33333 " + q(data));
  REQUIRE(edge.code == 0);
  CHECK_THAT(edge.out, Contains("best: lambda=15.472 "));
  CHECK_THAT(edge.err, Contains("note: the best lambda is the largest of the grid"));
  // A grid whose best is inside it: no note.
  const Run inner = pegasos_run(dir, "train --cv 5 --grid lambda=33.3333,15.472,7.18145 " + q(data));
  REQUIRE(inner.code == 0);
  CHECK_THAT(inner.out, Contains("best: lambda=15.472 "));
  CHECK_THAT(inner.err, !Contains("note: the best lambda"));
}
