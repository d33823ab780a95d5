// `pegasos inspect`, through the real binary: feature names of text models
// (vocabulary terms; hashing buckets named by the kept training terms, shared
// buckets flagged), LIBSVM indices as written, CSV header names, --top,
// --class, --json, kernel models and errors. Plus the bucket -> terms map of
// text/bucket_terms.hpp itself.
#include <stdlib.h>
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "text/bucket_terms.hpp"
#include "text/featurizer.hpp"
#include "tests/test_util.hpp"

namespace {

using Catch::Contains;
using nlohmann::json;
using testutil::read_text;
using testutil::TempDir;
using testutil::pegasos_run;
using testutil::q;
using testutil::Run;

// Spam always says "winner", ham always "meeting"; both draw the same filler
// words, so those two words must be the top positive and negative features.
std::string tiny_corpus() {
  const std::vector<std::string> filler = {"the", "a", "today", "about", "news", "team", "please", "note"};
  std::string out;
  for (int i = 0; i < 40; ++i) {
    const bool spam = i % 2 == 0;
    std::string text = spam ? "winner" : "meeting";
    for (int k = 0; k < 3; ++k) text += " " + filler[static_cast<std::size_t>((i / 2 + 3 * k) % 8)];
    out += json{{"label", spam ? "spam" : "ham"}, {"text", text}}.dump() + "\n";
  }
  return out;
}

json inspect_json(const TempDir& dir, const std::string& model, const std::string& extra = "") {
  const Run r = pegasos_run(dir, "inspect " + q(model) + " --json " + extra);
  INFO(r.err);
  REQUIRE(r.code == 0);
  return json::parse(r.out);
}

std::string train(const TempDir& dir, const std::string& data, const std::string& sets, const std::string& name) {
  const std::string model = dir.file(name);
  const Run r = pegasos_run(dir, "train -q " + sets + " " + q(data) + " " + q(model));
  INFO(r.err);
  REQUIRE(r.code == 0);
  return model;
}

}  // namespace

TEST_CASE("inspect: a text model names its top words, vocabulary and hashing", "[inspect][cli]") {
  TempDir dir("inspect");
  const std::string data = dir.write("mail.jsonl", tiny_corpus());
  for (const std::string mode : {"vocabulary", "hashing"}) {
    INFO("mode " << mode);
    const std::string model = train(dir, data, "--set 'features={\"mode\":\"" + mode + "\"}'", mode + ".json");
    const json r = inspect_json(dir, model);
    CHECK(r["kind"] == "linear");
    CHECK(r["positive_class"] == "spam");
    CHECK(r["features"]["mode"] == mode);
    REQUIRE(r["weights"].size() == 1);
    const json& w = r["weights"][0];
    CHECK(w["class"] == "spam");
    CHECK(w["negative_class"] == "ham");
    REQUIRE(!w["positive"].empty());
    REQUIRE(!w["negative"].empty());
    CHECK(w["positive"][0]["name"] == "winner");
    CHECK(w["positive"][0]["terms"] == json::array({"winner"}));
    CHECK(w["positive"][0]["weight"].get<double>() > 0);
    CHECK(w["negative"][0]["name"] == "meeting");
    CHECK(w["negative"][0]["weight"].get<double>() < 0);
    // Lists are ordered by magnitude.
    for (const char* side : {"positive", "negative"}) {
      for (std::size_t i = 1; i < w[side].size(); ++i) {
        CHECK(std::abs(w[side][i - 1]["weight"].get<double>()) >= std::abs(w[side][i]["weight"].get<double>()));
      }
    }
    // The text form says the same.
    const Run text = pegasos_run(dir, "inspect " + q(model));
    REQUIRE(text.code == 0);
    CHECK_THAT(text.out, Contains("top 20 features toward class spam (positive weights):"));
    CHECK_THAT(text.out, Contains("top 20 features toward class ham (negative weights):"));
    CHECK_THAT(text.out, Contains("  winner\n"));
    CHECK_THAT(text.out, Contains("  meeting\n"));
    CHECK_THAT(text.out, Contains("converged"));
  }
}

TEST_CASE("inspect: the JSON report has the stable keys", "[inspect][cli]") {
  TempDir dir("inspect");
  const std::string model = train(dir, dir.write("mail.jsonl", tiny_corpus()), "", "m.json");
  const json r = inspect_json(dir, model);
  for (const char* key : {"model", "kind", "objective", "classes", "outputs", "dimension", "lambda", "settings",
                          "training", "features", "bias_mode", "bias", "top", "weights"}) {
    CHECK(r.contains(key));
  }
  CHECK(r["model"] == model);
  CHECK(r["top"] == 20);
  CHECK(r["lambda"].get<double>() == 1e-4);
  CHECK(r["training"]["solver"] == "sdca");
  CHECK(r["training"]["converged"] == true);
  CHECK(r["training"]["examples"] == 40);
  CHECK(r["training"].contains("relative_gap"));
  CHECK(r["training"].contains("objective"));
  CHECK(r["bias"].size() == 1);
  const json& entry = r["weights"][0]["positive"][0];
  for (const char* key : {"feature", "name", "weight", "bucket", "bucket_weight", "terms", "more", "shared", "opposite_sign"}) {
    CHECK(entry.contains(key));
  }
  // feature = bucket + 1, as the model file numbers it.
  CHECK(entry["feature"] == entry["bucket"].get<std::uint64_t>() + 1);
}

