// Training configuration: defaults, file + --set precedence, validation and
// the messages users see for mistakes.
#include <stdlib.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "core/errors.hpp"
#include "drivers/config.hpp"
#include "tests/test_util.hpp"

namespace {

using Catch::Contains;
using nlohmann::json;
using pegasos::ConfigError;
using pegasos::TrainConfig;
namespace fs = std::filesystem;
using testutil::TempDir;

TrainConfig with_sets(const std::vector<std::string>& sets) { return pegasos::load_train_config("", sets); }

}  // namespace

TEST_CASE("config: defaults", "[config]") {
  const TrainConfig c = pegasos::load_train_config("", {});
  const pegasos::EngineSettings engine_defaults;
  const pegasos::ReadOptions read_defaults;
  CHECK(c.objective == "hinge");
  CHECK(c.engine.lambda == 1e-4);
  CHECK(c.engine.epochs == 0.0);
  CHECK(c.engine.iterations == 0);
  CHECK(c.engine.batch_size == 1);
  CHECK(c.engine.projection);
  CHECK(c.engine.output == pegasos::OutputIterate::kAverage);
  CHECK(c.engine.average_gamma == 10.0);
  CHECK(c.engine.sampling == pegasos::Sampling::kPermutation);
  CHECK(c.engine.bias == pegasos::BiasMode::kFeature);
  CHECK(c.engine.seed == 42);
  CHECK(c.engine.tolerance == 1e-3);
  CHECK(c.engine.max_epochs == 0);  // sized from the problem
  CHECK(c.threads == 0);
  CHECK(c.positive_label.empty());
  CHECK(c.read.format == pegasos::DataFormat::kAuto);
  CHECK(c.read.label_column == 0);
  CHECK(c.read.label_column_name.empty());
  CHECK(c.read.max_feature_index == (std::uint64_t{1} << 31));
  CHECK(c.read.require_labels);

  // The config defaults and the library defaults agree.
  CHECK(c.engine.lambda == engine_defaults.lambda);
  CHECK(c.engine.batch_size == engine_defaults.batch_size);
  CHECK(c.engine.projection == engine_defaults.projection);
  CHECK(c.engine.output == engine_defaults.output);
  CHECK(c.engine.average_gamma == engine_defaults.average_gamma);
  CHECK(c.engine.sampling == engine_defaults.sampling);
  CHECK(c.engine.bias == engine_defaults.bias);
  CHECK(c.engine.seed == engine_defaults.seed);
  CHECK(c.engine.tolerance == engine_defaults.tolerance);
  CHECK(c.engine.max_epochs == engine_defaults.max_epochs);
  CHECK(c.read.max_feature_index == read_defaults.max_feature_index);

  // `resolved` lists every key with its default, and nothing else, except
  // init_model and kernel_approximation, echoed only when given, keep_duals, only when false, and the
  // settings of what training chooses by cross-validation (cv_folds,
  // calibrate, max_fpr, target_recall), only when set (cold models' settings
  // stay as they were); weights_file is never echoed (a run input, like the
  // data's path: the training block notes a weighted run); multiclass (a
  // kernel setting), only when ovo; budget_maintenance and budget_refit, only with a budget.
  const std::vector<std::string> when_set = {"init_model",   "keep_duals",    "cv_folds",     "calibrate",
                                             "max_fpr",      "target_recall", "weights_file", "kernel_approximation",
                                             "multiclass",   "budget_maintenance", "budget_refit", "warm_schedule"};
  REQUIRE(c.resolved.is_object());
  CHECK(c.resolved.size() + when_set.size() == pegasos::config_keys().size());
  for (const auto& key : when_set) CHECK_FALSE(c.resolved.contains(key));
  CHECK(pegasos::config_from_json({{"calibrate", true}, {"cv_folds", 3}}, "test").resolved["cv_folds"] == 3);
  CHECK_FALSE(c.resolved.contains("init_model"));
  CHECK_FALSE(c.resolved.contains("keep_duals"));
  CHECK_FALSE(pegasos::config_from_json({{"weights_file", "w.txt"}}, "test").resolved.contains("weights_file"));
  CHECK(c.keep_duals);
  CHECK(pegasos::config_from_json({{"keep_duals", false}}, "test").resolved["keep_duals"] == false);
  for (const auto& k : pegasos::config_keys()) {
    CAPTURE(k.name);
    if (std::find(when_set.begin(), when_set.end(), k.name) != when_set.end()) continue;
    REQUIRE(c.resolved.contains(k.name));
    CHECK(c.resolved[k.name] == k.default_value);
    CHECK_FALSE(k.help.empty());
  }
  CHECK(pegasos::to_string(c.engine.output) == "average");
  CHECK(pegasos::to_string(c.engine.sampling) == "permutation");
  CHECK(pegasos::to_string(c.engine.bias) == "feature");
}

