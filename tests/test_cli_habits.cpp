// The command line's habits: misspelt commands, options and settings get a
// suggestion (exit 2); nested settings take dotted --set keys; train --help
// lists every data format and objective of the tables.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "core/dataset.hpp"
#include "core/objective_table.hpp"
#include "drivers/config.hpp"
#include "test_util.hpp"

using testutil::pegasos_run;
using testutil::q;
using testutil::Run;
using testutil::TempDir;

namespace {

// A tiny raw-text training set: spam mentions money, ham mentions meetings.
std::string write_mail(const TempDir& dir) {
  std::string text;
  for (int i = 0; i < 20; ++i) {
    text += R"({"label": "spam", "text": "win money now offer )" + std::to_string(i) + "\"}\n";
    text += R"({"label": "ham", "text": "meeting notes agenda )" + std::to_string(i) + "\"}\n";
  }
  const std::string path = dir.file("mail.jsonl");
  testutil::write_text(path, text);
  return path;
}

}  // namespace

TEST_CASE("a misspelt command gets a suggestion and exit 2", "[cli][habits]") {
  TempDir dir("habits");
  const Run r = pegasos_run(dir, "trian x y");
  CHECK(r.code == 2);
  CHECK(r.err.find("unknown command 'trian' (did you mean 'train'?)") != std::string::npos);
  const Run far = pegasos_run(dir, "zzzzzzzz");
  CHECK(far.code == 2);
  CHECK(far.err.find("unknown command 'zzzzzzzz'; the commands are train, predict") != std::string::npos);
}

TEST_CASE("a misspelt option gets a suggestion and exit 2", "[cli][habits]") {
  TempDir dir("habits");
  const Run r = pegasos_run(dir, "train --qiuet a b");
  CHECK(r.code == 2);
  CHECK(r.err.find("unknown option '--qiuet' for 'pegasos train' (did you mean '--quiet'?)") != std::string::npos);
  const Run p = pegasos_run(dir, "predict --line-bufferd m d");
  CHECK(p.code == 2);
  CHECK(p.err.find("(did you mean '--line-buffered'?)") != std::string::npos);
  const Run ok = pegasos_run(dir, "--version");
  CHECK(ok.code == 0);
}

// A flag and a --set of the same setting: which one was meant is not
// guessed (the flag used to win silently); both are named, exit 2. Each flag
// alone, and --set alone, still train.
TEST_CASE("a flag and --set of the same setting are refused naming both", "[cli][habits]") {
  TempDir dir;
  const std::string mail = write_mail(dir), model = dir.file("m.json"), w = dir.file("w.txt");
  std::string weights;
  for (int i = 0; i < 40; ++i) weights += "1\n";
  testutil::write_text(w, weights);
  const std::vector<std::pair<std::string, std::string>> conflicts = {
      {"--calibrate --set calibrate=false", "--calibrate and --set calibrate=false both set 'calibrate'"},
      {"--set 'calibrate = true' --calibrate", "--calibrate and --set calibrate = true both set 'calibrate'"},
      {"--max-fpr 0.1 --set max_fpr=0.2", "--max-fpr 0.1 and --set max_fpr=0.2 both set 'max_fpr'"},
      {"--target-recall 0.9 --set target_recall=0.8", "--target-recall 0.9 and --set target_recall=0.8 both set 'target_recall'"},
      {"--max-fpr 0.1 --target-recall 0.5", "--max-fpr and --target-recall both choose the threshold"},
      {"--weights " + q(w) + " --set weights_file=" + q("\"" + w + "\""), "both set 'weights_file'"},
      {"--init-model " + q(model) + " --set init_model=" + q("\"" + model + "\""), "both set 'init_model'"},
  };
  REQUIRE(pegasos_run(dir, "train -q " + q(mail) + " " + q(model)).code == 0);
  for (const auto& [flags, message] : conflicts) {
    const Run r = pegasos_run(dir, "train -q " + flags + " " + q(mail) + " " + q(dir.file("out.json")));
    INFO(flags << "\n" << r.err);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::Contains(message));
  }
  for (const std::string& alone : std::vector<std::string>{"--calibrate", "--set calibrate=true", "--max-fpr 0.1", "--set max_fpr=0.1",
                                   "--weights " + q(w), "--set weights_file=" + q("\"" + w + "\"")}) {
    const Run r = pegasos_run(dir, "train -q " + alone + " " + q(mail) + " " + q(dir.file("out.json")));
    INFO(alone << "\n" << r.err);
    CHECK(r.code == 0);
  }
  // featurize applies only the reading and featurisation settings: a training
  // setting given by --set is refused naming it, a reading one is applied.
  const Run f = pegasos_run(dir, "featurize -q --set lambda=1 " + q(mail) + " " + q(dir.file("f.svm")));
  CHECK(f.code == 2);
  CHECK_THAT(f.err, Catch::Contains("featurize: --set lambda=1: 'lambda' is a training setting"));
  CHECK_FALSE(std::filesystem::exists(dir.file("f.svm")));
  CHECK(pegasos_run(dir, "featurize -q --set features.hash_bits=12 --set normalize=l2 " + q(mail) + " " + q(dir.file("f.svm"))).code == 0);
  // --cold changes the grid's path: without a grid it is refused.
  const Run cold = pegasos_run(dir, "train -q --cv 2 --cold " + q(mail));
  CHECK(cold.code == 2);
  CHECK_THAT(cold.err, Catch::Contains("--cold: needs --grid"));
}

