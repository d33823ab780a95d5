// The library's face (drivers/api.hpp) against the CLI that is built on it:
// a model trained through the API is the file `pegasos train` writes (timings
// aside), for every kind of objective, and training on rows already in memory
// gives the model training on the file gives.
#include <stdlib.h>
#include <sys/wait.h>

#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "core/dataset.hpp"
#include "drivers/api.hpp"
#include "drivers/config.hpp"
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
