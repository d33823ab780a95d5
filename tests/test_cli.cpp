// The real `pegasos` binary, run through the shell in a temporary directory:
// train -> predict -> eval, determinism of model files, exit codes and
// messages for bad input.
#include <stdlib.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "core/random.hpp"
#include "tests/fixtures.hpp"
#include "tests/test_util.hpp"

namespace {

using Catch::Contains;
using nlohmann::json;
namespace fs = std::filesystem;
using testutil::TempDir;
using testutil::pegasos_run;
using testutil::q;
using testutil::Run;
using testutil::read_text;
using testutil::write_text;

// Linearly separable ham/spam data: feature 1 is >= 0.5 for spam and <= -0.5
// for ham; features 2..4 are noise; a few rows have a sparse feature 6.
std::vector<std::string> separable_rows(std::uint64_t seed, std::size_t n, std::vector<std::string>& truth) {
  pegasos::Rng rng(seed);
  std::vector<std::string> rows;
  char buf[256];
  for (std::size_t i = 0; i < n; ++i) {
    const bool spam = rng.below(2) == 1;
    const double x1 = (spam ? 1 : -1) * (0.5 + rng.uniform());
    std::snprintf(buf, sizeof buf, "%s 1:%.6f 2:%.6f 3:%.6f 4:%.6f%s", spam ? "spam" : "ham", x1,
                  rng.uniform() - 0.5, rng.uniform() - 0.5, rng.uniform() - 0.5,
                  rng.below(10) == 0 ? " 6:0.25" : "");
    rows.emplace_back(buf);
    truth.push_back(spam ? "spam" : "ham");
  }
  return rows;
}

std::string join_lines(const std::vector<std::string>& rows) {
  std::string s;
  for (const auto& r : rows) s += r + "\n";
  return s;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// "label\tscore" -> {label, score text}
std::pair<std::string, std::string> split_prediction(const std::string& line) {
  const auto tab = line.find('\t');
  if (tab == std::string::npos) return {line, ""};
  return {line.substr(0, tab), line.substr(tab + 1)};
}

// Common fixture: training and test files.
struct Files {
  TempDir dir;
  std::string train = dir.file("train.svm");
  std::string test = dir.file("test.svm");
  std::string model = dir.file("model.json");
  std::vector<std::string> train_truth, test_truth;
  Files() {
    write_text(train, join_lines(separable_rows(11, 300, train_truth)));
    write_text(test, join_lines(separable_rows(12, 120, test_truth)));
  }
};

}  // namespace

TEST_CASE("cli: train -> predict -> eval round trip with string labels", "[cli]") {
  Files f;
  const Run train = pegasos_run(f.dir, "train --quiet --set lambda=0.001 " + q(f.train) + " " + q(f.model));
  INFO(train.err);
  REQUIRE(train.code == 0);
  CHECK(train.err.empty());  // --quiet
  const json model = json::parse(read_text(f.model));
  CHECK(model["classes"] == json::array({"ham", "spam"}));
  CHECK(model["dimension"] == 6);

  const Run predict = pegasos_run(f.dir, "predict " + q(f.model) + " " + q(f.test));
  INFO(predict.err);
  REQUIRE(predict.code == 0);
  const auto lines = split_lines(predict.out);
  REQUIRE(lines.size() == f.test_truth.size());
  std::size_t correct = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const auto [label, score_text] = split_prediction(lines[i]);
    CAPTURE(i, lines[i]);
    REQUIRE((label == "ham" || label == "spam"));
    const double score = std::stod(score_text);
    CHECK((label == "spam") == (score > 0));  // positive class = classes[1] = spam
    correct += label == f.test_truth[i];
  }
  const double accuracy = static_cast<double>(correct) / static_cast<double>(lines.size());
  CHECK(accuracy >= 0.97);  // separable with margin 0.5

  // --output writes the same predictions to a file.
  const std::string pred_file = f.dir.file("pred.tsv");
  REQUIRE(pegasos_run(f.dir, "predict -o " + q(pred_file) + " " + q(f.model) + " " + q(f.test)).code == 0);
  CHECK(read_text(pred_file) == predict.out);

