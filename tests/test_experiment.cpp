// Experiments (`pegasos run`): grid expansion, deterministic splits, model
// selection, the results.json schema, byte-for-byte reproducibility and
// validation that fails before any run starts. Tiny generated data.
#include <stdlib.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <tbb/global_control.h>

#include "core/errors.hpp"
#include "drivers/any_model.hpp"
#include "drivers/experiment.hpp"
#include "tests/fixtures.hpp"
#include "tests/test_util.hpp"

namespace {

using Catch::Contains;
using nlohmann::json;
namespace fs = std::filesystem;
using testutil::TempDir;
using testutil::read_text;
using testutil::write_text;
using namespace pegasos;

// LIBSVM text of a generated dataset (labels are its class names).
std::string as_libsvm(const Dataset& ds) {
  std::string out;
  char buf[64];
  for (std::size_t i = 0; i < ds.size(); ++i) {
    out += ds.classes[static_cast<std::size_t>(ds.labels[i])];
    const RowView x = ds.row(i);
    for (std::uint32_t j = 0; j < x.nnz; ++j) {
      std::snprintf(buf, sizeof buf, " %u:%.6g", x.indices[j] + 1, x.values[j]);
      out += buf;
    }
    out += '\n';
  }
  return out;
}

// train.svm / test.svm (binary) and multi_train.svm / multi_test.svm (3 classes).
void write_data(const TempDir& dir) {
  write_text(dir.file("train.svm"), as_libsvm(fixtures::gaussian(240, 8, 11)));
  write_text(dir.file("test.svm"), as_libsvm(fixtures::gaussian(120, 8, 12)));
  write_text(dir.file("multi_train.svm"), as_libsvm(fixtures::blobs(180, 6, 3, 13, 0.6)));
  write_text(dir.file("multi_test.svm"), as_libsvm(fixtures::blobs(90, 6, 3, 14, 0.6)));
}

json base_experiment() {
  return json::parse(R"({
    "data": {"train": "train.svm", "test": "test.svm", "folds": 3, "stratified": true},
    "config": {"lambda": 1e-2, "epochs": 3},
    "grid": {"lambda": [1e-1, 1e-3], "batch_size": [1, 4]},
    "repeats": 2,
    "trace_every": 1,
    "plots": false
  })");
}

Experiment experiment_in(const TempDir& dir, const json& j, const std::string& name = "exp.json") {
  write_text(dir.file(name), j.dump(2));
  return load_experiment(dir.file(name));
}

RunOptions quiet_options(const std::string& output) {
  RunOptions o;
  o.output_dir = output;
  o.quiet = true;
  o.gnuplot = "";  // tests never start gnuplot
  return o;
}

TEST_CASE("grid: Cartesian product in sorted key order, last key fastest, zip varies together", "[experiment]") {
  const json grid = {{"lambda", {0.1, 0.01, 0.001}}, {"batch_size", {1, 8}}};
  const auto points = expand_grid(grid, json::object(), "g");
  REQUIRE(points.size() == 6);
  const std::vector<std::pair<int, double>> expected = {{1, 0.1}, {1, 0.01}, {1, 0.001},
                                                        {8, 0.1}, {8, 0.01}, {8, 0.001}};
  for (std::size_t i = 0; i < points.size(); ++i) {
    CHECK(points[i]["batch_size"] == expected[i].first);
    CHECK(points[i]["lambda"] == expected[i].second);
  }
  CHECK(expand_grid(json::object(), json::object(), "g") == std::vector<json>{json::object()});

  const json zip = {{"batch_size", {1, 4, 16}}, {"iterations", {1600, 400, 100}}};
  const auto zipped = expand_grid({{"lambda", {1e-2, 1e-3}}}, zip, "g");
  REQUIRE(zipped.size() == 6);
  for (const json& p : zipped) CHECK(p["batch_size"].get<int>() * p["iterations"].get<int>() == 1600);
  CHECK(zipped[0]["lambda"] == 1e-2);
  CHECK(zipped[2]["lambda"] == 1e-2);
  CHECK(zipped[3]["lambda"] == 1e-3);
  CHECK(zipped[1]["batch_size"] == 4);
}

