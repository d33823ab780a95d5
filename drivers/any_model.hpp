// A trained model of either kind, linear (core/model) or kernel
// (kernel/kernel_model), behind one interface: what `pegasos predict / eval`
// and the experiment runner need without caring which kind they hold.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/dataset.hpp"
#include "core/engine.hpp"
#include "kernel/kernel_model.hpp"
#include "core/model.hpp"
#include "drivers/config.hpp"
#include "io/json_checks.hpp"

namespace pegasos {

struct AnyModel {
  std::optional<Model> linear;
  std::optional<KernelModel> kernel;
  std::string source = "model";  // the model file, for messages

  // Read for scoring only (predict, eval, featurize): without the dual
  // variables and the bucket -> terms map (json_checks::ModelUse), so it
  // cannot be saved or warm-started from.
  bool scoring_only = false;

  // Reads a model file of either kind (by its "kind" field). Throws InputError.
  static AnyModel load(const std::string& path, json_checks::ModelUse use = json_checks::ModelUse::kAll);
  // The same from the file's contents; `name` is used in messages.
  static AnyModel parse(std::string_view text, const std::string& name,
                        json_checks::ModelUse use = json_checks::ModelUse::kAll);

  // A linear model's "features" (its text featurizer) as JSON, null for
  // numeric and kernel models: the file's own JSON where it still matches
  // linear->features, else parsed from that text (once).
  const nlohmann::json& features() const;
  // features() moved out where this model holds the only reference to it (a
  // warm start's old model, whose featurizer the new one keeps: its parsed
  // JSON is 2 MB of bucket terms for hashed mail), else a copy.
  nlohmann::json take_features();

  // The part every model kind has (objective, classes, outputs, calibration, threshold).
  const ModelHeader& header() const;
  ModelHeader& header();
  const std::vector<std::string>& classes() const;
  int outputs() const;
  bool binary() const { return outputs() == 1; }
  double lambda() const;
  // The "training" block (a copy: kernel models hold it typed).
  nlohmann::json training() const;
  int predict_class(const double* scores) const;
  // Data to apply the model to, read with the model's reader settings.
  Dataset read(const std::string& path, bool require_labels) const;
  // Scores of every row (size × outputs, row-major), in parallel; the same
  // values for any thread count.
  std::vector<double> scores(const Dataset& data) const;
  // The model's training objective on `data` (labels in the model's classes).
  double objective(const Dataset& data) const;
  // The rows as a linear model's weights read them, through its feature map
  // (kernel_approximation); nothing for a model without one (its weights read
  // `data` itself) and for kernel models. scores() and objective() map on
  // every call; eval maps once (for 10k Fashion-MNIST rows and 2000 random
  // Fourier features, 0.85 s) and hands the rows to both with `mapped`.
  std::optional<Dataset> map_features(const Dataset& data) const;
  std::vector<double> scores(const Dataset& data, const std::optional<Dataset>& mapped) const;
  double objective(const Dataset& data, const std::optional<Dataset>& mapped) const;
  std::string to_json() const;
  void save(const std::string& path) const;  // atomic
  // The features the model reads of a numeric row: a feature at or beyond
  // this index (0-based) is ignored, as LIBLINEAR ignores it. 0 for a raw-text
  // model (its featurizer makes the rows).
  std::uint32_t input_dimension() const;

 private:
  // The text of linear->features and its JSON (features()).
  // (Not const: take_features() moves the JSON out where no copy shares it.)
  mutable std::shared_ptr<std::pair<std::string, nlohmann::json>> features_json_;
};

// Throws ConfigError when the configured objective cannot take the data:
// kernel_hinge needs numeric features, not raw text.
void check_input_kind(const TrainConfig& config, bool raw_text);

// kernel_approximation (config.kernel_approximation): the feature map —
// fitted on `data` with the stream derived from the seed, or, for a warm
// start, the old model's (its settings must match) — and `data` replaced by
// its mapped rows. Null, and `data` untouched, without the setting (a warm
// start from a model that has a map is then an error). Throws ConfigError
// naming kernel_approximation / init_model for a mismatch.
// `seconds` (optional) receives the time spent fitting and mapping.
struct MapSeconds {
  double fit = 0.0, map = 0.0;
};
std::shared_ptr<const FeatureMap> approximate_kernel(const TrainConfig& config, Dataset& data, MapSeconds* seconds = nullptr);
// The trained model (its weights in the map's space) made to map its input.
void attach_feature_map(AnyModel& model, std::shared_ptr<const FeatureMap> map);

// Rows that have a feature the model ignores (beyond its input_dimension;
// 0: a text model, nothing is counted), and the largest 1-based index seen,
// summed over the batches of one input.
struct FeaturesBeyond {
  std::uint32_t input_dimension = 0;
  std::size_t rows = 0, total = 0;
  std::uint32_t largest = 0;
  explicit FeaturesBeyond(std::uint32_t dimension) : input_dimension(dimension) {}
  void count(const Dataset& data);
  // "" when no row had one, else a note for standard error naming the input.
  std::string note(const std::string& name) const;
};

// Train the configured objective (any, including kernel_hinge) on `train`,
// whose labels prepare_labels() has put in order; `features` is the fitted
// text featurizer (null for numeric data) stored in the model. Checks
// check_input_kind first.
AnyModel train_any_model(const TrainConfig& config, const Dataset& train, const nlohmann::json& features,
                         const std::function<bool(const EpochInfo&)>& on_epoch);

}  // namespace pegasos