TEST_CASE("dotted --set keys set nested settings, typos inside them get suggestions", "[cli][habits]") {
  TempDir dir("habits");
  const std::string data = write_mail(dir), model = dir.file("m.json");
  const Run r = pegasos_run(dir, "train --quiet --set features.hash_bits=12 --set features.word_ngrams=2 " + q(data) +
                                     " " + q(model));
  REQUIRE(r.code == 0);
  const auto m = nlohmann::json::parse(testutil::read_text(model));
  const std::string text = m.dump();
  CHECK(text.find("\"hash_bits\":12") != std::string::npos);
  CHECK(text.find("\"word_ngrams\":2") != std::string::npos);

  const Run typo = pegasos_run(dir, "train --set features.hash_bit=18 " + q(data) + " " + q(model));
  CHECK(typo.code == 2);
  CHECK(typo.err.find("hash_bit: unknown text option (did you mean 'hash_bits'?)") != std::string::npos);
  const Run outer = pegasos_run(dir, "train --set feature.hash_bits=18 " + q(data) + " " + q(model));
  CHECK(outer.code == 2);
  CHECK(outer.err.find("(did you mean 'features'?)") != std::string::npos);
  const Run scalar = pegasos_run(dir, "train --set lambda=0.01 --set lambda.x=1 " + q(data) + " " + q(model));
  CHECK(scalar.code == 2);
  CHECK(scalar.err.find("--set lambda.x: lambda is not an object of settings") != std::string::npos);
}

TEST_CASE("train --help lists every data format and every objective", "[cli][habits]") {
  TempDir dir("habits");
  const Run r = pegasos_run(dir, "train --help");
  REQUIRE(r.code == 0);
  for (const auto& [format, name] : pegasos::kDataFormatNames) {
    CHECK(r.out.find("\n  " + std::string(name) + " ") != std::string::npos);
  }
  for (const pegasos::ObjectiveRow& row : pegasos::kObjectiveTable) {
    CHECK(r.out.find("\n  " + std::string(row.name) + " ") != std::string::npos);
  }
  CHECK(r.out.find("folder per class") != std::string::npos);
  CHECK(r.out.find("features.KEY") != std::string::npos);
}

TEST_CASE("train --help shows every setting's default as training applies it", "[cli][habits]") {
  TempDir dir("habits");
  const Run r = pegasos_run(dir, "train --help");
  REQUIRE(r.code == 0);
  auto line_of = [&](const std::string& key) {
    const std::size_t at = r.out.find("\n  " + key + " ");
    REQUIRE(at != std::string::npos);
    return r.out.substr(at + 1, r.out.find('\n', at + 1) - at - 1);
  };
  for (const auto& k : pegasos::config_keys()) {
    const std::string line = line_of(k.name);
    CHECK(line.find("[default: " + pegasos::shown_default(k) + "]") != std::string::npos);
    CHECK(line.find("null") == std::string::npos);  // "unset", or what it depends on
  }
  CHECK(line_of("max_feature_index").find("[default: 2147483648]") != std::string::npos);
  // The defaults that depend on the solver, as a trained model records them:
  // kernel SDCA with three classes (bias unregularized, one-vs-one) and a linear model (bias feature).
  CHECK(line_of("bias").find("[default: unregularized for kernel SDCA, else feature]") != std::string::npos);
  CHECK(line_of("multiclass").find("[default: ovo for kernel SDCA") != std::string::npos);
  std::string rows;
  for (int i = 0; i < 30; ++i) rows += std::to_string(i % 3) + " 1:" + std::to_string(i % 3 + 0.1 * (i % 5)) + " 2:" + std::to_string(i % 2) + "\n";
  const std::string data = dir.write("three.svm", rows);
  const std::string kernel = dir.file("k.json"), linear = dir.file("l.json");
  REQUIRE(pegasos_run(dir, "train -q --set objective=kernel_hinge " + q(data) + " " + q(kernel)).code == 0);
  REQUIRE(pegasos_run(dir, "train -q " + q(data) + " " + q(linear)).code == 0);
  const auto km = nlohmann::json::parse(testutil::read_text(kernel));
  const auto k = km["settings"];
  const auto l = nlohmann::json::parse(testutil::read_text(linear))["settings"];
  CHECK(km["training"]["solver"] == "sdca");
  CHECK(k["bias"] == "unregularized");
  CHECK(k["multiclass"] == "ovo");
  CHECK(l["bias"] == "feature");
}