TEST_CASE("inspect: --top bounds every list", "[inspect][cli]") {
  TempDir dir("inspect");
  const std::string model = train(dir, dir.write("mail.jsonl", tiny_corpus()), "", "m.json");
  // More than there are non-zero weights: all of them, no more (10 words).
  const json all = inspect_json(dir, model, "--top 1000");
  for (int top : {0, 1, 3}) {
    const json r = inspect_json(dir, model, "--top " + std::to_string(top));
    CHECK(r["top"] == top);
    // `top` of each sign, or all there are (the filler words' weights are
    // near 0, of either sign as the certified point falls).
    for (const char* sign : {"positive", "negative"}) {
      CHECK(r["weights"][0][sign].size() == std::min<std::size_t>(top, all["weights"][0][sign].size()));
    }
  }
  CHECK(all["weights"][0]["positive"].size() >= 3);
  CHECK(all["weights"][0]["negative"].size() >= 1);
  CHECK(all["weights"][0]["positive"].size() + all["weights"][0]["negative"].size() <= 10);
  CHECK(pegasos_run(dir, "inspect " + q(model) + " --top -1").code == 2);
  const Run summary = pegasos_run(dir, "inspect " + q(model) + " --top 0");
  CHECK(summary.code == 0);
  CHECK_THAT(summary.out, Contains("training"));
  CHECK_THAT(summary.out, !Contains("features toward"));
}

TEST_CASE("inspect: a bucket shared by several terms is reported as shared", "[inspect][cli]") {
  TempDir dir("inspect");
  // 2 buckets for 10 words: some bucket holds at least 5 of them.
  const std::string model =
      train(dir, dir.write("mail.jsonl", tiny_corpus()), "--set 'features={\"hash_bits\":1}'", "m.json");
  const json r = inspect_json(dir, model);
  bool shared_seen = false, more_seen = false;
  for (const char* side : {"positive", "negative"}) {
    for (const json& e : r["weights"][0][side]) {
      REQUIRE(e["shared"] == true);
      shared_seen = true;
      CHECK(e["terms"].size() == 3);
      const std::string name = e["name"];
      CHECK_THAT(name, Contains(" | "));
      if (e["more"].get<int>() > 0) {
        more_seen = true;
        CHECK_THAT(name, Contains("(+" + std::to_string(e["more"].get<int>()) + " more)"));
      }
    }
  }
  CHECK(shared_seen);
  CHECK(more_seen);
  const Run text = pegasos_run(dir, "inspect " + q(model));
  CHECK_THAT(text.out, Contains(" more)"));
}

TEST_CASE("inspect: keep_terms false keeps no terms, bucket numbers are shown", "[inspect][cli]") {
  TempDir dir("inspect");
  const std::string data = dir.write("mail.jsonl", tiny_corpus());
  const std::string model = train(dir, data, "--set 'features={\"keep_terms\":false}'", "m.json");
  CHECK(!json::parse(read_text(model))["features"].contains("bucket_terms"));
  const json r = inspect_json(dir, model);
  const std::string name = r["weights"][0]["positive"][0]["name"];
  CHECK(name == "bucket " + std::to_string(r["weights"][0]["positive"][0]["bucket"].get<std::uint64_t>()));
  // An unknown features key is an error naming it.
  const Run bad = pegasos_run(dir, "train -q --set 'features={\"keep_term\":false}' " + q(data) + " " + q(dir.file("x.json")));
  CHECK(bad.code == 2);
  CHECK_THAT(bad.err, Contains("keep_term"));
  const Run wrong = pegasos_run(dir, "train -q --set 'features={\"keep_terms\":3}' " + q(data) + " " + q(dir.file("x.json")));
  CHECK(wrong.code == 2);
  CHECK_THAT(wrong.err, Contains("keep_terms"));
}