TEST_CASE("grid: bad keys and values are rejected with the key named", "[experiment]") {
  CHECK_THROWS_WITH(expand_grid({{"lamda", {1}}}, json::object(), "x.json"),
                    Contains("x.json: grid/lamda") && Contains("did you mean 'lambda'"));
  CHECK_THROWS_WITH(expand_grid({{"lambda", json::array()}}, json::object(), "x.json"),
                    Contains("grid/lambda") && Contains("empty list"));
  CHECK_THROWS_WITH(expand_grid({{"lambda", 0.1}}, json::object(), "x.json"), Contains("expected a list"));
  CHECK_THROWS_WITH(expand_grid({{"normalize", {"none", "l2"}}}, json::object(), "x.json"),
                    Contains("grid/normalize") && Contains("read once"));
  CHECK_THROWS_WITH(expand_grid(json::object(), {{"batch_size", {1, 2}}, {"iterations", {5}}}, "x.json"),
                    Contains("zip/iterations") && Contains("equal lengths"));
  CHECK_THROWS_WITH(expand_grid({{"lambda", {1}}}, {{"lambda", {2}}}, "x.json"), Contains("zip/lambda"));
  CHECK_THROWS_AS(expand_grid({{"lamda", {1}}}, json::object(), "x.json"), ConfigError);
}

TEST_CASE("folds: disjoint, complete, balanced, deterministic by seed, stratified", "[experiment]") {
  std::vector<int> labels;
  for (int i = 0; i < 103; ++i) labels.push_back(i % 10 < 3 ? 1 : 0);  // 31 positives
  for (const bool stratified : {false, true}) {
    const auto folds = make_folds(labels, 5, stratified, 7);
    REQUIRE(folds.size() == 5);
    std::vector<int> seen(labels.size(), 0);
    for (const auto& f : folds) {
      CHECK(std::is_sorted(f.begin(), f.end()));
      CHECK(f.size() >= 20);
      CHECK(f.size() <= 21);
      for (std::size_t i : f) ++seen[i];
    }
    CHECK(std::all_of(seen.begin(), seen.end(), [](int c) { return c == 1; }));  // no example in two folds
    CHECK(make_folds(labels, 5, stratified, 7) == folds);
    CHECK(make_folds(labels, 5, stratified, 8) != folds);
    if (stratified) {
      for (const auto& f : folds) {
        const auto positives = std::count_if(f.begin(), f.end(), [&](std::size_t i) { return labels[i] == 1; });
        CHECK(positives >= 6);  // 31 / 5 = 6.2
        CHECK(positives <= 7);
      }
    }
  }
}

TEST_CASE("holdout: disjoint, deterministic, stratified proportions", "[experiment]") {
  std::vector<int> labels;
  for (int i = 0; i < 200; ++i) labels.push_back(i % 4 == 0 ? 1 : 0);  // 50 positives
  const HoldoutSplit s = holdout_split(labels, 0.2, true, 3);
  CHECK(s.test.size() == 40);
  CHECK(s.train.size() == 160);
  std::vector<std::size_t> all = s.train;
  all.insert(all.end(), s.test.begin(), s.test.end());
  std::sort(all.begin(), all.end());
  CHECK(std::adjacent_find(all.begin(), all.end()) == all.end());
  CHECK(all.size() == labels.size());
  CHECK(std::count_if(s.test.begin(), s.test.end(), [&](std::size_t i) { return labels[i] == 1; }) == 10);
  CHECK(holdout_split(labels, 0.2, true, 3).test == s.test);
  CHECK(holdout_split(labels, 0.2, false, 3).test.size() == 40);
}

TEST_CASE("subset copies the chosen rows and keeps classes and dimension", "[experiment]") {
  const Dataset ds = fixtures::gaussian(30, 5, 1, 0.5);
  const Dataset sub = subset(ds, {2, 7, 29});
  REQUIRE(sub.size() == 3);
  CHECK(sub.dimension == ds.dimension);
  CHECK(sub.classes == ds.classes);
  for (std::size_t k = 0; k < 3; ++k) {
    const RowView a = sub.row(k), b = ds.row(std::vector<std::size_t>{2, 7, 29}[k]);
    REQUIRE(a.nnz == b.nnz);
    CHECK(a.label == b.label);
    CHECK(std::equal(a.values, a.values + a.nnz, b.values));
    CHECK(std::equal(a.indices, a.indices + a.nnz, b.indices));
  }
}