TEST_CASE("a misspelt option before the command gets a suggestion", "[cli][habits]") {
  TempDir dir("habits");
  const Run r = pegasos_run(dir, "--verison");
  CHECK(r.code == 2);
  CHECK(r.err.find("unknown option '--verison' for 'pegasos' (did you mean '--version'?)") != std::string::npos);
  const Run none = pegasos_run(dir, "");
  CHECK(none.code == 2);
  CHECK(none.err.find("a command is required; the commands are train, predict") != std::string::npos);
}

TEST_CASE("empty output paths and non-finite numbers on the command line are errors, exit 2", "[cli][habits]") {
  TempDir dir("habits");
  const std::string data = write_mail(dir), model = dir.file("m.json");
  REQUIRE(pegasos_run(dir, "train --quiet " + q(data) + " " + q(model)).code == 0);
  for (const std::string& args :
       {"predict " + q(model) + " " + q(data) + " --output ''", "eval " + q(model) + " " + q(data) + " --json ''",
        "featurize " + q(data) + " ''", std::string("run x.json --output ''")}) {
    const Run r = pegasos_run(dir, args);
    INFO(args << "\n" << r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find("an empty path") != std::string::npos);
    CHECK(r.out.empty());  // nothing went to standard output instead
  }
  for (const std::string& args : {"predict " + q(model) + " " + q(data) + " --threshold nan",
                                  "eval " + q(model) + " " + q(data) + " --max-fpr nan"}) {
    const Run r = pegasos_run(dir, args);
    INFO(args << "\n" << r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find("not a finite number: nan") != std::string::npos);
  }
  // A word where a number belongs is named as such, not as out of range or unconvertible.
  for (const auto& [args, message] : std::vector<std::pair<std::string, std::string>>{
           {"inspect " + q(model) + " -n abc", "--top: 'abc' is not a whole number"},
           {"inspect " + q(model) + " --top 5x", "--top: '5x' is not a whole number"},
           {"train --cv abc " + q(data), "--cv: 'abc' is not a whole number"},
           {"predict " + q(model) + " " + q(data) + " --threshold abc", "--threshold: 'abc' is not a number"},
           {"eval " + q(model) + " " + q(data) + " --max-fpr abc", "--max-fpr: 'abc' is not a number"},
           {"train --max-fpr x1 " + q(data) + " " + q(dir.file("x.json")), "--max-fpr: 'x1' is not a number"}}) {
    const Run r = pegasos_run(dir, args);
    INFO(args << "\n" << r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find(message) != std::string::npos);
    CHECK(r.out.empty());
  }
}

