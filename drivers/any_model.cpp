#include "drivers/any_model.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "core/output_file.hpp"
#include "core/errors.hpp"
#include "io/json_checks.hpp"
#include "kernel/kernel_sdca.hpp"
#include "kernel/kernel_trainer.hpp"
#include "drivers/data.hpp"
#include "drivers/registry.hpp"
#include "io/kernel_model_json.hpp"
#include "io/model_json.hpp"
#include "io/model_sections_json.hpp"

namespace pegasos {

AnyModel AnyModel::load(const std::string& path) { return parse(read_file_bytes(path), path); }

AnyModel AnyModel::parse(const std::string& text, const std::string& path) {
  // Parsed once; a file of either kind is then read from the same JSON.
  const nlohmann::json j = json_checks::parse_model_file(text, path);
  AnyModel m;
  if (j.is_object() && j.value("kind", "") == "kernel") {
    m.kernel = kernel_model_from_json(j, path);
  } else {
    m.linear = model_from_json_value(j, path);
  }
  return m;
}

const ModelHeader& AnyModel::header() const {
  if (linear) return *linear;
  return *kernel;
}
ModelHeader& AnyModel::header() {
  if (linear) return *linear;
  return *kernel;
}
const std::vector<std::string>& AnyModel::classes() const { return header().classes; }
int AnyModel::outputs() const { return header().outputs; }
double AnyModel::lambda() const { return linear ? linear->lambda : kernel->lambda; }
nlohmann::json AnyModel::training() const { return training_to_json(linear ? linear->training : kernel->training); }
int AnyModel::predict_class(const double* s) const { return header().predict_class(s); }

Dataset AnyModel::read(const std::string& path, bool require_labels) const {
  if (linear) return load_data_for_model(*linear, path, require_labels);
  return load_data_for_model(json_object_of(kernel->data), nullptr, path, require_labels);
}

std::vector<double> AnyModel::scores(const Dataset& data) const {
  if (kernel) return kernel->scores(data);
  const std::size_t K = static_cast<std::size_t>(linear->outputs);
  std::vector<double> out(data.size() * K);
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, data.size(), 1024), [&](const auto& range) {
    for (std::size_t i = range.begin(); i != range.end(); ++i) linear->scores(data.row(i), &out[i * K]);
  });
  return out;
}

double AnyModel::objective(const Dataset& data) const {
  return linear ? model_objective(*linear, data) : kernel_model_objective(*kernel, data);
}

std::string AnyModel::to_json() const { return linear ? model_to_json(*linear) : kernel_model_to_json(*kernel); }

void AnyModel::save(const std::string& path) const {
  if (linear) {
    save_model(*linear, path);
  } else {
    save_kernel_model(*kernel, path);
  }
}

void check_input_kind(const TrainConfig& config, bool raw_text) {
  if (config.objective.kernel && raw_text) {
    throw ConfigError("objective: " + std::string(config.objective.name) +
                      " on raw text is not supported; featurise to LIBSVM first");
  }
}

AnyModel train_any_model(const TrainConfig& config, const Dataset& train, const nlohmann::json& features,
                         const std::function<bool(const EpochInfo&)>& on_epoch) {
  check_input_kind(config, !features.is_null());
  AnyModel out;
  if (!config.objective.kernel) {
    out.linear = train_model(config, train, on_epoch);
    out.linear->features = features_text(features);
    return out;
  }
  if (!train.weights.empty()) {  // the kernel solvers know no per-example weights (yet)
    throw ConfigError("sample weights (weights_file, sample_weight): objective " + std::string(config.objective.name) +
                      " does not support per-example weights; use a linear objective");
  }
  // config_from_json resolved `auto` for kernel_hinge to sdca or pegasos.
  KernelModel km = config.engine.solver == Solver::kSdca ? train_kernel_sdca(train, config.kernel, config.engine, on_epoch)
                                                         : train_kernel(train, config.kernel, config.engine, on_epoch);
  nlohmann::json settings = config.resolved;
  settings.erase("threads");  // run settings: the model is the same for any value
  settings.erase("strict");
  settings.erase("kernel_cache_mb");
  nlohmann::json data = reader_settings(config);
  data.erase("text_field");  // kernel models read numeric data only
  data.erase("label_field");
  km.settings = json_object_text(settings);
  km.data = json_object_text(data);
  out.kernel = std::move(km);
  return out;
}

}  // namespace pegasos