TEST_CASE("config: file values, then --set overrides (--set wins, last --set wins)", "[config]") {
  TempDir dir;
  const std::string path = dir.write("c.json",
                                     "// comments are allowed\n"
                                     "{ \"lambda\": 0.01, \"epochs\": 3, \"seed\": 7, \"sampling\": \"uniform\",\n"
                                     "  \"label_column\": \"y\", \"projection\": false }\n");
  const TrainConfig file_only = pegasos::load_train_config(path, {});
  CHECK(file_only.engine.lambda == 0.01);
  CHECK(file_only.engine.epochs == 3.0);
  CHECK(file_only.engine.seed == 7);
  CHECK(file_only.engine.sampling == pegasos::Sampling::kUniform);
  CHECK(file_only.read.label_column_name == "y");
  CHECK_FALSE(file_only.engine.projection);
  CHECK(file_only.engine.batch_size == 1);  // not in the file: default

  const TrainConfig c = pegasos::load_train_config(
      path, {"lambda=0.5", "seed=9", "seed=11", "batch_size=8", "projection=true", "label_column=-1"});
  CHECK(c.engine.lambda == 0.5);
  CHECK(c.engine.seed == 11);
  CHECK(c.engine.epochs == 3.0);  // from the file
  CHECK(c.engine.sampling == pegasos::Sampling::kUniform);
  CHECK(c.engine.batch_size == 8);
  CHECK(c.engine.projection);
  CHECK(c.read.label_column == -1);
  CHECK(c.read.label_column_name.empty());
  CHECK(c.resolved["lambda"] == 0.5);
  CHECK(c.resolved["seed"] == 11);
  CHECK(c.resolved["epochs"] == 3);

  // An override can fix an invalid file value, and an invalid override names --set.
  const std::string bad = dir.write("bad.json", "{\"lambda\": -1}");
  CHECK_THROWS_WITH(pegasos::load_train_config(bad, {}), Contains(bad) && Contains("lambda: must be > 0"));
  CHECK(pegasos::load_train_config(bad, {"lambda=2"}).engine.lambda == 2.0);
  CHECK_THROWS_WITH(pegasos::load_train_config(path, {"lambda=0"}),
                    Contains(path + " + --set") && Contains("lambda: must be > 0"));
  CHECK_THROWS_WITH(with_sets({"lambda=0"}), Contains("--set: lambda: must be > 0"));
}