  const std::string metrics_file = f.dir.file("metrics.json");
  const Run eval = pegasos_run(f.dir, "eval --max-fpr 0.1 --json " + q(metrics_file) + " " + q(f.model) + " " + q(f.test));
  INFO(eval.err);
  REQUIRE(eval.code == 0);
  CHECK_THAT(eval.out, Contains("accuracy") && Contains("objective"));
  const json metrics = json::parse(read_text(metrics_file));
  for (const char* key : {"accuracy", "balanced_accuracy", "objective", "roc_auc", "examples", "per_class",
                          "confusion_matrix", "positive_class", "at_max_fpr"}) {
    CAPTURE(key);
    CHECK(metrics.contains(key));
  }
  CHECK(metrics["examples"] == f.test_truth.size());
  CHECK(metrics["accuracy"].get<double>() == Approx(accuracy));
  CHECK(metrics["positive_class"] == "spam");
  CHECK(metrics["objective"].get<double>() > 0.0);
  CHECK(metrics["at_max_fpr"]["false_positive_rate"].get<double>() <= 0.1);
}

TEST_CASE("cli: the same config and seed give a byte-identical model, for any thread count", "[cli]") {
  Files f;
  const std::string config = f.dir.file("config.json");
  write_text(config, "{\"lambda\": 0.001, \"epochs\": 3, \"seed\": 5, \"batch_size\": 4}\n");
  auto train = [&](const std::string& extra, const std::string& out) {
    const Run r = pegasos_run(f.dir, "train -q -c " + q(config) + " " + extra + " " + q(f.train) + " " + q(out));
    INFO(r.err);
    REQUIRE(r.code == 0);
    return read_text(out);
  };
  const std::string a = train("", f.dir.file("a.json"));
  const std::string b = train("", f.dir.file("b.json"));
  REQUIRE_FALSE(a.empty());
  CHECK(a == b);
  const std::string t1 = train("--set threads=1", f.dir.file("t1.json"));
  const std::string t2 = train("--set threads=2", f.dir.file("t2.json"));
  CHECK(t1 == t2);
  CHECK(t1 == a);
  // The comparison can fail: another seed gives other weights.
  const std::string other = train("--set seed=6", f.dir.file("other.json"));
  CHECK(json::parse(other)["weights"] != json::parse(a)["weights"]);
}

