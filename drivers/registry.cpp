#include "drivers/registry.hpp"

#include <algorithm>

#include "core/errors.hpp"
#include "objectives/hinge.hpp"

namespace pegasos {
namespace {

std::string class_list(const std::vector<std::string>& classes) {
  std::string s;
  for (std::size_t i = 0; i < classes.size() && i < 10; ++i) s += (i ? ", " : "") + ("'" + classes[i] + "'");
  if (classes.size() > 10) s += ", ...";
  return s;
}

Model package(const TrainConfig& config, const Dataset& train, const TrainResult& r) {
  Model m;
  m.objective = config.objective;
  m.classes = train.classes;
  m.dimension = r.dimension;
  m.outputs = r.outputs;
  m.bias_mode = to_string(config.engine.bias);
  m.weights = r.weights;
  m.bias = r.bias;
  m.settings = config.resolved;
  m.settings.erase("threads");  // a run setting: the model is the same for any value
  m.data = {{"format", config.resolved["format"]},
            {"label_column", config.resolved["label_column"]},
            {"normalize", config.resolved["normalize"]}};
  m.training = {{"examples", train.size()},
                {"nnz", train.nnz()},
                {"iterations", r.iterations},
                {"epochs", r.epochs},
                {"converged", r.converged},
                {"objective", r.objective}};
  return m;
}

}  // namespace

void prepare_labels(const TrainConfig& config, Dataset& train) {
  if (train.classes.size() < 2) {
    throw InputError(train.source + ": only one class (" + class_list(train.classes) +
                     ") in the training data; a classifier needs at least two");
  }
  if (config.objective == "hinge") {
    if (train.classes.size() != 2) {
      throw InputError(train.source + ": objective 'hinge' is binary but the data has " +
                       std::to_string(train.classes.size()) + " classes (" + class_list(train.classes) + ")");
    }
    if (!config.positive_label.empty()) {
      const std::string pos = canonical_label(config.positive_label);
      auto it = std::find(train.classes.begin(), train.classes.end(), pos);
      if (it == train.classes.end()) {
        throw ConfigError("positive_label: '" + config.positive_label + "' is not a label of " + train.source +
                          " (labels: " + class_list(train.classes) + ")");
      }
      if (it == train.classes.begin()) train.remap_classes({train.classes[1], train.classes[0]});
    }
  }
}

Model train_model(const TrainConfig& config, const Dataset& train,
                  const std::function<bool(const EpochInfo&)>& on_epoch) {
  if (config.objective == "hinge") {
    return package(config, train, pegasos::train(train, Hinge(1), config.engine, on_epoch));
  }
  throw ConfigError("objective: '" + config.objective + "' is not available");
}

double model_objective(const Model& model, const Dataset& data) {
  const double lambda = model.settings.value("lambda", 0.0);
  double reg = model.weight_squared_norm();
  if (model.bias_mode == "feature") {
    for (double b : model.bias) reg += b * b;
  }
  if (model.objective == "hinge") {
    std::vector<std::size_t> rows;
    for (std::size_t i = 0; i < data.size(); ++i) {
      if (data.labels[i] >= 0) rows.push_back(i);
    }
    if (rows.empty()) return lambda / 2 * reg;
    return lambda / 2 * reg + mean_loss(data, Hinge(1), model.weights, model.bias, rows);
  }
  throw InputError("objective '" + model.objective + "' of the model is not known to this pegasos");
}

}  // namespace pegasos
