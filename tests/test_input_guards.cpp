// Inputs that used to be lost or answered wrongly, through the real `pegasos`
// binary: an output that is an input named only by the settings (transfer's
// source model) or by an experiment (its data inside the results folder),
// rows that overflow a model or a kernel map (a NaN score hung eval), text
// settings the chosen mode ignores, empty paths, and eval's objective of a
// file whose training summary no longer matches its weights.
#include <sys/stat.h>

#include <cmath>
#include <fstream>
#include <filesystem>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "core/metrics.hpp"
#include "tests/test_util.hpp"

namespace {

using Catch::Contains;
using nlohmann::json;
namespace fs = std::filesystem;
using testutil::pegasos_run;
using testutil::q;
using testutil::read_text;
using testutil::Run;
using testutil::TempDir;
using testutil::write_text;

// Eight separable rows (feature 1 carries the class) with two more features.
const char* kRows =
    "1 1:1 2:0.5 3:0.2\n-1 1:-1 2:0.4 3:0.1\n1 1:0.8 2:-0.3\n-1 1:-0.9 3:0.3\n"
    "1 1:1.2 2:0.1 3:-0.2\n-1 1:-1.1 2:-0.2\n1 1:0.7 3:0.4\n-1 1:-0.6 2:0.3 3:-0.1\n";

void expect_refused(const Run& r, const std::vector<std::string>& parts) {
  CAPTURE(r.out, r.err);
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::StartsWith("error: "));
  for (const auto& p : parts) CHECK_THAT(r.err, Contains(p));
}

}  // namespace

TEST_CASE("guards: train refuses to write its model over its own source model or weights", "[cli][robust]") {
  TempDir dir;
  const std::string data = dir.write("d.svm", kRows), source = dir.file("source.json");
  REQUIRE(pegasos_run(dir, "train -q " + q(data) + " " + q(source)).code == 0);
  const std::string before = read_text(source);
  expect_refused(pegasos_run(dir, "train -q --set source_model=" + q(source) + " " + q(data) + " " + q(source)),
                 {source + ": the output is the source model", "refusing to overwrite it"});
  // --cv --refit writes a model too.
  expect_refused(pegasos_run(dir, "train -q --cv 2 --refit --set source_model=" + q(source) + " " + q(data) + " " + q(source)),
                 {"the output is the source model"});
  const std::string weights = dir.write("w.txt", "1\n1\n1\n1\n1\n1\n1\n1\n");
  expect_refused(pegasos_run(dir, "train -q --set weights_file=" + q(weights) + " " + q(data) + " " + q(weights)),
                 {"the output is the weights"});
  CHECK(read_text(source) == before);
  CHECK(read_text(weights) == "1\n1\n1\n1\n1\n1\n1\n1\n");
  // The transfer itself, to another file, still works.
  CHECK(pegasos_run(dir, "train -q --set source_model=" + q(source) + " " + q(data) + " " + q(dir.file("t.json"))).code == 0);
}

TEST_CASE("guards: a config read from a pipe is read once (the same-file checks read no input twice)", "[cli][robust]") {
  TempDir dir;
  const std::string data = dir.write("d.svm", kRows), fifo = dir.file("config.fifo");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::thread writer([&] {
    std::ofstream out(fifo);  // blocks until pegasos opens the pipe
    out << R"({"lambda": 0.01})";
  });
  const Run r = pegasos_run(dir, "train -q --config " + q(fifo) + " " + q(data) + " " + q(dir.file("m.json")));
  writer.join();
  CAPTURE(r.err);
  REQUIRE(r.code == 0);
  CHECK(json::parse(read_text(dir.file("m.json")))["settings"]["lambda"] == 0.01);
}

