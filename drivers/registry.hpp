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

// Train the configured objective on `train` (labels prepared) and package
// the model. `on_epoch` may be empty.
Model train_model(const TrainConfig& config, const Dataset& train,
                  const std::function<bool(const EpochInfo&)>& on_epoch);

// The model's training objective (λ/2‖w‖² + mean loss) on `data`, whose labels
// are already expressed in the model's classes (rows with label -1 skipped).
double model_objective(const Model& model, const Dataset& data);

}  // namespace pegasos