TEST_CASE("config: parse_override", "[config]") {
  using P = std::pair<std::string, json>;
  CHECK(pegasos::parse_override("lambda=0.5") == P{"lambda", 0.5});
  CHECK(pegasos::parse_override("seed=12") == P{"seed", 12});
  CHECK(pegasos::parse_override("label_column=-1") == P{"label_column", -1});
  CHECK(pegasos::parse_override("projection=false") == P{"projection", false});
  CHECK(pegasos::parse_override("projection=true") == P{"projection", true});
  CHECK(pegasos::parse_override("output=last") == P{"output", "last"});          // bare word: string
  CHECK(pegasos::parse_override("positive_label=\"1\"") == P{"positive_label", "1"});  // quoted JSON string
  CHECK(pegasos::parse_override("label_column=my label") == P{"label_column", "my label"});
  CHECK(pegasos::parse_override("a=b=c") == P{"a", "b=c"});
  CHECK(pegasos::parse_override("x=") == P{"x", ""});
  for (const char* dotted : {".lambda=5", "lambda.=5", "features..mode=x"}) {
    CHECK_THROWS_WITH(pegasos::parse_override(dotted), Contains("an empty setting name in a dotted key"));
  }
  CHECK(pegasos::parse_override("features.mode=x") == P{"features.mode", "x"});
  CHECK(pegasos::parse_override("lambda= 1e-3 ") == P{"lambda", 1e-3});
  const auto obj = pegasos::parse_override("k={\"a\": [1, 2], \"b\": {\"c\": null}}");
  CHECK(obj.first == "k");
  CHECK(obj.second == json{{"a", {1, 2}}, {"b", {{"c", nullptr}}}});
  CHECK(pegasos::parse_override("k=[1,2]").second == json::array({1, 2}));
  CHECK_THROWS_AS(pegasos::parse_override("lambda"), ConfigError);
  CHECK_THROWS_WITH(pegasos::parse_override("lambda"), Contains("lambda") && Contains("expected KEY=VALUE"));
  CHECK_THROWS_WITH(pegasos::parse_override("=5"), Contains("expected KEY=VALUE"));
  // Meant as JSON but malformed (or a number JSON cannot hold): the JSON error, not a bare word.
  CHECK_THROWS_WITH(pegasos::parse_override("kernel={\"type\":\"rbf\",}"), Contains("--set kernel: invalid JSON value"));
  CHECK_THROWS_WITH(pegasos::parse_override("class_weight={\"1\":1,\"-1\":1"), Contains("--set class_weight: invalid JSON value"));
  CHECK_THROWS_WITH(pegasos::parse_override("class_weight={\"1\":1e400}"), Contains("invalid JSON value"));
  CHECK_THROWS_WITH(pegasos::parse_override("k=[1,"), Contains("invalid JSON value"));
  CHECK_THROWS_AS(pegasos::parse_override("positive_label=\"spam"), ConfigError);
  CHECK(pegasos::parse_override("label_column=a[1]") == P{"label_column", "a[1]"});  // not JSON-looking: a word
}

TEST_CASE("config: unknown keys name the key and suggest the closest", "[config]") {
  CHECK(pegasos::closest_key("lamda") == "lambda");
  CHECK(pegasos::closest_key("batchsize") == "batch_size");
  CHECK(pegasos::closest_key("epoch") == "epochs");
  CHECK(pegasos::closest_key("thread") == "threads");
  CHECK(pegasos::closest_key("completely_unrelated_words") == "");

  CHECK_THROWS_AS(with_sets({"lamda=0.1"}), ConfigError);
  CHECK_THROWS_WITH(with_sets({"lamda=0.1"}), Contains("lamda") && Contains("unknown setting") &&
                                                 Contains("did you mean 'lambda'?"));
  CHECK_THROWS_WITH(with_sets({"completely_unrelated_words=1"}),
                    Contains("completely_unrelated_words: unknown setting") && !Contains("did you mean"));
  TempDir dir;
  const std::string path = dir.write("c.json", "{\"lambda\": 0.1, \"itrations\": 5}");
  CHECK_THROWS_WITH(pegasos::load_train_config(path, {}),
                    Contains(path) && Contains("itrations") && Contains("did you mean 'iterations'?"));
  // Nested keys of kernel and kernel_approximation get the suggestion too.
  CHECK_THROWS_WITH(with_sets({"objective=kernel_hinge", "kernel.gama=1"}),
                    Contains("kernel/gama") && Contains("did you mean 'gamma'?"));
  CHECK_THROWS_WITH(with_sets({"kernel_approximation={\"type\": \"rff\", \"componets\": 10}"}),
                    Contains("componets") && Contains("did you mean 'components'?"));
}

TEST_CASE("config: a string holding a NUL byte is refused naming its key (a path would be cut there)", "[config]") {
  using nlohmann::json;
  const std::string nul("a.json\0junk", 11);
  CHECK_THROWS_WITH(pegasos::config_from_json({{"init_model", nul}}, "c.json"),
                    Contains("c.json: init_model: contains a NUL byte"));
  CHECK_THROWS_WITH(pegasos::config_from_json({{"features", {{"text_field", nul}}}}, "c.json"),
                    Contains("c.json: features/text_field: contains a NUL byte"));
  CHECK(pegasos::key_with_nul_byte(json{{"a", {1, {{"b", nul}}}}}) == "a/1/b");
  CHECK(pegasos::key_with_nul_byte(json{{"a", {1, {{"b", "fine"}}}}}).empty());
}