TEST_CASE("guards: pegasos run refuses a results folder that holds its own inputs under output names", "[cli][robust]") {
  TempDir dir;
  fs::create_directories(dir.file("out"));
  const std::string csv = "y,a,b\n1,0.5,0.3\n-1,0.1,1\n1,0.2,0\n-1,0,1\n1,0.6,0.2\n-1,0.1,0.9\n";
  const std::string data = dir.write("out/results.csv", csv);
  const std::string spec = dir.write("out/e.json", R"({"data":{"file":"results.csv","folds":2},"config":{},"plots":false})");
  expect_refused(pegasos_run(dir, "run -q " + q(spec) + " -o " + q(dir.file("out"))),
                 {"results.csv: the output is the data", "refusing to overwrite it"});
  CHECK(read_text(data) == csv);
  // The experiment file itself named results.json (its data elsewhere).
  fs::create_directories(dir.file("out2"));
  dir.write("out2/d.csv", csv);
  const std::string own = dir.write("out2/results.json", R"({"data":{"file":"d.csv","folds":2},"config":{},"plots":false})");
  const std::string own_text = read_text(own);
  expect_refused(pegasos_run(dir, "run -q " + q(own) + " -o " + q(dir.file("out2"))), {"the output is the experiment"});
  CHECK(read_text(own) == own_text);
  // Another folder: the same experiment runs and writes its results there.
  REQUIRE(pegasos_run(dir, "run -q " + q(spec) + " -o " + q(dir.file("elsewhere"))).code == 0);
  CHECK(fs::exists(dir.file("elsewhere/results.json")));
  CHECK(read_text(data) == csv);
}

TEST_CASE("guards: rows that overflow a model or a kernel map are refused, never a NaN label or a hang", "[cli][robust]") {
  TempDir dir;
  const std::string data = dir.write("d.svm", kRows), model = dir.file("m.json");
  // A polynomial kernel of degree 10 on a row of 1e38: the decision value overflows.
  REQUIRE(pegasos_run(dir, "train -q --set objective=kernel_hinge --set solver=pegasos "
                           "--set 'kernel={\"type\":\"polynomial\",\"degree\":10,\"gamma\":1,\"coef0\":1}' " +
                               q(data) + " " + q(model))
              .code == 0);
  const std::string huge = dir.write("huge.svm", "1 1:0.5\n-1 1:1e38 2:1e38\n");
  expect_refused(pegasos_run(dir, "predict " + q(model) + " " + q(huge)), {huge + ": row 2: the model's decision value is"});
  expect_refused(pegasos_run(dir, "eval " + q(model) + " " + q(huge)), {"row 2"});  // it never returned before
  // A Nyström map fitted on values near the float range is not finite: exit
  // 2 naming the setting, and the model already at the output path is kept.
  const std::string kept = dir.file("kept.json");
  REQUIRE(pegasos_run(dir, "train -q " + q(data) + " " + q(kept)).code == 0);
  const std::string before = read_text(kept);
  const std::string big = dir.write("big.svm", "1 1:3e38 2:3e38\n-1 1:-3e38 2:3e38\n1 1:3e38\n-1 2:-3e38\n");
  expect_refused(pegasos_run(dir, "train -q --set 'kernel_approximation={\"type\":\"nystroem\",\"components\":4,\"gamma\":0.001}' " +
                                      q(big) + " " + q(kept)),
                 {big + ": kernel_approximation:", "not finite"});
  CHECK(read_text(kept) == before);
}

TEST_CASE("guards: metrics walk NaN scores to the end (ROC-AUC and thresholds terminate)", "[metrics][robust]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> scores = {0.9, nan, 0.1, nan, 0.5};
  const std::vector<char> positive = {1, 0, 0, 1, 1};
  const auto auc = pegasos::roc_auc(scores, positive);  // looped forever on the first NaN
  REQUIRE(auc.has_value());
  CHECK(*auc >= 0.0);
  CHECK(*auc <= 1.0);
  CHECK(pegasos::threshold_for_fpr(scores, positive, 0.5).has_value());
  CHECK(pegasos::threshold_for_recall(scores, positive, 0.5).has_value());
  // Finite scores keep their exact value: 5 of the 6 positive-negative pairs ordered right.
  const auto exact = pegasos::roc_auc({0.9, 0.45, 0.1, 0.4, 0.5}, positive);
  REQUIRE(exact.has_value());
  CHECK(*exact == Approx(5.0 / 6.0));
}

