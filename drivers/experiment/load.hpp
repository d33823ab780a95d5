// The data of an experiment: read once, checked against every grid point,
// split into the training pool, the test set and the cross-validation folds.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/dataset.hpp"
#include "core/model.hpp"
#include "drivers/experiment.hpp"

namespace pegasos::experiment_detail {

// The data of an experiment, loaded once and shared (read-only) by all runs.
struct LoadedData {
  nlohmann::json features;                      // raw text: the fitted featurizer (null for numeric data)
  std::map<std::string, std::shared_ptr<const Model>> sources;  // transfer source models, read once
  Dataset pool;                                 // the training part
  std::optional<Dataset> test;                  // the test set (test / final runs)
  std::vector<std::vector<std::size_t>> folds;  // rows of pool
  std::vector<int> fold_of;                     // pool row -> fold
  std::vector<Dataset> fold_eval;               // copy of each fold: the evaluation set of cv runs
};

// Reads the data and checks it against every grid point, so that nothing
// that could fail for data reasons is left for the runs. Throws InputError /
// ConfigError naming the data file or the setting.
LoadedData load_data(const Experiment& e);

}  // namespace pegasos::experiment_detail
