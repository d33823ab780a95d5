// The command line's habits: misspelt commands, options and settings get a
// suggestion (exit 2); nested settings take dotted --set keys; train --help
// lists every data format and objective of the tables.
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "core/dataset.hpp"
#include "core/objective_table.hpp"
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

TEST_CASE("dotted --set keys set nested settings; typos inside them get suggestions", "[cli][habits]") {
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

TEST_CASE("a misspelt option before the command gets a suggestion", "[cli][habits]") {
  TempDir dir("habits");
  const Run r = pegasos_run(dir, "--verison");
  CHECK(r.code == 2);
  CHECK(r.err.find("unknown option '--verison' for 'pegasos' (did you mean '--version'?)") != std::string::npos);
  const Run none = pegasos_run(dir, "");
  CHECK(none.code == 2);
  CHECK(none.err.find("a command is required; the commands are train, predict") != std::string::npos);
}