TEST_CASE("binary-only measures on multiclass runs, and operating points --cv cannot store, are errors, exit 2",
          "[cli][habits]") {
  TempDir dir("habits");
  std::string three, two;
  for (int i = 0; i < 30; ++i) {
    three += std::to_string(i % 3 + 1) + " 1:" + std::to_string(i % 3) + " 2:1\n";
    two += std::string(i % 2 ? "+1" : "-1") + " 1:" + std::to_string(i % 2 + 0.1 * (i % 4)) + " 2:1\n";
  }
  const std::string data3 = dir.write("three.svm", three), data2 = dir.write("two.svm", two);
  const auto experiment = [&](const std::string& data, const std::string& extra) {
    return dir.write("x.json", R"({"config": {}, "data": {"file": ")" + data +
                                   R"(", "folds": 3, "holdout": 0.3}, "grid": {"lambda": [0.1, 0.01]})" + extra + "}");
  };
  // select roc_auc scored null on three classes and chose arbitrarily; max_fpr was ignored
  for (const std::string& extra : {std::string(R"(, "select": {"metric": "roc_auc"})"), std::string(R"(, "max_fpr": 0.1)")}) {
    const Run r = pegasos_run(dir, "run --quiet " + q(experiment(data3, extra)) + " --output " + q(dir.file("o3")));
    INFO(r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find("for two classes; the data has 3") != std::string::npos);
    const Run ok = pegasos_run(dir, "run --quiet " + q(experiment(data2, extra)) + " --output " + q(dir.file("o2")));
    INFO(ok.err);
    CHECK(ok.code == 0);
  }
  for (const std::string& flag : {std::string("--calibrate"), std::string("--max-fpr 0.1"), std::string("--target-recall 0.9")}) {
    const Run r = pegasos_run(dir, "train --quiet --cv 3 " + flag + " " + q(data2));
    INFO(flag << ": " << r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find("without --refit no model is written") != std::string::npos);
    CHECK(pegasos_run(dir, "train --quiet --cv 3 --refit " + flag + " " + q(data2) + " " + q(dir.file("r.json"))).code == 0);
  }
}

TEST_CASE("outputs keep the umask, the replaced file's permissions and symbolic links", "[cli][habits]") {
  TempDir dir("habits");
  const std::string data = write_mail(dir), model = dir.file("m.json"), out = dir.file("p.txt");
  REQUIRE(pegasos_run(dir, "train --quiet " + q(data) + " " + q(model)).code == 0);
  auto mode = [](const std::string& path) {
    return static_cast<unsigned>(std::filesystem::status(path).permissions()) & 0777u;
  };
  const std::string predict = "predict " + q(model) + " " + q(data) + " --output ";
  // Under umask 077 a new file is 0600 (it was always 0644).
  REQUIRE(std::system(("umask 077 && " + q(PEGASOS_BINARY) + " " + predict + q(out)).c_str()) == 0);
  CHECK(mode(out) == 0600u);
  std::filesystem::permissions(out, static_cast<std::filesystem::perms>(0640));
  REQUIRE(pegasos_run(dir, predict + q(out)).code == 0);
  CHECK(mode(out) == 0640u);  // replaced, permissions kept
  const std::string link = dir.file("link.txt");
  std::filesystem::create_symlink(out, link);
  std::filesystem::remove(out);
  testutil::write_text(out, "old\n");
  REQUIRE(pegasos_run(dir, predict + q(link)).code == 0);
  CHECK(std::filesystem::is_symlink(link));                        // still a link
  CHECK(testutil::read_text(out).find("spam") != std::string::npos);  // its target has the predictions

  // A dangling link (also through a chain, with a relative target) creates its
  // target, as `>` does; a loop and a target in a missing folder are errors.
  std::filesystem::create_directory(dir.file("sub"));
  const std::string dangling = dir.file("dangling.txt"), chain = dir.file("chain.txt");
  std::filesystem::create_symlink("sub/made.txt", dangling);
  std::filesystem::create_symlink("dangling.txt", chain);
  REQUIRE(pegasos_run(dir, predict + q(chain)).code == 0);
  CHECK(std::filesystem::is_symlink(chain));
  CHECK(std::filesystem::is_symlink(dangling));
  CHECK(testutil::read_text(dir.file("sub/made.txt")).find("spam") != std::string::npos);
  const std::string loop_a = dir.file("loop_a"), loop_b = dir.file("loop_b"), nowhere = dir.file("nowhere.txt");
  std::filesystem::create_symlink("loop_b", loop_a);
  std::filesystem::create_symlink("loop_a", loop_b);
  std::filesystem::create_symlink(dir.file("missing_folder/x.txt"), nowhere);
  for (const std::string& bad : {loop_a, nowhere}) {
    const Run r = pegasos_run(dir, predict + q(bad));
    CHECK(r.code == 2);
    CHECK(std::filesystem::is_symlink(bad));  // not replaced by a file
  }
  CHECK(pegasos_run(dir, predict + q(loop_a)).err.find("too many levels of symbolic links") != std::string::npos);
  CHECK(pegasos_run(dir, predict + q(nowhere)).err.find("missing_folder") != std::string::npos);

  // A name of 250 bytes (NAME_MAX 255) is written: the temporary file's name is cut short.
  const std::string long_name = dir.file(std::string(250, 'k'));
  REQUIRE(pegasos_run(dir, predict + q(long_name)).code == 0);
  CHECK(testutil::read_text(long_name).find("spam") != std::string::npos);
  CHECK(dir.entries("kkkk").size() == 1);  // no temporary file left beside it
}