TEST_CASE("inspect: LIBSVM indices are the file's, CSV columns their header names", "[inspect][cli]") {
  TempDir dir("inspect");
  // Feature 7 decides the class (+1: x7 = 1, -1: x3 = 1); the others are noise.
  std::string svm, csv = "label,a,b,c,d,e,f,g\n";
  for (int i = 0; i < 60; ++i) {
    const bool pos = i % 2 == 0;
    std::string row = pos ? "+1" : "-1";
    std::string crow = pos ? "1" : "-1";
    for (int j = 1; j <= 10; ++j) {
      double v = 0.1 * ((i * 7 + j * 3) % 5);
      if (j == 7) v = pos ? 1.0 : 0.0;
      if (j == 3) v = pos ? 0.0 : 1.0;
      if (v != 0) row += " " + std::to_string(j) + ":" + std::to_string(v);
      if (j <= 7) crow += "," + std::to_string(v);
    }
    svm += row + "\n";
    csv += crow + "\n";
  }
  const json r = inspect_json(dir, train(dir, dir.write("d.svm", svm), "", "svm.json"));
  CHECK(r["features"]["input"] == "numeric");
  CHECK(r["weights"][0]["positive"][0]["feature"] == 7);
  CHECK(r["weights"][0]["positive"][0]["name"] == "7");
  CHECK(r["weights"][0]["negative"][0]["feature"] == 3);
  const Run text = pegasos_run(dir, "inspect " + q(dir.file("svm.json")) + " --top 1");
  CHECK_THAT(text.out, Contains("  7\n"));

  const json c = inspect_json(dir, train(dir, dir.write("d.csv", csv), "", "csv.json"));
  CHECK(c["features"]["header"] == json::array({"a", "b", "c", "d", "e", "f", "g"}));
  CHECK(c["weights"][0]["positive"][0]["name"] == "g");
  CHECK(c["weights"][0]["positive"][0]["feature"] == 7);
  CHECK(c["weights"][0]["negative"][0]["name"] == "c");
}

TEST_CASE("inspect: multiclass lists per class, --class picks one, unknown classes are errors", "[inspect][cli]") {
  TempDir dir("inspect");
  std::string text;
  const std::vector<std::string> words = {"apple", "river", "guitar"};
  const std::vector<std::string> labels = {"fruit", "nature", "music"};
  for (int i = 0; i < 45; ++i) {
    const std::size_t c = static_cast<std::size_t>(i % 3);
    text += json{{"label", labels[c]}, {"text", words[c] + " the day " + (i % 2 ? "big" : "small")}}.dump() + "\n";
  }
  const std::string data = dir.write("three.jsonl", text);
  for (const std::string objective : {"ova", "multiclass_hinge"}) {
    INFO(objective);
    const std::string model = train(dir, data, "--set objective=" + objective, objective + ".json");
    const json r = inspect_json(dir, model);
    REQUIRE(r["weights"].size() == 3);
    for (const json& w : r["weights"]) {
      const std::size_t c = static_cast<std::size_t>(std::find(labels.begin(), labels.end(), w["class"].get<std::string>()) - labels.begin());
      REQUIRE(c < 3);
      CHECK(w["positive"][0]["name"] == words[c]);
      CHECK(w.contains("bias"));
    }
    const json one = inspect_json(dir, model, "--class music");
    REQUIRE(one["weights"].size() == 1);
    CHECK(one["weights"][0]["class"] == "music");
    CHECK(one["weights"][0]["positive"][0]["name"] == "guitar");
    const Run t = pegasos_run(dir, "inspect " + q(model) + " --class music --top 2");
    CHECK_THAT(t.out, Contains("top 2 features for class music (positive weights):"));
    CHECK_THAT(t.out, !Contains("class fruit"));
    const Run bad = pegasos_run(dir, "inspect " + q(model) + " --class jazz");
    CHECK(bad.code == 2);
    CHECK_THAT(bad.err, Contains("'jazz'"));
    CHECK_THAT(bad.err, Contains("'fruit', 'music', 'nature'"));
    CHECK(bad.out.empty());
  }
}

TEST_CASE("inspect: kernel models, corrupt files", "[inspect][cli]") {
  TempDir dir("inspect");
  std::string svm;
  for (int i = 0; i < 30; ++i) svm += std::string(i % 2 ? "+1" : "-1") + " 1:" + std::to_string(i % 2 ? 1.0 : -1.0) + " 2:0.5\n";
  const std::string model = train(dir, dir.write("k.svm", svm), "--set objective=kernel_hinge --set epochs=2", "k.json");
  const json r = inspect_json(dir, model);
  CHECK(r["kind"] == "kernel");
  CHECK(r["kernel"]["type"] == "rbf");
  CHECK(r["support_vectors"].get<int>() > 0);
  CHECK(!r.contains("weights"));
  const Run text = pegasos_run(dir, "inspect " + q(model));
  CHECK(text.code == 0);
  CHECK_THAT(text.out, Contains("support vectors"));
  CHECK_THAT(text.out, Contains("no per-feature weights"));
  CHECK_THAT(text.out, Contains("kernel={") && Contains("max_support_vectors="));
  // A linear model's settings leave the kernel ones out of the text (--json keeps them).
  const std::string linear = train(dir, dir.file("k.svm"), "", "l.json");
  const Run plain = pegasos_run(dir, "inspect " + q(linear));
  CHECK(plain.code == 0);
  CHECK_THAT(plain.out, Contains("lambda=") && !Contains("kernel=") && !Contains("kernel_cache_mb=") &&
                            !Contains("max_support_vectors="));
  CHECK(inspect_json(dir, linear)["settings"].contains("kernel"));

  const Run corrupt = pegasos_run(dir, "inspect " + q(dir.write("bad.json", "{\"format_version\": 1, \"kind\": \"linear\"")));
  CHECK(corrupt.code == 2);
  CHECK_THAT(corrupt.err, Contains("bad.json"));
  const Run missing = pegasos_run(dir, "inspect " + q(dir.file("none.json")));
  CHECK(missing.code == 2);
}