TEST_CASE("config: wrong types", "[config]") {
  struct Case {
    json config;
    std::string what;
  };
  const Case c = GENERATE(values<Case>({
      {{{"lambda", "x"}}, "lambda: expected a number, found string"},
      {{{"lambda", nullptr}}, "lambda: expected a number"},
      {{{"batch_size", 1.5}}, "batch_size: expected an integer, found 1.5"},
      {{{"iterations", "100"}}, "iterations: expected a number"},
      {{{"seed", 1.25}}, "seed: expected an integer"},
      {{{"projection", 1}}, "projection: expected true or false, found 1"},
      {{{"projection", "yes"}}, "projection: expected true or false"},
      {{{"output", 3}}, "output: expected one of last, average, random"},
      {{{"sampling", "shuffled"}}, "sampling: 'shuffled' is not one of uniform, permutation, sequential, balanced"},
      {{{"bias", true}}, "bias: expected one of none, feature, unregularized"},
      {{{"objective", "logistic"}}, "objective: 'logistic' is not one of auto, hinge"},
      {{{"format", "arff"}}, "format: 'arff' is not one of auto, libsvm, csv"},
      {{{"label_column", 1.5}}, "label_column: expected an integer"},
      {{{"label_column", ""}}, "label_column: must not be empty"},
      {{{"positive_label", true}}, "positive_label: expected a string"},
      {{{"max_feature_index", 0}}, "max_feature_index: must be between 1 and 4294967294"},
      {{{"max_feature_index", 4294967295.0}}, "max_feature_index: must be between 1 and 4294967294"},
      {{{"batch_size", 0}}, "batch_size: must be between 1 and 1000000"},
      {{{"threads", -1}}, "threads: must be between 0"},
      {{{"tolerance", 0}}, "tolerance: must be > 0"},
      {{{"tolerance", 1}}, "tolerance: must be > 0 and < 1"},
      {{{"tolerance", 1e10}}, "tolerance: must be > 0 and < 1"},
      {{{"max_epochs", -1}}, "max_epochs: must be between 0 (sized from the problem) and 1000000"},
      {{{"average_gamma", -1}}, "average_gamma: must be >= 0"},
      {{{"epochs", -2}}, "epochs: must be between 0 (automatic) and 1000000"},
      {{{"iterations", -5}}, "iterations: must be between 0 and 2^50"},
      {{{"epochs", 1e19}}, "epochs: must be between 0 (automatic) and 1000000"},
      {{{"iterations", 2000000000000000}}, "iterations: must be between 0 and 2^50"},
      {{{"seed", -1}}, "seed: must be >= 0"},
      {{{"lambda", 0}}, "lambda: must be > 0"},
      {{{"lambda", -1e-3}}, "lambda: must be > 0"},
      {{{"lambda", "Auto"}}, "lambda: expected a number, found string \"Auto\" (or \"auto\""},
      {{{"cv_folds", 1}}, "cv_folds: must be between 2 and 100"},
      {{{"calibrate", "yes"}}, "calibrate: expected true or false"},
      {{{"max_fpr", 0}}, "max_fpr: must be in (0, 1)"},
      {{{"max_fpr", 1}}, "max_fpr: must be in (0, 1)"},
      {{{"target_recall", 1.5}}, "target_recall: must be in (0, 1]"},
      {{{"max_fpr", 0.01}, {"target_recall", 0.9}}, "target_recall: set either max_fpr or target_recall, not both"},
      {{{"objective", "ova"}, {"max_fpr", 0.01}}, "max_fpr: a decision threshold is for binary objectives"},
      {{{"iterations", 100}, {"epochs", 2}}, "iterations: set either iterations or epochs, not both"},
      {{{"output", "random"}}, "output: 'random' picks an iterate uniformly from 1..T, so it needs iterations or epochs"},
  }));
  CAPTURE(c.config.dump());
  CHECK_THROWS_AS(pegasos::config_from_json(c.config, "cfg.json"), ConfigError);
  CHECK_THROWS_WITH(pegasos::config_from_json(c.config, "cfg.json"), Contains("cfg.json: " + c.what));
}