TEST_CASE("eval --max-fpr on a multiclass model and run --output over a file are errors, exit 2", "[cli][habits]") {
  TempDir dir("habits");
  std::string text;
  for (int i = 0; i < 30; ++i) text += std::to_string(i % 3 + 1) + " 1:" + std::to_string(i % 3) + " 2:1\n";
  const std::string data = dir.file("three.svm"), model = dir.file("m.json");
  testutil::write_text(data, text);
  REQUIRE(pegasos_run(dir, "train --quiet " + q(data) + " " + q(model)).code == 0);
  const Run e = pegasos_run(dir, "eval " + q(model) + " " + q(data) + " --max-fpr 0.1");
  CHECK(e.code == 2);
  CHECK(e.err.find("--max-fpr: ") != std::string::npos);
  CHECK(e.err.find("3 classes") != std::string::npos);
  const std::string experiment = dir.file("x.json"), blocker = dir.file("afile");
  testutil::write_text(experiment, R"({"name": "x", "config": {}, "data": {"train": ")" + data + R"(", "test": ")" + data + R"("}, "grid": {"lambda": [0.1, 0.01]}})");
  testutil::write_text(blocker, "");
  const Run r = pegasos_run(dir, "run --quiet " + q(experiment) + " --output " + q(blocker));
  INFO(r.err);
  CHECK(r.code == 2);
  CHECK(r.err.find("afile: cannot create the output folder: Not a directory") != std::string::npos);
  CHECK(r.err.find("internal error") == std::string::npos);
  // Outputs that cannot be written at the end are refused before the first
  // run: the journal of an earlier run stays as it was.
  const std::string out = dir.file("out");
  REQUIRE(pegasos_run(dir, "run --quiet " + q(experiment) + " --output " + q(out)).code == 0);
  const std::string journal = testutil::read_text(out + "/runs.jsonl");
  for (const std::string& blocked : {std::string("best_model.json"), std::string("plots")}) {
    std::filesystem::remove_all(out + "/" + blocked);
    if (blocked == "plots") testutil::write_text(out + "/plots", "");
    else std::filesystem::create_directories(out + "/" + blocked);
    const Run b = pegasos_run(dir, "run --quiet " + q(experiment) + " --output " + q(out));
    INFO(b.err);
    CHECK(b.code == 2);
    CHECK(b.err.find(blocked) != std::string::npos);
    CHECK(testutil::read_text(out + "/runs.jsonl") == journal);
    std::filesystem::remove_all(out + "/" + blocked);
  }
}

TEST_CASE("predict and eval check a CSV file's columns against the CSV model's", "[cli][habits]") {
  TempDir dir("habits");
  // y = sign(2a - b): a model on (a, b, c) that gives reordered columns away.
  std::string train = "label,a,b,c\n", reordered = "label,b,a,c\n", unlabelled = "a,b,c\n";
  for (int i = 0; i < 60; ++i) {
    const int a = i % 7 - 3, b = (i * 5) % 11 - 5, c = i % 3;
    const std::string y = 2 * a - b > 0 ? "1" : "-1";
    train += y + "," + std::to_string(a) + "," + std::to_string(b) + "," + std::to_string(c) + "\n";
    reordered += y + "," + std::to_string(b) + "," + std::to_string(a) + "," + std::to_string(c) + "\n";
    unlabelled += std::to_string(a) + "," + std::to_string(b) + "," + std::to_string(c) + "\n";
  }
  const std::string data = dir.file("train.csv"), model = dir.file("m.json");
  testutil::write_text(data, train);
  testutil::write_text(dir.file("reordered.csv"), reordered);
  testutil::write_text(dir.file("unlabelled.csv"), unlabelled);
  REQUIRE(pegasos_run(dir, "train --quiet " + q(data) + " " + q(model)).code == 0);
  for (const std::string& cmd : {std::string("predict"), std::string("eval")}) {
    const Run r = pegasos_run(dir, cmd + " " + q(model) + " " + q(dir.file("reordered.csv")));
    INFO(cmd << "\n" << r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find("reordered.csv:1: the feature columns are in another order") != std::string::npos);
    CHECK(r.out.empty());
  }
  // The model's columns without a label: predicted like the labelled file.
  const Run labelled = pegasos_run(dir, "predict " + q(model) + " " + q(data));
  const Run unlabelled_run = pegasos_run(dir, "predict " + q(model) + " " + q(dir.file("unlabelled.csv")));
  REQUIRE(labelled.code == 0);
  CHECK(unlabelled_run.code == 0);
  CHECK(unlabelled_run.out == labelled.out);
  const Run e = pegasos_run(dir, "eval " + q(model) + " " + q(dir.file("unlabelled.csv")));
  CHECK(e.code == 2);
  CHECK(e.err.find("no label column") != std::string::npos);
}