TEST_CASE("subset of indicator data keeps its values unstored, the rows as a copy's", "[experiment]") {
  std::string text;
  for (int i = 0; i < 200; ++i) text += (i % 3 ? "1" : "-1") + (" " + std::to_string(1 + i % 7) + ":1 " + std::to_string(9 + i % 5) + ":1\n");
  const Dataset unit = pegasos::parse_libsvm(text, "u.svm", {});
  REQUIRE(unit.has_unit_values());
  const Dataset stored = unit;  // an owning copy: stored ones
  REQUIRE_FALSE(stored.has_unit_values());
  const std::vector<std::size_t> rows{0, 5, 6, 100, 199};
  const Dataset a = subset(unit, rows), b = subset(stored, rows);
  CHECK(a.has_unit_values());
  CHECK_FALSE(b.has_unit_values());
  CHECK(a.values == b.values);
  CHECK(a.indices == b.indices);
  CHECK(a.row_ptr == b.row_ptr);
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const RowView x = a.row(k), y = b.row(k);
    REQUIRE(x.nnz == y.nnz);
    CHECK(std::equal(x.values, x.values + x.nnz, y.values));
    CHECK(std::equal(x.indices, x.indices + x.nnz, y.indices));
  }
  CHECK(subset(unit, {}).size() == 0);
}

TEST_CASE("best_index: argmax or argmin, first on ties, NaN never wins", "[experiment]") {
  CHECK(best_index({0.2, 0.9, 0.5}, true) == 1);
  CHECK(best_index({0.2, 0.9, 0.9}, true) == 1);
  CHECK(best_index({0.2, 0.9, 0.5}, false) == 0);
  CHECK(best_index({std::nan(""), 0.1, 0.3}, true) == 2);
  CHECK(metric_is_maximized("balanced_accuracy", "x"));
  CHECK_FALSE(metric_is_maximized("objective", "x"));
  CHECK_THROWS_WITH(metric_is_maximized("balanced_acuracy", "x"), Contains("did you mean 'balanced_accuracy'"));
}