TEST_CASE("cli: bad input exits with 2 and says where", "[cli]") {
  Files f;
  auto expect_error = [&](const std::string& args, const std::vector<std::string>& parts) {
    const Run r = pegasos_run(f.dir, args);
    CAPTURE(args, r.out, r.err);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::StartsWith("error: "));
    for (const auto& p : parts) CHECK_THAT(r.err, Contains(p));
  };

  SECTION("malformed data file") {
    const std::string bad = f.dir.file("bad.svm");
    write_text(bad, "spam 1:1\nham 1:-1\n# comment\nspam 3:1 2:1\n");
    expect_error("train -q " + q(bad) + " " + q(f.model), {bad + ":4:10:", "smaller than the previous index 3"});
    CHECK_FALSE(fs::exists(f.model));
  }
  SECTION("one-class data file") {
    const std::string one = f.dir.file("one.svm");
    write_text(one, "spam 1:1\nspam 2:1\n");
    expect_error("train -q " + q(one) + " " + q(f.model), {one, "only one class", "'spam'"});
  }
  SECTION("unknown --set key") {
    expect_error("train -q --set lamda=0.1 " + q(f.train) + " " + q(f.model), {"lamda", "did you mean 'lambda'?"});
  }
  SECTION("invalid --set value") {
    expect_error("train -q --set lambda=-1 " + q(f.train) + " " + q(f.model), {"lambda: must be > 0"});
  }
  SECTION("missing data file") {
    const std::string missing = f.dir.file("missing.svm");
    expect_error("train -q " + q(missing) + " " + q(f.model), {missing, "cannot open"});
    REQUIRE(pegasos_run(f.dir, "train -q --set epochs=2 " + q(f.train) + " " + q(f.model)).code == 0);
    expect_error("predict " + q(f.model) + " " + q(missing), {missing});
  }
  SECTION("standard input for two inputs, or as the results folder") {
    REQUIRE(pegasos_run(f.dir, "train -q --set epochs=2 " + q(f.train) + " " + q(f.model)).code == 0);
    expect_error("predict - -", {"standard input (-) can be read for one input only", "MODEL and DATA"});
    expect_error("eval - -", {"MODEL and DATA"});
    expect_error("train -q --weights - - " + q(f.model), {"DATA and --weights"});
    // Other names of descriptor 0 count as standard input too.
    expect_error("predict /dev/stdin -", {"MODEL (/dev/stdin) and DATA"});
    expect_error("train -q --config /dev/fd/0 - " + q(f.model), {"--config (/dev/fd/0) and DATA"});
    expect_error("run -q " + q(f.model) + " --output -", {"--output", "not standard output"});
    // An output that is an input's own file would replace it: refused, the input intact.
    const std::string data_before = read_text(f.train);
    expect_error("train -q " + q(f.train) + " " + q(f.train), {f.train + ": the output is the data", "refusing"});
    CHECK(read_text(f.train) == data_before);
    expect_error("predict " + q(f.model) + " " + q(f.test) + " --output " + q(f.model), {"the output is the model"});
    // Retraining a model in place from itself is the daily update: allowed.
    CHECK(pegasos_run(f.dir, "train -q --set epochs=2 --init-model " + q(f.model) + " " + q(f.train) + " " + q(f.model)).code == 0);
  }
  SECTION("corrupt or missing model for predict and eval") {
    REQUIRE(pegasos_run(f.dir, "train -q --set epochs=2 " + q(f.train) + " " + q(f.model)).code == 0);
    const std::string text = read_text(f.model);
    const std::string cut = f.dir.file("cut.json");
    write_text(cut, text.substr(0, text.size() / 2));
    expect_error("predict " + q(cut) + " " + q(f.test), {cut, "not a valid model file"});
    expect_error("eval " + q(cut) + " " + q(f.test), {cut, "not a valid model file"});
    const std::string huge = f.dir.file("huge.json");
    json j = json::parse(text);
    j["bias"][0] = 12345.5;
    std::string s = j.dump();
    s.replace(s.find("12345.5"), 7, "1e999");
    write_text(huge, s);
    expect_error("predict " + q(huge) + " " + q(f.test), {huge});
    // Another objective's name edited in: its shape no longer fits (2 classes, 1 output).
    const std::string relabelled = f.dir.file("relabelled.json");
    json r = json::parse(text);
    r["objective"] = "multiclass_hinge";
    write_text(relabelled, r.dump());
    expect_error("predict " + q(relabelled) + " " + q(f.test), {relabelled, "/outputs", "multiclass_hinge"});
    // A value nested 100000 deep (once a crash: the error printer recursed).
    const std::string deep = f.dir.file("deep.json");
    std::string d = j.dump();
    d.replace(d.find("12345.5"), 7, std::string(100000, '[') + std::string(100000, ']'));
    write_text(deep, d);
    expect_error("predict " + q(deep) + " " + q(f.test), {deep, "nested deeper than 256"});
    const std::string deep_config = f.dir.file("deep_config.json");
    write_text(deep_config, "{\"lambda\": " + std::string(100000, '[') + std::string(100000, ']') + "}");
    expect_error("train -q -c " + q(deep_config) + " " + q(f.train) + " " + q(f.model), {deep_config, "nested deeper"});
    expect_error("predict " + q(f.dir.file("none.json")) + " " + q(f.test), {"none.json"});
  }
  SECTION("eval with a label the model does not know") {
    REQUIRE(pegasos_run(f.dir, "train -q --set epochs=2 " + q(f.train) + " " + q(f.model)).code == 0);
    const std::string eggs = f.dir.file("eggs.svm");
    write_text(eggs, "spam 1:1\neggs 1:0.5\nham 1:-1\n");
    expect_error("eval " + q(f.model) + " " + q(eggs), {eggs, "'eggs'"});
  }
}

TEST_CASE("cli: help, usage errors", "[cli]") {
  TempDir dir;
  const Run help = pegasos_run(dir, "train --help");
  CHECK(help.code == 0);
  CHECK_THAT(help.out, Contains("Usage:") && Contains("train") && Contains("--set") && Contains("lambda") && Contains("epochs"));
  const Run top = pegasos_run(dir, "--help");
  CHECK(top.code == 0);
  CHECK_THAT(top.out, Contains("predict") && Contains("eval"));
  CHECK(pegasos_run(dir, "").code == 2);                      // no subcommand
  CHECK(pegasos_run(dir, "frobnicate").code == 2);            // unknown subcommand
  CHECK(pegasos_run(dir, "train only-one-argument").code == 2);
  CHECK(pegasos_run(dir, "train -c " + q(dir.file("no-config.json")) + " a b").code == 2);
  CHECK(pegasos_run(dir, "eval --max-fpr 2 a b").code == 2);  // out of range
}

