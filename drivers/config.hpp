// Training configuration: JSON file + `--set KEY=VALUE` overrides → plain
// structs. This is the only place that knows key names and their rules.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/dataset.hpp"
#include "core/engine.hpp"
#include "core/feature_map.hpp"
#include "core/model.hpp"
#include "kernel/kernel_trainer.hpp"
#include "core/objective_table.hpp"
#include "core/suggest.hpp"
#include "text/options.hpp"

namespace pegasos {

// class_weight: every cost 1 (not given), "balanced" (c_k = n / (K n_k)), or
// a cost per label as written in the config (the data's labels; a label the
// data lacks is an error found once the data is read).
struct BalancedClassWeights {};
using ClassCosts = std::map<std::string, double>;
using ClassWeightSetting = std::variant<std::monostate, BalancedClassWeights, ClassCosts>;

// The whole configuration, parsed and validated once (config_from_json);
// nothing reads a setting back from JSON. Every member holds its value,
// defaults included.
struct TrainConfig {
  ObjectiveRow objective = objective_row(ObjectiveId::kHinge);  // its row of the objective table
  // objective "auto": `objective` is the binary objective the settings ask for
  // (hinge, weighted_hinge with class_weight, transfer with source_model) until
  // resolve_objective() sees the training data's classes (more than two: ova).
  bool objective_auto = false;
  EngineSettings engine;       // solver, λ, steps, stopping rule, seed
  ReadOptions read;            // format (every DataFormat), CSV label column, normalize, index limit
  std::string text_field = "text";    // JSONL: the document's field
  std::string label_field = "label";  // JSONL: the label's field
  std::string positive_label;  // binary: which label is +1 ("" = the larger one)
  ClassWeightSetting class_weight;
  std::string source_model;    // transfer: path of the source model
  // transfer: the source model when the caller has already read it (it is
  // read from source_model otherwise); not a setting.
  std::shared_ptr<const Model> source;
  // Warm start: the model to continue from ("" = from zero), and the model
  // itself once read (api::train reads it before the data; not a setting).
  std::string init_model;
  std::shared_ptr<const Model> init;
  // Per-example weights: one number ≥ 0 per training row ("" = all 1).
  std::string weights_file;
  // Raw text: the featurisation settings; nothing when `features` is not
  // given (the defaults then apply, and numeric data is not an error).
  std::optional<TextOptions> features;
  KernelSettings kernel;       // objective kernel_hinge
  // Linear objectives: train on an explicit RBF feature map (RFF or Nyström,
  // core/feature_map.hpp) fitted on the training rows; nothing when not set.
  std::optional<FeatureMapSettings> kernel_approximation;
  int threads = 0;             // 0 = all cores
  bool strict = false;         // an uncertified model is an error (exit 3), not a warning
  bool keep_duals = true;      // SDCA models store their support vectors' dual variables
  // Chosen by cross-validation inside training (drivers/fit.hpp): λ
  // ("auto"; engine.lambda is a stand-in until then), calibration, the
  // stored decision threshold; cv_folds folds.
  bool lambda_auto = false;
  int cv_folds = 5;
  bool calibrate = false;
  std::optional<double> max_fpr, target_recall;
  // Every training key with its final value, as written into model files
  // and experiment results (a record: no code reads settings from it).
  nlohmann::json resolved;
};

// One accepted key: name, default, a one-line description (for --help), and
// whether a value other than the default asks for the Pegasos solver (a
// setting only Pegasos has: `solver: auto` then picks it, `sdca` is an error).
struct ConfigKey {
  std::string name;
  nlohmann::json default_value;
  std::string help;
  bool pegasos_only = false;
  // How help shows the default where the value alone would mislead: one that
  // depends on other settings, or none (null).
  std::string default_shown = {};
};
const std::vector<ConfigKey>& config_keys();
// The default as help and the manual page show it: default_shown, else the
// value ("unset" for null, integers without a decimal point).
std::string shown_default(const ConfigKey& key);
// The default value of a known key (std::logic_error for an unknown one).
const nlohmann::json& default_of(const std::string& key);

// Merge defaults ← file (if non-empty path) ← overrides ("key=value"), then
// validate everything. Throws ConfigError naming the file and key.
TrainConfig load_train_config(const std::string& path, const std::vector<std::string>& overrides);

// Validate an already merged JSON object (`origin` names it in messages).
TrainConfig config_from_json(const nlohmann::json& merged, const std::string& origin);

// A JSON file written by hand (a config, an experiment): comments allowed,
// nesting bounded (core/json_nesting.hpp). Throws ConfigError naming the file
// on invalid JSON; the caller checks the shape.
nlohmann::json read_json_file(const std::string& path);

// Parse "key=value": value is JSON when it parses as JSON, else a string.
std::pair<std::string, nlohmann::json> parse_override(const std::string& text);

// The reader settings a model stores to read data later ("data" in model
// files): format, label_column, normalize, text_field, label_field.
nlohmann::json reader_settings(const TrainConfig& config);

// A model written to `model_path` must not replace an input that only the
// settings name: transfer's source_model or a weights_file (`train --set
// source_model=m.json d.svm m.json` replaced the source with a model naming
// itself as its source). InputError, as refuse_overwriting (core/output_file).
void refuse_model_over_inputs(const TrainConfig& config, const std::string& model_path);

// closest_name(key, names): core/suggest.hpp.
// The closest valid config key to a misspelt one ("" when nothing is close).
std::string closest_key(const std::string& key);

std::string to_string(OutputIterate o);
std::string to_string(Sampling s);
std::string to_string(BiasMode b);

// The first key (a/b/0 for nested ones) whose string value holds a NUL byte
// (JSON "\u0000"), or "": such a value would be cut there where it is used as
// a path (`"init_model": "a.json\u0000x"` read a.json), so it is refused.
std::string key_with_nul_byte(const nlohmann::json& value, const std::string& key = "");

}  // namespace pegasos