TEST_CASE("predict and eval name the rows with features the model has no weights for, and ignore those features",
          "[cli][habits]") {
  TempDir dir("habits");
  // Trained on features 1..3; the test file adds 4 and 9 to some rows.
  std::string train, wide, narrow;
  int widened = 0;
  for (int i = 0; i < 40; ++i) {
    const int a = i % 5 - 2, b = (i * 3) % 7 - 3;
    const std::string y = a - b > 0 ? "1" : "-1";
    const std::string row = y + " 1:" + std::to_string(a) + " 2:" + std::to_string(b) + " 3:1";
    train += row + "\n";
    narrow += row + "\n";
    const bool extra = i % 3 == 0;
    widened += extra ? 1 : 0;
    wide += row + (extra ? (i % 2 ? " 4:2.5" : " 4:1 9:-3") : "") + "\n";
  }
  testutil::write_text(dir.file("train.svm"), train);
  testutil::write_text(dir.file("wide.svm"), wide);
  testutil::write_text(dir.file("narrow.svm"), narrow);
  REQUIRE(pegasos_run(dir, "train --quiet " + q(dir.file("train.svm")) + " " + q(dir.file("m.json"))).code == 0);
  const Run plain = pegasos_run(dir, "predict " + q(dir.file("m.json")) + " " + q(dir.file("narrow.svm")));
  const Run extra = pegasos_run(dir, "predict " + q(dir.file("m.json")) + " " + q(dir.file("wide.svm")));
  INFO(extra.err);
  REQUIRE(plain.code == 0);
  REQUIRE(extra.code == 0);
  CHECK(extra.out == plain.out);  // the extra features change no score
  CHECK(plain.err.find("beyond the model") == std::string::npos);
  const std::string counted = std::to_string(widened) + " of 40 rows have features beyond the model's 3";
  CHECK(extra.err.find("wide.svm: " + counted + " (the largest index is 9)") != std::string::npos);
  const Run e = pegasos_run(dir, "eval --json " + q(dir.file("e.json")) + " " + q(dir.file("m.json")) + " " +
                                     q(dir.file("wide.svm")));
  REQUIRE(e.code == 0);
  CHECK(e.out.find(counted) != std::string::npos);
  const nlohmann::json report = nlohmann::json::parse(testutil::read_text(dir.file("e.json")));
  CHECK(report.at("rows_with_ignored_features") == widened);
  CHECK(report.at("largest_feature_index") == 9);
}

TEST_CASE("messages name the row, the model file and the flag, out-of-range values and huge indices are exit 2",
          "[cli][habits]") {
  TempDir dir("habits");
  const std::string mail = write_mail(dir), text_model = dir.file("t.json");
  REQUIRE(pegasos_run(dir, "train --quiet " + q(mail) + " " + q(text_model)).code == 0);
  std::string numeric;
  for (int i = 0; i < 20; ++i) numeric += std::string(i % 2 ? "1" : "-1") + " 1:" + std::to_string(i % 2 ? 1 + i : -1 - i) + "\n";
  const std::string data = dir.file("d.svm"), model = dir.file("m.json"), other = dir.file("other.svm");
  testutil::write_text(data, numeric);
  testutil::write_text(other, "1 1:2\n\n-1 1:-2\n3 1:1\n");
  REQUIRE(pegasos_run(dir, "train --quiet " + q(data) + " " + q(model)).code == 0);
  struct Case {
    std::string args, expected;
  };
  std::string corrupt = testutil::read_text(text_model);
  const std::size_t at = corrupt.find("\"idf\"");
  REQUIRE(at != std::string::npos);
  corrupt.replace(at, 5, "\"idfx\"");
  const std::string bad_model = dir.file("bad_text.json");
  testutil::write_text(bad_model, corrupt);
  const Case cases[] = {
      // the third data row (the blank line is not a row), on the file's fourth line
      {"eval " + q(model) + " " + q(other),
       "other.svm: row 3 (line 4): label '3' does not occur in the model's classes ('-1', '1')"},
      {"predict " + q(bad_model) + " " + q(mail), "bad_text.json: /features/"},
      {"eval " + q(bad_model) + " " + q(mail), "bad_text.json: /features/"},
      {"train " + q(data) + " " + q(model) + " --cv 0", "error: --cv: needs at least 2 folds, got 0"},
      {"train " + q(data) + " " + q(model) + " --set lambda=1e400", "--set lambda=1e400: 1e400 is beyond the range"},
      {"predict " + q(model) + " " + q(data) + " --id-field id", "--id-field id: " + data + " is read as libsvm"},
      {"predict " + q(model), "error: data is required (`pegasos predict --help`"},
  };
  for (const Case& c : cases) {
    const Run r = pegasos_run(dir, c.args);
    INFO(c.args << "\n" << r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find(c.expected) != std::string::npos);
    CHECK(r.out.empty());
  }
  // A feature index whose dense weights cannot fit in memory (3 classes:
  // 3 outputs x 2^31 features x 8 bytes, twice: 103 GB) is refused before
  // any allocation, on any machine with less memory than that.
  const double memory = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGE_SIZE));
  if (memory < 1.0e11) {
    const std::string huge = dir.file("huge.svm");
    testutil::write_text(huge, "1 2147483647:1\n2 1:1\n3 2:1\n");
    const Run r = pegasos_run(dir, "train " + q(huge) + " " + q(model));
    INFO(r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find("huge.svm: the largest feature index is 2147483647") != std::string::npos);
  }
}