TEST_CASE("guards: text settings the mode ignores, and empty paths, are errors naming them", "[cli][robust]") {
  TempDir dir;
  const std::string docs = dir.write("d.tsv", "spam\tbuy cheap pills now\nham\tlunch at noon\nspam\tcheap pills\nham\tmeeting at noon\n");
  const std::string out = dir.file("m.json");
  const std::string tsv = "train -q --set format=text_tsv ";
  expect_refused(pegasos_run(dir, tsv + "--set features.max_features=5 " + q(docs) + " " + q(out)),
                 {"features.max_features: only used with mode=vocabulary (mode is hashing)"});
  expect_refused(pegasos_run(dir, tsv + "--set 'features={\"mode\":\"vocabulary\",\"hash_bits\":12}' " + q(docs) + " " + q(out)),
                 {"features.hash_bits: only used with mode=hashing"});
  CHECK_FALSE(fs::exists(out));
  REQUIRE(pegasos_run(dir, tsv + "--set 'features={\"mode\":\"vocabulary\",\"max_features\":3}' " + q(docs) + " " + q(out)).code == 0);
  // '' was "unset": trained from zero / unweighted without a word.
  expect_refused(pegasos_run(dir, tsv + "--init-model '' " + q(docs) + " " + q(out)), {"--init-model: an empty path"});
  expect_refused(pegasos_run(dir, tsv + "--weights '' " + q(docs) + " " + q(out)), {"--weights: an empty path"});
  expect_refused(pegasos_run(dir, "predict " + q(out) + " ''"), {"data: an empty path"});
  expect_refused(pegasos_run(dir, "inspect ''"), {"model: an empty path"});
}

TEST_CASE("guards: eval's objective is that of the weights in the file, not of its training summary", "[cli]") {
  TempDir dir;
  const std::string data = dir.write("d.svm", kRows), model = dir.file("m.json");
  REQUIRE(pegasos_run(dir, "train -q --set lambda=0.1 " + q(data) + " " + q(model)).code == 0);
  auto objective = [&](const std::string& path) {
    const Run r = pegasos_run(dir, "eval --json " + q(dir.file("e.json")) + " " + q(path) + " " + q(data));
    REQUIRE(r.code == 0);
    return json::parse(read_text(dir.file("e.json")))["objective"].get<double>();
  };
  json m = json::parse(read_text(model));
  const double trained = objective(model);
  // A summary that no longer matches: the objective does not move.
  m["training"]["regularizer"] = 100.0;
  write_text(dir.file("summary.json"), m.dump());
  CHECK(objective(dir.file("summary.json")) == trained);
  // Weights doubled: λ/2‖w‖² (and the hinge) move with them, by hand.
  m = json::parse(read_text(model));
  double sq = 0.0;
  for (auto& w : m["weights"][0]) {
    w = 2.0 * w.get<double>();
    sq += w.get<double>() * w.get<double>();
  }
  const double b = 2.0 * m["bias"][0].get<double>();
  m["bias"][0] = b;
  write_text(dir.file("doubled.json"), m.dump());
  const double lambda = m["settings"]["lambda"].get<double>();
  const double doubled = objective(dir.file("doubled.json"));
  CHECK(doubled >= lambda / 2 * (sq + b * b));  // the regulariser alone (the hinge is >= 0)
  CHECK(doubled != trained);
}

