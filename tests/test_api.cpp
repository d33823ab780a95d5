// The library's face (drivers/api.hpp) against the CLI that is built on it:
// a model trained through the API is the file `pegasos train` writes (timings
// aside), for every kind of objective, and training on rows already in memory
// gives the model training on the file gives.
#include <stdlib.h>
#include <sys/wait.h>

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "core/dataset.hpp"
#include "drivers/api.hpp"
#include "drivers/config.hpp"
#include "text/featurizer.hpp"
#include "tests/fixtures.hpp"
#include "tests/test_util.hpp"

namespace {

using nlohmann::json;
using testutil::TempDir;

// The model file without the fields that hold times.
json without_timings(const std::string& path) {
  json j = json::parse(testutil::read_text(path));
  std::vector<json*> stack{&j};
  while (!stack.empty()) {
    json* node = stack.back();
    stack.pop_back();
    if (!node->is_object()) continue;
    for (auto it = node->begin(); it != node->end();) {
      if (it.key().find("seconds") != std::string::npos) {
        it = node->erase(it);
      } else {
        stack.push_back(&it.value());
        ++it;
      }
    }
  }
  return j;
}

}  // namespace

TEST_CASE("api::train writes the model `pegasos train` writes", "[api]") {
  const TempDir dir("api");
  const bool multiclass = GENERATE(false, true);
  const std::string objective = multiclass ? GENERATE(std::string("ova"), std::string("multiclass_hinge"))
                                           : GENERATE(std::string("hinge"), std::string("weighted_hinge"));
  CAPTURE(objective);
  const pegasos::Dataset ds = multiclass ? fixtures::blobs(240, 6, 3, 7, 0.8) : fixtures::gaussian(240, 8, 9, 0.7);
  const std::string data = dir.write("train.svm", fixtures::libsvm_text(ds));
  std::vector<std::string> sets{"objective=" + objective, "lambda=0.003"};
  if (objective == "weighted_hinge") sets.push_back("class_weight=\"balanced\"");
  std::string args;
  for (const std::string& s : sets) args += " --set '" + s + "'";
  const std::string cli_model = dir.file("cli.json");
  const std::string command =
      std::string("'") + PEGASOS_BINARY + "' train --quiet" + args + " '" + data + "' '" + cli_model + "' 2>/dev/null";
  REQUIRE(std::system(command.c_str()) == 0);

  const pegasos::api::Settings settings = pegasos::api::Settings::load("", sets);
  const pegasos::api::Trained trained = pegasos::api::train(settings, data);
  CHECK(trained.examples == ds.size());
  const std::string api_model = dir.file("api.json");
  trained.model.save(api_model);
  CHECK(without_timings(api_model) == without_timings(cli_model));

  // The same rows from memory: the same weights and training summary.
  pegasos::Dataset rows = pegasos::api::Model::load(api_model).read(data, true);
  const pegasos::api::Model in_memory = pegasos::api::train(settings, rows);
  const std::string memory_model = dir.file("memory.json");
  in_memory.save(memory_model);
  json a = without_timings(memory_model), b = without_timings(api_model);
  CHECK(a["weights"] == b["weights"]);
  CHECK(a["bias"] == b["bias"]);
  CHECK(a["training"] == b["training"]);
  // Scores through the API are the model's: its predictions match its own classes.
  const std::vector<double> scores = in_memory.scores(rows);
  REQUIRE(scores.size() == rows.size() * static_cast<std::size_t>(in_memory.outputs()));
  std::size_t right = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    right += in_memory.predict_class(&scores[i * static_cast<std::size_t>(in_memory.outputs())]) == rows.labels[i];
  }
  CHECK(right > rows.size() / 2);
}

TEST_CASE("api::Settings rejects what `--set` rejects, before any data", "[api]") {
  CHECK_THROWS_WITH(pegasos::api::Settings::load("", {"lamda=0.1"}), Catch::Contains("lambda"));
  CHECK_THROWS(pegasos::api::Settings::load("", {"lambda=-1"}));
}