TEST_CASE("results.json: schema, timings only under \"timing\", model selection picks the cv argmax", "[experiment]") {
  TempDir dir;
  write_data(dir);
  json j = base_experiment();
  j["select"] = {{"metric", "balanced_accuracy"}};
  j["max_fpr"] = 0.1;
  const Experiment e = experiment_in(dir, j);
  REQUIRE(e.points.size() == 4);
  const json r = run_experiment(e, quiet_options(dir.file("out")));

  for (const char* key : {"format_version", "experiment", "runs", "summary", "selection", "best", "timing"}) {
    CHECK(r.contains(key));
  }
  // 4 points x 2 repeats x 3 folds cv runs, then 2 final runs of the selected point.
  REQUIRE(r["runs"].size() == 4 * 2 * 3 + 2);
  for (std::size_t i = 0; i < r["runs"].size(); ++i) {
    const json& run = r["runs"][i];
    CHECK(run["id"] == i);
    for (const char* key : {"phase", "point", "params", "repeat", "fold", "seed", "config", "metrics", "training",
                            "trace", "timing", "train_examples", "eval_examples"}) {
      CHECK(run.contains(key));
    }
    for (const char* m : {"accuracy", "balanced_accuracy", "macro_f1", "roc_auc", "objective", "eval_objective"}) {
      CHECK(run["metrics"].contains(m));
    }
    CHECK(run["timing"].contains("train_seconds"));
    CHECK(run["config"]["seed"] == run["seed"]);
    CHECK(run["seed"] == 42 + run["repeat"].get<int>());
    CHECK(run["trace"].size() == 3);  // epochs 1..3
    CHECK(run["trace"].back()["iterations"] == run["training"]["iterations"]);
  }
  const json& first = r["runs"][0];
  CHECK(first["phase"] == "cv");
  CHECK(first["fold"] == 0);
  CHECK(first["train_examples"].get<int>() + first["eval_examples"].get<int>() == 240);

  // Nothing but timing fields holds clock times.
  const std::string stripped = without_timing(r).dump();
  CHECK(stripped.find("seconds") == std::string::npos);
  CHECK(stripped.find("threads\":2") == std::string::npos);

  // Selection: the argmax of the mean cv metric, recomputed here.
  std::vector<double> mean(4, 0.0);
  for (const json& run : r["runs"]) {
    if (run["phase"] == "cv")
      mean[run["point"].get<std::size_t>()] += run["metrics"]["balanced_accuracy"].get<double>() / 6;
  }
  const std::size_t best = static_cast<std::size_t>(std::max_element(mean.begin(), mean.end()) - mean.begin());
  CHECK(r["selection"]["best_point"] == best);
  for (std::size_t g = 0; g < 4; ++g) CHECK(r["selection"]["cv_mean"][g].get<double>() == Approx(mean[g]));
  CHECK(r["runs"][24]["phase"] == "final");
  CHECK(r["runs"][24]["point"] == best);
  CHECK(r["runs"][24]["train_examples"] == 240);
  CHECK(r["runs"][24]["eval_examples"] == 120);
  CHECK(r["best"]["run"] == 24);
  CHECK(r["best"]["metrics"] == r["runs"][24]["metrics"]);
  CHECK(r["runs"][24]["metrics"].contains("at_max_fpr"));
  // best_by_metric ranks the grid points by their cv means here (only cv runs cover every point).
  CHECK(r["best_by_metric"]["phase"] == "cv");
  CHECK(r["best_by_metric"]["metrics"]["balanced_accuracy"]["point"] == best);
  CHECK(r["best_by_metric"]["metrics"]["balanced_accuracy"]["mean"].get<double>() == Approx(mean[best]));
  CHECK(r["best_by_metric"]["metrics"]["objective"]["maximize"] == false);

  CHECK(fs::exists(dir.file("out/best_model.json")));
  CHECK(fs::exists(dir.file("out/results.csv")));
  const std::string csv = read_text(dir.file("out/results.csv"));
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 1 + 26);
  CHECK(csv.rfind("id,phase,point,repeat,fold,seed,params.batch_size,params.lambda,", 0) == 0);
  CHECK(json::parse(read_text(dir.file("out/results.json"))) == r);
}

TEST_CASE("re-running reproduces results.json byte for byte apart from timing", "[experiment]") {
  TempDir dir;
  write_data(dir);
  json j = base_experiment();
  j["data"] = {{"file", "train.svm"}, {"holdout", 0.25}, {"folds", 3}, {"stratified", true}};
  j["select"] = {{"metric", "macro_f1"}};
  const Experiment e = experiment_in(dir, j);
  const json a = run_experiment(e, quiet_options(dir.file("a")));
  json b;
  {
    // One thread: runs execute one after the other, yet nothing changes.
    tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
    b = run_experiment(e, quiet_options(dir.file("b")));
  }
  const std::string ta = read_text(dir.file("a/results_no_timing.json"));
  CHECK(!ta.empty());
  CHECK(ta == read_text(dir.file("b/results_no_timing.json")));
  CHECK(without_timing(json::parse(read_text(dir.file("a/results.json")))).dump(2) + "\n" == ta);
  CHECK(read_text(dir.file("a/best_model.json")) == read_text(dir.file("b/best_model.json")));
  CHECK(a["experiment"]["data"]["train_examples"] == 180);
  CHECK(a["experiment"]["data"]["test_examples"] == 60);
}