TEST_CASE("cli: predict ignores features beyond the training dimension and accepts unlabeled rows", "[cli]") {
  Files f;
  REQUIRE(pegasos_run(f.dir, "train -q --set epochs=5 " + q(f.train) + " " + q(f.model)).code == 0);
  const std::string data = f.dir.file("wide.svm");
  write_text(data,
             "ham 1:-0.7 2:0.1\n"
             "ham 1:-0.7 2:0.1 77:5 123456:-9\n"
             "1:-0.7 2:0.1\n"
             "spam 1:0.9 4:0.2\n"
             "2:0.3 5:1 1000:1\n"
             "spam 1:0.9 4:0.2 9999:1e6\n");
  const Run r = pegasos_run(f.dir, "predict " + q(f.model) + " " + q(data));
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto lines = split_lines(r.out);
  REQUIRE(lines.size() == 6);
  CHECK(lines[0] == lines[1]);
  CHECK(lines[0] == lines[2]);
  CHECK(lines[3] == lines[5]);
  CHECK(split_prediction(lines[0]).first == "ham");
  CHECK(split_prediction(lines[3]).first == "spam");
}

TEST_CASE("cli: --strict takes a budget kernel model whose refit is certified, and refuses one without a refit",
          "[cli][certificate][kernel]") {
  TempDir dir("strict-budget");
  const std::string data = dir.file("train.svm");
  write_text(data, fixtures::libsvm_text(fixtures::gaussian(160, 5, 3)));
  const std::string budget = "--set objective=kernel_hinge --set max_support_vectors=20 --set lambda=0.01 " + q(data);
  const Run ok = pegasos_run(dir, "train -q --strict " + budget + " " + q(dir.file("m.json")));
  INFO(ok.err);
  REQUIRE(ok.code == 0);
  const json training = json::parse(read_text(dir.file("m.json")))["training"];
  CHECK(training["converged"] == false);  // the full kernel problem is not certified
  CHECK(training["budget_refit"]["converged"] == true);
  CHECK(training["budget_refit"]["relative_gap"].get<double>() <= 1e-3);
  const Run no_refit = pegasos_run(dir, "train -q --strict --set budget_refit=false " + budget + " " + q(dir.file("n.json")));
  CHECK(no_refit.code == 3);
  CHECK_THAT(no_refit.err, Contains("--strict") && Contains("no model written"));
  CHECK_FALSE(std::filesystem::exists(dir.file("n.json")));
}

TEST_CASE("cli: a run that ends at its cap warns with its gap, stores it, and --strict refuses it", "[cli][certificate]") {
  using Catch::Contains;
  Files f;
  // C = 1/(λn) = 33 on separable data: two passes are far from the optimum.
  const std::string capped = "--set lambda=1e-4 --set max_epochs=2 " + q(f.train) + " " + q(f.model);
  const Run warn = pegasos_run(f.dir, "train -q " + capped);
  INFO(warn.err);
  REQUIRE(warn.code == 0);
  CHECK_THAT(warn.err, Contains("warning: not converged: stopped at the cap of 2 passes (max_epochs)") &&
                           Contains("relative duality gap"));
  const json model = json::parse(read_text(f.model));
  const json& training = model["training"];
  CHECK(training["converged"] == false);
  CHECK(training["stopped_by"] == "max_epochs");
  REQUIRE(training["relative_gap"].is_number());
  CHECK(training["relative_gap"].get<double>() > training["tolerance"].get<double>());
  CHECK(training["dual_objective"].get<double>() < training["objective"].get<double>());
  CHECK(training["certificate"] == "duality gap");

  // eval shows it too.
  const Run eval = pegasos_run(f.dir, "eval " + q(f.model) + " " + q(f.test));
  REQUIRE(eval.code == 0);
  CHECK_THAT(eval.out, Contains("warning: this model did not converge in training"));

  // --strict (or the config key): exit 3, no model written.
  std::filesystem::remove(f.model);
  const Run strict = pegasos_run(f.dir, "train -q --strict " + capped);
  CHECK(strict.code == 3);
  CHECK_THAT(strict.err, Contains("--strict") && Contains("no model written"));
  CHECK_FALSE(std::filesystem::exists(f.model));
  CHECK(pegasos_run(f.dir, "train -q --set strict=true " + capped).code == 3);
  CHECK_FALSE(std::filesystem::exists(f.model));

  // Converged: --strict writes the model, no warning.
  const Run ok = pegasos_run(f.dir, "train --strict --set lambda=1e-2 " + q(f.train) + " " + q(f.model));
  INFO(ok.err);
  CHECK(ok.code == 0);
  CHECK_THAT(ok.err, Contains("converged: relative duality gap") && !Contains("warning"));
  CHECK(json::parse(read_text(f.model))["training"]["converged"] == true);
  CHECK_THAT(pegasos_run(f.dir, "eval " + q(f.model) + " " + q(f.test)).out, !Contains("warning"));
}