TEST_CASE("config: values that are valid", "[config]") {
  CHECK(with_sets({"output=random", "epochs=2"}).engine.output == pegasos::OutputIterate::kRandom);
  CHECK(with_sets({"output=random", "iterations=1000"}).engine.iterations == 1000);
  CHECK(with_sets({"epochs=0.5"}).engine.epochs == 0.5);
  CHECK(with_sets({"iterations=100", "epochs=0"}).engine.iterations == 100);
  CHECK(with_sets({"bias=none"}).engine.bias == pegasos::BiasMode::kNone);
  CHECK(with_sets({"bias=unregularized"}).engine.bias == pegasos::BiasMode::kUnregularized);
  CHECK(with_sets({"sampling=balanced"}).engine.sampling == pegasos::Sampling::kBalanced);
  CHECK(with_sets({"format=csv"}).read.format == pegasos::DataFormat::kCsv);
  CHECK(with_sets({"max_feature_index=4294967294"}).read.max_feature_index == 4294967294u);
  CHECK(with_sets({"threads=3"}).threads == 3);
  CHECK(with_sets({"batch_size=64.0"}).engine.batch_size == 64);  // an integral number
  CHECK(with_sets({"positive_label=spam"}).positive_label == "spam");
  CHECK(with_sets({"positive_label=\"1\""}).positive_label == "1");
  // Numeric labels are the common case: `--set positive_label=1` must work.
  CHECK(with_sets({"positive_label=1"}).positive_label == "1");
  CHECK(with_sets({"positive_label=-1"}).positive_label == "-1");
}

TEST_CASE("config: invalid files name the file", "[config]") {
  TempDir dir;
  const std::string broken = dir.write("broken.json", "{ \"lambda\": 0.1,\n  epochs: 3 }\n");
  CHECK_THROWS_AS(pegasos::load_train_config(broken, {}), ConfigError);
  CHECK_THROWS_WITH(pegasos::load_train_config(broken, {}), Contains(broken) && Contains("invalid JSON"));
  const std::string array = dir.write("array.json", "[1, 2]");
  CHECK_THROWS_WITH(pegasos::load_train_config(array, {}), Contains(array) && Contains("JSON object"));
  const std::string empty = dir.write("empty.json", "");
  CHECK_THROWS_WITH(pegasos::load_train_config(empty, {}), Contains(empty) && Contains("invalid JSON"));
  // A number too large for a double is a JSON error of the file, not an internal one.
  const std::string huge = dir.write("huge.json", "{\"lambda\": 1e999}");
  CHECK_THROWS_AS(pegasos::load_train_config(huge, {}), ConfigError);
  CHECK_THROWS_WITH(pegasos::load_train_config(huge, {}), Contains(huge));
  CHECK_THROWS_AS(pegasos::load_train_config((fs::temp_directory_path() / "pegasos-no-such-config.json").string(), {}),
                  pegasos::InputError);
  CHECK_THROWS_WITH(pegasos::config_from_json(json::array(), "x"), Contains("x: a configuration is a JSON object"));
  // Nesting deep enough to crash a recursive printer or copy is refused before
  // parsing, naming the file or the --set key (exit 2); 256 levels are fine.
  const std::string deep = dir.write("deep.json", "{\"lambda\": " + std::string(100000, '[') + std::string(100000, ']') + "}");
  CHECK_THROWS_AS(pegasos::load_train_config(deep, {}), ConfigError);
  CHECK_THROWS_WITH(pegasos::load_train_config(deep, {}), Contains(deep) && Contains("nested deeper than 256"));
  CHECK_THROWS_WITH(pegasos::parse_override("lambda=" + std::string(300, '[') + std::string(300, ']')),
                    Contains("--set lambda") && Contains("nested deeper"));
  CHECK(pegasos::parse_override("k=" + std::string(255, '[') + std::string(255, ']')).second.is_array());
  CHECK(pegasos::parse_override("k=\"" + std::string(1000, '[') + "\"").second.is_string());  // inside a string: no nesting
}