// objective auto (the default) is the objective the data and settings call for,
// and its model is byte for byte the model trained with that objective named.
TEST_CASE("objective auto trains what its data calls for, as if named", "[api]") {
  const TempDir dir("api_auto");
  struct Case {
    bool multiclass;
    std::vector<std::string> extra;
    std::string becomes;
  };
  const Case c = GENERATE(Case{false, {}, "hinge"}, Case{true, {}, "ova"},
                          Case{false, {"class_weight=\"balanced\""}, "weighted_hinge"},
                          Case{true, {"class_weight=\"balanced\""}, "ova"});
  CAPTURE(c.becomes, c.multiclass);
  const pegasos::Dataset ds = c.multiclass ? fixtures::blobs(200, 5, 4, 3, 0.9) : fixtures::gaussian(200, 6, 5, 0.7);
  const std::string data = dir.write("train.svm", fixtures::libsvm_text(ds));
  std::vector<std::string> sets = c.extra;
  sets.push_back("lambda=0.01");
  const pegasos::api::Settings automatic = pegasos::api::Settings::load("", sets);
  CHECK(automatic.config().objective_auto);
  sets.push_back("objective=" + c.becomes);
  const pegasos::api::Settings named = pegasos::api::Settings::load("", sets);
  const std::string a = dir.file("auto.json"), n = dir.file("named.json");
  pegasos::api::train(automatic, data).model.save(a);
  pegasos::api::train(named, data).model.save(n);
  const json ja = without_timings(a), jn = without_timings(n);
  CHECK(ja["objective"] == c.becomes);
  CHECK(ja["settings"]["objective"] == c.becomes);
  CHECK(ja == jn);
}

TEST_CASE("objective auto on multiclass data refuses what multiclass objectives refuse", "[api]") {
  const TempDir dir("api_auto_bad");
  const std::string data = dir.write("train.svm", fixtures::libsvm_text(fixtures::blobs(90, 4, 3, 2, 0.9)));
  const pegasos::api::Settings threshold = pegasos::api::Settings::load("", {"max_fpr=0.01"});
  CHECK_THROWS_WITH(pegasos::api::train(threshold, data), Catch::Contains("max_fpr") && Catch::Contains("3 classes"));
  const pegasos::api::Settings positive = pegasos::api::Settings::load("", {"positive_label=1"});
  CHECK_THROWS_WITH(pegasos::api::train(positive, data), Catch::Contains("positive_label"));
}

// Text models from parts (the Python door's Pipeline(TextVectorizer,
// PegasosClassifier)): a numeric model trained in memory on a featurizer's
// rows, joined with the featurizer, is the text model trained on the corpus.
TEST_CASE("api::Model::with_featurizer makes the text model `train` makes on the corpus", "[api][text]") {
  const TempDir dir("api_text");
  std::string corpus;
  const char* spam[] = {"cheap pills buy now", "free offer click here", "win money now", "cheap watches free"};
  const char* ham[] = {"meeting moved to tuesday", "agenda for the project", "lunch on friday", "release notes"};
  for (int r = 0; r < 5; ++r) {
    for (int i = 0; i < 4; ++i) {
      corpus += json{{"text", std::string(spam[i]) + " " + std::to_string(r)}, {"label", "spam"}}.dump() + "\n";
      corpus += json{{"text", std::string(ham[i]) + " " + std::to_string(r)}, {"label", "ham"}}.dump() + "\n";
    }
  }
  const std::string data = dir.write("train.jsonl", corpus);
  const std::string setting = GENERATE(std::string("null"), std::string(R"({"hash_bits":12,"word_ngrams":2})"),
                                       std::string(R"({"mode":"vocabulary","idf":false})"));
  CAPTURE(setting);
  const std::vector<std::string> sets{"lambda=0.01", "seed=3"};
  std::vector<std::string> with_features = sets;
  with_features.push_back("features=" + setting);
  const pegasos::api::Model text = pegasos::api::train(pegasos::api::Settings::load("", with_features), data).model;
  REQUIRE_FALSE(text.featurizer_json().empty());
  const pegasos::TextFeaturizer featurizer =
      pegasos::TextFeaturizer::from_json(json::parse(text.featurizer_json()), "model");

  // Taken apart and joined again: the same file.
  const pegasos::api::Model numeric = text.without_featurizer();
  CHECK(numeric.featurizer_json().empty());
  CHECK(numeric.with_featurizer(featurizer, setting).to_json() == text.to_json());

  // Trained in memory on the featurizer's rows, without the features setting, then joined.
  pegasos::Dataset rows = text.read(data, true);
  const pegasos::api::Model in_memory = pegasos::api::train(pegasos::api::Settings::load("", sets), std::move(rows));
  CHECK(in_memory.featurizer_json().empty());
  const pegasos::api::Model joined = in_memory.with_featurizer(featurizer, setting);
  CHECK(joined.to_json() == text.to_json());
  CHECK(json::parse(joined.to_json())["settings"]["features"] == json::parse(setting));

  // Parts that do not fit.
  CHECK_THROWS_WITH(text.with_featurizer(featurizer, setting), Catch::Contains("holds a text featurizer already"));
  CHECK_THROWS_WITH(in_memory.with_featurizer(featurizer, R"({"lowercase":false})"),
                    Catch::Contains("not the text featurizer's options"));
  CHECK_THROWS_WITH(in_memory.with_featurizer(featurizer, "{oops"), Catch::Contains("not JSON"));
  CHECK_THROWS_WITH(in_memory.with_featurizer(featurizer, R"({"hash_bit":12})"), Catch::Contains("hash_bit"));
  CHECK_THROWS_WITH(in_memory.with_featurizer(pegasos::TextFeaturizer(featurizer.options()), setting),
                    Catch::Contains("not fitted"));  // idf or a vocabulary to learn
  pegasos::TextOptions other_options;
  other_options.hash_bits = featurizer.dimension() == 4096 ? 13 : 12;
  other_options.idf = false;
  const pegasos::TextFeaturizer other(other_options);  // hashing without idf: nothing to fit
  CHECK_THROWS_WITH(in_memory.with_featurizer(other, "null"), Catch::Contains("not trained on this featurizer's rows"));
}

