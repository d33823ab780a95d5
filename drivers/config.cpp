#include "drivers/config.hpp"
#include "drivers/config_keys.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cmath>
#include <limits>

#include "core/errors.hpp"
#include "core/json_nesting.hpp"
#include "core/output_file.hpp"
#include "core/suggest.hpp"
#include "io/feature_map_json.hpp"
#include "io/json_checks.hpp"
#include "io/kernel_settings_json.hpp"
#include "text/options.hpp"

namespace pegasos {
namespace {

using config_keys_detail::is_kernel;
using config_keys_detail::needs_source;
using config_keys_detail::uses_class_weights;

using nlohmann::json;

[[noreturn]] void refuse(const std::string& origin, const std::string& key, const std::string& what) {
  throw ConfigError(origin + ": " + key + ": " + what);
}

// A value quoted in a message. Strings from --set may hold invalid UTF-8,
// which a plain dump() rejects with an exception (an internal error).
std::string shown(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

double config_number(const json& j, const std::string& origin, const std::string& key) {
  if (!j.is_number()) {
    // (null's type name is its text: "found null", not "found null null")
    const std::string type = j.type_name(), text = shown(j);
    refuse(origin, key, "expected a number, found " + (type == text ? text : type + " " + text));
  }
  const double v = j.get<double>();
  if (!std::isfinite(v)) refuse(origin, key, "must be finite");
  return v;
}

std::int64_t config_integer(const json& j, const std::string& origin, const std::string& key) {
  const double v = config_number(j, origin, key);
  if (v != std::floor(v)) refuse(origin, key, "expected an integer, found " + shown(j));
  if (std::abs(v) > 9.0e15) refuse(origin, key, "the integer " + shown(j) + " is out of range (at most 9e15 in magnitude)");
  return static_cast<std::int64_t>(v);
}

bool boolean(const json& j, const std::string& origin, const std::string& key) {
  if (!j.is_boolean()) refuse(origin, key, "expected true or false, found " + shown(j));
  return j.get<bool>();
}

std::string choice(const json& j, const std::string& origin, const std::string& key,
                   const std::vector<std::string>& allowed) {
  std::string all;
  for (const auto& a : allowed) all += (all.empty() ? "" : ", ") + a;
  if (!j.is_string()) refuse(origin, key, "expected one of " + all + ", found " + shown(j));
  const std::string v = j.get<std::string>();
  if (std::find(allowed.begin(), allowed.end(), v) == allowed.end()) {
    refuse(origin, key, "'" + v + "' is not one of " + all);
  }
  return v;
}


}  // namespace

const nlohmann::json& default_of(const std::string& key) {
  for (const auto& k : config_keys()) {
    if (k.name == key) return k.default_value;
  }
  throw std::logic_error("no config key '" + key + "'");
}

void refuse_model_over_inputs(const TrainConfig& config, const std::string& model_path) {
  refuse_overwriting(model_path, {{"the source model", &config.source_model}, {"the weights", &config.weights_file}});
}

nlohmann::json reader_settings(const TrainConfig& config) {
  json out = json::object();
  for (const char* key : {"format", "label_column", "normalize", "text_field", "label_field"}) {
    out[key] = config.resolved.at(key);
  }
  return out;
}

std::string closest_key(const std::string& key) {
  std::vector<std::string> names;
  for (const auto& k : config_keys()) names.push_back(k.name);
  return closest_name(key, names);
}

std::string to_string(OutputIterate o) {
  switch (o) {
    case OutputIterate::kLast: return "last";
    case OutputIterate::kAverage: return "average";
    case OutputIterate::kRandom: return "random";
  }
  return "?";
}
std::string to_string(Sampling s) {
  switch (s) {
    case Sampling::kUniform: return "uniform";
    case Sampling::kPermutation: return "permutation";
    case Sampling::kSequential: return "sequential";
    case Sampling::kBalanced: return "balanced";
    case Sampling::kShuffle: return "shuffle";
  }
  return "?";
}
std::string to_string(BiasMode b) {
  switch (b) {
    case BiasMode::kNone: return "none";
    case BiasMode::kFeature: return "feature";
    case BiasMode::kUnregularized: return "unregularized";
  }
  return "?";
}

namespace {

void reject_unknown_keys(const json& merged, const std::string& origin) {
  for (const auto& [key, value] : merged.items()) {
    const bool known = std::any_of(config_keys().begin(), config_keys().end(),
                                   [&](const ConfigKey& k) { return k.name == key; });
    if (!known) {
      const std::string near = closest_key(key);
      refuse(origin, key, "unknown setting" + (near.empty() ? std::string() : " (did you mean '" + near + "'?)") +
                            "; `pegasos train --help` lists them");
    }
  }
}

// objective, the kernel settings (kernel objectives only) and class_weight.
void read_objective(const json& merged, json& all, const std::string& origin, TrainConfig& c) {
  std::vector<std::string> names{std::string(kAutoObjective)};
  for (const ObjectiveRow& row : kObjectiveTable) names.emplace_back(row.name);
  const std::string chosen = choice(all["objective"], origin, "objective", names);
  c.objective_auto = chosen == kAutoObjective;
  // auto: the binary objective its other settings ask for, until the data's
  // classes are known (resolve_objective, drivers/registry.hpp).
  const ObjectiveId provisional = !all["source_model"].is_null() && all["source_model"] != "" ? ObjectiveId::kTransfer
                                  : !all["class_weight"].is_null()                              ? ObjectiveId::kWeightedHinge
                                                                                                : ObjectiveId::kHinge;
  c.objective = c.objective_auto ? objective_row(provisional) : *find_objective(chosen);
  const std::string name(chosen);
  if (c.objective.kernel) {
    c.kernel = kernel_settings_from_json(merged, origin);
    all["kernel"] = kernel_settings_to_json(c.kernel)["kernel"];
    if (c.kernel.max_support_vectors > 0) {
      all["budget_maintenance"] = c.kernel.merge_budget ? "merge" : "remove";
      if (c.kernel.kernel.type == KernelType::kRbf) all["budget_refit"] = c.kernel.budget_refit;  // only there a choice
    }
  } else {
    for (const char* key : config_keys_detail::kKernelOnlyKeys) {
      if (merged.contains(key)) {
        refuse(origin, key, "only used by objective " + objective_names(is_kernel) + " (objective is '" + name + "')");
      }
    }
  }
  const json& cw = all["class_weight"];
  if (!cw.is_null()) {
    if (c.objective.class_weights == ClassWeights::kUnused) {
      refuse(origin, "class_weight",
           "only used by objective " + objective_names(uses_class_weights) + " (objective is '" + name + "')");
    }
    if (cw.is_string()) {
      if (cw != "balanced") refuse(origin, "class_weight", "expected \"balanced\" or an object {label: cost}");
      c.class_weight = BalancedClassWeights{};
    } else if (cw.is_object()) {
      if (cw.empty()) refuse(origin, "class_weight", "the object names no class");
      ClassCosts costs;
      for (const auto& [label, cost] : cw.items()) {
        const double v = config_number(cost, origin, "class_weight/" + label);
        if (!(v > 0)) refuse(origin, "class_weight/" + label, "a cost must be > 0");
        // Costs past this overflow the objective's sums (1e308: an infinite model, once an internal error).
        if (!(v <= 1e15)) refuse(origin, "class_weight/" + label, "a cost must be at most 1e15, found " + shown(cost));
        costs[label] = v;
      }
      c.class_weight = std::move(costs);
    } else {
      refuse(origin, "class_weight", "expected \"balanced\" or an object {label: cost}, found " + shown(cw));
    }
  } else if (c.objective.class_weights == ClassWeights::kRequired) {
    refuse(origin, "class_weight", "objective " + name + " needs class_weight (\"balanced\" or {label: cost})");
  }
}

void read_source_model(json& all, const std::string& origin, TrainConfig& c) {
  if (!all["source_model"].is_string()) refuse(origin, "source_model", "expected a file name");
  c.source_model = all["source_model"].get<std::string>();
  const std::string name(c.objective.name);
  if (c.objective.needs_source_model && c.source_model.empty()) {
    refuse(origin, "source_model", "objective " + name + " needs source_model (a model written by pegasos train)");
  }
  if (!c.objective.needs_source_model && !c.source_model.empty()) {
    refuse(origin, "source_model", "only used by objective " + objective_names(needs_source) + " (objective is '" + name + "')");
  }
}

// kernel_approximation: for the linear objectives other than transfer (whose
// source weights live in the source's feature space); echoed only when given.
void read_kernel_approximation(json& all, const std::string& origin, TrainConfig& c) {
  if (all["kernel_approximation"].is_null()) {
    all.erase("kernel_approximation");
    return;
  }
  const std::string name(c.objective.name);
  if (c.objective.kernel) {
    refuse(origin, "kernel_approximation", "approximates the RBF kernel for the linear objectives; objective " + name +
                                             " trains the exact kernel (use kernel, or a linear objective)");
  }
  if (c.objective.needs_source_model) {
    refuse(origin, "kernel_approximation", "not with objective " + name + " (the source model's weights are in its own feature space)");
  }
  c.kernel_approximation = feature_map_settings_from_json(all["kernel_approximation"], origin);
}

// init_model: a linear model to continue from (checked against the data
// later, registry.cpp); echoed in `resolved` only when given.
void read_init_model(json& all, const std::string& origin, TrainConfig& c) {
  if (!all["init_model"].is_string()) refuse(origin, "init_model", "expected a file name");
  c.init_model = all["init_model"].get<std::string>();
  if (!c.init_model.empty() && c.objective.kernel) {
    refuse(origin, "init_model",
         "warm start is for the linear objectives; " + std::string(c.objective.name) + " models are not supported");
  }
}

// warm_schedule: how a Pegasos warm start takes up the old run's step count
// (core/engine.hpp start_from); read_solver made the solver Pegasos for
// `continue` (a Pegasos-only setting) or refused it with sdca.
void read_warm_schedule(json& all, const std::string& origin, TrainConfig& c) {
  const bool whole = choice(all["warm_schedule"], origin, "warm_schedule", {"capped", "continue"}) == "continue";
  if (whole && c.init_model.empty()) {
    refuse(origin, "warm_schedule",
           "continue applies to a warm start, from init_model (train --init-model; experiments train from zero)");
  }
  c.engine.warm_whole_schedule = whole;
}

// weights_file: per-example weights, read with the data (drivers/data.cpp);
// never echoed in the model (the training block notes a weighted run).
void load_weights_file(json& all, const std::string& origin, TrainConfig& c) {
  if (!all["weights_file"].is_string()) refuse(origin, "weights_file", "expected a file name");
  c.weights_file = all["weights_file"].get<std::string>();
  if (!c.weights_file.empty() && c.objective.kernel) {
    refuse(origin, "weights_file",
         "per-example weights are for the linear objectives; " + std::string(c.objective.name) + " does not support them");
  }
  all.erase("weights_file");
}

// lambda, the step count and the Pegasos step settings (batch, projection,
// output iterate, averaging, sampling) and the bias.
void read_steps(json& all, const std::string& origin, EngineSettings& e) {
  e.lambda = config_number(all["lambda"], origin, "lambda");
  if (!(e.lambda > 0)) refuse(origin, "lambda", "must be > 0");
  // A subnormal λ: 1/λ overflows, and the run would end, late, with
  // infinite weights.
  if (e.lambda < std::numeric_limits<double>::min()) {
    refuse(origin, "lambda", "must be at least 2.2e-308 (the smallest normal double; 1/lambda overflows below it)");
  }
  e.epochs = config_number(all["epochs"], origin, "epochs");
  if (e.epochs < 0 || e.epochs > 1e6) refuse(origin, "epochs", "must be between 0 (automatic) and 1000000");
  const std::int64_t iterations = config_integer(all["iterations"], origin, "iterations");
  if (iterations < 0 || iterations > std::int64_t{1} << 50) refuse(origin, "iterations", "must be between 0 and 2^50");
  e.iterations = static_cast<std::uint64_t>(iterations);
  if (e.iterations > 0 && e.epochs > 0) refuse(origin, "iterations", "set either iterations or epochs, not both");
  const std::int64_t batch = config_integer(all["batch_size"], origin, "batch_size");
  if (batch < 1 || batch > 1000000) refuse(origin, "batch_size", "must be between 1 and 1000000");
  e.batch_size = static_cast<int>(batch);
  e.projection = boolean(all["projection"], origin, "projection");
  const std::string output = choice(all["output"], origin, "output", {"last", "average", "random"});
  e.output = output == "last" ? OutputIterate::kLast : output == "average" ? OutputIterate::kAverage : OutputIterate::kRandom;
  if (e.output == OutputIterate::kRandom && e.iterations == 0 && e.epochs == 0) {
    refuse(origin, "output", "'random' picks an iterate uniformly from 1..T, so it needs iterations or epochs");
  }
  e.average_gamma = config_number(all["average_gamma"], origin, "average_gamma");
  if (e.average_gamma < 0) refuse(origin, "average_gamma", "must be >= 0");
  const std::string sampling =
      choice(all["sampling"], origin, "sampling", {"uniform", "permutation", "sequential", "balanced", "shuffle"});
  e.sampling = sampling == "uniform"       ? Sampling::kUniform
               : sampling == "permutation" ? Sampling::kPermutation
               : sampling == "sequential"  ? Sampling::kSequential
               : sampling == "shuffle"     ? Sampling::kShuffle
                                           : Sampling::kBalanced;
  const std::string bias = choice(all["bias"], origin, "bias", {"none", "feature", "unregularized"});
  e.bias = bias == "none" ? BiasMode::kNone : bias == "feature" ? BiasMode::kFeature : BiasMode::kUnregularized;
}

// solver, and which one a Pegasos-only setting asks for.
void read_solver(json& all, const std::string& origin, const ObjectiveRow& objective, EngineSettings& e) {
  const std::string solver = choice(all["solver"], origin, "solver", {"pegasos", "sdca", "auto"});
  e.solver = solver == "pegasos" ? Solver::kPegasos : solver == "sdca" ? Solver::kSdca : Solver::kAuto;
  if (e.solver == Solver::kSdca) {
    if (!objective.sdca && !objective.kernel) {
      refuse(origin, "solver", "sdca trains the linear objectives; " + std::string(objective.name) + " is " +
                                 std::string(objective.help) + " (solver pegasos)");
    }
    if (e.bias == BiasMode::kUnregularized && !objective.kernel) {
      refuse(origin, "solver", "sdca needs bias none or feature (the unregularized bias is Pegasos-only)");
    }
  }
  // A setting only Pegasos has, given a value other than its default, asks
  // for Pegasos (the paper's variant is then one setting away: output=last,
  // sampling=uniform, ...); writing a default out changes nothing.
  for (const ConfigKey& key : config_keys()) {
    if (!key.pegasos_only || all[key.name] == key.default_value) continue;
    if (std::string_view(key.name) == "sampling" && all[key.name] == "shuffle") continue;  // both solvers' passes
    if (e.solver == Solver::kAuto) e.solver = Solver::kPegasos;
    if (e.solver == Solver::kSdca) refuse(origin, key.name, "a Pegasos setting; solver is sdca");
  }
}

// kernel_hinge: SDCA unless a Pegasos-only setting (a budget included) asks
// for kernel Pegasos; bias feature = the kernel + 1 trick; a setting neither
// kernel solver uses may not have a non-default value (it would be ignored).
void read_kernel_solver(json& all, bool bias_given, bool multiclass_given, const std::string& origin, TrainConfig& c) {
  EngineSettings& e = c.engine;
  for (const char* key : {"projection", "output", "average_gamma", "keep_duals"}) {
    if (all[key] != default_of(key)) {
      refuse(origin, key, "not used by kernel_hinge (kernel Pegasos keeps its last iterate unprojected; kernel SDCA's "
                        "model coefficients are its dual variables)");
    }
  }
  if (e.solver == Solver::kAuto) e.solver = Solver::kSdca;  // read_solver made it pegasos if a Pegasos setting asks
  // Kernel SDCA with automatic stopping defaults to LIBSVM's problem: the
  // unregularized intercept and, with it, one-vs-one (README § Multiclass,
  // kernels); the model's settings record both.
  if (!bias_given && e.solver == Solver::kSdca && e.epochs == 0) {
    e.bias = BiasMode::kUnregularized;
    all["bias"] = "unregularized";
  }
  if (!multiclass_given && e.bias == BiasMode::kUnregularized) all["multiclass"] = "ovo";
  if (e.bias == BiasMode::kUnregularized && e.solver == Solver::kPegasos) {
    refuse(origin, "bias", "kernel Pegasos takes feature (the kernel + 1 trick: a regularised intercept) or none; "
                         "unregularized is solver sdca's");
  }
  if (e.bias == BiasMode::kUnregularized && e.epochs > 0) {
    refuse(origin, "bias", "unregularized needs automatic stopping (epochs 0): only kernel SDCA's pair steps keep its "
                         "constraint; with a fixed number of passes use bias feature");
  }
  if (e.solver == Solver::kPegasos) {
    for (const char* key : {"tolerance", "max_epochs"}) {
      if (all[key] != default_of(key)) {
        refuse(origin, key, "kernel Pegasos runs a fixed number of epochs (epochs; 0 = 5); the stopping rule is solver sdca's");
      }
    }
  }
  c.kernel.intercept = e.bias == BiasMode::kFeature;
  c.kernel.unregularized_intercept = e.bias == BiasMode::kUnregularized;
  c.kernel.one_vs_one = choice(all["multiclass"], origin, "multiclass", {"ova", "ovo"}) == "ovo";
  if (c.kernel.one_vs_one && e.solver == Solver::kPegasos) refuse(origin, "multiclass", "ovo is kernel SDCA's (kernel Pegasos: ova)");
}

// What training chooses by cross-validation on its own data: lambda "auto",
// the number of folds, calibration and the stored threshold. Echoed in the
// model's settings only when set (models without them stay as they were).
void read_selection(json& all, const std::string& origin, TrainConfig& c) {
  c.lambda_auto = all["lambda"] == "auto";
  if (all["lambda"].is_string() && !c.lambda_auto) {
    refuse(origin, "lambda", "expected a number, found string " + shown(all["lambda"]) + " (or \"auto\": chosen by cross-validation)");
  }
  const std::int64_t folds = config_integer(all["cv_folds"], origin, "cv_folds");
  if (folds < 2 || folds > 100) refuse(origin, "cv_folds", "must be between 2 and 100");
  c.cv_folds = static_cast<int>(folds);
  c.calibrate = boolean(all["calibrate"], origin, "calibrate");
  for (const char* key : {"max_fpr", "target_recall"}) {
    if (all[key].is_null()) continue;
    const double v = config_number(all[key], origin, key);
    const bool fpr = std::string(key) == "max_fpr";
    if (!(v > 0 && (fpr ? v < 1 : v <= 1))) refuse(origin, key, fpr ? "must be in (0, 1)" : "must be in (0, 1]");
    (fpr ? c.max_fpr : c.target_recall) = v;
  }
  if (c.max_fpr && c.target_recall) refuse(origin, "target_recall", "set either max_fpr or target_recall, not both");
  if ((c.max_fpr || c.target_recall) && c.objective.multiclass) {
    refuse(origin, c.max_fpr ? "max_fpr" : "target_recall",
         "a decision threshold is for binary objectives; " + std::string(c.objective.name) + " is multiclass");
  }
  for (const char* key : {"cv_folds", "calibrate", "max_fpr", "target_recall"}) {
    if (all[key] == default_of(key)) all.erase(key);
  }
}

// seed, threads, the stopping rule (tolerance, max_epochs) and strict.
void read_run_settings(json& all, const std::string& origin, TrainConfig& c) {
  EngineSettings& e = c.engine;
  const std::int64_t seed = config_integer(all["seed"], origin, "seed");
  if (seed < 0) refuse(origin, "seed", "must be >= 0");
  e.seed = static_cast<std::uint64_t>(seed);
  const std::int64_t threads = config_integer(all["threads"], origin, "threads");
  if (threads < 0 || threads > 4096) refuse(origin, "threads", "must be between 0 (all cores) and 4096");
  c.threads = static_cast<int>(threads);
  e.tolerance = config_number(all["tolerance"], origin, "tolerance");
  // A relative duality gap (P − D)/P is at most 1 (D ≥ 0 for every objective
  // here): a tolerance of 1 or more would certify any point, even α = 0.
  if (!(e.tolerance > 0 && e.tolerance < 1)) refuse(origin, "tolerance", "must be > 0 and < 1 (a relative duality gap)");
  const std::int64_t max_epochs = config_integer(all["max_epochs"], origin, "max_epochs");
  if (max_epochs < 0 || max_epochs > 1000000) {
    refuse(origin, "max_epochs", "must be between 0 (sized from the problem) and 1000000");
  }
  e.max_epochs = static_cast<int>(max_epochs);
  c.strict = boolean(all["strict"], origin, "strict");
  c.keep_duals = boolean(all["keep_duals"], origin, "keep_duals");
}

// How the data is read: format, text features and fields, label column,
// normalisation, the largest feature index, the positive label.
void read_data_settings(json& all, const std::string& origin, TrainConfig& c) {
  std::vector<std::string> formats;
  for (const auto& [format, name] : kDataFormatNames) formats.emplace_back(name);
  c.read.format = parse_data_format(choice(all["format"], origin, "format", formats));
  if (!all["features"].is_null()) {
    if (!all["features"].is_object()) refuse(origin, "features", "expected an object of text featurisation settings");
    try {
      c.features = text_options_from_json(all["features"], origin, "/features");
      validate_text_options(*c.features);
    } catch (const InputError& e) {
      throw ConfigError(e.what());
    }
    for (const auto& [key, why] : text_option_conflicts(*c.features)) refuse(origin, "features." + key, why);
  }
  for (const char* key : {"text_field", "label_field"}) {
    if (!all[key].is_string() || all[key].get<std::string>().empty()) refuse(origin, key, "expected a non-empty field name");
  }
  c.text_field = all["text_field"].get<std::string>();
  c.label_field = all["label_field"].get<std::string>();
  if (c.text_field == c.label_field) {  // each document's text would be its own label: the model learns the answer
    refuse(origin, "text_field", "is the label_field too ('" + c.text_field + "'); the text and the label must be different fields");
  }
  const json& lc = all["label_column"];
  if (lc.is_string()) {
    c.read.label_column_name = lc.get<std::string>();
    if (c.read.label_column_name.empty()) refuse(origin, "label_column", "must not be empty");
  } else {
    c.read.label_column = static_cast<long>(config_integer(lc, origin, "label_column"));
  }
  c.read.normalize_rows = choice(all["normalize"], origin, "normalize", {"none", "l2"}) == "l2";
  const std::int64_t max_index = config_integer(all["max_feature_index"], origin, "max_feature_index");
  // At most 2^32 - 2: the dimension and the bias feature after it fit in 32 bits.
  if (max_index < 1 || max_index > (std::int64_t{1} << 32) - 2) {
    refuse(origin, "max_feature_index", "must be between 1 and 4294967294");
  }
  c.read.max_feature_index = static_cast<std::uint64_t>(max_index);
  // `--set positive_label=1` arrives as a JSON number: labels are text.
  if (all["positive_label"].is_number()) all["positive_label"] = all["positive_label"].dump();
  if (!all["positive_label"].is_string()) refuse(origin, "positive_label", "expected a string (a label of the data)");
  c.positive_label = all["positive_label"].get<std::string>();
}

}  // namespace

TrainConfig config_from_json(const json& merged, const std::string& origin) {
  if (!merged.is_object()) throw ConfigError(origin + ": a configuration is a JSON object of settings");
  reject_unknown_keys(merged, origin);
  if (const std::string key = key_with_nul_byte(merged); !key.empty()) {
    refuse(origin, key, "contains a NUL byte (\\u0000), which no file name or setting may hold");
  }
  json all = json::object();
  for (const auto& k : config_keys()) all[k.name] = merged.contains(k.name) ? merged.at(k.name) : k.default_value;

  TrainConfig c;
  read_objective(merged, all, origin, c);
  read_source_model(all, origin, c);
  read_init_model(all, origin, c);
  load_weights_file(all, origin, c);
  read_kernel_approximation(all, origin, c);
  read_selection(all, origin, c);
  if (c.lambda_auto) {  // the steps are read with a stand-in λ; training replaces it (drivers/fit.hpp)
    json steps = all;
    steps["lambda"] = default_of("lambda");
    read_steps(steps, origin, c.engine);
  } else {
    read_steps(all, origin, c.engine);
  }
  read_solver(all, origin, c.objective, c.engine);
  read_run_settings(all, origin, c);
  if (c.objective.kernel) read_kernel_solver(all, merged.contains("bias"), merged.contains("multiclass"), origin, c);
  // The budget refit solves the unweighted problem: class-balanced sampling
  // keeps the iterate (its default), and asking for both is an error.
  if (c.kernel.budget_refit && c.engine.sampling == Sampling::kBalanced) {
    if (merged.contains("budget_refit") && !merged["budget_refit"].is_null()) {
      refuse(origin, "budget_refit", "solves the unweighted problem; sampling balanced keeps the budgeted iterate (use false)");
    }
    c.kernel.budget_refit = false;
    all["budget_refit"] = false;
  }
  read_data_settings(all, origin, c);
  read_warm_schedule(all, origin, c);
  if (c.init_model.empty()) all.erase("init_model");  // cold models echo their settings as before
  if (all["warm_schedule"] == default_of("warm_schedule")) all.erase("warm_schedule");  // only continue is echoed
  if (c.keep_duals) all.erase("keep_duals");  // likewise: only keep_duals false is echoed
  if (all["multiclass"] == default_of("multiclass")) all.erase("multiclass");  // and only multiclass ovo
  if (all["budget_maintenance"].is_null()) all.erase("budget_maintenance");  // and only with a budget
  if (all["budget_refit"].is_null()) all.erase("budget_refit");
  c.resolved = all;
  return c;
}

namespace {

// `--set features.hash_bits=18`: a dotted key sets one field of a nested
// setting (an object), keeping the fields the file gave it.
void set_override(json& merged, const std::string& key, const json& value, const std::string& whole) {
  const std::size_t dot = key.find('.');
  if (dot == std::string::npos) {
    merged[key] = value;
    return;
  }
  const std::string outer = key.substr(0, dot);
  json& nested = merged[outer];
  if (nested.is_null()) nested = json::object();
  if (!nested.is_object()) throw ConfigError("--set " + whole + ": " + outer + " is not an object of settings");
  set_override(nested, key.substr(dot + 1), value, whole);
}

}  // namespace

json read_json_file(const std::string& path) {
  const std::string text = read_file_bytes(path);
  if (json_nesting::too_deep(text)) throw ConfigError(path + ": " + json_nesting::error());
  try {
    return json::parse(text, nullptr, true, /*ignore_comments=*/true);
  } catch (const json::parse_error& e) {
    // Where (line:column near 'text') and what, without the library's tag.
    if (text.find_first_not_of(" \t\r\n") == std::string::npos) throw ConfigError(path + ": invalid JSON (the file is empty)");
    if (e.byte >= text.size() + 1) throw ConfigError(path + ": invalid JSON (it ends early: the file is cut off)");
    const std::string what = e.what();
    const std::size_t syntax = what.find("syntax error");
    throw ConfigError(path + ":" + json_checks::json_text_position(text, e.byte > 0 ? e.byte - 1 : 0) + ": invalid JSON (" +
                      (syntax == std::string::npos ? std::string("syntax error") : what.substr(syntax)) + ")");
  } catch (const json::exception& e) {  // e.g. a number that overflows a double (1e999)
    throw ConfigError(path + ": invalid JSON: " + e.what());
  }
}

TrainConfig load_train_config(const std::string& path, const std::vector<std::string>& overrides) {
  json merged = json::object();
  std::string origin = "defaults";
  if (!path.empty()) {
    merged = read_json_file(path);
    if (!merged.is_object()) throw ConfigError(path + ": a configuration file is a JSON object of settings");
    origin = path;
  }
  for (const auto& o : overrides) {
    auto [key, value] = parse_override(o);
    set_override(merged, key, value, key);
    origin = path.empty() ? "--set" : path + " + --set";
  }
  return config_from_json(merged, origin);
}

std::string key_with_nul_byte(const json& value, const std::string& key) {
  if (value.is_string() && value.get_ref<const std::string&>().find('\0') != std::string::npos) {
    return key.empty() ? "(value)" : key;
  }
  std::string found;
  if (value.is_object()) {
    for (auto it = value.begin(); it != value.end() && found.empty(); ++it) {
      found = key_with_nul_byte(it.value(), key.empty() ? it.key() : key + "/" + it.key());
    }
  } else if (value.is_array()) {
    for (std::size_t i = 0; i < value.size() && found.empty(); ++i) {
      found = key_with_nul_byte(value[i], key + "/" + std::to_string(i));
    }
  }
  return found;
}

}  // namespace pegasos
