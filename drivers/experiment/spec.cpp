// The experiment file: keys, the grid expansion and the validation of every
// grid point's config (drivers/experiment.hpp: parse_experiment, expand_grid).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>

#include "core/output_file.hpp"
#include "core/errors.hpp"
#include "drivers/config.hpp"
#include "drivers/experiment.hpp"
#include "drivers/experiment/common.hpp"

namespace pegasos {

using namespace experiment_detail;
namespace fs = std::filesystem;

namespace {

void reject_unknown(const json& object, const std::vector<std::string>& allowed, const std::string& origin,
                    const std::string& prefix, const std::string& what) {
  for (const auto& [key, value] : object.items()) {
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
    std::string hint = suggestion(key, allowed);
    if (prefix.empty() &&
        std::any_of(config_keys().begin(), config_keys().end(), [&](const ConfigKey& k) { return k.name == key; })) {
      hint = " (a training setting: put it under \"config\", or sweep it in \"grid\")";
    }
    fail(origin, prefix + key, "unknown " + what + hint);
  }
}

std::int64_t bounded(const json& j, const std::string& origin, const std::string& key, std::int64_t lo,
                     std::int64_t hi) {
  if (!j.is_number() || !std::isfinite(j.get<double>()) || j.get<double>() != std::floor(j.get<double>())) {
    fail(origin, key, "expected an integer, found " + j.dump());
  }
  const double v = j.get<double>();
  if (v < static_cast<double>(lo) || v > static_cast<double>(hi)) {
    fail(origin, key, "must be between " + std::to_string(lo) + " and " + std::to_string(hi));
  }
  return static_cast<std::int64_t>(v);
}

bool is_config_key(const std::string& key) {
  return std::any_of(config_keys().begin(), config_keys().end(), [&](const ConfigKey& k) { return k.name == key; });
}

// Settings the data loading depends on: the data is read once per experiment,
// so they cannot vary between runs.
const std::vector<std::string> kLoadOnceKeys = {"format",         "label_column", "normalize",  "max_feature_index",
                                                "positive_label", "features",     "text_field", "label_field",
                                                "threads"};

struct MetricInfo {
  const char* name;
  bool maximize;
};
// Metrics of a run (see evaluate()); "objective" is the training objective
// P(w) on the run's training data, "eval_objective" the same on its
// evaluation set.
constexpr MetricInfo kMetrics[] = {
    {"accuracy", true},    {"balanced_accuracy", true}, {"macro_f1", true},
    {"weighted_f1", true}, {"roc_auc", true},           {"recall_at_max_fpr", true},
    {"error", false},      {"objective", false},        {"eval_objective", false},
};

std::string resolve_path(const std::string& directory, const std::string& p) {
  fs::path path(p);
  if (path.is_relative()) path = fs::path(directory) / path;
  return usable_path(path.string());
}

// A missing input names the experiment's "prepare" command, which makes it.
void require_file(const std::string& path, const std::string& origin, const std::string& key,
                  const std::string& prepare) {
  std::error_code ec;
  if (fs::exists(path, ec)) return;
  throw InputError(origin + ": " + key + ": no such file '" + path + "'" +
                   (prepare.empty() ? std::string() : "; make it with: " + prepare));
}

}  // namespace

bool metric_is_maximized(const std::string& metric, const std::string& origin) {
  std::vector<std::string> names;
  for (const auto& m : kMetrics) {
    if (metric == m.name) return m.maximize;
    names.emplace_back(m.name);
  }
  std::string all;
  for (const auto& n : names) all += (all.empty() ? "" : ", ") + n;
  fail(origin, "select/metric", "'" + metric + "' is not a metric" + suggestion(metric, names) + "; one of " + all);
}

std::vector<json> expand_grid(const json& grid, const json& zip, const std::string& origin) {
  std::vector<std::string> names;
  for (const auto& k : config_keys()) names.push_back(k.name);
  auto check = [&](const json& object, const std::string& section) {
    if (!object.is_object()) fail(origin, section, "expected an object {setting: [values, ...]}");
    for (const auto& [key, values] : object.items()) {
      const std::string where = section + "/" + key;
      if (!is_config_key(key)) {
        const std::string near = closest_key(key);
        fail(origin, where,
             "unknown setting" + (near.empty() ? std::string() : " (did you mean '" + near + "'?)") +
                 "; `pegasos train --help` lists them");
      }
      if (std::find(kLoadOnceKeys.begin(), kLoadOnceKeys.end(), key) != kLoadOnceKeys.end()) {
        fail(origin, where,
             "the data is read once for the whole experiment, so this setting cannot vary; set it in \"config\"");
      }
      if (!values.is_array()) fail(origin, where, "expected a list of values, found " + values.dump());
      if (values.empty()) fail(origin, where, "empty list: give at least one value");
    }
  };
  check(grid, "grid");
  check(zip, "zip");
  std::size_t zip_size = 0;
  std::string zip_first;
  for (const auto& [key, values] : zip.items()) {
    if (grid.contains(key)) fail(origin, "zip/" + key, "also in \"grid\": sweep a setting in one of them");
    if (zip_first.empty()) {
      zip_first = key;
      zip_size = values.size();
    } else if (values.size() != zip_size) {
      fail(origin, "zip/" + key,
           std::to_string(values.size()) + " values but zip/" + zip_first + " has " + std::to_string(zip_size) +
               ": zipped lists have equal lengths");
    }
  }
  // Cartesian product, last key fastest (json objects iterate in sorted key order).
  std::vector<json> points{json::object()};
  for (const auto& [key, values] : grid.items()) {
    std::vector<json> next;
    next.reserve(points.size() * values.size());
    for (const auto& p : points) {
      for (const auto& v : values) {
        json q = p;
        q[key] = v;
        next.push_back(std::move(q));
      }
    }
    points = std::move(next);
  }
  if (zip_size > 0) {
    std::vector<json> next;
    for (const auto& p : points) {
      for (std::size_t i = 0; i < zip_size; ++i) {
        json q = p;
        for (const auto& [key, values] : zip.items()) q[key] = values[i];
        next.push_back(std::move(q));
      }
    }
    points = std::move(next);
  }
  return points;
}

namespace {

void parse_name(const json& j, const std::string& file, const std::string& origin, Experiment& e) {
  if (j.contains("name")) {
    if (!j["name"].is_string() || j["name"].get<std::string>().empty() ||
        j["name"].get<std::string>().find('/') != std::string::npos) {
      fail(origin, "name", "expected a non-empty name without '/'");
    }
    e.name = j["name"].get<std::string>();
  } else {
    e.name = file.empty() ? "experiment" : fs::path(file).stem().string();
  }
  if (j.contains("description") && !j["description"].is_string()) fail(origin, "description", "expected text");
  if (j.contains("prepare")) {
    if (!j["prepare"].is_string()) fail(origin, "prepare", "expected the command that makes the data (text)");
    e.prepare = j["prepare"].get<std::string>();
  }
}

// A source model path relative to the experiment file's folder.
void resolve_source(json& value, const std::string& directory) {
  if (value.is_string() && !value.get<std::string>().empty()) value = resolve_path(directory, value.get<std::string>());
}

// Base config: validated on its own first so its errors name "config".
TrainConfig parse_base_config(const json& j, const std::string& origin, Experiment& e) {
  if (!j.contains("config")) fail(origin, "config", "missing: the base training config ({} for the defaults)");
  if (!j["config"].is_object()) fail(origin, "config", "expected an object of training settings");
  e.base_config = j["config"];
  for (const auto& [key, value] : e.base_config.items()) {
    if (!is_config_key(key)) {
      const std::string near = closest_key(key);
      fail(origin, "config/" + key,
           "unknown setting" + (near.empty() ? std::string() : " (did you mean '" + near + "'?)") +
               "; `pegasos train --help` lists them");
    }
  }
  if (e.base_config.contains("source_model")) resolve_source(e.base_config["source_model"], e.directory);
  return config_from_json(e.base_config, origin + ": config");
}

// "data": train/test files or one file split by holdout and/or folds.
// Returns whether there is a test set.
bool parse_data(const json& j, const std::string& origin, std::uint64_t base_seed, Experiment& e) {
  if (!j.contains("data") || !j["data"].is_object()) {
    fail(origin, "data",
         "missing: {\"train\": PATH, \"test\": PATH} or {\"file\": PATH, \"holdout\": 0.2 | \"folds\": 5}");
  }
  const json& d = j["data"];
  reject_unknown(d, {"train", "test", "file", "holdout", "folds", "stratified", "seed"}, origin, "data/", "data key");
  auto path_of = [&](const char* key) {
    if (!d.contains(key)) return std::string();
    if (!d[key].is_string() || d[key].get<std::string>().empty())
      fail(origin, std::string("data/") + key, "expected a file name");
    return resolve_path(e.directory, d[key].get<std::string>());
  };
  e.data.train = path_of("train");
  e.data.test = path_of("test");
  e.data.file = path_of("file");
  if (e.data.train.empty() == e.data.file.empty())
    fail(origin, "data", "give either \"train\" (with \"test\") or \"file\"");
  if (!e.data.test.empty() && e.data.train.empty())
    fail(origin, "data/test", "only with \"train\" (a \"file\" is split with \"holdout\")");
  if (d.contains("holdout")) {
    if (e.data.file.empty()) fail(origin, "data/holdout", "only with \"file\" (with \"train\", give \"test\")");
    if (!d["holdout"].is_number()) fail(origin, "data/holdout", "expected a fraction, found " + d["holdout"].dump());
    e.data.holdout = d["holdout"].get<double>();
    if (!(e.data.holdout > 0 && e.data.holdout < 1))
      fail(origin, "data/holdout", "must be between 0 and 1 (exclusive)");
  }
  if (d.contains("folds")) e.data.folds = static_cast<int>(bounded(d["folds"], origin, "data/folds", 2, 1000));
  if (d.contains("stratified")) {
    if (!d["stratified"].is_boolean()) fail(origin, "data/stratified", "expected true or false");
    e.data.stratified = d["stratified"].get<bool>();
  }
  e.data.seed = base_seed;
  if (d.contains("seed"))
    e.data.seed = static_cast<std::uint64_t>(bounded(d["seed"], origin, "data/seed", 0, std::int64_t{1} << 53));
  const bool has_test = !e.data.test.empty() || e.data.holdout > 0;
  if (!has_test && e.data.folds == 0) {
    fail(origin, "data", "nothing to evaluate on: give \"test\", \"holdout\" or \"folds\"");
  }
  return has_test;
}

// "grid" and "zip": the swept settings and one validated config per point.
void read_grid(const json& j, const std::string& origin, Experiment& e) {
  if (j.contains("grid")) e.grid = j["grid"];
  if (j.contains("zip")) e.zip = j["zip"];
  if (!e.grid.is_object()) fail(origin, "grid", "expected an object {setting: [values, ...]}");
  if (!e.zip.is_object()) fail(origin, "zip", "expected an object {setting: [values, ...]} (lists of equal length)");
  for (json* section : {&e.grid, &e.zip}) {
    if (section->contains("source_model") && (*section)["source_model"].is_array()) {
      for (auto& v : (*section)["source_model"]) resolve_source(v, e.directory);
    }
  }
  for (const auto& [key, v] : e.grid.items()) e.swept_keys.push_back(key);
  for (const auto& [key, v] : e.zip.items()) e.swept_keys.push_back(key);
  const std::vector<json> params = expand_grid(e.grid, e.zip, origin);
  for (const json& p : params) {
    json merged = e.base_config;
    // A swept step count replaces the other one from the base config.
    if (p.contains("iterations")) merged.erase("epochs");
    if (p.contains("epochs")) merged.erase("iterations");
    for (const auto& [key, value] : p.items()) merged[key] = value;
    GridPoint g;
    g.params = p;
    g.config = config_from_json(merged, origin + ": grid point " + (p.empty() ? std::string("(base)") : p.dump()));
    if (g.config.objective.needs_source_model) require_file(g.config.source_model, origin, "source_model", e.prepare);
    if (g.config.kernel_approximation) {
      fail(origin, "kernel_approximation", "not supported by experiment runs yet; use pegasos train (or its --cv)");
    }
    if (!g.config.init_model.empty()) {
      fail(origin, "init_model", "warm starts are for pegasos train (--init-model); experiment runs train from zero");
    }
    if (!g.config.weights_file.empty()) {
      fail(origin, "weights_file", "per-example weights are for pegasos train (--weights); experiment runs weigh rows equally");
    }
    e.points.push_back(std::move(g));
  }
}

// "repeats" and the trace settings (after the grid: trace_iterations sets every point's solver).
void parse_repeats_and_traces(const json& j, const std::string& origin, Experiment& e) {
  if (j.contains("repeats")) e.repeats = static_cast<int>(bounded(j["repeats"], origin, "repeats", 1, 100000));
  if (j.contains("trace_every"))
    e.trace_every = static_cast<int>(bounded(j["trace_every"], origin, "trace_every", 0, 1000000));
  if (j.contains("trace_iterations")) {
    if (j.contains("trace_every")) fail(origin, "trace_iterations", "give trace_every (epochs) or trace_iterations, not both");
    e.trace_iterations =
        static_cast<std::uint64_t>(bounded(j["trace_iterations"], origin, "trace_iterations", 1, std::int64_t{1} << 50));
    e.trace_every = 1;  // traces on; the engine places the points every trace_iterations steps
    // Points every N steps are a Pegasos notion: auto picks Pegasos, sdca is refused.
    for (GridPoint& g : e.points) {
      if (g.config.engine.solver == Solver::kSdca) {
        fail(origin, "trace_iterations", "places points every N Pegasos steps; solver sdca traces per pass (trace_every)");
      }
      g.config.engine.solver = Solver::kPegasos;
    }
  }
  if (j.contains("trace_sample")) {
    const json& v = j["trace_sample"];
    if (!v.is_number() || !(v.get<double>() > 0.0 && v.get<double>() <= 1.0)) {
      fail(origin, "trace_sample", "expected a fraction in (0, 1], found " + v.dump());
    }
    e.trace_sample = v.get<double>();
  }
}

// "max_fpr", "plots", "select" and the metric that ranks test runs.
void parse_reporting(const json& j, const std::string& origin, bool has_test, Experiment& e) {
  if (j.contains("max_fpr")) {
    if (!j["max_fpr"].is_number() || !(j["max_fpr"].get<double>() > 0 && j["max_fpr"].get<double>() < 1)) {
      fail(origin, "max_fpr", "expected a false-positive rate between 0 and 1 (exclusive)");
    }
    e.max_fpr = j["max_fpr"].get<double>();
  }
  if (j.contains("plots")) {
    if (!j["plots"].is_boolean()) fail(origin, "plots", "expected true or false");
    e.plots = j["plots"].get<bool>();
  }
  if (j.contains("select")) {
    const json& s = j["select"];
    if (!s.is_object()) fail(origin, "select", "expected {\"metric\": NAME}");
    reject_unknown(s, {"metric"}, origin, "select/", "select key");
    if (!s.contains("metric") || !s["metric"].is_string()) fail(origin, "select/metric", "expected a metric name");
    e.select_metric = s["metric"].get<std::string>();
    metric_is_maximized(e.select_metric, origin);
    if (e.data.folds == 0) fail(origin, "select", "cross-validated selection needs data/folds");
    if (!has_test)
      fail(origin, "select", "the selected model is evaluated on a test set: give data/test or data/holdout");
  }
  e.rank_metric = e.select_metric.empty() ? "balanced_accuracy" : e.select_metric;
  if (e.rank_metric == "recall_at_max_fpr" && !e.max_fpr)
    fail(origin, "select/metric", "recall_at_max_fpr needs max_fpr");
}

}  // namespace

Experiment parse_experiment(const json& j, const std::string& file) {
  const std::string origin = file.empty() ? "experiment" : file;
  if (!j.is_object()) throw ConfigError(origin + ": an experiment is a JSON object (see docs/experiments.md)");
  if (const std::string key = key_with_nul_byte(j); !key.empty()) {
    fail(origin, key, "contains a NUL byte (\\u0000), which no file name or setting may hold");
  }
  reject_unknown(
      j,
      {"name", "description", "prepare", "data", "config", "grid", "zip", "repeats", "select", "trace_every", "trace_iterations", "trace_sample", "max_fpr", "plots"},
      origin, "", "experiment key");
  Experiment e;
  e.path = file;
  const fs::path parent = fs::path(file).parent_path();
  e.directory = parent.string();  // as given: resolve_path makes the paths under it absolute where it can
  parse_name(j, file, origin, e);
  const TrainConfig base = parse_base_config(j, origin, e);
  const bool has_test = parse_data(j, origin, base.engine.seed, e);
  read_grid(j, origin, e);
  parse_repeats_and_traces(j, origin, e);
  parse_reporting(j, origin, has_test, e);

  // Data files last: every key error is reported before a missing file.
  if (!e.data.train.empty()) require_file(e.data.train, origin, "data/train", e.prepare);
  if (!e.data.test.empty()) require_file(e.data.test, origin, "data/test", e.prepare);
  if (!e.data.file.empty()) require_file(e.data.file, origin, "data/file", e.prepare);
  return e;
}

Experiment load_experiment(const std::string& path) { return parse_experiment(read_json_file(path), path); }

}  // namespace pegasos