TEST_CASE("guards: raw text whose ids would split predict's columns, nested class folders, results inside the data", "[cli][robust]") {
  TempDir dir;
  const std::string mail = dir.write("m.jsonl",
                                     "{\"text\":\"buy cheap pills now\",\"label\":\"spam\"}\n{\"text\":\"lunch at noon\",\"label\":\"ham\"}\n"
                                     "{\"text\":\"cheap pills\",\"label\":\"spam\"}\n{\"text\":\"meeting at noon\",\"label\":\"ham\"}\n");
  const std::string model = dir.file("text.json");
  REQUIRE(pegasos_run(dir, "train -q " + q(mail) + " " + q(model)).code == 0);
  // An id with a tab (JSONL) or a file name with one: exit 2, not a line of four columns.
  const std::string tab_id = dir.write("ids.jsonl", "{\"id\":\"a\\tb\",\"text\":\"hello\"}\n");
  expect_refused(pegasos_run(dir, "predict --id-field id " + q(model) + " " + q(tab_id)),
                 {"ids.jsonl:1: id field \"id\" contains a control character"});
  expect_refused(pegasos_run(dir, "predict --id-field '' " + q(model) + " " + q(tab_id)), {"--id-field: an empty field name"});
  // Labels past 2^53 written as JSON numbers lost digits and merged into one class.
  const std::string big = dir.write("big.jsonl", "{\"label\":12345678901234567890123,\"text\":\"a\"}\n"
                                                 "{\"label\":12345678901234567890124,\"text\":\"b\"}\n{\"label\":5,\"text\":\"c\"}\n");
  expect_refused(pegasos_run(dir, "train -q " + q(big) + " " + q(dir.file("big.json"))),
                 {"big.jsonl:1: label", "too large for a JSON number to keep its digits"});
  // Ids past 2^64 (read as doubles) would print rounded, two records alike; up to 2^64 they are exact.
  const std::string big_ids = dir.write("bigid.jsonl", "{\"id\":18446744073709551615,\"text\":\"a\"}\n"
                                                       "{\"id\":123456789012345678901234,\"text\":\"b\"}\n");
  expect_refused(pegasos_run(dir, "predict --id-field id " + q(model) + " " + q(big_ids)),
                 {"bigid.jsonl:2: id 1.23456789012345", "e+23 in field \"id\"", "write it as a string"});
  const std::string exact_ids = dir.write("exactid.jsonl", "{\"id\":18446744073709551615,\"text\":\"a\"}\n"
                                                           "{\"id\":-9223372036854775807,\"text\":\"b\"}\n");
  const Run exact = pegasos_run(dir, "predict --id-field id " + q(model) + " " + q(exact_ids));
  CHECK(exact.code == 0);
  CHECK_THAT(exact.out, Contains("18446744073709551615\t") && Contains("-9223372036854775807\t"));
  fs::create_directories(dir.file("flat"));
  dir.write("flat/a\tb.eml", "hello");
  expect_refused(pegasos_run(dir, "predict --ids " + q(model) + " " + q(dir.file("flat"))), {"contains a control character"});
  CHECK(pegasos_run(dir, "predict " + q(model) + " " + q(dir.file("flat"))).code == 0);  // no ids printed: fine
  // eval reads a .txt / .tsv file with a text model as LABEL<TAB>TEXT, as predict does ("numeric data" before).
  const std::string tsv = dir.write("test.txt", "spam\tcheap pills\nham\tlunch at noon\n");
  const Run ev = pegasos_run(dir, "eval " + q(model) + " " + q(tsv));
  CAPTURE(ev.err);
  CHECK(ev.code == 0);
  CHECK_THAT(ev.out, Contains("examples           2"));
  // The text field is not the label field (the model would learn each document's answer).
  expect_refused(pegasos_run(dir, "train -q --set text_field=label " + q(mail) + " " + q(dir.file("x.json"))),
                 {"text_field: is the label_field too"});
  // A class folder holding a folder: its documents belonged to no class, silently.
  for (const char* f : {"c/ham/1", "c/ham/2", "c/spam/1", "c/spam/2", "c/phish/2003/1"}) {
    fs::create_directories(fs::path(dir.file(f)).parent_path());
    dir.write(f, std::string(f).find("ham") != std::string::npos ? "lunch at noon" : "cheap pills now");
  }
  expect_refused(pegasos_run(dir, "train -q " + q(dir.file("c")) + " " + q(dir.file("c.json"))),
                 {"phish/2003: a folder inside the class folder phish"});
  fs::remove_all(dir.file("c/phish/2003"));
  dir.write("c/phish/1", "verify your password");
  dir.write("c/phish/2", "your password expires");
  // pegasos run's results inside a text_dir data folder would become documents (a new class).
  const std::string spec = dir.write("e.json", "{\"data\":{\"file\":\"c\",\"holdout\":0.3},\"config\":{},\"plots\":false}");
  expect_refused(pegasos_run(dir, "run -q " + q(spec) + " -o " + q(dir.file("c/ham"))), {"inside the data folder"});
  expect_refused(pegasos_run(dir, "run -q " + q(spec) + " -o " + q(dir.file("c/new"))), {"inside the data folder"});
  CHECK_FALSE(fs::exists(dir.file("c/new")));
  CHECK(pegasos_run(dir, "run -q " + q(spec) + " -o " + q(dir.file("out"))).code == 0);
}
