// Training as the settings ask, around the solver (README § Choosing λ,
// § Probabilities and thresholds): what `pegasos train`, api::train,
// `pegasos run` and the refit of `train --cv --refit` all call.
//
//   lambda "auto"   λ chosen by stratified cv_folds-fold cross-validation
//                   (folds dealt by the seed setting) along a path of λ =
//                   1/(C n) for C = 0.01 … 1000, three points a decade, from
//                   the largest λ down, each fold's fit warm-started from its
//                   fit at the previous λ (SDCA: its dual point). The path
//                   stops once four points in a row (more than a decade)
//                   score below the best, or two clearly below a risen
//                   best, counted once the curve has left its first value;
//                   ties go to the larger λ (transfer: the smaller). Scored by
//                   accuracy, or balanced accuracy with class weights. The
//                   model's settings hold the chosen λ, training.selection
//                   the curve.
//   calibrate       a Platt sigmoid per output fitted on out-of-fold
//                   decision values (each row scored by the fold model that
//                   did not train on it; with lambda "auto" the chosen
//                   point's, else cv_folds fits at the final settings).
//   max_fpr / target_recall
//                   binary: the decision threshold met on the same
//                   out-of-fold values, stored in the model (predict and
//                   eval use it).
// The final model is always trained on all the data.
#pragma once

#include <functional>

#include <nlohmann/json.hpp>

#include "core/dataset.hpp"
#include "core/training.hpp"
#include "drivers/any_model.hpp"
#include "drivers/config.hpp"

namespace pegasos {

// `data` has its labels prepared (check_config_against_data). Throws
// InputError when the data cannot be split into cv_folds stratified folds.
AnyModel fit_model(const TrainConfig& config, const Dataset& data, const nlohmann::json& features,
                   const std::function<bool(const EpochInfo&)>& on_epoch);

// The λ values lambda "auto" tries on n examples, largest first.
std::vector<double> auto_lambda_grid(std::size_t n);

}  // namespace pegasos