TEST_CASE("an output file replaced by root keeps its owner and group", "[cli][habits]") {
  if (::geteuid() != 0) return;  // only root may give a file away
  TempDir dir("habits");
  const std::string data = write_mail(dir), model = dir.file("m.json"), out = dir.file("p.txt");
  REQUIRE(pegasos_run(dir, "train --quiet " + q(data) + " " + q(model)).code == 0);
  testutil::write_text(out, "old\n");
  REQUIRE(::chown(out.c_str(), 65534, 65534) == 0);
  REQUIRE(pegasos_run(dir, "predict " + q(model) + " " + q(data) + " --output " + q(out)).code == 0);
  struct stat st{};
  REQUIRE(::stat(out.c_str(), &st) == 0);
  CHECK(st.st_uid == 65534u);  // was root's after the rename
  CHECK(st.st_gid == 65534u);
  CHECK(testutil::read_text(out).find("spam") != std::string::npos);
}

// Found in a review of bad inputs (2026-12-07): each used to be accepted
// silently, fail late, or be reported as an internal failure.
TEST_CASE("settings that cannot apply, overlong output names and config syntax errors are exit 2, early", "[cli][habits]") {
  TempDir dir("habits");
  std::string rows;
  for (int i = 0; i < 40; ++i) rows += (i % 2 ? "1 1:" : "-1 2:") + std::to_string(1 + i % 5) + " 3:1\n";
  const std::string data = dir.file("d.svm");
  testutil::write_text(data, rows);
  const std::string model = dir.file("m.json");
  // label_column picks a CSV column: on LIBSVM data it is refused, not ignored.
  const Run lc = pegasos_run(dir, "train -q --set label_column=3 " + q(data) + " " + q(model));
  CHECK(lc.code == 2);
  CHECK(lc.err.find("label_column: picks a CSV column, but " + data + " is LIBSVM data") != std::string::npos);
  // --strict with --cv judges the refit model; without --refit there is none.
  const Run strict = pegasos_run(dir, "train -q --cv 3 --strict " + q(data));
  CHECK(strict.code == 2);
  CHECK(strict.err.find("--strict: with --cv it judges the model --refit writes") != std::string::npos);
  // --target-recall takes (0, 1], as the setting does.
  const Run recall = pegasos_run(dir, "train -q --target-recall 1 " + q(data) + " " + q(model));
  CHECK(recall.code == 0);
  CHECK(nlohmann::json::parse(testutil::read_text(model)).dump().find("\"target_recall\":1.0") != std::string::npos);
  const Run recall0 = pegasos_run(dir, "train -q --target-recall 0 " + q(data) + " " + q(model));
  CHECK(recall0.code == 2);
  CHECK(recall0.err.find("must be in (0, 1], got 0") != std::string::npos);
  // A file name longer than a directory entry can be: refused before training
  // (it used to fail at the final rename, exit 1).
  const std::string long_name = dir.file(std::string(300, 'a') + ".json");
  const Run too_long = pegasos_run(dir, "train --set epochs=1000000 --set solver=pegasos " + q(data) + " " + q(long_name));
  CHECK(too_long.code == 2);
  CHECK(too_long.err.find("the file name is too long (305 bytes; at most 255)") != std::string::npos);
  CHECK(too_long.err.find("trained") == std::string::npos);  // nothing trained first
  // A subnormal lambda is refused before training.
  const Run tiny = pegasos_run(dir, "train -q --set lambda=1e-320 " + q(data) + " " + q(model));
  CHECK(tiny.code == 2);
  CHECK(tiny.err.find("lambda: must be at least 2.2e-308") != std::string::npos);
  // A config file's syntax error: line, column and what, without the JSON library's tag.
  const std::string config = dir.file("c.json");
  testutil::write_text(config, "{\n  \"lambda\": 0.1,\n}\n");
  const Run syntax = pegasos_run(dir, "train -q -c " + q(config) + " " + q(data) + " " + q(model));
  CHECK(syntax.code == 2);
  CHECK(syntax.err.find("c.json:3:1 near '}': invalid JSON (syntax error") != std::string::npos);
  CHECK(syntax.err.find("json.exception") == std::string::npos);
  // Rows without a feature value train (as LIBLINEAR does), with a warning.
  const std::string labels_only = dir.file("labels.svm");
  testutil::write_text(labels_only, "1\n-1 1:0\n1\n");
  const Run empty_rows = pegasos_run(dir, "train -q " + q(labels_only) + " " + q(model));
  CHECK(empty_rows.code == 0);
  CHECK(empty_rows.err.find("no row has a non-zero feature value") != std::string::npos);
  const Run normal = pegasos_run(dir, "train -q " + q(data) + " " + q(model));
  CHECK(normal.code == 0);
  CHECK(normal.err.find("warning") == std::string::npos);
  // --grid names what it cannot take in its own terms.
  const Run nested = pegasos_run(dir, "train --cv 3 --grid kernel.gamma=1,2 " + q(data));
  CHECK(nested.code == 2);
  CHECK(nested.err.find("'kernel.gamma': the grid takes whole settings") != std::string::npos);
  const Run reading = pegasos_run(dir, "train --cv 3 --grid features.hash_bits=10,12 " + q(data));
  CHECK(reading.code == 2);
  CHECK(reading.err.find("features cannot be gridded here") != std::string::npos);
  const Run value = pegasos_run(dir, "train --cv 3 --grid seed=a,b " + q(data));
  CHECK(value.code == 2);
  CHECK(value.err.find("--grid: seed: expected a number") != std::string::npos);
}

