#include "drivers/any_model.hpp"
#include "drivers/model_input.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <stdexcept>

#include "core/output_file.hpp"
#include "core/parallel.hpp"
#include "core/errors.hpp"
#include "core/random.hpp"
#include "io/json_checks.hpp"
#include "kernel/kernel_sdca.hpp"
#include "kernel/kernel_trainer.hpp"
#include "drivers/budget_refit.hpp"
#include "drivers/data.hpp"
#include "drivers/registry.hpp"
#include "io/kernel_model_json.hpp"
#include "io/model_json.hpp"
#include "io/model_sections_json.hpp"

namespace pegasos {

AnyModel AnyModel::load(const std::string& path, json_checks::ModelUse use) {
  AnyModel m;
  with_file_bytes(path, [&](std::string_view text) { m = parse(text, path, use); });
  return m;
}

AnyModel AnyModel::parse(std::string_view text, const std::string& path, json_checks::ModelUse use) {
  // Parsed once; a file of either kind is then read from the same JSON.
  nlohmann::json j = json_checks::parse_model_file(text, path, use);
  AnyModel m;
  m.source = path;
  m.scoring_only = use != json_checks::ModelUse::kAll;
  const auto kind = j.is_object() ? j.find("kind") : j.end();
  if (kind != j.end() && kind->is_string() && *kind == "kernel") {
    m.kernel = kernel_model_from_json(j, path);
  } else {
    m.linear = model_from_json_value(j, path, use == json_checks::ModelUse::kPredict || use == json_checks::ModelUse::kInspect);
    if (!m.linear->features.empty()) {  // kept, not parsed again from the text (1 MB for hashed spam)
      m.features_json_ = std::make_shared<std::pair<std::string, nlohmann::json>>(m.linear->features,
                                                                                         std::move(j["features"]));
    }
  }
  return m;
}

const nlohmann::json& AnyModel::features() const {
  static const nlohmann::json none;
  if (!linear || linear->features.empty()) return none;
  if (!features_json_ || features_json_->first != linear->features) {
    features_json_ = std::make_shared<std::pair<std::string, nlohmann::json>>(linear->features,
                                                                                     features_json(*linear));
  }
  return features_json_->second;
}

nlohmann::json AnyModel::take_features() {
  if (!linear || linear->features.empty()) return nullptr;
  if (features_json_ && features_json_.use_count() == 1 && features_json_->first == linear->features) {
    nlohmann::json out = std::move(features_json_->second);
    features_json_.reset();
    return out;
  }
  return features();
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
  if (linear) return load_data_for_model(json_object_of(linear->data), features(), path, require_labels, source);
  return load_data_for_model(json_object_of(kernel->data), nullptr, path, require_labels, source);
}

std::uint32_t AnyModel::input_dimension() const {
  if (linear && !linear->features.empty()) return 0;
  if (linear && linear->feature_map) return linear->feature_map->input_dimension;
  return header().dimension;
}

void FeaturesBeyond::count(const Dataset& data) {
  total += data.size();
  // The reader's dimension bounds every index of the batch (explicit zeros
  // included): within the model's, no row needs a look.
  if (input_dimension == 0 || data.dimension <= input_dimension) return;
  for (std::size_t i = 0; i < data.size(); ++i) {
    const RowView x = data.row(i);
    std::uint32_t last = 0;
    for (std::uint32_t e = 0; e < x.nnz; ++e) last = std::max(last, x.indices[e] + 1);
    if (last > input_dimension) {
      ++rows;
      largest = std::max(largest, last);
    }
  }
}

std::string FeaturesBeyond::note(const std::string& name) const {
  if (rows == 0) return "";
  return "note: " + name + ": " + std::to_string(rows) + " of " + std::to_string(total) +
         " rows have features beyond the model's " + std::to_string(input_dimension) + " (the largest index is " +
         std::to_string(largest) + "), which it has no weights for and ignores (features unseen in training)\n";
}

std::optional<Dataset> AnyModel::map_features(const Dataset& data) const {
  if (kernel || !linear->feature_map) return std::nullopt;
  return linear->feature_map->map(data);
}

std::vector<double> AnyModel::scores(const Dataset& input) const { return scores(input, map_features(input)); }

namespace {

// Every decision value finite, or an InputError naming the data and the first
// row whose value is not: a row far outside the training data's range (1e30
// under a polynomial kernel, 3e38 through a Nyström map) can overflow a
// valid model, and a NaN score has no class, no rank and no threshold side.
void require_finite_scores(const std::vector<double>& scores, const Dataset& data) {
  const auto bad = std::find_if(scores.begin(), scores.end(), [](double v) { return !std::isfinite(v); });
  if (bad == scores.end()) return;
  const std::size_t per_row = scores.size() / std::max<std::size_t>(data.size(), 1);
  const std::size_t row = static_cast<std::size_t>(bad - scores.begin()) / std::max<std::size_t>(per_row, 1);
  const std::string where = data.first_row == 1 && data.row_lines.empty() ? row_and_line(data.source, row, data.size())
                                                                          : data.row_name(row);
  throw InputError(data.source + ": " + where + ": the model's decision value is " +
                   (std::isnan(*bad) ? "NaN" : "infinite") +
                   " (the row's values overflow the model; scale them as the training data was)");
}

}  // namespace

std::vector<double> AnyModel::scores(const Dataset& input, const std::optional<Dataset>& mapped) const {
  if (kernel) {
    std::vector<double> out = kernel->scores(input);
    require_finite_scores(out, input);
    return out;
  }
  const Dataset& data = mapped ? *mapped : input;
  const std::size_t K = static_cast<std::size_t>(linear->outputs);
  std::vector<double> out(data.size() * K);
  constexpr std::size_t kRows = 1024;  // rows a task
  parallel_for_index((data.size() + kRows - 1) / kRows, [&](std::size_t b) {
    for (std::size_t i = b * kRows; i < std::min(data.size(), (b + 1) * kRows); ++i) linear->scores(data.row(i), &out[i * K]);
  });
  require_finite_scores(out, input);
  return out;
}

double AnyModel::objective(const Dataset& data) const { return objective(data, map_features(data)); }

double AnyModel::objective(const Dataset& data, const std::optional<Dataset>& mapped) const {
  if (kernel) return kernel_model_objective(*kernel, data);
  return model_objective(*linear, mapped ? *mapped : data);
}

std::string AnyModel::to_json() const {
  if (scoring_only) throw std::logic_error(source + ": a model read for scoring only is written out");
  return linear ? model_to_json(*linear) : kernel_model_to_json(*kernel);
}

void AnyModel::save(const std::string& path) const {
  if (scoring_only) throw std::logic_error(source + ": a model read for scoring only is saved");
  if (linear) {
    save_model(*linear, path);
  } else {
    save_kernel_model(*kernel, path);
  }
}

namespace {

// Stream id of the feature map's random numbers (ω, b, landmarks) under the seed.
constexpr std::uint64_t kFeatureMapStream = 0x6b61;  // "ka"

bool same_settings(const FeatureMapSettings& s, const FeatureMap& f) {
  return s.type == f.type && s.components == f.components && (s.gamma == 0.0 || s.gamma == f.gamma);
}

std::string describe(const FeatureMap& f) {
  return to_string(f.type) + ", " + std::to_string(f.components) + " components, gamma " + std::to_string(f.gamma);
}

}  // namespace

std::shared_ptr<const FeatureMap> approximate_kernel(const TrainConfig& config, Dataset& data, MapSeconds* seconds) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const std::shared_ptr<const FeatureMap> old = config.init ? config.init->feature_map : nullptr;
  if (!config.kernel_approximation) {
    if (old) {
      throw ConfigError("init_model: " + config.init_model + " was trained with kernel_approximation (" + describe(*old) +
                        "); set the same kernel_approximation to continue from it");
    }
    return nullptr;
  }
  std::shared_ptr<const FeatureMap> map;
  if (config.init) {
    if (!old) {
      throw ConfigError("kernel_approximation: the warm-start model " + config.init_model +
                        " was trained without one; its weights are in the input features' space");
    }
    if (!same_settings(*config.kernel_approximation, *old)) {
      throw ConfigError("kernel_approximation: differs from the warm-start model's feature_map (" + describe(*old) +
                        "); a warm start keeps the old map");
    }
    map = old;
  } else {
    map = std::make_shared<const FeatureMap>(
        fit_feature_map(*config.kernel_approximation, data, derive_seed(config.engine.seed, kFeatureMapStream)));
  }
  const auto fitted = Clock::now();
  data = map->map(data);
  if (seconds) {
    seconds->fit = std::chrono::duration<double>(fitted - start).count();
    seconds->map = std::chrono::duration<double>(Clock::now() - fitted).count();
  }
  return map;
}

void attach_feature_map(AnyModel& model, std::shared_ptr<const FeatureMap> map) {
  if (!map) return;
  if (!model.linear) throw std::logic_error("attach_feature_map: a kernel model");
  model.linear->feature_map = std::move(map);
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
  const bool refit = config.engine.solver != Solver::kSdca && config.kernel.max_support_vectors > 0 &&
                     config.kernel.budget_refit;
  KernelSettings kernel = config.kernel;
  if (refit) kernel.compute_objective = false;  // the refit computes the objective of its coefficients
  KernelModel km = config.engine.solver == Solver::kSdca ? train_kernel_sdca(train, kernel, config.engine, on_epoch)
                                                         : train_kernel(train, kernel, config.engine, on_epoch);
  if (refit) refit_budget(config, train, km);
  nlohmann::json settings = config.resolved;
  settings.erase("threads");  // run settings: the model is the same for any value
  settings.erase("strict");
  settings.erase("kernel_cache_mb");
  nlohmann::json data = model_data_settings(config, train);
  data.erase("text_field");  // kernel models read numeric data only
  data.erase("label_field");
  km.settings = json_object_text(settings);
  km.data = json_object_text(data);
  out.kernel = std::move(km);
  return out;
}

}  // namespace pegasos
