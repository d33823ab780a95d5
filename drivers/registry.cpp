#include "drivers/registry.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <utility>

#include "core/errors.hpp"
#include "core/parallel.hpp"
#include "core/ova_trainer.hpp"
#include "drivers/data.hpp"
#include "drivers/duals.hpp"
#include "drivers/warm_start.hpp"
#include "io/model_json.hpp"
#include "io/model_sections_json.hpp"
#include "objectives/hinge.hpp"
#include "objectives/multiclass_hinge.hpp"
#include "objectives/transfer_hinge.hpp"
#include "objectives/weighted_hinge.hpp"

namespace pegasos {

std::string class_list(const std::vector<std::string>& classes) {
  std::string s;
  for (std::size_t i = 0; i < classes.size() && i < 10; ++i) s += (i ? ", " : "") + ("'" + classes[i] + "'");
  if (classes.size() > 10) s += ", ...";
  return s;
}

namespace {

// n_k per class id, or with sample weights (mean 1) the weight of class k,
// Σ_{y_i = k} s_i: "balanced" then weighs a weighted row as its repetitions.
std::vector<double> class_totals(const Dataset& data) {
  std::vector<double> total(data.classes.size(), 0.0);
  if (data.weights.empty()) {
    const auto counts = data.class_counts();
    for (std::size_t k = 0; k < total.size(); ++k) total[k] = static_cast<double>(counts[k]);
    return total;
  }
  for (std::size_t i = 0; i < data.size(); ++i) total[static_cast<std::size_t>(data.labels[i])] += data.weights[i];
  return total;
}

// Cost per class id from the class_weight setting (all 1 when not given).
std::vector<double> class_costs(const ClassWeightSetting& class_weight, const Dataset& data) {
  const std::size_t K = data.classes.size();
  std::vector<double> cost(K, 1.0);
  if (std::holds_alternative<BalancedClassWeights>(class_weight)) {  // n / (K · n_k)
    const std::vector<double> counts = class_totals(data);
    for (std::size_t k = 0; k < K; ++k) cost[k] = static_cast<double>(data.size()) / (static_cast<double>(K) * counts[k]);
  } else if (const ClassCosts* costs = std::get_if<ClassCosts>(&class_weight)) {
    for (const auto& [label, value] : *costs) cost[class_of_label(data, label)] = value;
  }
  return cost;
}

// (1/n) Σ_i s_i (1 without sample weights): the projection radius of hinge.
double mean_weight(const Dataset& data) {
  double sum = 0.0;
  for (float s : data.weights) sum += s;
  return data.weights.empty() ? 1.0 : sum / static_cast<double>(data.size());
}

// (1/n) Σ_i s_i c_{y_i}: the projection radius of the weighted objectives.
double mean_cost(const std::vector<double>& cost, const Dataset& data) {
  if (!data.weights.empty()) {  // sample weights (mean 1)
    double sum = 0.0;
    for (std::size_t i = 0; i < data.size(); ++i) sum += data.weights[i] * cost[static_cast<std::size_t>(data.labels[i])];
    return sum / static_cast<double>(data.size());
  }
  const auto counts = data.class_counts();
  double sum = 0.0;
  for (std::size_t k = 0; k < cost.size(); ++k) sum += cost[k] * static_cast<double>(counts[k]);
  return sum / static_cast<double>(data.size());
}

// A weighted run says so in its training block: "sample_weights": the range
// of the weights as trained (scaled to mean 1), e.g. "scaled to mean 1: min 0.25, max 3".
void note_sample_weights(TrainingSummary& t, const Dataset& train) {
  const auto [lo, hi] = std::minmax_element(train.weights.begin(), train.weights.end());
  char text[96];
  std::snprintf(text, sizeof text, "scaled to mean 1: min %.6g, max %.6g", static_cast<double>(*lo),
                static_cast<double>(*hi));
  nlohmann::json extra = t.extra.empty() ? nlohmann::json::object() : json_object_of(t.extra);
  extra["sample_weights"] = text;
  t.extra = json_object_text(extra);
}

// Takes the result by value: callers move it in, so the weights (80 MB at
// d = 10⁷) are not copied.
// `hashes` (optional): the job hashing `train`'s rows for the stored duals.
Model package(const TrainConfig& config, const Dataset& train, TrainResult r, double regulariser,
              RowHashJob* hashes = nullptr) {
  Model m;
  m.objective = std::string(config.objective.name);
  m.classes = train.classes;
  m.dimension = r.dimension;
  m.outputs = r.outputs;
  m.bias_mode = to_string(config.engine.bias);
  m.weights = std::move(r.weights);
  m.bias = std::move(r.bias);
  m.lambda = config.engine.lambda;
  m.normalize = config.read.normalize_rows ? "l2" : "none";
  nlohmann::json settings = config.resolved;
  settings.erase("threads");  // run settings: the model is the same for any value
  settings.erase("strict");
  m.settings = json_object_text(settings);
  m.data = json_object_text(model_data_settings(config, train));
  TrainingSummary& t = m.training;
  t.examples = train.size();
  t.nnz = train.nnz();
  t.iterations = r.iterations;
  t.epochs = r.epochs;
  t.converged = r.converged;
  t.stopped_by = to_string(r.stopped_by);
  t.solver = r.solver;
  t.objective = r.objective;
  t.tolerance = config.engine.tolerance;
  // No bound: null in the file (NaN stands for it).
  t.dual_objective = std::isfinite(r.dual_objective) ? r.dual_objective : std::nan("");
  t.relative_gap = std::isfinite(r.relative_gap()) ? r.relative_gap() : std::nan("");
  t.certificate = std::isfinite(r.dual_objective) ? "duality gap" : "none";
  t.regularizer = regulariser;
  t.class_cost = class_costs(config.class_weight, train);
  if (!train.weights.empty()) note_sample_weights(t, train);
  if (config.keep_duals && !r.alpha_fraction.empty()) {
    std::string note;
    m.duals = collect_duals(train, r.alpha_fraction, static_cast<std::size_t>(r.outputs), note, hashes);
    if (!note.empty()) {  // too many to store: the summary says so
      nlohmann::json extra = t.extra.empty() ? nlohmann::json::object() : json_object_of(t.extra);
      extra["duals"] = note;
      t.extra = json_object_text(extra);
    }
  }
  return m;
}

// λ/2 (‖W‖² + bias² when the bias is a regularised feature), from trained weights.
double plain_regulariser(double lambda, const TrainResult& r, BiasMode bias) {
  double sq = squared_norm(r.weights);
  if (bias == BiasMode::kFeature) sq += squared_norm(r.bias);
  return lambda / 2 * sq;
}

// The source model of a transfer config fits the training data: the same
// labels, binary, the same row normalisation. Throws InputError.
void check_source_model(const TrainConfig& config, const Model& source, const Dataset& train) {
  if (source.classes != train.classes) {
    throw InputError(config.source_model + ": the source model's labels (" + class_list(source.classes) +
                     ") differ from the training data's (" + class_list(train.classes) + ")");
  }
  if (!source.binary()) throw InputError(config.source_model + ": transfer needs a binary source model");
  const std::string normalize = config.read.normalize_rows ? "l2" : "none";
  if (source.normalize != normalize) {
    throw InputError(config.source_model + ": the source model was trained with normalize=" +
                     source.normalize + ", the target with normalize=" + normalize +
                     " (featurizations differ)");
  }
}

// `entries`: dual_entries of old's stored duals for `train` (null when old
// stores none), hashed once by train_model for every warm start made here.
// `hashes`: as for package.
Model train_transfer(const TrainConfig& config, const Dataset& train,
                     const std::function<bool(const EpochInfo&)>& on_epoch, const Model* old,
                     const std::vector<std::ptrdiff_t>* entries, RowHashJob* hashes) {
  const std::shared_ptr<const Model> loaded =
      config.source ? config.source : std::make_shared<const Model>(load_model(config.source_model));
  const Model& source = *loaded;
  check_source_model(config, source, train);  // again: callers of train_model may not have checked
  // o_i = w_R·x_i + b_R once per example (the source model's whole score);
  // w_R is zero where the source never saw a feature. The target trains
  // u = w − w_R and its own u_b = b − b_R, so the prior is the source model
  // itself, intercept included: a large λ returns the source's predictions
  // (with b_R left out, a large λ gave w_R with an intercept near 0, worse
  // than the source model alone on 25 target messages).
  const double source_bias = source.bias.empty() ? 0.0 : source.bias[0];
  std::vector<double> offset(train.size());
  parallel_for_index(train.size(), [&](std::size_t i) {
    const RowView x = train.row(i);
    double s = source_bias;
    for (std::uint32_t j = 0; j < x.nnz; ++j) {
      if (x.indices[j] < source.dimension) s += static_cast<double>(x.values[j]) * source.weights[x.indices[j]];
    }
    offset[i] = s;
  }, kSerialRows);
  double source_loss = 0.0;
  for (std::size_t i = 0; i < train.size(); ++i) {
    const double y = train.labels[i] == 1 ? 1.0 : -1.0;
    source_loss += train.row(i).weight * std::max(0.0, 1.0 - y * offset[i]);
  }
  source_loss /= static_cast<double>(train.size());
  // A warm start trains u from u_old = w_old − w_R, u_b from b_old − b_R.
  std::optional<WarmStart> warm;
  if (old != nullptr) {
    const std::vector<double> carry =
        dual_carry_factors(*old, config.engine.lambda, train, std::vector<double>(train.classes.size(), 1.0));
    warm = warm_start_of(*old, train, -1, entries, &carry);
    for (std::uint32_t j = 0; j < std::min(train.dimension, source.dimension); ++j) warm->weights[j] -= source.weights[j];
    if (!warm->bias.empty()) warm->bias[0] -= source_bias;
  }
  TrainResult r = train_with_solver(train, TransferHinge(1, std::move(offset), source_loss), config.engine, on_epoch,
                                    warm ? &*warm : nullptr);
  // λ/2 (‖w − w_R‖² + (b − b_R)² with bias feature)
  const double regulariser = plain_regulariser(config.engine.lambda, r, config.engine.bias);
  // w = w_R + u, over the union of both feature spaces; b = b_R + u_b.
  const std::uint32_t dim = std::max(r.dimension, source.dimension);
  r.weights.resize(dim, 0.0);
  for (std::uint32_t j = 0; j < source.dimension; ++j) r.weights[j] += source.weights[j];
  if (r.bias.empty()) r.bias.assign(1, 0.0);
  r.bias[0] += source_bias;
  r.dimension = dim;
  return package(config, train, std::move(r), regulariser, hashes);
}

Model train_objective(const TrainConfig& config, const Dataset& train,
                      const std::function<bool(const EpochInfo&)>& on_epoch, const Model* old,
                      const std::vector<std::ptrdiff_t>* entries, std::vector<std::uint64_t>* hashed);

}  // namespace

void resolve_objective(TrainConfig& config, const Dataset& train) {
  if (!config.objective_auto) return;
  config.objective_auto = false;
  if (train.classes.size() > 2 && !config.objective.needs_source_model) {
    config.objective = objective_row(ObjectiveId::kOva);
    if (config.max_fpr || config.target_recall) {
      throw ConfigError(std::string(config.max_fpr ? "max_fpr" : "target_recall") +
                        ": a decision threshold is for binary data; " + train.source + " has " +
                        std::to_string(train.classes.size()) + " classes (objective auto: ova)");
    }
  }
  config.resolved["objective"] = std::string(config.objective.name);
}

void check_config_against_data(TrainConfig& config, Dataset& train, const std::string& point) {
  resolve_objective(config, train);
  prepare_labels(config, train);
  if (const ClassCosts* costs = std::get_if<ClassCosts>(&config.class_weight)) {
    for (const auto& [label, cost] : *costs) {
      try {
        class_of_label(train, label);
      } catch (const ConfigError& e) {
        if (point.empty()) throw;
        throw ConfigError("grid point " + point + ": " + e.what());
      }
    }
  }
  if (config.source) check_source_model(config, *config.source, train);
  if (config.init) check_init_model(config, *config.init, train);
}

namespace {
// A label given in a setting, in the data's canonical form; a bad one (not
// valid UTF-8, a control character) is an error naming the setting.
std::string setting_label(const std::string& label, const char* key) {
  try {
    return canonical_label(label);
  } catch (const InputError& e) {
    throw ConfigError(std::string(key) + ": " + e.what());
  }
}
}  // namespace

std::size_t class_of_label(const Dataset& data, const std::string& label) {
  const std::string name = setting_label(label, "class_weight");
  auto it = std::find(data.classes.begin(), data.classes.end(), name);
  if (it == data.classes.end()) {
    throw ConfigError("class_weight: label '" + label + "' does not occur in " + data.source + " (labels: " +
                      class_list(data.classes) + ")");
  }
  return static_cast<std::size_t>(it - data.classes.begin());
}

void prepare_labels(const TrainConfig& config, Dataset& train) {
  if (train.classes.size() < 2) {
    throw InputError(train.source + ": only one class (" + class_list(train.classes) +
                     ") in the training data; a classifier needs at least two");
  }
  // Rows of labels alone train a bias-only model (tests/bad_inputs); with
  // commas in the labels they are CSV lines read as LIBSVM.
  const auto comma = [](const std::string& c) { return c.find(',') != std::string::npos; };
  if (train.nnz() == 0 && std::any_of(train.classes.begin(), train.classes.end(), comma)) {
    throw InputError(train.source + ": no row has a feature and the labels hold commas (" + class_list(train.classes) +
                     "): if it is CSV, name the file .csv or use --set format=csv");
  }
  const bool binary = !config.objective.multiclass || train.classes.size() == 2;
  if (!config.objective.multiclass && train.classes.size() != 2) {
    throw InputError(train.source + ": objective '" + std::string(config.objective.name) + "' is binary but the data has " +
                     std::to_string(train.classes.size()) + " classes (" + class_list(train.classes) +
                     "); use objective " +
                     objective_names([](const ObjectiveRow& row) { return row.multiclass && !row.kernel; }));
  }
  if (!config.positive_label.empty()) {
    if (!binary) throw ConfigError("positive_label: only meaningful for two classes");
    const std::string pos = setting_label(config.positive_label, "positive_label");
    auto it = std::find(train.classes.begin(), train.classes.end(), pos);
    if (it == train.classes.end()) {
      throw ConfigError("positive_label: '" + config.positive_label + "' is not a label of " + train.source +
                        " (labels: " + class_list(train.classes) + ")");
    }
    if (it == train.classes.begin()) train.remap_classes({train.classes[1], train.classes[0]});
  }
}

Model train_model(const TrainConfig& config, const Dataset& train,
                  const std::function<bool(const EpochInfo&)>& on_epoch) {
  if (config.objective_auto) {  // callers that skip check_config_against_data: by the data's classes
    TrainConfig resolved = config;  // (a subset keeps its whole data's class list, so every fold agrees)
    resolve_objective(resolved, train);
    return train_model(resolved, train, on_epoch);
  }
  if (config.init_model.empty()) return train_objective(config, train, on_epoch, nullptr, nullptr, nullptr);
  if (!config.init) throw std::logic_error("train_model: init_model given but not read (load_init_model)");
  const std::size_t K = train.classes.size();
  const bool one_vs_all = config.objective.id == ObjectiveId::kOva && K > 2;
  // Each row's entry among OLD's stored dual variables: the rows hashed once,
  // for every output's warm start (one-vs-all: K + 1), the count below and
  // the new model's stored duals.
  std::vector<std::uint64_t> hashed;
  std::vector<std::ptrdiff_t> entries;
  std::size_t matched = 0;
  if (config.init->duals) {
    hashed = row_hashes(train);
    entries = dual_entries(*config.init->duals, hashed, matched);
  }
  Model m = train_objective(config, train, on_epoch, config.init.get(), config.init->duals ? &entries : nullptr,
                            config.init->duals ? &hashed : nullptr);
  mark_warm_started(m, config, *config.init, one_vs_all ? K : 1);
  if (config.init->duals) {  // how many rows resumed from OLD's stored dual variables
    nlohmann::json extra = m.training.extra.empty() ? nlohmann::json::object() : json_object_of(m.training.extra);
    extra["warm_start_duals"] = std::to_string(matched) + " of " + std::to_string(train.size()) + " rows";
    m.training.extra = json_object_text(extra);
  }
  return m;
}

namespace {

// The configured objective's training, from zero or from `old` (checked by
// check_init_model); `entries` as for train_transfer; `hashed` (optional):
// row_hashes(train), taken for the stored duals.
Model train_objective(const TrainConfig& config, const Dataset& train,
                      const std::function<bool(const EpochInfo&)>& on_epoch, const Model* old,
                      const std::vector<std::ptrdiff_t>* entries, std::vector<std::uint64_t>* hashed) {
  const EngineSettings& s = config.engine;
  const std::vector<double> cost = class_costs(config.class_weight, train);
  const double cbar = mean_cost(cost, train);
  const std::size_t K = train.classes.size();
  // A dual solver that runs on one thread (not one-vs-all's parallel
  // classes) leaves the second core to hash the rows for its stored duals.
  const bool serial_dual = use_sdca(s) && config.objective.id != ObjectiveId::kKernelHinge &&
                           !(config.objective.id == ObjectiveId::kOva && K > 2);
  const bool background = config.keep_duals && serial_dual && background_hashing_pays(train);
  RowHashJob hashes = hashed != nullptr ? RowHashJob(std::move(*hashed)) : RowHashJob(train, background);
  auto binary_result = [&](TrainResult r) {
    const double regulariser = plain_regulariser(s.lambda, r, s.bias);
    return package(config, train, std::move(r), regulariser, &hashes);
  };

  std::optional<WarmStart> whole;
  const std::vector<double> carry = old != nullptr ? dual_carry_factors(*old, s.lambda, train, cost) : std::vector<double>{};
  if (old != nullptr) whole = warm_start_of(*old, train, -1, entries, &carry);
  const WarmStart* warm = whole ? &*whole : nullptr;

  switch (config.objective.id) {
    case ObjectiveId::kHinge:
      return binary_result(train_with_solver(train, Hinge(1, mean_weight(train)), s, on_epoch, warm));
    case ObjectiveId::kWeightedHinge:
      return binary_result(train_with_solver(train, WeightedHinge(1, cost, cbar), s, on_epoch, warm));
    case ObjectiveId::kTransfer: return train_transfer(config, train, on_epoch, old, entries, &hashes);
    case ObjectiveId::kMulticlassHinge:
      return binary_result(
          train_with_solver(train, MulticlassHinge(static_cast<int>(K), cost, cbar), s, on_epoch, warm));
    case ObjectiveId::kOva: {
      // Two classes: one-vs-all is the binary problem itself.
      if (K == 2) return binary_result(train_with_solver(train, WeightedHinge(1, cost, cbar), s, on_epoch, warm));
      std::vector<WarmStart> per_class;
      for (std::size_t k = 0; old != nullptr && k < K; ++k) {
        per_class.push_back(warm_start_of(*old, train, static_cast<int>(k), entries, &carry));
      }
      return binary_result(train_one_vs_all(
          train, static_cast<int>(K), s, [&](int k) { return WeightedHinge(k, cost, cbar); }, {}, per_class));
    }
    case ObjectiveId::kKernelHinge: break;  // a kernel model: train_any_model (drivers/any_model.cpp)
  }
  throw ConfigError("objective: '" + std::string(config.objective.name) + "' is not available");
}

}  // namespace

double model_objective(const Model& model, const Dataset& data) {
  // The compact scoring form (a sparse model of a huge dimension, read by
  // `eval`): the losses from a dense copy of the features the data has; the
  // regulariser below from all of the model's weights (their squares summed
  // in the same order as the dense form's: zeros add nothing).
  Model dense_copy;
  const Model* scored = &model;
  if (!model.weight_rows.empty()) {
    const std::size_t K = static_cast<std::size_t>(model.outputs);
    dense_copy.objective = model.objective;
    dense_copy.classes = model.classes;
    dense_copy.outputs = model.outputs;
    dense_copy.bias = model.bias;
    dense_copy.dimension = std::min(model.dimension, data.dimension);
    dense_copy.weights.assign(static_cast<std::size_t>(dense_copy.dimension) * K, 0.0);
    for (std::size_t r = 0; r < model.weight_rows.size() && model.weight_rows[r] < dense_copy.dimension; ++r) {
      std::copy_n(&model.weights[r * K], K, &dense_copy.weights[static_cast<std::size_t>(model.weight_rows[r]) * K]);
    }
    scored = &dense_copy;
  }
  std::vector<std::size_t> rows;
  for (std::size_t i = 0; i < data.size(); ++i) {
    if (data.labels[i] >= 0) rows.push_back(i);
  }
  const ObjectiveRow* row = find_objective(model.objective);
  const auto is = [&](ObjectiveId id) { return row != nullptr && row->id == id; };
  // λ/2 ‖w‖² from the weights themselves, so that the objective is that of
  // the weights the file holds (a file edited or damaged since training gets
  // its own, not the summary's). Transfer's regulariser is the distance to
  // the source model, which the file does not hold: the training summary's.
  const std::optional<double> summary_regulariser =
      is(ObjectiveId::kTransfer) ? training_regularizer(model.training) : std::nullopt;
  const double regulariser =
      summary_regulariser ? *summary_regulariser
                          : model.lambda / 2 *
                                (model.weight_squared_norm() + (model.bias_mode == "feature" ? squared_norm(model.bias) : 0.0));
  if (rows.empty()) return regulariser;
  const std::size_t K = model.classes.size();
  std::vector<double> cost(K, 1.0);
  if (const auto class_cost = training_class_cost(model.training); class_cost && class_cost->size() == K) cost = *class_cost;
  // The objective's mean cost only sets a projection radius: irrelevant here.
  if (is(ObjectiveId::kHinge) || is(ObjectiveId::kTransfer)) {
    return regulariser + mean_loss(data, Hinge(1), scored->weights, model.bias, rows);
  }
  if (model.binary()) return regulariser + mean_loss(data, WeightedHinge(1, cost, 1.0), scored->weights, model.bias, rows);
  if (is(ObjectiveId::kMulticlassHinge)) {
    return regulariser + mean_loss(data, MulticlassHinge(static_cast<int>(K), cost, 1.0), scored->weights, model.bias, rows);
  }
  if (is(ObjectiveId::kOva)) {  // sum of the K binary objectives
    double loss = 0.0;
    for (std::size_t k = 0; k < K; ++k) {
      std::vector<double> w(scored->dimension);
      for (std::size_t j = 0; j < scored->dimension; ++j) w[j] = scored->weights[j * K + k];
      loss += mean_loss(data, WeightedHinge(static_cast<int>(k), cost, 1.0), w, {model.bias[k]}, rows);
    }
    return regulariser + loss;
  }
  throw InputError("objective '" + model.objective + "' of the model is not known to this pegasos");
}

}  // namespace pegasos