TEST_CASE("test runs without selection, multiclass writes plot scripts when gnuplot is missing", "[experiment]") {
  TempDir dir;
  write_data(dir);
  const json j = json::parse(R"({
    "name": "multi",
    "data": {"train": "multi_train.svm", "test": "multi_test.svm"},
    "config": {"objective": "ova", "epochs": 2},
    "grid": {"objective": ["ova", "multiclass_hinge"], "lambda": [1e-2, 1e-3]},
    "trace_every": 1
  })");
  const Experiment e = experiment_in(dir, j);
  RunOptions o = quiet_options("");
  const json r = run_experiment(e, o);
  const std::string out = dir.file("multi_results");  // default: <name>_results next to the file
  REQUIRE(r["runs"].size() == 4);
  for (const json& run : r["runs"]) {
    CHECK(run["phase"] == "test");
    CHECK(run["fold"].is_null());
    CHECK_FALSE(run["metrics"].contains("roc_auc"));
  }
  std::vector<double> bal;
  for (const json& run : r["runs"]) bal.push_back(run["metrics"]["balanced_accuracy"].get<double>());
  CHECK(r["best"]["run"] == best_index(bal, true));
  CHECK(r["best"]["confusion_matrix"].size() == 3);
  // One test run per point: best_by_metric is the argmax / argmin over the runs.
  const json& by = r["best_by_metric"];
  CHECK(by["phase"] == "test");
  CHECK(by["metrics"]["balanced_accuracy"]["point"] == best_index(bal, true));
  CHECK_FALSE(by["metrics"].contains("roc_auc"));  // multiclass: no ROC-AUC
  std::vector<double> objective;
  for (const json& run : r["runs"]) objective.push_back(run["metrics"]["eval_objective"].get<double>());
  CHECK(by["metrics"]["eval_objective"]["point"] == best_index(objective, false));
  CHECK(by["metrics"]["eval_objective"]["params"] == r["runs"][best_index(objective, false)]["params"]);
  for (const char* f : {"results.json", "results.csv", "best_model.json", "plots/confusion.gp", "plots/confusion.dat",
                        "plots/sweep_lambda.gp", "plots/sweep_objective.gp", "plots/trace.gp", "plots/trace.dat"}) {
    CHECK(fs::exists(out + "/" + f));
  }
  CHECK_FALSE(fs::exists(out + "/plots/confusion.png"));
  CHECK(r["plots"].empty());

  // results.csv: "objective" is both a swept setting and a metric, yet every column name is unique.
  const std::string csv = read_text(out + "/results.csv");
  std::vector<std::string> header;
  std::istringstream line(csv.substr(0, csv.find('\n')));
  for (std::string name; std::getline(line, name, ',');) header.push_back(name);
  CHECK(std::set<std::string>(header.begin(), header.end()).size() == header.size());
  CHECK(std::count(header.begin(), header.end(), "params.objective") == 1);
  CHECK(std::count(header.begin(), header.end(), "objective") == 1);
  CHECK(std::count(header.begin(), header.end(), "params.lambda") == 1);
}

// XOR in the plane: no linear separator, easy for an RBF kernel.
std::string xor_libsvm(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::string out;
  char buf[96];
  for (std::size_t i = 0; i < n; ++i) {
    double a = u(rng), b = u(rng);
    if (std::abs(a) < 0.1 || std::abs(b) < 0.1) {  // keep a margin around the axes
      --i;
      continue;
    }
    std::snprintf(buf, sizeof buf, "%s 1:%.6g 2:%.6g\n", a * b > 0 ? "1" : "-1", a, b);
    out += buf;
  }
  return out;
}

