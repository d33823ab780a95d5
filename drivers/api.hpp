// The library's face: what `pegasos train`, `predict` and `eval` do, on typed
// inputs, for every door (the CLI in drivers/pegasos_main.cpp, a Python
// module, an MPI driver). No argv, no JSON, no printing: settings are the
// keys of README § Settings, progress comes through a callback, errors are
// exceptions (InputError: bad data or files, ConfigError: bad settings).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/dataset.hpp"
#include "core/model_header.hpp"
#include "core/training.hpp"

namespace pegasos {
struct TrainConfig;
struct AnyModel;
class TextFeaturizer;
}  // namespace pegasos

namespace pegasos::api {

// Validated training settings.
class Settings {
 public:
  // From a JSON config file ("" = defaults only) and KEY=VALUE overrides
  // (the same text as `--set`), validated as a whole before any data is read.
  static Settings load(const std::string& config_path = "", const std::vector<std::string>& overrides = {});
  bool strict() const;  // an uncertified model should be refused (the `strict` setting)
  int threads() const;  // 0 = all cores
  const TrainConfig& config() const { return *config_; }

 private:
  std::shared_ptr<const TrainConfig> config_;
};

// A trained model of either kind (linear weights or kernel support vectors).
class Model {
 public:
  static Model load(const std::string& path);  // either kind, by the file's "kind"
  // The same from a model file's contents already in memory; `name` is used in messages.
  static Model parse(const std::string& json_text, const std::string& name);
  std::string to_json() const;  // the model file's contents (what save writes)
  void save(const std::string& path) const;    // atomic (temp file + rename)
  const std::vector<std::string>& classes() const;
  int outputs() const;  // 1 for a binary model, else one score per class
  bool kernel() const;
  // Data to apply the model to, read with the model's reader settings and
  // featurizer (raw text for a text model).
  Dataset read(const std::string& path, bool require_labels) const;
  // Scores of every row (rows × outputs, row-major) and the class each predicts.
  std::vector<double> scores(const Dataset& data) const;
  int predict_class(const double* scores) const;
  // The model's training objective on `data` (labels in the model's classes).
  double objective(const Dataset& data) const;
  // Text models made from parts (drivers/text_model.hpp): this numeric linear
  // model, trained on the rows of the fitted `featurizer`, with the featurizer
  // inside and `features_setting` (the `features` setting as JSON text; "null"
  // = the defaults) echoed in its settings: the model file `pegasos train`
  // writes on raw text. Throws InputError when the parts do not fit.
  Model with_featurizer(const TextFeaturizer& featurizer, const std::string& features_setting) const;
  // A text model's featurizer as JSON text ("" for other models), and the
  // numeric model within (the featurizer removed).
  std::string featurizer_json() const;
  Model without_featurizer() const;
  const AnyModel& any() const { return *model_; }

 private:
  friend struct Trained;
  friend Model wrap(AnyModel&& model);
  std::shared_ptr<const AnyModel> model_;
};

// A model with what training saw.
struct Trained {
  Model model;
  std::size_t examples = 0, features = 0;
  std::uint64_t nnz = 0;
  double load_seconds = 0.0;  // reading (and featurising) the data, checking the source model
  // From the data loaded to the model built (the map below included); not
  // the release of the training data's memory afterwards.
  double train_seconds = 0.0;
  // kernel_approximation (part of training): fitting the map, mapping the rows.
  double map_fit_seconds = 0.0, map_seconds = 0.0;
};

// Train on a file (LIBSVM, CSV, or raw text featurised as the settings say),
// as `pegasos train` does: source-model checks before any data is read, the
// settings checked against the data, then training. `on_epoch` returning
// false stops training early.
Trained train(const Settings& settings, const std::string& data_path,
              const std::function<bool(const EpochInfo&)>& on_epoch = {});

// Train on numeric rows already in memory (labels: data.classes).
Model train(const Settings& settings, Dataset data, const std::function<bool(const EpochInfo&)>& on_epoch = {});

// Cross-validation (`pegasos train --cv K [--grid KEY=SPEC] [--refit]`;
// README § Choosing λ): K stratified folds dealt by the `seed` setting, the
// folds trained in parallel (the scores do not depend on the thread count).
struct CvOptions {
  int folds = 5;
  // "" = the settings as they are; "lambda=LOW:HIGH[:POINTS]" (a log grid,
  // 10 points by default) or "KEY=V1,V2,..." for any setting that does not
  // change how the data is read. ConfigError naming --grid when bad.
  std::string grid;
  // A λ grid is run from the largest λ down, each fold's fit warm-started
  // from its fit at the previous λ (SDCA's dual point); false: every fit from zero.
  bool warm_path = true;
  bool refit = false;  // train the best point on all the data (CvResult::model)
};

struct CvPoint {
  std::string value;  // the grid value as set ("" without a grid)
  double accuracy_mean = 0, accuracy_std = 0;  // over the folds (std: n − 1 denominator)
  double balanced_mean = 0, balanced_std = 0;  // balanced accuracy
  double passes = 0;   // mean training passes (SDCA) or epochs (Pegasos) per fold
  double seconds = 0;  // training time summed over the folds
};

struct CvResult {
  std::string key;  // the grid key ("" = no grid)
  std::string objective;  // the objective cross-validated (objective auto: the one the data made it)
  // The score that selects: "balanced_accuracy" when class weights are used
  // (class_weight set at any grid point), else "accuracy".
  std::string metric = "accuracy";
  int folds = 0;
  std::size_t examples = 0;
  std::uint64_t seed = 0;
  bool warm_path = false;       // whether the λ path warm-started
  std::vector<CvPoint> points;  // in the order run (a λ grid: largest λ first)
  std::size_t best = 0;  // highest mean score; ties: the earlier point (a λ grid: the larger λ; lambda "auto" with transfer: the later)
  double mean(const CvPoint& p) const { return metric == "accuracy" ? p.accuracy_mean : p.balanced_mean; }
  double std_dev(const CvPoint& p) const { return metric == "accuracy" ? p.accuracy_std : p.balanced_std; }
  // With CvOptions::refit: trained on all the data at the best point; its
  // training block holds `selection` (the CV curve and the chosen value).
  std::optional<Model> model;
};

// Cross-validate the settings (config file + overrides, as Settings::load)
// on a file, or on numeric rows in memory (labels: data.classes).
CvResult cross_validate(const std::string& config_path, const std::vector<std::string>& overrides,
                        const std::string& data_path, const CvOptions& options);
CvResult cross_validate(const std::string& config_path, const std::vector<std::string>& overrides, Dataset data,
                        const CvOptions& options);

}  // namespace pegasos::api
