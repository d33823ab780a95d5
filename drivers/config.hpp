// Training configuration: JSON file + `--set KEY=VALUE` overrides → plain
// structs. This is the only place that knows key names and their rules.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/dataset.hpp"
#include "core/engine.hpp"
#include "core/model.hpp"
#include "core/kernel_trainer.hpp"
#include "objectives/table.hpp"

namespace pegasos {

struct TrainConfig {
  ObjectiveRow objective = objective_row(ObjectiveId::kHinge);  // its row of the objective table
  EngineSettings engine;
  ReadOptions read;
  std::string positive_label;  // binary: which label is +1 ("" = the larger one)
  // Per-class costs: null (all 1), "balanced", or {label: cost}.
  nlohmann::json class_weight;
  std::string source_model;    // transfer: path of the source model
  // transfer: the source model when the caller has already read it (it is
  // read from source_model otherwise); not a setting.
  std::shared_ptr<const Model> source;
  nlohmann::json features;     // raw text: featurisation settings (null = defaults)
  KernelSettings kernel;       // objective kernel_hinge
  int threads = 0;             // 0 = all cores
  bool strict = false;         // an uncertified model is an error (exit 3), not a warning
  nlohmann::json resolved;     // every training key with its final value
};

// One accepted key: name, default, and a one-line description (for --help).
struct ConfigKey {
  std::string name;
  nlohmann::json default_value;
  std::string help;
};
const std::vector<ConfigKey>& config_keys();
// The default value of a known key (std::logic_error for an unknown one).
const nlohmann::json& default_of(const std::string& key);

// Merge defaults ← file (if non-empty path) ← overrides ("key=value"), then
// validate everything. Throws ConfigError naming the file and key.
TrainConfig load_train_config(const std::string& path, const std::vector<std::string>& overrides);

// Validate an already merged JSON object (`origin` names it in messages).
TrainConfig config_from_json(const nlohmann::json& merged, const std::string& origin);

// Parse "key=value": value is JSON when it parses as JSON, else a string.
std::pair<std::string, nlohmann::json> parse_override(const std::string& text);

// The reader settings a model stores to read data later ("data" in model
// files): format, label_column, normalize, text_field, label_field.
nlohmann::json reader_settings(const TrainConfig& config);

// The closest of `names` to a misspelt `key` by edit distance (the first on
// ties), or "" when none is within max(2, |key|/3) edits.
std::string closest_name(const std::string& key, const std::vector<std::string>& names);
// The closest valid config key to a misspelt one ("" when nothing is close).
std::string closest_key(const std::string& key);

std::string to_string(OutputIterate o);
std::string to_string(Sampling s);
std::string to_string(BiasMode b);

}  // namespace pegasos