TEST_CASE("kernel_hinge under pegasos run: cv picks the RBF kernel on XOR, best_model.json is a kernel model",
          "[experiment][kernel]") {
  TempDir dir;
  write_text(dir.file("xor_train.svm"), xor_libsvm(300, 21));
  write_text(dir.file("xor_test.svm"), xor_libsvm(200, 22));
  const json j = json::parse(R"({
    "name": "xor",
    "data": {"train": "xor_train.svm", "test": "xor_test.svm", "folds": 3},
    "config": {"objective": "kernel_hinge", "lambda": 1e-3, "epochs": 5},
    "grid": {"kernel": [{"type": "linear"}, {"type": "rbf", "gamma": 2}]},
    "select": {"metric": "accuracy"},
    "trace_every": 1,
    "plots": false
  })");
  const Experiment e = experiment_in(dir, j);
  const json r = run_experiment(e, quiet_options(dir.file("out")));
  REQUIRE(r["runs"].size() == 2 * 3 + 1);
  CHECK(r["best"]["params"]["kernel"]["type"] == "rbf");
  const double linear_cv = r["selection"]["cv_mean"][0].get<double>();
  const double rbf_cv = r["selection"]["cv_mean"][1].get<double>();
  CHECK(linear_cv < 0.75);  // a line cannot split XOR
  CHECK(rbf_cv > 0.9);
  const double reported = r["best"]["metrics"]["accuracy"].get<double>();
  CHECK(reported > 0.9);
  for (const json& run : r["runs"]) CHECK(run["trace"].size() >= 1);  // closed by the final model

  // The saved model is a kernel model that reproduces the reported accuracy on its own.
  const AnyModel model = AnyModel::load(dir.file("out/best_model.json"));
  REQUIRE(model.kernel);
  Dataset test = model.read(dir.file("xor_test.svm"), true);
  REQUIRE(test.remap_classes(model.classes()).empty());
  const std::vector<double> scores = model.scores(test);
  std::size_t right = 0;
  for (std::size_t i = 0; i < test.size(); ++i) right += model.predict_class(&scores[i]) == test.labels[i];
  CHECK(static_cast<double>(right) / static_cast<double>(test.size()) == Approx(reported).margin(1e-12));
}

TEST_CASE("trace_iterations places trace points every N steps, the last one exact", "[experiment]") {
  TempDir dir;
  write_data(dir);
  json j = base_experiment();
  j.erase("trace_every");
  j["trace_iterations"] = 50;
  j["trace_sample"] = 1;
  j["data"].erase("folds");
  j["config"] = {{"lambda", 1e-2}, {"iterations", 200}};
  j["grid"] = {{"batch_size", {1, 4}}};
  j["repeats"] = 1;
  const json r = run_experiment(experiment_in(dir, j), quiet_options(dir.file("out")));
  REQUIRE(r["runs"].size() == 2);
  for (const json& run : r["runs"]) {
    std::vector<std::uint64_t> at;
    for (const json& p : run["trace"]) at.push_back(p["iterations"].get<std::uint64_t>());
    CHECK(at == std::vector<std::uint64_t>{50, 100, 150, 200});
    // With trace_sample 1 the last point is the model itself: its objective and test error.
    CHECK(run["trace"].back()["objective"].get<double>() ==
          Approx(run["metrics"]["objective"].get<double>()).epsilon(1e-12));
    CHECK(run["trace"].back()["test_error"].get<double>() ==
          Approx(run["metrics"]["error"].get<double>()).margin(1e-12));
  }
  j["trace_every"] = 1;
  write_text(dir.file("both.json"), j.dump());
  CHECK_THROWS_WITH(load_experiment(dir.file("both.json")), Contains("trace_iterations") && Contains("not both"));

  // Points every N steps are Pegasos steps: auto (here λn small, epochs only) trains
  // with Pegasos, and an explicit sdca is refused before any run.
  j.erase("trace_every");
  j.erase("grid");
  j["config"] = {{"lambda", 1e-4}, {"epochs", 2}};
  const json r2 = run_experiment(experiment_in(dir, j), quiet_options(dir.file("out2")));
  REQUIRE(r2["runs"].size() == 1);
  CHECK(r2["runs"][0]["trace"][0]["iterations"].get<std::uint64_t>() == 50);  // a Pegasos step count
  j["config"]["solver"] = "sdca";
  write_text(dir.file("sdca.json"), j.dump());
  CHECK_THROWS_WITH(load_experiment(dir.file("sdca.json")), Contains("trace_iterations") && Contains("sdca"));
}