TEST_CASE("api::Model::with_featurizer refuses kernel models and numeric reader settings", "[api][text]") {
  pegasos::TextOptions options;
  options.hash_bits = 3;
  options.idf = false;
  options.keep_terms = false;
  const pegasos::TextFeaturizer featurizer(options);  // 8 buckets, nothing to fit
  pegasos::Dataset rows = fixtures::gaussian(60, 8, 4, 0.7);
  const auto libsvm = pegasos::api::Settings::load("", {"lambda=0.01", "format=libsvm"});
  const pegasos::api::Model numeric = pegasos::api::train(libsvm, rows);
  CHECK_THROWS_WITH(numeric.with_featurizer(featurizer, R"({"hash_bits":3,"idf":false,"keep_terms":false})"),
                    Catch::Contains("format") && Catch::Contains("libsvm"));
  const auto kernel = pegasos::api::Settings::load("", {"objective=kernel_hinge", "lambda=0.01"});
  const pegasos::api::Model kernel_model = pegasos::api::train(kernel, std::move(rows));
  CHECK_THROWS_WITH(kernel_model.with_featurizer(featurizer, "null"), Catch::Contains("kernel model"));
}

// The epochs are timed from the start of the fit they belong to
// (EpochInfo::seconds, drivers/fit.cpp), not from the call: with lambda
// "auto" the cross-validation's 5 folds of each lambda value run first, and
// the progress line had counted them as the first epoch's time.
TEST_CASE("api::train: the epochs' seconds count from the fit, after a lambda auto search", "[api]") {
  const pegasos::Dataset ds = fixtures::gaussian(600, 20, 11, 0.7);
  const bool automatic = GENERATE(false, true);
  CAPTURE(automatic);
  const pegasos::api::Settings settings = pegasos::api::Settings::load(
      "", {"solver=pegasos", "epochs=3", automatic ? "lambda=auto" : "lambda=0.001"});
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::pair<double, double>> seen;  // (the fit's seconds, seconds since the call)
  pegasos::api::train(settings, ds, [&](const pegasos::EpochInfo& e) {
    seen.emplace_back(e.seconds, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    return true;
  });
  REQUIRE(seen.size() == 3);
  for (const auto& [fit, call] : seen) {
    CHECK(fit >= 0.0);
    CHECK(fit <= call);
  }
  // lambda auto: dozens of fold fits before the final fit's first epoch.
  if (automatic) CHECK(seen.front().first < 0.5 * seen.front().second);
}