TEST_CASE("inspect: sections of an edited model read as missing or are bad input, never a crash", "[inspect][cli]") {
  // The text report read the selection, calibration and budget blocks with
  // const lookups: a deleted key was undefined behaviour (a segfault), a
  // wrong type an internal error (exit 1).
  TempDir dir("inspect");
  std::string svm;
  for (int i = 0; i < 60; ++i) {
    svm += std::string(i % 2 ? "+1" : "-1") + " 1:" + std::to_string((i % 2 ? 1.0 : -1.0) + 0.1 * (i % 7)) + " 2:" +
           std::to_string(0.3 * (i % 5)) + "\n";
  }
  const std::string data = dir.write("a.svm", svm);
  const json auto_model = json::parse(read_text(train(dir, data, "--set lambda=auto", "auto.json")));
  const json budget = json::parse(read_text(
      train(dir, data, "--set objective=kernel_hinge --set max_support_vectors=10", "budget.json")));
  REQUIRE(auto_model["training"]["selection"].contains("folds"));
  REQUIRE(budget["training"].contains("budget_refit"));
  json no_folds = auto_model, no_points = auto_model, auto_number = auto_model, solver_number = budget;
  no_folds["training"]["selection"].erase("folds");
  no_points["training"]["selection"]["auto"].erase("points_run");
  auto_number["training"]["selection"]["auto"] = 5;
  solver_number["training"]["budget_refit"]["solver"] = 7;
  for (const auto& [name, model] : {std::pair{"no_folds", no_folds}, {"no_points", no_points}}) {
    const Run r = pegasos_run(dir, "inspect " + q(dir.write(std::string(name) + ".json", model.dump())));
    INFO(name << ": " << r.err);
    CHECK(r.code == 0);
    CHECK_THAT(r.out, Contains("lambda auto: ") && Contains("null"));
  }
  for (const auto& [name, model] : {std::pair{"auto_number", auto_number}, {"solver_number", solver_number}}) {
    const Run r = pegasos_run(dir, "inspect " + q(dir.write(std::string(name) + ".json", model.dump())));
    INFO(name << ": " << r.err);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains(std::string(name) + ".json: a field inspect shows is missing or of the wrong type"));
  }
}

TEST_CASE("bucket terms: each bucket's most frequent terms, and how many share it", "[inspect][text]") {
  pegasos::TextOptions o;
  o.hash_bits = 1;
  const std::vector<std::string> docs = {"a b c d e f g", "a b c", "a b", "a"};
  const pegasos::BucketTerms t = pegasos::collect_bucket_terms(docs, o);
  std::uint64_t distinct = 0;
  std::set<std::string> seen;
  for (const auto& e : t.entries) {
    REQUIRE(!e.terms.empty());
    CHECK(e.terms.size() <= pegasos::kBucketTermsKept);
    CHECK(e.distinct >= e.terms.size());
    distinct += e.distinct;
    for (const std::string& term : e.terms) {
      CHECK(pegasos::hash_term(term, 1).bucket == e.bucket);
      seen.insert(term);
    }
  }
  CHECK(distinct == 7);
  CHECK(seen.count("a") == 1);  // the most frequent term is always kept first in its bucket
  for (const auto& e : t.entries) {
    if (std::find(e.terms.begin(), e.terms.end(), "a") != e.terms.end()) CHECK(e.terms.front() == "a");
  }
  // Round trip through JSON, and a term in the wrong bucket is refused.
  const json j = pegasos::bucket_terms_to_json(t);
  CHECK(pegasos::bucket_terms_to_json(pegasos::bucket_terms_from_json(j, 1, "m", "/bucket_terms")) == j);
  const json bad = {{"buckets", {1 - pegasos::hash_term("a", 1).bucket}}, {"terms", {{"a"}}}, {"distinct", {1}}};
  CHECK_THROWS_WITH(pegasos::bucket_terms_from_json(bad, 1, "m", "/bucket_terms"), Contains("does not hash to bucket"));
}