TEST_CASE("a bad experiment fails before any run starts, naming file and key", "[experiment]") {
  TempDir dir;
  write_data(dir);
  const std::string file = dir.file("bad.json");
  auto expect_error = [&](const json& j, const std::string& where, const std::string& what) {
    write_text(file, j.dump());
    INFO(j.dump());
    try {
      const Experiment e = load_experiment(file);
      run_experiment(e, quiet_options(dir.file("out")));
      FAIL("no error");
    } catch (const InputError& err) {
      CHECK_THAT(err.what(), Contains(file) && Contains(where) && Contains(what));
    }
    CHECK_FALSE(fs::exists(dir.file("out")));  // nothing written: no run started
    CHECK_FALSE(fs::exists(dir.file("bad_results")));
  };
  json j = base_experiment();
  j["repeets"] = 3;
  expect_error(j, "repeets", "did you mean 'repeats'");
  j = base_experiment();
  j["lambda"] = 3;
  expect_error(j, "lambda", "put it under \"config\"");
  j = base_experiment();
  j["config"]["lamda"] = 1;
  expect_error(j, "config/lamda", "did you mean 'lambda'");
  j = base_experiment();
  j["grid"]["batch_sise"] = {1, 2};
  expect_error(j, "grid/batch_sise", "did you mean 'batch_size'");
  j = base_experiment();
  j["grid"]["lambda"] = json::array();
  expect_error(j, "grid/lambda", "empty list");
  j = base_experiment();
  j["grid"]["lambda"] = {1e-2, -1};
  expect_error(j, "grid point", "lambda: must be > 0");
  j = base_experiment();
  j["data"]["test"] = "missing.svm";
  expect_error(j, "data/test", "missing.svm");
  j = base_experiment();
  j["data"]["sead"] = 3;
  expect_error(j, "data/sead", "did you mean 'seed'");
  j = base_experiment();
  j["select"] = {{"metric", "accuracy"}};
  j["data"].erase("folds");
  expect_error(j, "select", "needs data/folds");
  j = base_experiment();
  j["config"]["objective"] = "weighted_hinge";
  j["config"]["class_weight"] = "balanced";
  j["grid"]["class_weight"] = {{{"-1", 1}, {"1", 2}}, {{"7", 2}}};
  expect_error(j, "class_weight", "'7' does not occur");  // found after loading, still before any run
  j = base_experiment();
  j["config"]["objective"] = "hinge";  // named: objective auto would train one-vs-all
  j["data"]["train"] = "multi_train.svm";
  expect_error(j, "multi_train.svm", "binary");
  j = base_experiment();
  j["trace_sample"] = 0;
  expect_error(j, "trace_sample", "fraction in (0, 1]");
  write_text(dir.file("mail.jsonl"), "{\"text\": \"cheap pills\", \"label\": \"spam\"}\n"
                                     "{\"text\": \"lunch today\", \"label\": \"ham\"}\n");
  j = base_experiment();
  j["data"] = {{"train", "mail.jsonl"}, {"test", "mail.jsonl"}};
  j.erase("select");
  j["config"]["objective"] = "kernel_hinge";
  expect_error(j, "kernel_hinge", "raw text");
}

TEST_CASE("pegasos run: exit code 2 for a bad experiment, 0 and results for a good one", "[experiment]") {
  TempDir dir;
  write_data(dir);
  const std::string q = "'";
  auto run = [&](const std::string& args) {
    const std::string command = q + PEGASOS_BINARY + q + " run " + args + " >" + q + dir.file("out.txt") + q + " 2>" +
                                q + dir.file("err.txt") + q + " </dev/null";
    const int status = std::system(command.c_str());
    REQUIRE(WIFEXITED(status));
    return WEXITSTATUS(status);
  };
  json j = base_experiment();
  j["grid"]["lambda"] = json::array();
  write_text(dir.file("bad.json"), j.dump());
  CHECK(run(q + dir.file("bad.json") + q) == 2);
  CHECK_THAT(read_text(dir.file("err.txt")), Contains("grid/lambda") && Contains("bad.json"));

  j = base_experiment();
  j["repeats"] = 1;
  write_text(dir.file("good.json"), j.dump());
  CHECK(run(q + dir.file("good.json") + q + " --quiet --output " + q + dir.file("res") + q) == 0);
  CHECK(read_text(dir.file("err.txt")).empty());
  CHECK(json::parse(read_text(dir.file("res/results.json")))["runs"].size() == 4 * 3 + 4);
}

}  // namespace