TEST_CASE("a .gz file that is not gzip is read as plain text, with a note", "[cli][habits]") {
  TempDir dir("habits");
  std::string rows;
  for (int i = 0; i < 40; ++i) rows += (i % 2 ? "1 1:" : "-1 2:") + std::to_string(1 + i % 5) + " 3:1\n";
  const std::string plain_gz = dir.file("plain.svm.gz"), real_gz = dir.file("real.svm.gz");
  testutil::write_text(plain_gz, rows);
  testutil::write_gzip(real_gz, rows);
  const std::string model = dir.file("m.json"), model2 = dir.file("m2.json");
  const Run plain = pegasos_run(dir, "train -q " + q(plain_gz) + " " + q(model));
  CHECK(plain.code == 0);
  CHECK(plain.err.find("note: " + plain_gz + ": the name ends in .gz but the content is not gzip-compressed") !=
        std::string::npos);
  const Run real = pegasos_run(dir, "train -q " + q(real_gz) + " " + q(model2));
  CHECK(real.code == 0);
  CHECK(real.err.find("note:") == std::string::npos);
  CHECK(testutil::read_text(model) == testutil::read_text(model2));  // the same rows either way
  const Run eval = pegasos_run(dir, "eval " + q(model) + " " + q(plain_gz));
  CHECK(eval.code == 0);
  CHECK(eval.err.find("not gzip-compressed") != std::string::npos);
  const Run predict = pegasos_run(dir, "predict " + q(model) + " " + q(plain_gz));
  const Run predict_real = pegasos_run(dir, "predict " + q(model) + " " + q(real_gz));
  CHECK(predict.code == 0);
  CHECK(predict.err.find("not gzip-compressed") != std::string::npos);
  CHECK(predict_real.err.find("note:") == std::string::npos);
  CHECK(predict.out == predict_real.out);
  CHECK(std::count(predict.out.begin(), predict.out.end(), '\n') == 40);
}
