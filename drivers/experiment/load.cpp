#include "drivers/experiment/load.hpp"

#include <algorithm>

#include "core/errors.hpp"
#include "drivers/any_model.hpp"
#include "drivers/data.hpp"
#include "drivers/experiment/common.hpp"
#include "drivers/registry.hpp"
#include "io/model_json.hpp"

namespace pegasos::experiment_detail {
namespace {

// Transfer points: the source models, read once. They must fit the data;
// with raw text they also fix the featurizer (the same for every point, so
// runs compare): returns it (null when none does).
json load_sources(const Experiment& e, const TrainConfig& base, LoadedData& d) {
  auto& sources = d.sources;
  for (const GridPoint& p : e.points) {
    if (p.config.objective.needs_source_model && !sources.count(p.config.source_model)) {
      sources.emplace(p.config.source_model, std::make_shared<const Model>(load_model(p.config.source_model)));
    }
  }
  json fixed_features = nullptr;
  for (const auto& [path, source] : sources) {
    const json features = features_json(*source);
    if (features.is_null()) continue;
    if (!fixed_features.is_null() && fixed_features != features) {
      throw ConfigError("source_model: " + path + " and another source model featurise text differently");
    }
    if (base.features) {
      throw ConfigError("features: transfer re-uses the featurizer of " + path + ", so leave features unset");
    }
    fixed_features = features;
  }
  return fixed_features;
}

// d.pool and d.test from the training data: the test file read with the
// training data's reader settings and featurizer, else a holdout split,
// else no test set.
void split_test(const Experiment& e, const TrainConfig& base, Dataset source, LoadedData& d) {
  if (!e.data.test.empty()) {
    // the training data's reader settings and featurizer
    // (a CSV test file has the training file's feature columns)
    Dataset test = load_data_for_model(model_data_settings(base, source), d.features, e.data.test, true);
    const auto unknown = test.remap_classes(source.classes);
    if (!unknown.empty()) {
      throw InputError(e.data.test + ": label '" + unknown.front() + "' does not occur in the training data " +
                       source.source + " (labels: " + class_list(source.classes) + ")");
    }
    // One feature space for both, so models and evaluation agree.
    const std::uint32_t dim = std::max(source.dimension, test.dimension);
    source.dimension = test.dimension = dim;
    d.test = std::move(test);
    d.pool = std::move(source);
  } else if (e.data.holdout > 0) {
    const HoldoutSplit s = holdout_split(source.labels, e.data.holdout, e.data.stratified, e.data.seed);
    if (s.train.empty() || s.test.empty()) {
      throw InputError(e.data.file + ": " + std::to_string(source.size()) + " examples are too few for holdout " +
                       std::to_string(e.data.holdout));
    }
    d.test = subset(source, s.test);
    d.pool = subset(source, s.train);
  } else {
    d.pool = std::move(source);
  }
}

// Every class in the pool, and (with folds) in the training part of every fold.
void make_cv_folds(const Experiment& e, LoadedData& d) {
  const std::vector<std::size_t> pool_counts = d.pool.class_counts();
  for (std::size_t k = 0; k < pool_counts.size(); ++k) {
    if (pool_counts[k] == 0) {
      throw InputError(d.pool.source + ": the training part has no example of class '" + d.pool.classes[k] +
                       "' (use stratified splits or a smaller holdout)");
    }
  }
  if (e.data.folds > 0) {
    if (d.pool.size() < static_cast<std::size_t>(e.data.folds)) {
      throw InputError(d.pool.source + ": " + std::to_string(d.pool.size()) + " training examples are too few for " +
                       std::to_string(e.data.folds) + " folds");
    }
    d.folds = make_folds(d.pool.labels, e.data.folds, e.data.stratified, e.data.seed);
    d.fold_of.assign(d.pool.size(), -1);
    for (std::size_t f = 0; f < d.folds.size(); ++f) {
      for (std::size_t i : d.folds[f]) d.fold_of[i] = static_cast<int>(f);
      d.fold_eval.push_back(subset(d.pool, d.folds[f]));
      const auto counts = d.fold_eval.back().class_counts();
      for (std::size_t k = 0; k < counts.size(); ++k) {
        if (counts[k] == pool_counts[k]) {
          throw InputError(d.pool.source + ": fold " + std::to_string(f) + " holds every example of class '" +
                           d.pool.classes[k] + "', so its training part has none (use fewer folds or stratified)");
        }
      }
    }
  }
}

}  // namespace

LoadedData load_data(const Experiment& e) {
  const TrainConfig& base = e.points.front().config;  // reader settings cannot vary
  LoadedData d;
  const json fixed_features = load_sources(e, base, d);
  const std::string source_path = e.data.train.empty() ? e.data.file : e.data.train;
  // Raw text: the featurizer (vocabulary, idf) is fitted once on the whole
  // training file; with folds or a holdout that includes the held-out rows'
  // texts (never their labels).
  const bool raw_text = is_text_input(source_path, base.read.format);
  for (const GridPoint& p : e.points) check_input_kind(p.config, raw_text);  // before reading the data
  TrainingData loaded = load_training_data(base, source_path, fixed_features);
  Dataset source = std::move(loaded.data);
  d.features = std::move(loaded.features);
  for (const GridPoint& p : e.points) {  // the same label order for every point
    TrainConfig config = p.config;
    if (config.objective.needs_source_model) config.source = d.sources.at(config.source_model);
    check_config_against_data(config, source, p.params.dump());
  }
  split_test(e, base, std::move(source), d);
  make_cv_folds(e, d);
  return d;
}

}  // namespace pegasos::experiment_detail
