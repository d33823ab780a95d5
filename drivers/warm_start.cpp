#include "drivers/warm_start.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

#include "core/errors.hpp"
#include "drivers/any_model.hpp"
#include "drivers/duals.hpp"
#include "drivers/registry.hpp"
#include "io/model_json.hpp"
#include "io/model_sections_json.hpp"
#include "text/options.hpp"

namespace pegasos {
namespace {

[[noreturn]] void mismatch(const TrainConfig& config, const std::string& field, const std::string& what) {
  throw InputError(config.init_model + ": " + field + ": " + what + "; a warm start continues a model of the same " +
                   "objective, classes, features and bias (or train from zero without init_model)");
}

// The number of outputs a model of this objective has on K classes.
int expected_outputs(const TrainConfig& config, std::size_t K) {
  if (config.objective.id == ObjectiveId::kMulticlassHinge) return static_cast<int>(K);
  return K == 2 ? 1 : static_cast<int>(K);
}

}  // namespace

nlohmann::json load_init_model(TrainConfig& config, bool raw_text) {
  AnyModel any = AnyModel::load(config.init_model);
  if (any.kernel) {
    throw InputError(config.init_model + ": a kernel model (" + any.kernel->objective +
                     "); warm start supports the linear objectives only");
  }
  const nlohmann::json features = any.take_features();  // parsed once, with the file
  config.init = std::make_shared<const Model>(std::move(*any.linear));
  if (features.is_null() == raw_text) {
    mismatch(config, "features",
             std::string("the model was trained on ") + (features.is_null() ? "numeric features" : "raw text") +
                 " but the training data is " + (raw_text ? "raw text" : "numeric data"));
  }
  if (!features.is_null() && config.features &&
      text_options_to_json(*config.features) != features.value("options", nlohmann::json::object())) {
    throw ConfigError("features: differ from the featurization of " + config.init_model +
                      "; a warm start keeps the model's fitted featurizer, so leave features unset");
  }
  return features;
}

void check_init_model(const TrainConfig& config, const Model& old, Dataset& train) {
  if (old.objective != config.objective.name) {
    mismatch(config, "objective",
             "the model was trained with '" + old.objective + "', this run trains '" + std::string(config.objective.name) + "'");
  }
  if (old.bias_mode != to_string(config.engine.bias)) {
    mismatch(config, "bias_mode", "the model has bias " + old.bias_mode + ", this run " + to_string(config.engine.bias));
  }
  const std::string normalize = config.read.normalize_rows ? "l2" : "none";
  if (old.normalize != normalize) {
    mismatch(config, "normalize", "the model was trained with normalize=" + old.normalize + ", this run with " + normalize);
  }
  if (train.classes != old.classes) {
    std::vector<std::string> a = train.classes, b = old.classes;
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    if (a != b || !config.positive_label.empty()) {
      mismatch(config, "classes",
               "the model's labels (" + class_list(old.classes) + ") differ from " + train.source + "'s (" +
                   class_list(train.classes) + ")");
    }
    train.remap_classes(old.classes);  // the same labels: the model's order (its positive class)
  }
  if (old.outputs != expected_outputs(config, old.classes.size()) ||
      old.weights.size() != std::size_t{old.dimension} * static_cast<std::size_t>(old.outputs)) {
    mismatch(config, "outputs", "the model has " + std::to_string(old.outputs) + " outputs for " +
                                    std::to_string(old.classes.size()) + " classes");
  }
  if (train.dimension > old.dimension) {
    mismatch(config, "dimension",
             "the model has " + std::to_string(old.dimension) + " features but " + train.source +
                 " uses feature index " + std::to_string(train.dimension));
  }
  train.dimension = old.dimension;  // features the data does not use keep their (shrinking) weights
  // A start whose ½λ‖w‖² is not a number (|w| past ~1e154) leaves every
  // objective value non-finite: refuse it here, naming the file.
  double sq = 0.0, top = 0.0;
  for (double v : old.weights) sq += v * v, top = std::max(top, std::abs(v));
  for (double v : old.bias) sq += v * v, top = std::max(top, std::abs(v));
  if (!std::isfinite(sq)) {
    char largest[32];
    std::snprintf(largest, sizeof largest, "%.3g", top);
    throw InputError(config.init_model + ": weights: their squared norm overflows a double (|w| up to " + largest +
                     "); not a usable starting point, train without --init-model");
  }
}

std::uint64_t schedule_steps_of(const Model& model) {
  if (model.training.schedule_steps) return std::max<std::uint64_t>(*model.training.schedule_steps, 1);
  const std::uint64_t iterations = model.training.iterations.value_or(1);
  const bool summed = find_objective(model.objective) != nullptr &&
                      find_objective(model.objective)->id == ObjectiveId::kOva && model.outputs > 1;
  return std::max<std::uint64_t>(summed ? iterations / static_cast<std::uint64_t>(model.outputs) : iterations, 1);
}

std::vector<double> dual_carry_factors(const Model& old, double lambda, const Dataset& train,
                                       const std::vector<double>& cost) {
  const std::size_t K = train.classes.size();
  const std::optional<std::vector<double>> old_cost = training_class_cost(old.training);
  if (!old.training.examples || *old.training.examples == 0 || !(old.lambda > 0.0) || !(lambda > 0.0) ||
      train.size() == 0 || cost.size() != K || (old_cost && old_cost->size() != K)) {
    return {};
  }
  const double ratio = (lambda * static_cast<double>(train.size())) /
                       (old.lambda * static_cast<double>(*old.training.examples));
  std::vector<double> factor(K);
  for (std::size_t k = 0; k < K; ++k) {
    const double before = old_cost ? (*old_cost)[k] : 1.0;
    if (!(cost[k] > 0.0) || !(before > 0.0)) return {};
    factor[k] = before / cost[k] * ratio;
  }
  return factor;
}

WarmStart warm_start_of(const Model& old, const Dataset& train, int k, const std::vector<std::ptrdiff_t>* entries,
                        const std::vector<double>* carry) {
  if (train.dimension != old.dimension) {
    throw std::logic_error("warm start: the data's dimension was not checked against the model (check_init_model)");
  }
  WarmStart w;
  w.steps = schedule_steps_of(old);
  if (old.duals) {
    std::size_t matched = 0;
    w.stored_alpha =
        entries != nullptr ? match_duals(*old.duals, *entries, k) : match_duals(*old.duals, train, k, matched);
    if (carry != nullptr && !carry->empty()) {
      const std::size_t width = train.size() == 0 ? 0 : w.stored_alpha.size() / train.size();
      for (std::size_t i = 0; i < train.size(); ++i) {
        if (train.labels[i] < 0) continue;
        const double r = (*carry)[static_cast<std::size_t>(train.labels[i])];
        for (std::size_t m = 0; m < width; ++m) {
          double& f = w.stored_alpha[i * width + m];
          if (!std::isfinite(f)) continue;
          // Not clipped here: a binary row at its bound on day 1 whose bound
          // shrank gives its mass to others (core/warm_start.hpp
          // clip_stored_alpha); Crammer–Singer fractions are clipped there.
          f *= r;
        }
      }
    }
  }
  if (k < 0) {
    w.weights = old.weights;
    w.bias = old.bias;
    return w;
  }
  const auto K = static_cast<std::size_t>(old.outputs);
  w.weights.resize(old.dimension);
  for (std::size_t j = 0; j < old.dimension; ++j) w.weights[j] = old.weights[j * K + static_cast<std::size_t>(k)];
  w.bias = {old.bias[static_cast<std::size_t>(k)]};
  return w;
}

void mark_warm_started(Model& model, const TrainConfig& config, const Model& old, std::size_t problems) {
  model.training.warm_start = config.init_model;
  model.training.schedule_steps = schedule_steps_of(old) + model.training.iterations.value_or(0) / std::max<std::size_t>(problems, 1);
}

}  // namespace pegasos
