// The one place where an objective name becomes a type.
#pragma once

#include <functional>

#include "core/dataset.hpp"
#include "core/engine.hpp"
#include "core/model.hpp"
#include "drivers/config.hpp"

namespace pegasos {

// Check the data fits the objective (number of classes, positive label) and
// put it in the order the model will use. Throws InputError.
void prepare_labels(const TrainConfig& config, Dataset& train);

// objective "auto" (config.objective_auto) becomes an objective of the table
// now that the training data's classes are known: more than two classes
// make one-vs-all (ova), two keep the binary objective the settings asked
// for (hinge; weighted_hinge with class_weight; transfer with source_model,
// which then fails on more than two classes like an explicit transfer).
// `resolved["objective"]`, the echo in model files, follows. Anything else
// is left alone. A threshold (max_fpr / target_recall) on data auto makes
// multiclass is a ConfigError, as for an explicit multiclass objective.
void resolve_objective(TrainConfig& config, const Dataset& train);

// Everything about `config` that needs the data, checked once the data is
// read and before training (by `train` and by `run` for every grid point):
// resolve_objective, prepare_labels (classes vs objective, positive_label), every class_weight
// label occurs, and a transfer config's source model (config.source, when
// loaded) has the data's labels, is binary and normalises rows alike.
// `point` names an experiment's grid point in class_weight messages ("" for
// none). Throws InputError / ConfigError.
void check_config_against_data(TrainConfig& config, Dataset& train, const std::string& point = "");

// The classes for a message: 'a', 'b', ... (the first ten).
std::string class_list(const std::vector<std::string>& classes);

// The class id of a label as written in class_weight (numbers normalised);
// ConfigError naming the label and the data's labels when it does not occur.
std::size_t class_of_label(const Dataset& data, const std::string& label);

// Train the configured objective on `train` (labels prepared) and package
// the model. `on_epoch` may be empty.
Model train_model(const TrainConfig& config, const Dataset& train,
                  const std::function<bool(const EpochInfo&)>& on_epoch);

// The model's training objective (λ/2‖w‖² + mean loss) on `data`, whose labels
// are already expressed in the model's classes (rows with label -1 skipped).
double model_objective(const Model& model, const Dataset& data);

}  // namespace pegasos
