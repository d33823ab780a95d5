// Cross-validation in `pegasos train --cv K [--grid ...] [--refit]`
// (drivers/cross_validate.hpp, api::cross_validate): the folds, leave-one-out
// against models trained one by one, the warm-started λ path against cold
// fits, determinism, and the command line's errors.
#include <stdlib.h>
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "core/dataset.hpp"
#include "drivers/api.hpp"
#include "drivers/cross_validate.hpp"
#include "drivers/experiment.hpp"
#include "drivers/registry.hpp"
#include "tests/fixtures.hpp"
#include "tests/test_util.hpp"

namespace {

using Catch::Contains;
using nlohmann::json;
using testutil::TempDir;
using testutil::pegasos_run;
using testutil::q;
using testutil::Run;

// Every row but `skip`, in order.
std::vector<std::size_t> all_but(std::size_t n, std::size_t skip) {
  std::vector<std::size_t> rows;
  for (std::size_t i = 0; i < n; ++i) {
    if (i != skip) rows.push_back(i);
  }
  return rows;
}

}  // namespace

TEST_CASE("cv folds: stratified, disjoint, every row once, fixed by the seed", "[cv]") {
  // 70 / 23 / 7 rows of three classes, shuffled.
  std::vector<int> labels;
  for (int i = 0; i < 100; ++i) labels.push_back(i % 13 < 9 ? 0 : (i % 13 < 12 ? 1 : 2));
  const int K = 5;
  const auto folds = pegasos::make_folds(labels, K, true, 42);
  REQUIRE(folds.size() == static_cast<std::size_t>(K));
  std::vector<int> seen(labels.size(), 0);
  std::vector<std::size_t> total(3, 0);
  for (int l : labels) ++total[static_cast<std::size_t>(l)];
  for (const auto& fold : folds) {
    std::vector<std::size_t> count(3, 0);
    for (std::size_t i : fold) {
      ++seen[i];
      ++count[static_cast<std::size_t>(labels[i])];
    }
    for (std::size_t c = 0; c < 3; ++c) {  // each class split evenly: within one of n_c / K
      CHECK(std::abs(static_cast<double>(count[c]) - static_cast<double>(total[c]) / K) < 1.0);
    }
  }
  CHECK(std::all_of(seen.begin(), seen.end(), [](int s) { return s == 1; }));
  CHECK(pegasos::make_folds(labels, K, true, 42) == folds);
  CHECK(pegasos::make_folds(labels, K, true, 43) != folds);
}

TEST_CASE("cv with K = n is leave-one-out: n models trained one by one through the API", "[cv]") {
  const pegasos::Dataset data = fixtures::gaussian(24, 5, 3, 1.0, 0.4);
  const std::vector<std::string> sets = {"lambda=0.05"};
  const pegasos::api::Settings settings = pegasos::api::Settings::load("", sets);
  std::size_t correct = 0;
  for (std::size_t i = 0; i < data.size(); ++i) {
    const pegasos::api::Model m = pegasos::api::train(settings, pegasos::subset(data, all_but(data.size(), i)));
    const pegasos::Dataset held = pegasos::subset(data, {i});
    const std::vector<double> scores = m.scores(held);
    if (m.predict_class(scores.data()) == held.labels[0]) ++correct;
  }
  const double loo = static_cast<double>(correct) / static_cast<double>(data.size());
  pegasos::api::CvOptions options;
  options.folds = static_cast<int>(data.size());
  const pegasos::api::CvResult r = pegasos::api::cross_validate("", sets, data, options);
  REQUIRE(r.points.size() == 1);
  CHECK(r.metric == "accuracy");
  CHECK(r.points[0].accuracy_mean == Approx(loo).margin(1e-12));
  CHECK(loo > 0.5);
  CHECK(loo < 1.0);  // not trivial: some held-out rows are misclassified
}

TEST_CASE("cv: the warm-started lambda path ends at the cold fit's objective", "[cv]") {
  for (const char* objective : {"hinge", "weighted_hinge", "multiclass_hinge", "ova"}) {
    INFO(objective);
    const bool multi = std::string(objective) == "multiclass_hinge" || std::string(objective) == "ova";
    pegasos::Dataset data = multi ? fixtures::blobs(300, 8, 3, 5, 1.5) : fixtures::gaussian(400, 12, 7);
    std::vector<std::string> sets = {std::string("objective=") + objective};
    if (std::string(objective) == "weighted_hinge") sets.push_back("class_weight=balanced");
    const pegasos::GridSpec grid = pegasos::parse_grid("lambda=1e-4:1e-1:6");
    REQUIRE(grid.values.front() == "0.1");  // largest first
    std::vector<pegasos::TrainConfig> configs = pegasos::grid_configs("", sets, grid);
    for (auto& c : configs) pegasos::check_config_against_data(c, data);
    REQUIRE(pegasos::warm_path_applies(grid, configs.front()));
    std::shared_ptr<const pegasos::Model> previous;
    double warm_passes = 0;
    for (const auto& c : configs) {
      pegasos::AnyModel m = pegasos::train_on_path(c, data, nullptr, previous);
      REQUIRE(m.linear);
      CHECK(m.linear->duals.has_value());
      warm_passes = *m.linear->training.epochs;
      previous = std::make_shared<const pegasos::Model>(std::move(*m.linear));
    }
    CHECK(previous->training.warm_start.has_value());
    const pegasos::AnyModel cold = pegasos::train_on_path(configs.back(), data, nullptr, nullptr);
    const double tol = configs.back().engine.tolerance;
    REQUIRE(*previous->training.converged);
    REQUIRE(*cold.linear->training.converged);
    const double pw = *previous->training.objective, pc = *cold.linear->training.objective;
    CHECK(std::abs(pw - pc) <= tol * std::max(pw, pc));
    // The dual point carried over: the last step of the path is no longer than from zero.
    CHECK(warm_passes <= *cold.linear->training.epochs);
  }
}

TEST_CASE("cv: deterministic by seed and for any thread count, refit is the plain fit at the best lambda", "[cv]") {
  TempDir dir("cv");
  const std::string data = dir.file("d.svm");
  testutil::write_text(data, fixtures::libsvm_text(fixtures::gaussian(300, 6, 11, 1.0, 0.3)));
  const std::string cv = "train --cv 4 --grid lambda=1e-3:1e-1:4 " + q(data);
  const Run one = pegasos_run(dir, cv + " --set threads=1");
  REQUIRE(one.code == 0);
  CHECK_THAT(one.out, Contains("best: lambda="));
  CHECK(pegasos_run(dir, cv + " --set threads=2").out == one.out);
  CHECK(pegasos_run(dir, cv + " --set threads=2").out == one.out);
  CHECK(pegasos_run(dir, cv + " --set seed=7").out != one.out);

  const std::string model = dir.file("m.json"), plain = dir.file("p.json");
  REQUIRE(pegasos_run(dir, cv + " --refit " + q(model)).code == 0);
  const json m = json::parse(testutil::read_text(model));
  const json& selection = m["training"]["selection"];
  CHECK(selection["key"] == "lambda");
  CHECK(selection["folds"] == 4);
  CHECK(selection["curve"].size() == 4);
  CHECK(m["settings"]["lambda"] == selection["value"]);
  const std::string best = selection["value"].dump();
  REQUIRE(pegasos_run(dir, "train " + q(data) + " " + q(plain) + " --set lambda=" + best).code == 0);
  CHECK(json::parse(testutil::read_text(plain))["weights"] == m["weights"]);
}

TEST_CASE("cv: bad arguments are exit 2 naming the flag", "[cv]") {
  TempDir dir("cv-bad");
  const std::string data = dir.file("d.svm");
  testutil::write_text(data, fixtures::libsvm_text(fixtures::gaussian(20, 3, 2)));
  const std::string d = " " + q(data);
  const auto fails = [&](const std::string& args, const std::string& message) {
    const Run r = pegasos_run(dir, "train " + args);
    INFO(args << " -> " << r.err);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains(message));
  };
  fails("--cv 1" + d, "--cv: needs at least 2 folds");
  fails("--cv 21" + d, "--cv: 21 folds but");
  fails("--cv 3 --grid lamda=1e-3:1e-1" + d, "--grid: 'lamda' is not a setting (did you mean 'lambda'?)");
  fails("--cv 3 --grid lambda=1e-1:1e-3" + d, "--grid: bad range");
  fails("--cv 3 --grid lambda=0:1e-3" + d, "--grid: bad range");
  fails("--cv 3 --grid lambda=1e-3:1e-1:1" + d, "--grid: bad range");
  fails("--cv 3 --grid lambda=1e-3:x" + d, "--grid: bad range");
  fails("--cv 3 --grid lambda" + d, "--grid: expected KEY=");
  fails("--cv 3 --grid epochs=1:4" + d, "--grid: a LOW:HIGH range is for lambda");
  fails("--cv 3 --grid normalize=none,l2" + d, "--grid: 'normalize' cannot be gridded");
  fails("--cv 3 --grid lambda=1e-3,-1" + d, "--grid");
  fails("--grid lambda=1e-3,1e-2" + d, "--grid: needs --cv");
  fails("--refit" + d + " " + q(dir.file("m.json")), "--refit: needs --cv");
  fails("--cv 3 --refit" + d, "--refit: needs MODEL_OUT");
  fails("--cv 3" + d + " " + q(dir.file("m.json")), "given without --refit");
}

TEST_CASE("cv: class weights select by balanced accuracy, a class too small for the folds is an error", "[cv]") {
  const pegasos::Dataset data = fixtures::gaussian(120, 6, 9);
  pegasos::api::CvOptions options;
  options.folds = 3;
  options.grid = "lambda=1e-2,1e-1";
  const auto r = pegasos::api::cross_validate("", {"objective=weighted_hinge", "class_weight=balanced"}, data, options);
  CHECK(r.metric == "balanced_accuracy");
  REQUIRE(r.points.size() == 2);
  CHECK(r.points[0].value == "1e-1");  // largest first
  const pegasos::GridSpec weights = pegasos::parse_grid(R"(class_weight=balanced,{"1":3,"-1":1})");
  REQUIRE(weights.values.size() == 2);
  CHECK(weights.values[1] == R"({"1":3,"-1":1})");
  options.grid = R"(class_weight=balanced,{"1":3,"-1":1})";
  const auto w = pegasos::api::cross_validate("", {"objective=weighted_hinge"}, data, options);
  CHECK(w.metric == "balanced_accuracy");
  CHECK(w.points.size() == 2);
  pegasos::Dataset tiny = fixtures::gaussian(12, 3, 4);
  std::size_t positives = 0;
  for (std::size_t i = 0; i < tiny.size(); ++i) {
    if (tiny.labels[i] == 1 && positives++ > 0) tiny.labels[i] = 0;  // one positive row left
  }
  options.grid = "";
  CHECK_THROWS_WITH(pegasos::api::cross_validate("", {}, tiny, options), Contains("--cv 3: class '1' has only 1"));
}
