#include "drivers/experiment.hpp"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <concepts>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <numeric>
#include <set>

#include <tbb/blocked_range.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>

#include "core/atomic_file.hpp"
#include "core/errors.hpp"
#include "core/metrics.hpp"
#include "core/model.hpp"
#include "core/random.hpp"
#include "drivers/any_model.hpp"
#include "drivers/data.hpp"
#include "drivers/registry.hpp"
#include "drivers/report.hpp"

namespace pegasos {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// CPU time of the calling thread: unlike wall time it does not grow when
// other processes share the cores. Exact with threads = 1; otherwise it misses
// work TBB hands to other threads (one-vs-all classes, objective passes over
// > 4096 rows) and may include another run's work stolen while waiting.
double thread_cpu_seconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

[[noreturn]] void fail(const std::string& origin, const std::string& key, const std::string& what) {
  throw ConfigError(origin + ": " + key + ": " + what);
}

// " (did you mean 'x'?)" for the closest of `names`, or "".
std::string suggestion(const std::string& key, const std::vector<std::string>& names) {
  const std::string best = closest_name(key, names);
  return best.empty() ? "" : " (did you mean '" + best + "'?)";
}

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

std::int64_t integer(const json& j, const std::string& origin, const std::string& key, std::int64_t lo,
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
  return path.lexically_normal().string();
}

void require_file(const std::string& path, const std::string& origin, const std::string& key) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw InputError(origin + ": " + key + ": no such file '" + path + "'");
}

// A value as plain text for labels: strings bare, JSON without quotes
// ({"ham":1} -> {ham:1}) so it is safe in gnuplot strings and data files.
std::string value_text(const json& v) {
  std::string s = v.is_string() ? v.get<std::string>() : v.dump();
  std::erase(s, '"');
  return s;
}

std::string params_text(const json& params) {
  std::string s;
  for (const auto& [k, v] : params.items()) s += (s.empty() ? "" : " ") + k + "=" + value_text(v);
  return s.empty() ? "base config" : s;
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

Experiment parse_experiment(const json& j, const std::string& file) {
  const std::string origin = file.empty() ? "experiment" : file;
  if (!j.is_object()) throw ConfigError(origin + ": an experiment is a JSON object (see docs/experiments.md)");
  reject_unknown(
      j,
      {"name", "description", "data", "config", "grid", "zip", "repeats", "select", "trace_every", "trace_iterations", "trace_sample", "max_fpr", "plots"},
      origin, "", "experiment key");
  Experiment e;
  e.path = file;
  const fs::path parent = fs::path(file).parent_path();
  e.directory = (parent.empty() ? fs::current_path() : fs::absolute(parent)).lexically_normal().string();
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

  // Base config: validated on its own first so its errors name "config".
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
  auto resolve_source = [&](json& value) {
    if (value.is_string() && !value.get<std::string>().empty())
      value = resolve_path(e.directory, value.get<std::string>());
  };
  if (e.base_config.contains("source_model")) resolve_source(e.base_config["source_model"]);
  const TrainConfig base = config_from_json(e.base_config, origin + ": config");

  // Data.
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
  if (d.contains("folds")) e.data.folds = static_cast<int>(integer(d["folds"], origin, "data/folds", 2, 1000));
  if (d.contains("stratified")) {
    if (!d["stratified"].is_boolean()) fail(origin, "data/stratified", "expected true or false");
    e.data.stratified = d["stratified"].get<bool>();
  }
  e.data.seed = base.engine.seed;
  if (d.contains("seed"))
    e.data.seed = static_cast<std::uint64_t>(integer(d["seed"], origin, "data/seed", 0, std::int64_t{1} << 53));
  const bool has_test = !e.data.test.empty() || e.data.holdout > 0;
  if (!has_test && e.data.folds == 0) {
    fail(origin, "data", "nothing to evaluate on: give \"test\", \"holdout\" or \"folds\"");
  }

  // Grid.
  if (j.contains("grid")) e.grid = j["grid"];
  if (j.contains("zip")) e.zip = j["zip"];
  if (!e.grid.is_object()) fail(origin, "grid", "expected an object {setting: [values, ...]}");
  if (!e.zip.is_object()) fail(origin, "zip", "expected an object {setting: [values, ...]} (lists of equal length)");
  for (json* section : {&e.grid, &e.zip}) {
    if (section->contains("source_model") && (*section)["source_model"].is_array()) {
      for (auto& v : (*section)["source_model"]) resolve_source(v);
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
    if (g.config.objective == "transfer") require_file(g.config.source_model, origin, "source_model");
    e.points.push_back(std::move(g));
  }

  if (j.contains("repeats")) e.repeats = static_cast<int>(integer(j["repeats"], origin, "repeats", 1, 100000));
  if (j.contains("trace_every"))
    e.trace_every = static_cast<int>(integer(j["trace_every"], origin, "trace_every", 0, 1000000));
  if (j.contains("trace_iterations")) {
    if (j.contains("trace_every")) fail(origin, "trace_iterations", "give trace_every (epochs) or trace_iterations, not both");
    e.trace_iterations =
        static_cast<std::uint64_t>(integer(j["trace_iterations"], origin, "trace_iterations", 1, std::int64_t{1} << 50));
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

  // Data files last: every key error is reported before a missing file.
  if (!e.data.train.empty()) require_file(e.data.train, origin, "data/train");
  if (!e.data.test.empty()) require_file(e.data.test, origin, "data/test");
  if (!e.data.file.empty()) require_file(e.data.file, origin, "data/file");
  return e;
}

Experiment load_experiment(const std::string& path) {
  const std::string text = read_file_bytes(path);
  json j;
  try {
    j = json::parse(text, nullptr, true, /*ignore_comments=*/true);
  } catch (const json::parse_error& err) {
    throw ConfigError(path + ": invalid JSON at byte " + std::to_string(err.byte) + ": " + err.what());
  } catch (const json::exception& err) {
    throw ConfigError(path + ": invalid JSON: " + err.what());
  }
  return parse_experiment(j, path);
}

// ---------------------------------------------------------------------------
// Splits.

namespace {

// Rows grouped by class (all rows in one group when not stratified), each
// group shuffled with its own stream so the split of one class does not
// depend on the others.
std::vector<std::vector<std::size_t>> shuffled_groups(const std::vector<int>& labels, bool stratified,
                                                      std::uint64_t seed) {
  std::vector<std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const std::size_t g = stratified ? static_cast<std::size_t>(std::max(labels[i], -1) + 1) : 0;
    if (groups.size() <= g) groups.resize(g + 1);
    groups[g].push_back(i);
  }
  for (std::size_t g = 0; g < groups.size(); ++g) {
    Rng rng(derive_seed(seed, 1000 + g));
    rng.shuffle(std::span<std::size_t>(groups[g]));
  }
  return groups;
}

}  // namespace

std::vector<std::vector<std::size_t>> make_folds(const std::vector<int>& labels, int folds, bool stratified,
                                                 std::uint64_t seed) {
  const std::size_t K = static_cast<std::size_t>(folds);
  std::vector<std::vector<std::size_t>> out(K);
  std::size_t next = 0;
  for (const auto& group : shuffled_groups(labels, stratified, seed)) {
    for (std::size_t i : group) {
      out[next].push_back(i);
      next = (next + 1) % K;
    }
  }
  for (auto& f : out) std::sort(f.begin(), f.end());
  return out;
}

HoldoutSplit holdout_split(const std::vector<int>& labels, double fraction, bool stratified, std::uint64_t seed) {
  HoldoutSplit s;
  for (const auto& group : shuffled_groups(labels, stratified, seed)) {
    const auto take = static_cast<std::size_t>(std::llround(fraction * static_cast<double>(group.size())));
    s.test.insert(s.test.end(), group.begin(), group.begin() + static_cast<std::ptrdiff_t>(take));
    s.train.insert(s.train.end(), group.begin() + static_cast<std::ptrdiff_t>(take), group.end());
  }
  std::sort(s.train.begin(), s.train.end());
  std::sort(s.test.begin(), s.test.end());
  return s;
}

Dataset subset(const Dataset& data, const std::vector<std::size_t>& rows) {
  Dataset out;
  out.classes = data.classes;
  out.dimension = data.dimension;
  out.source = data.source;
  std::uint64_t nnz = 0;
  for (std::size_t i : rows) nnz += data.row_ptr[i + 1] - data.row_ptr[i];
  out.row_ptr.reserve(rows.size() + 1);
  out.indices.reserve(nnz);
  out.values.reserve(nnz);
  out.labels.reserve(rows.size());
  for (std::size_t i : rows) {
    const auto b = static_cast<std::ptrdiff_t>(data.row_ptr[i]), e = static_cast<std::ptrdiff_t>(data.row_ptr[i + 1]);
    out.indices.insert(out.indices.end(), data.indices.begin() + b, data.indices.begin() + e);
    out.values.insert(out.values.end(), data.values.begin() + b, data.values.begin() + e);
    out.row_ptr.push_back(out.indices.size());
    out.labels.push_back(data.labels[i]);
  }
  return out;
}

std::size_t best_index(const std::vector<double>& values, bool maximize) {
  std::size_t best = 0;
  bool found = false;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (std::isnan(values[i])) continue;
    if (!found || (maximize ? values[i] > values[best] : values[i] < values[best])) {
      best = i;
      found = true;
    }
  }
  return best;
}

json without_timing(const json& j) {
  if (j.is_object()) {
    json out = json::object();
    for (const auto& [key, value] : j.items()) {
      if (key != "timing") out[key] = without_timing(value);
    }
    return out;
  }
  if (j.is_array()) {
    json out = json::array();
    for (const auto& v : j) out.push_back(without_timing(v));
    return out;
  }
  return j;
}

// ---------------------------------------------------------------------------
// Running.

namespace {

// The data of an experiment, loaded once and shared (read-only) by all runs.
struct LoadedData {
  nlohmann::json features;                      // raw text: the fitted featurizer (null for numeric data)
  std::map<std::string, std::shared_ptr<const Model>> sources;  // transfer source models, read once
  Dataset pool;                                 // the training part
  std::optional<Dataset> test;                  // the test set (test / final runs)
  std::vector<std::vector<std::size_t>> folds;  // rows of pool
  std::vector<int> fold_of;                     // pool row -> fold
  std::vector<Dataset> fold_eval;               // copy of each fold: the evaluation set of cv runs
};

std::string class_list(const std::vector<std::string>& classes) {
  std::string s;
  for (std::size_t i = 0; i < classes.size() && i < 10; ++i) s += (i ? ", " : "") + ("'" + classes[i] + "'");
  if (classes.size() > 10) s += ", ...";
  return s;
}

// Reads the data and checks it against every grid point, so that nothing
// that could fail for data reasons is left for the runs.
LoadedData load_data(const Experiment& e) {
  const TrainConfig& base = e.points.front().config;  // reader settings cannot vary
  LoadedData d;
  // Transfer points: the source models must fit the data; with raw text they
  // also fix the featurizer (the same for every point, so runs compare).
  auto& sources = d.sources;
  for (const GridPoint& p : e.points) {
    if (p.config.objective == "transfer" && !sources.count(p.config.source_model)) {
      sources.emplace(p.config.source_model, std::make_shared<const Model>(load_model(p.config.source_model)));
    }
  }
  json fixed_features = nullptr;
  for (const auto& [path, source] : sources) {
    const Model& model = *source;
    if (model.features.is_null()) continue;
    if (!fixed_features.is_null() && fixed_features != model.features) {
      throw ConfigError("source_model: " + path + " and another source model featurise text differently");
    }
    if (!base.features.is_null()) {
      throw ConfigError("features: transfer re-uses the featurizer of " + path + ", so leave features unset");
    }
    fixed_features = model.features;
  }
  const std::string source_path = e.data.train.empty() ? e.data.file : e.data.train;
  // Raw text: the featurizer (vocabulary, idf) is fitted once on the whole
  // training file; with folds or a holdout that includes the held-out rows'
  // texts (never their labels).
  const bool raw_text = is_text_input(source_path, base.resolved.value("format", "auto"));
  for (const GridPoint& p : e.points) check_input_kind(p.config, raw_text);  // before reading the data
  TrainingData loaded = load_training_data(base, source_path, fixed_features);
  Dataset source = std::move(loaded.data);
  d.features = std::move(loaded.features);
  for (const GridPoint& p : e.points) prepare_labels(p.config, source);  // same label order for every point
  for (const auto& [path, model] : sources) {
    if (model->classes != source.classes || !model->binary()) {
      throw InputError(path + ": the source model's labels (" + class_list(model->classes) +
                       ") differ from the training data's (" + class_list(source.classes) + ")");
    }
  }
  for (const GridPoint& p : e.points) {
    if (!p.config.class_weight.is_object()) continue;
    for (const auto& [label, cost] : p.config.class_weight.items()) {
      if (std::find(source.classes.begin(), source.classes.end(), canonical_label(label)) == source.classes.end()) {
        throw ConfigError("grid point " + p.params.dump() + ": class_weight: label '" + label + "' does not occur in " +
                          source.source + " (labels: " + class_list(source.classes) + ")");
      }
    }
  }
  if (!e.data.test.empty()) {
    Model reader;  // applies the training data's reader settings and featurizer
    reader.data = reader_settings(base);
    reader.features = d.features;
    Dataset test = load_data_for_model(reader, e.data.test, true);
    const auto unknown = test.remap_classes(source.classes);
    if (!unknown.empty()) {
      throw InputError(e.data.test + ": label '" + unknown.front() + "' does not occur in the training data " +
                       source.source + " (labels: " + class_list(source.classes) + ")");
    }
    // One feature space for both, so models and evaluation agree.
    const std::uint32_t dim = std::max(source.dimension, test.dimension);
    source.dimension = test.dimension = dim;
    d.test = std::move(test);
    d.pool = std::move(source);
  } else if (e.data.holdout > 0) {
    const HoldoutSplit s = holdout_split(source.labels, e.data.holdout, e.data.stratified, e.data.seed);
    if (s.train.empty() || s.test.empty()) {
      throw InputError(e.data.file + ": " + std::to_string(source.size()) + " examples are too few for holdout " +
                       std::to_string(e.data.holdout));
    }
    d.test = subset(source, s.test);
    d.pool = subset(source, s.train);
  } else {
    d.pool = std::move(source);
  }
  const std::vector<std::size_t> pool_counts = d.pool.class_counts();
  for (std::size_t k = 0; k < pool_counts.size(); ++k) {
    if (pool_counts[k] == 0) {
      throw InputError(d.pool.source + ": the training part has no example of class '" + d.pool.classes[k] +
                       "' (use stratified splits or a smaller holdout)");
    }
  }
  if (e.data.folds > 0) {
    if (d.pool.size() < static_cast<std::size_t>(e.data.folds)) {
      throw InputError(d.pool.source + ": " + std::to_string(d.pool.size()) + " training examples are too few for " +
                       std::to_string(e.data.folds) + " folds");
    }
    d.folds = make_folds(d.pool.labels, e.data.folds, e.data.stratified, e.data.seed);
    d.fold_of.assign(d.pool.size(), -1);
    for (std::size_t f = 0; f < d.folds.size(); ++f) {
      for (std::size_t i : d.folds[f]) d.fold_of[i] = static_cast<int>(f);
      d.fold_eval.push_back(subset(d.pool, d.folds[f]));
      const auto counts = d.fold_eval.back().class_counts();
      for (std::size_t k = 0; k < counts.size(); ++k) {
        if (counts[k] == pool_counts[k]) {
          throw InputError(d.pool.source + ": fold " + std::to_string(f) + " holds every example of class '" +
                           d.pool.classes[k] + "', so its training part has none (use fewer folds or stratified)");
        }
      }
    }
  }
  return d;
}

enum class Phase { kCv, kTest, kFinal };
const char* phase_name(Phase p) { return p == Phase::kCv ? "cv" : p == Phase::kTest ? "test" : "final"; }

struct RunSpec {
  Phase phase = Phase::kTest;
  std::size_t point = 0;
  int repeat = 0;
  int fold = -1;  // cv runs: the held-out fold
  std::uint64_t seed = 0;
};

struct TracePoint {
  int epoch = 0;
  std::uint64_t iterations = 0;
  double objective = 0.0;
  std::optional<double> test_error;
  double seconds = 0.0;
};

struct Evaluation {
  json metrics;
  Metrics full;
  std::vector<double> scores;  // K per row
};

// Error of dense weights (dimension × K feature-major, K biases) on the
// given rows of `data` (all rows when `rows` is empty).
double error_rate(const Dataset& data, const std::vector<double>& w, const std::vector<double>& b,
                  const std::vector<std::size_t>& rows) {
  const std::size_t K = b.size();
  if (K == 0) return std::nan("");
  const std::size_t dim = w.size() / K;
  std::vector<double> s(K);
  std::size_t wrong = 0, counted = 0;
  const std::size_t count = rows.empty() ? data.size() : rows.size();
  for (std::size_t r = 0; r < count; ++r) {
    const std::size_t i = rows.empty() ? r : rows[r];
    if (data.labels[i] < 0) continue;
    const RowView x = data.row(i);
    int predicted = 0;
    if (K == 1) {  // the common binary case: one dot product
      double score = b[0];
      for (std::uint32_t j = 0; j < x.nnz; ++j) {
        if (x.indices[j] < dim) score += static_cast<double>(x.values[j]) * w[x.indices[j]];
      }
      predicted = score > 0.0 ? 1 : 0;
    } else {
      std::copy(b.begin(), b.end(), s.begin());
      for (std::uint32_t j = 0; j < x.nnz; ++j) {
        if (x.indices[j] >= dim) continue;
        const double v = x.values[j];
        const double* row = &w[x.indices[j] * K];
        for (std::size_t k = 0; k < K; ++k) s[k] += v * row[k];
      }
      predicted = static_cast<int>(std::max_element(s.begin(), s.end()) - s.begin());
    }
    wrong += predicted != data.labels[i];
    ++counted;
  }
  return counted == 0 ? std::nan("") : static_cast<double>(wrong) / static_cast<double>(counted);
}

Evaluation evaluate(const AnyModel& model, const Dataset& data, std::optional<double> max_fpr) {
  Evaluation ev;
  const std::size_t K = static_cast<std::size_t>(model.outputs());
  ev.scores = model.scores(data);
  std::vector<int> predicted(data.size());
  for (std::size_t i = 0; i < data.size(); ++i) predicted[i] = model.predict_class(&ev.scores[i * K]);
  ev.full = classification_metrics(data.labels, predicted, model.classes());
  json& m = ev.metrics;
  m["accuracy"] = ev.full.accuracy;
  m["error"] = 1.0 - ev.full.accuracy;
  m["balanced_accuracy"] = ev.full.balanced_accuracy;
  m["macro_f1"] = ev.full.macro_f1;
  m["weighted_f1"] = ev.full.weighted_f1;
  m["objective"] = model.training().value("objective", std::nan(""));
  m["eval_objective"] = model.objective(data);
  if (model.binary()) {
    std::vector<char> positive(data.size());
    for (std::size_t i = 0; i < data.size(); ++i) positive[i] = data.labels[i] == 1;
    ev.full.roc_auc = roc_auc(ev.scores, positive);
    if (ev.full.roc_auc) m["roc_auc"] = *ev.full.roc_auc;
    if (max_fpr) {
      if (auto op = threshold_for_fpr(ev.scores, positive, *max_fpr)) {
        m["recall_at_max_fpr"] = op->recall;
        m["at_max_fpr"] = {{"max_fpr", *max_fpr},
                           {"threshold", op->threshold},
                           {"false_positive_rate", op->false_positive_rate},
                           {"precision", op->precision},
                           {"recall", op->recall}};
      }
    }
  }
  return ev;
}

struct RunOutcome {
  json record;
  std::optional<AnyModel> model;  // kept only when asked (the best run)
  std::optional<Evaluation> evaluation;
};

RunOutcome execute(const Experiment& e, const LoadedData& d, std::size_t id, const RunSpec& spec, bool keep) {
  const GridPoint& point = e.points[spec.point];
  TrainConfig config = point.config;
  if (config.objective == "transfer") config.source = d.sources.at(config.source_model);
  config.engine.seed = spec.seed;
  config.resolved["seed"] = spec.seed;
  if (e.trace_every > 0) {
    config.engine.trace_objective = true;
    config.engine.trace_every = e.trace_every;
    config.engine.trace_iterations = e.trace_iterations;
    config.engine.trace_sample = e.trace_sample;
  }

  std::optional<Dataset> part;  // cv: the other folds (a copy; freed after training)
  if (spec.fold >= 0) {
    std::vector<std::size_t> rows;
    rows.reserve(d.pool.size());
    for (std::size_t i = 0; i < d.pool.size(); ++i) {
      if (d.fold_of[i] != spec.fold) rows.push_back(i);
    }
    part = subset(d.pool, rows);
  }
  const Dataset& train = part ? *part : d.pool;
  const Dataset& eval = spec.fold >= 0 ? d.fold_eval[static_cast<std::size_t>(spec.fold)] : *d.test;

  // Intermediate trace points measure the error on a fixed sample of the
  // evaluation set (the same fraction as the engine's objective sample).
  std::vector<std::size_t> trace_rows;
  if (e.trace_every > 0) {
    const std::size_t m = eval.size();
    const std::size_t size = trace_sample_size(e.trace_sample, m);
    if (size < m) trace_rows = Rng(derive_seed(spec.seed, 7)).sample_indices(m, size);
  }
  std::vector<TracePoint> trace;
  const auto start = Clock::now();
  const double cpu_start = thread_cpu_seconds();
  // Transfer exposes only the correction u of w = w_R + u: no error trace.
  const bool error_trace = config.objective != "transfer";
  auto on_epoch = [&](const auto& info) -> bool {
    if (!info.traced || !info.has_objective) return true;  // traced: only with e.trace_every > 0
    TracePoint p;
    p.epoch = info.epoch;
    p.iterations = info.iterations;
    p.objective = info.sample_objective;
    if (error_trace && info.weights != nullptr && info.bias != nullptr)
      p.test_error = error_rate(eval, *info.weights, *info.bias, trace_rows);
    p.seconds = seconds_since(start);
    trace.push_back(p);
    return true;
  };
  AnyModel model = train_any_model(config, train, nullptr, on_epoch);
  const double train_seconds = seconds_since(start);
  const double train_cpu_seconds = thread_cpu_seconds() - cpu_start;
  part.reset();

  const auto eval_start = Clock::now();
  Evaluation ev = evaluate(model, eval, e.max_fpr);
  const std::uint64_t iterations = model.training().value("iterations", std::uint64_t{0});
  if (e.trace_every > 0 && (trace.empty() || trace.back().iterations != iterations)) {
    // The final model closes the trace (its objective is on the whole training set).
    TracePoint p;
    p.epoch = static_cast<int>(std::ceil(model.training().value("epochs", 0.0) - 1e-9));
    p.iterations = iterations;
    p.objective = model.training().value("objective", std::nan(""));
    p.test_error = 1.0 - ev.full.accuracy;
    p.seconds = train_seconds;
    trace.push_back(p);
  }

  json trace_json = json::array(), trace_seconds = json::array();
  for (const TracePoint& p : trace) {
    json t = {{"epoch", p.epoch}, {"iterations", p.iterations}, {"objective", p.objective}};
    if (p.test_error) t["test_error"] = *p.test_error;
    trace_json.push_back(std::move(t));
    trace_seconds.push_back(p.seconds);
  }
  json r;
  r["id"] = id;
  r["phase"] = phase_name(spec.phase);
  r["point"] = spec.point;
  r["params"] = point.params;
  r["repeat"] = spec.repeat;
  r["fold"] = spec.fold >= 0 ? json(spec.fold) : json(nullptr);
  r["seed"] = spec.seed;
  r["config"] = config.resolved;
  r["train_examples"] = spec.fold >= 0 ? d.pool.size() - eval.size() : d.pool.size();
  r["eval_set"] = spec.fold >= 0 ? "fold " + std::to_string(spec.fold) : std::string("test");
  r["eval_examples"] = eval.size();
  r["metrics"] = ev.metrics;
  r["training"] = {{"iterations", iterations},
                   {"epochs", model.training().value("epochs", 0.0)},
                   {"converged", model.training().value("converged", false)},
                   {"stopped_by", model.training().value("stopped_by", "")},
                   {"relative_gap", model.training().value("relative_gap", json())}};
  if (e.trace_every > 0) r["trace"] = trace_json;
  r["timing"] = {{"train_seconds", train_seconds},
                 {"train_cpu_seconds", train_cpu_seconds},
                 {"eval_seconds", seconds_since(eval_start)}};
  if (e.trace_every > 0) r["timing"]["trace_seconds"] = trace_seconds;

  RunOutcome out;
  out.record = std::move(r);
  if (keep) {
    if (model.linear) model.linear->features = d.features;  // so `pegasos predict` can featurise raw text
    out.model = std::move(model);
    out.evaluation = std::move(ev);
  }
  return out;
}

// "[=====>    ] 12/40 runs  3.2s elapsed  ~7.5s left" on stderr.
class ProgressBar {
 public:
  ProgressBar(std::size_t total, bool quiet)
      : total_(total), quiet_(quiet), tty_(::isatty(2) != 0), start_(Clock::now()) {}
  void run_done() {
    const std::size_t done = ++done_;
    if (quiet_) return;
    std::lock_guard<std::mutex> lock(mutex_);
    const double elapsed = seconds_since(start_);
    // Non-terminals (logs) get a line every few seconds and the last one.
    if (!tty_ && done != total_ && elapsed - last_ < 5.0) return;
    last_ = elapsed;
    constexpr int kWidth = 30;
    const int filled = total_ == 0 ? kWidth : static_cast<int>(kWidth * done / total_);
    std::string bar(static_cast<std::size_t>(filled), '=');
    if (filled < kWidth) bar += '>' + std::string(static_cast<std::size_t>(kWidth - filled - 1), ' ');
    char eta[64] = "";
    if (done < total_ && done > 0) {
      std::snprintf(eta, sizeof eta, "  ~%.1fs left",
                    elapsed / static_cast<double>(done) * static_cast<double>(total_ - done));
    }
    std::fprintf(stderr, "%s[%s] %zu/%zu runs  %.1fs elapsed%s%s", tty_ ? "\r" : "", bar.c_str(), done, total_, elapsed,
                 eta, tty_ ? "        " : "\n");
    printed_ = true;
  }
  void finish() {
    if (!quiet_ && printed_ && tty_) std::fputc('\n', stderr);
  }

 private:
  std::size_t total_;
  bool quiet_, tty_;
  Clock::time_point start_;
  std::atomic<std::size_t> done_{0};
  std::mutex mutex_;
  double last_ = -1e9;
  bool printed_ = false;
};

// Runs `specs` in parallel; records[first + i] receives run i.
void run_all(const Experiment& e, const LoadedData& d, const std::vector<RunSpec>& specs, std::size_t first,
             std::vector<json>& records, ProgressBar& progress) {
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, specs.size(), 1), [&](const tbb::blocked_range<std::size_t>& r) {
    for (std::size_t i = r.begin(); i != r.end(); ++i) {
      records[first + i] = execute(e, d, first + i, specs[i], false).record;
      progress.run_done();
    }
  });
}

// Mean and sample standard deviation of each metric over the runs of one
// (phase, point) group.
json summarize(const Experiment& e, const std::vector<json>& runs) {
  json out = json::array();
  for (const char* phase : {"cv", "test", "final"}) {
    for (std::size_t g = 0; g < e.points.size(); ++g) {
      std::map<std::string, std::vector<double>> values;
      std::size_t count = 0;
      for (const json& r : runs) {
        if (r["phase"] != phase || r["point"] != g) continue;
        ++count;
        for (const auto& [name, v] : r["metrics"].items()) {
          if (v.is_number()) values[name].push_back(v.get<double>());
        }
      }
      if (count == 0) continue;
      json mean = json::object(), stddev = json::object();
      for (const auto& [name, v] : values) {
        const double mu = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
        double ss = 0.0;
        for (double x : v) ss += (x - mu) * (x - mu);
        mean[name] = mu;
        stddev[name] = v.size() > 1 ? std::sqrt(ss / static_cast<double>(v.size() - 1)) : 0.0;
      }
      out.push_back({{"phase", phase},
                     {"point", g},
                     {"params", e.points[g].params},
                     {"runs", count},
                     {"mean", mean},
                     {"std", stddev}});
    }
  }
  return out;
}

double metric_of(const json& metrics, const std::string& name) {
  auto it = metrics.find(name);
  return it != metrics.end() && it->is_number() ? it->get<double>() : std::nan("");
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string number_text(const json& v) {
  if (v.is_null()) return "";
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

std::string results_csv(const Experiment& e, const std::vector<json>& runs) {
  const std::vector<std::string> metrics = {"accuracy", "balanced_accuracy", "macro_f1",  "weighted_f1",
                                            "roc_auc",  "recall_at_max_fpr", "objective", "eval_objective"};
  std::string out = "id,phase,point,repeat,fold,seed";
  for (const auto& k : e.swept_keys) out += "," + csv_field(k);
  out += ",train_examples,eval_examples";
  for (const auto& m : metrics) out += "," + m;
  out += ",iterations,epochs,train_seconds\n";
  for (const json& r : runs) {
    out += number_text(r["id"]) + "," + number_text(r["phase"]) + "," + number_text(r["point"]) + "," +
           number_text(r["repeat"]) + "," + number_text(r["fold"]) + "," + number_text(r["seed"]);
    for (const auto& k : e.swept_keys) out += "," + csv_field(number_text(r["params"].value(k, json())));
    out += "," + number_text(r["train_examples"]) + "," + number_text(r["eval_examples"]);
    for (const auto& m : metrics) out += "," + number_text(r["metrics"].value(m, json()));
    out += "," + number_text(r["training"]["iterations"]) + "," + number_text(r["training"]["epochs"]) + "," +
           number_text(r["timing"]["train_seconds"]) + "\n";
  }
  return out;
}

// ---------------------------------------------------------------------------
// Plots: gnuplot scripts + data files in DIR/plots. Each script writes
// prefix + NAME + ext (png with pngcairo/png, else svg); the runner passes a
// temporary prefix and renames the images so they appear atomically.

const char* kPlotHeader =
    "# Written by `pegasos run`; plot with: gnuplot %s\n"
    "if (!exists(\"prefix\")) prefix = \"\"\n"
    "terms = \" \" . GPVAL_TERMINALS . \" \"\n"
    "if (strstrt(terms, \" pngcairo \") > 0) {\n"
    "  set terminal pngcairo size 900,600 noenhanced font \",10\"; ext = \".png\"\n"
    "} else {\n"
    "  if (strstrt(terms, \" png \") > 0) { set terminal png size 900,600 noenhanced; ext = \".png\" } "
    "else { set terminal svg size 900,600 noenhanced; ext = \".svg\" }\n"
    "}\n"
    "set grid\nset key outside right top\n";

std::string header(const std::string& script) {
  char buf[1024];
  std::snprintf(buf, sizeof buf, kPlotHeader, script.c_str());
  return buf;
}

std::string gp_string(const std::string& s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') q += '\\';
    q += c;
  }
  return q + "\"";
}

std::string fmt(double v) {
  if (std::isnan(v)) return "NaN";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

struct PlotFile {
  std::string script;               // name.gp
  std::vector<std::string> images;  // output base names
};

struct PlotSet {
  std::vector<PlotFile> scripts;
  std::vector<std::pair<std::string, std::string>> files;  // name -> content
};

// Which runs to draw traces for: the final/test runs of repeat 0 (else the
// cv runs of repeat 0, fold 0), at most kMaxLines.
constexpr std::size_t kMaxLines = 12;

void trace_plots(const std::vector<json>& runs, PlotSet& out) {
  std::vector<const json*> chosen;
  for (const char* phase : {"final", "test", "cv"}) {
    for (const json& r : runs) {
      if (r["phase"] == phase && r["repeat"] == 0 && (r["fold"].is_null() || r["fold"] == 0) && r.contains("trace") &&
          !r["trace"].empty() && chosen.size() < kMaxLines) {
        chosen.push_back(&r);
      }
    }
    if (!chosen.empty()) break;
  }
  if (chosen.empty()) return;
  std::string dat = "# epoch iterations objective test_error; one block per run\n";
  bool any_error = false;  // an error curve (not only the final point) to draw
  for (const json* r : chosen) {
    dat += "# run " + number_text((*r)["id"]) + ": " + params_text((*r)["params"]) + "\n";
    std::size_t errors = 0;
    for (const json& t : (*r)["trace"]) {
      const bool has = t.contains("test_error");
      errors += has;
      any_error = any_error || errors >= 2;
      dat += number_text(t["epoch"]) + " " + number_text(t["iterations"]) + " " + fmt(t["objective"].get<double>()) +
             " " + (has ? fmt(t["test_error"].get<double>()) : std::string("NaN")) + "\n";
    }
    dat += "\n\n";
  }
  out.files.emplace_back("trace.dat", dat);
  auto lines = [&](const std::string& columns) {
    std::string s;
    for (std::size_t i = 0; i < chosen.size(); ++i) {
      s += (i ? ", \\\n     '' " : "'trace.dat' ") + std::string("index ") + std::to_string(i) + " using " + columns +
           " with linespoints title " + gp_string(params_text((*chosen[i])["params"]));
    }
    return s + "\n";
  };
  std::string gp = header("trace.gp");
  gp +=
      "set output prefix . \"trace_objective\" . ext\nset multiplot layout 1,2 title \"training objective (output "
      "iterate)\"\n"
      "set logscale y\nset xlabel \"epoch\"\nset ylabel \"objective\"\nunset key\nplot " +
      lines("1:3") + "set xlabel \"iterations\"\nset logscale x\nset key outside bottom center horizontal\nplot " +
      lines("2:3") + "unset multiplot\nunset logscale\n";
  PlotFile pf{"trace.gp", {"trace_objective"}};
  if (any_error) {
    gp +=
        "set output prefix . \"trace_test_error\" . ext\nset title \"error on the evaluation set\"\nset xlabel "
        "\"epoch\"\n"
        "set ylabel \"error\"\nset key outside right top\nplot " +
        lines("1:4");
    pf.images.push_back("trace_test_error");
  }
  out.files.emplace_back("trace.gp", gp);
  out.scripts.push_back(pf);
}

// Metric vs each swept setting, mean ± std over repeats (and folds).
void sweep_plots(const Experiment& e, const json& summary, PlotSet& out) {
  const char* phase = "cv";
  for (const json& s : summary) {
    if (s["phase"] == "test") phase = "test";
  }
  const std::vector<std::string> metrics = e.rank_metric == "objective"
                                               ? std::vector<std::string>{"objective"}
                                               : std::vector<std::string>{"objective", e.rank_metric};
  bool zip_categorical_done = false;  // zipped text settings share one x axis: plot the first
  for (const std::string& key : e.swept_keys) {
    std::vector<json> values;  // distinct values of key, in grid order
    bool numeric = true;
    for (const GridPoint& p : e.points) {
      const json& v = p.params[key];
      if (std::find(values.begin(), values.end(), v) == values.end()) values.push_back(v);
      numeric = numeric && v.is_number();
    }
    if (values.size() < 2) continue;
    if (!numeric && e.zip.contains(key)) {
      if (zip_categorical_done) continue;
      zip_categorical_done = true;
    }
    // One line per combination of the other swept settings.
    std::vector<std::string> labels;
    std::map<std::string, std::vector<const json*>> lines;
    for (const json& s : summary) {
      if (s["phase"] != phase) continue;
      json others = s["params"];
      others.erase(key);
      if (e.zip.contains(key)) {  // zipped settings move together: one line for all of them
        for (const auto& [z, unused] : e.zip.items()) others.erase(z);
      }
      const std::string label = others.empty() ? key : params_text(others);
      if (!lines.count(label)) labels.push_back(label);
      lines[label].push_back(&s);
    }
    if (labels.size() > kMaxLines) labels.resize(kMaxLines);
    bool logx = numeric;
    double lo = INFINITY, hi = -INFINITY;
    for (const json& v : values) {
      if (!numeric) break;
      lo = std::min(lo, v.get<double>());
      hi = std::max(hi, v.get<double>());
    }
    logx = numeric && lo > 0 && hi / lo >= 20;
    const std::string base = "sweep_" + key;
    std::string dat = "# " + key + " (x), then mean and std of:";
    for (const auto& m : metrics) dat += " " + m;
    dat += " over the " + std::string(phase) + " runs; label\n";
    for (const std::string& label : labels) {
      dat += "# " + label + "\n";
      for (const json* s : lines[label]) {
        const json& v = (*s)["params"][key];
        const std::size_t pos = static_cast<std::size_t>(std::find(values.begin(), values.end(), v) - values.begin());
        dat += numeric ? fmt(v.get<double>()) : std::to_string(pos);
        for (const auto& m : metrics)
          dat += " " + fmt(metric_of((*s)["mean"], m)) + " " + fmt(metric_of((*s)["std"], m));
        dat += " " + gp_string(value_text(v)) + "\n";
      }
      dat += "\n\n";
    }
    out.files.emplace_back(base + ".dat", dat);
    std::string gp = header(base + ".gp");
    gp += "set xlabel " + gp_string(key) + "\n";
    if (numeric) gp += "set offsets graph 0.03, graph 0.03, 0, 0\n";  // keep end points off the border
    if (logx) gp += "set logscale x\n";
    if (!numeric) gp += "set xrange [-0.5:" + std::to_string(values.size()) + "-0.5]\n";
    PlotFile pf{base + ".gp", {}};
    for (std::size_t m = 0; m < metrics.size(); ++m) {
      const std::string image = base + "_" + metrics[m];
      pf.images.push_back(image);
      gp += "set output prefix . " + gp_string(image) + " . ext\n";
      gp += "set title " +
            gp_string(metrics[m] + " vs " + key + " (" + phase + " runs; mean ± std over " +
                      (std::string(phase) == "cv" ? "folds and repeats" : "repeats") + ")") +
            "\n";
      gp += "set ylabel " + gp_string(metrics[m]) + "\nplot ";
      const std::string ycol = std::to_string(2 + 2 * m), ecol = std::to_string(3 + 2 * m);
      const std::string label_col = std::to_string(2 + 2 * metrics.size());
      for (std::size_t i = 0; i < labels.size(); ++i) {
        gp += (i ? ", \\\n     '' " : gp_string(base + ".dat") + " ") + "index " + std::to_string(i) +
              " using 1:" + ycol + ":" + ecol + (numeric ? "" : ":xtic(" + label_col + ")") +
              " with yerrorlines title " + gp_string(labels[i]);
      }
      gp += "\n";
    }
    out.files.emplace_back(base + ".gp", gp);
    out.scripts.push_back(pf);
  }
}

// ROC and precision-recall curves of the best model's test scores (binary).
void curve_plots(const std::vector<double>& scores, const std::vector<int>& labels, PlotSet& out) {
  std::vector<std::size_t> order;
  std::size_t P = 0, N = 0;
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] < 0) continue;
    order.push_back(i);
    (labels[i] == 1 ? P : N)++;
  }
  if (P == 0 || N == 0) return;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return scores[a] > scores[b]; });
  std::vector<std::array<double, 3>> points{{0.0, 0.0, 1.0}};  // fpr, tpr, precision
  std::size_t tp = 0, fp = 0;
  for (std::size_t r = 0; r < order.size(); ++r) {
    (labels[order[r]] == 1 ? tp : fp)++;
    if (r + 1 < order.size() && scores[order[r + 1]] == scores[order[r]]) continue;  // ties: one point
    points.push_back({static_cast<double>(fp) / N, static_cast<double>(tp) / P, static_cast<double>(tp) / (tp + fp)});
  }
  constexpr std::size_t kMaxPoints = 2000;
  const std::size_t stride = std::max<std::size_t>(1, points.size() / kMaxPoints);
  std::string roc = "# false_positive_rate true_positive_rate(recall) precision\n";
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (i % stride != 0 && i + 1 != points.size()) continue;
    roc += fmt(points[i][0]) + " " + fmt(points[i][1]) + " " + fmt(points[i][2]) + "\n";
  }
  out.files.emplace_back("curves.dat", roc);
  std::string gp = header("curves.gp");
  gp +=
      "unset key\nset size square\nset xrange [0:1]\nset yrange [0:1]\n"
      "set output prefix . \"roc\" . ext\nset title \"ROC, best model on the test set\"\n"
      "set xlabel \"false positive rate\"\nset ylabel \"true positive rate\"\n"
      "plot 'curves.dat' using 1:2 with lines lw 2, x with lines dashtype 2\n"
      "set output prefix . \"precision_recall\" . ext\nset title \"precision-recall, best model on the test set\"\n"
      "set xlabel \"recall\"\nset ylabel \"precision\"\n"
      "plot 'curves.dat' using 2:3 with lines lw 2\n";
  out.files.emplace_back("curves.gp", gp);
  out.scripts.push_back({"curves.gp", {"roc", "precision_recall"}});
}

// Confusion matrix heatmap (colour: fraction of the true class; text: count).
void confusion_plot(const Metrics& m, const std::vector<std::string>& classes, PlotSet& out) {
  const std::size_t K = m.confusion.size();
  if (K < 3) return;
  std::string dat = "# predicted true fraction_of_true_class count\n";
  for (std::size_t i = 0; i < K; ++i) {
    std::size_t row = 0;
    for (std::size_t v : m.confusion[i]) row += v;
    for (std::size_t j = 0; j < K; ++j) {
      dat += std::to_string(j) + " " + std::to_string(i) + " " +
             fmt(row ? static_cast<double>(m.confusion[i][j]) / static_cast<double>(row) : 0.0) + " " +
             std::to_string(m.confusion[i][j]) + "\n";
    }
    dat += "\n";
  }
  out.files.emplace_back("confusion.dat", dat);
  std::string tics;
  for (std::size_t k = 0; k < K; ++k) tics += (k ? ", " : "") + gp_string(classes[k]) + " " + std::to_string(k);
  std::string gp = header("confusion.gp");
  gp +=
      "unset key\nunset grid\nset size square\nset output prefix . \"confusion\" . ext\n"
      "set title \"confusion matrix, best model on the test set (colour: share of the true class)\"\n"
      "set xlabel \"predicted\"\nset ylabel \"true\"\nset xtics (" +
      tics + ")\nset ytics (" + tics +
      ")\n"
      "set xrange [-0.5:" +
      std::to_string(K) + "-0.5]\nset yrange [" + std::to_string(K) +
      "-0.5:-0.5]\n"
      "set cbrange [0:1]\nset palette defined (0 \"white\", 1 \"#08306b\")\n"
      "plot 'confusion.dat' using 1:2:3 with image, '' using 1:2:(sprintf(\"%d\", $4)):($3 > 0.5 ? 0xffffff : 0) "
      "with labels tc rgb variable\n";
  out.files.emplace_back("confusion.gp", gp);
  out.scripts.push_back({"confusion.gp", {"confusion"}});
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// The gnuplot program to run, or "" when there is none.
std::string find_program(const std::string& name) {
  if (name.empty()) return "";
  if (name.find('/') != std::string::npos) return ::access(name.c_str(), X_OK) == 0 ? name : "";
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  std::size_t begin = 0;
  while (begin <= dirs.size()) {
    const std::size_t end = std::min(dirs.find(':', begin), dirs.size());
    const std::string candidate = (end > begin ? dirs.substr(begin, end - begin) : std::string(".")) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    begin = end + 1;
  }
  return "";
}

// Writes the plot files; renders them when gnuplot is there. Returns the images made.
std::vector<std::string> write_plots(const PlotSet& plots, const std::string& dir, const std::string& gnuplot,
                                     bool quiet) {
  std::vector<std::string> images;
  // plots/ belongs to the runner: drop what an earlier run drew so no stale image survives.
  std::error_code ec;
  if (fs::is_directory(dir, ec)) {
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      const std::string ext = entry.path().extension().string();
      if (ext == ".png" || ext == ".svg" || ext == ".gp" || ext == ".dat") fs::remove(entry.path(), ec);
    }
  }
  if (plots.scripts.empty()) return images;
  fs::create_directories(dir);
  for (const auto& [name, content] : plots.files) write_file_atomic((fs::path(dir) / name).string(), content);
  const std::string program = find_program(gnuplot);
  if (program.empty()) {
    if (!quiet) {
      std::fprintf(stderr,
                   "gnuplot not found (Debian package gnuplot-nox): the plot scripts are in %s; draw them with\n"
                   "  cd %s && for f in *.gp; do gnuplot \"$f\"; done\n",
                   dir.c_str(), shell_quote(dir).c_str());
    }
    return images;
  }
  for (const PlotFile& p : plots.scripts) {
    const std::string command = "cd " + shell_quote(dir) + " && " + shell_quote(program) + " -e \"prefix='.tmp-'\" " +
                                shell_quote(p.script) + " >/dev/null 2>.tmp-gnuplot.log";
    const int status = std::system(command.c_str());
    for (const std::string& image : p.images) {
      bool made = false;
      for (const char* ext : {".png", ".svg"}) {
        const fs::path tmp = fs::path(dir) / (".tmp-" + image + ext);
        if (status == 0 && fs::exists(tmp) && fs::file_size(tmp) > 0) {
          fs::rename(tmp, fs::path(dir) / (image + ext));
          images.push_back((fs::path(dir) / (image + ext)).string());
          made = true;
        } else {
          std::error_code ec;
          fs::remove(tmp, ec);
        }
      }
      if (!made && !quiet) {
        std::fprintf(stderr, "warning: gnuplot did not draw %s from %s/%s (messages in %s/.tmp-gnuplot.log)\n",
                     image.c_str(), dir.c_str(), p.script.c_str(), dir.c_str());
      }
    }
  }
  if (!images.empty()) fs::remove(fs::path(dir) / ".tmp-gnuplot.log", ec);
  return images;
}

}  // namespace

json run_experiment(const Experiment& e, const RunOptions& options) {
  const auto start = Clock::now();
  const std::string origin = e.path.empty() ? "experiment" : e.path;
  if (e.points.empty()) throw ConfigError(origin + ": no grid point to run");
  std::optional<tbb::global_control> limit;
  const int threads = e.points.front().config.threads;
  if (threads > 0) limit.emplace(tbb::global_control::max_allowed_parallelism, threads);

  // Data errors name the data file; prefix the experiment so both are known.
  auto loaded = [&] {
    try {
      return load_data(e);
    } catch (const ConfigError& err) {
      throw ConfigError(origin + ": " + err.what());
    } catch (const InputError& err) {
      throw InputError(origin + ": " + err.what());
    }
  };
  const LoadedData data = loaded();
  const double load_seconds = seconds_since(start);
  const std::string output_dir =
      options.output_dir.empty() ? (fs::path(e.directory) / (e.name + "_results")).string() : options.output_dir;

  // The run list: cv runs (point, repeat, fold), then test runs (point, repeat).
  std::vector<RunSpec> specs;
  const bool select = !e.select_metric.empty();
  for (std::size_t g = 0; g < e.points.size(); ++g) {
    for (int r = 0; r < e.repeats; ++r) {
      const std::uint64_t seed = e.points[g].config.engine.seed + static_cast<std::uint64_t>(r);
      for (int f = 0; f < e.data.folds; ++f) specs.push_back({Phase::kCv, g, r, f, seed});
    }
  }
  if (data.test && !select) {
    for (std::size_t g = 0; g < e.points.size(); ++g) {
      for (int r = 0; r < e.repeats; ++r) {
        specs.push_back({Phase::kTest, g, r, -1, e.points[g].config.engine.seed + static_cast<std::uint64_t>(r)});
      }
    }
  }
  const std::size_t final_runs = select ? static_cast<std::size_t>(e.repeats) : 0;
  std::vector<json> runs(specs.size() + final_runs);
  if (!options.quiet) {
    std::fprintf(stderr, "%s: %zu grid point%s x %d repeat%s; %zu runs on %zu training examples%s\n", e.name.c_str(),
                 e.points.size(), e.points.size() == 1 ? "" : "s", e.repeats, e.repeats == 1 ? "" : "s", runs.size(),
                 data.pool.size(),
                 data.test ? (", " + std::to_string(data.test->size()) + " test examples").c_str() : "");
  }
  ProgressBar progress(runs.size(), options.quiet);
  const auto runs_start = Clock::now();
  run_all(e, data, specs, 0, runs, progress);

  json selection = nullptr;
  std::size_t best_point = 0;
  if (select) {
    const bool maximize = metric_is_maximized(e.select_metric, origin);
    std::vector<double> mean(e.points.size(), 0.0), std(e.points.size(), 0.0);
    for (std::size_t g = 0; g < e.points.size(); ++g) {
      std::vector<double> v;
      for (std::size_t i = 0; i < specs.size(); ++i) {
        const json& r = runs[i];
        if (r["phase"] == "cv" && r["point"] == g) v.push_back(metric_of(r["metrics"], e.select_metric));
      }
      mean[g] = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
      double ss = 0.0;
      for (double x : v) ss += (x - mean[g]) * (x - mean[g]);
      std[g] = v.size() > 1 ? std::sqrt(ss / static_cast<double>(v.size() - 1)) : 0.0;
    }
    best_point = best_index(mean, maximize);
    selection = {{"metric", e.select_metric}, {"maximize", maximize},
                 {"cv_mean", mean},           {"cv_std", std},
                 {"best_point", best_point},  {"params", e.points[best_point].params}};
    std::vector<RunSpec> finals;
    for (int r = 0; r < e.repeats; ++r) {
      finals.push_back(
          {Phase::kFinal, best_point, r, -1, e.points[best_point].config.engine.seed + static_cast<std::uint64_t>(r)});
    }
    run_all(e, data, finals, specs.size(), runs, progress);
  }
  progress.finish();
  const double runs_seconds = seconds_since(runs_start);

  // The best run: the selected point's first final run, else the test run
  // with the best rank metric. It is trained again (deterministically: the
  // same model) so no model had to be kept during the sweep.
  std::optional<std::size_t> best_run;
  if (select) {
    best_run = specs.size();
  } else if (data.test) {
    std::vector<double> v;
    std::vector<std::size_t> ids;
    for (const json& r : runs) {
      if (r["phase"] != "test") continue;
      v.push_back(metric_of(r["metrics"], e.rank_metric));
      ids.push_back(r["id"].get<std::size_t>());
    }
    best_run = ids[best_index(v, metric_is_maximized(e.rank_metric, origin))];
  }
  json best = nullptr;
  std::optional<RunOutcome> best_outcome;
  double best_seconds = 0.0;
  if (best_run) {
    const json& r = runs[*best_run];
    const RunSpec spec{select ? Phase::kFinal : Phase::kTest, r["point"].get<std::size_t>(), r["repeat"].get<int>(), -1,
                       r["seed"].get<std::uint64_t>()};
    const auto t0 = Clock::now();
    best_outcome = execute(e, data, *best_run, spec, true);
    best_seconds = seconds_since(t0);
    if (without_timing(best_outcome->record) != without_timing(r)) {
      throw std::logic_error("retraining the best run did not reproduce it (non-deterministic training)");
    }
    const Evaluation& ev = *best_outcome->evaluation;
    json full = metrics_to_json(ev.full);
    best = {{"run", *best_run},
            {"phase", r["phase"]},
            {"point", r["point"]},
            {"params", r["params"]},
            {"seed", r["seed"]},
            {"metrics", r["metrics"]},
            {"classes", best_outcome->model->classes()},
            {"per_class", full["per_class"]},
            {"confusion_matrix", full["confusion_matrix"]},
            {"model_file", "best_model.json"}};
  }

  json results;
  results["format_version"] = 1;
  json exp = {{"name", e.name},
              {"file", e.path.empty() ? json(nullptr) : json(fs::absolute(e.path).lexically_normal().string())},
              {"config", e.base_config},
              {"grid", e.grid},
              {"zip", e.zip},
              {"swept", e.swept_keys},
              {"points", e.points.size()},
              {"repeats", e.repeats},
              {"trace_every", e.trace_every},
              {"trace_iterations", e.trace_iterations},
              {"trace_sample", e.trace_sample},
              {"select", e.select_metric.empty() ? json(nullptr) : json(e.select_metric)},
              {"rank_metric", e.rank_metric},
              {"max_fpr", e.max_fpr ? json(*e.max_fpr) : json(nullptr)}};
  json d = {{"train", e.data.train.empty() ? json(nullptr) : json(e.data.train)},
            {"test", e.data.test.empty() ? json(nullptr) : json(e.data.test)},
            {"file", e.data.file.empty() ? json(nullptr) : json(e.data.file)},
            {"holdout", e.data.holdout},
            {"folds", e.data.folds},
            {"stratified", e.data.stratified},
            {"split_seed", e.data.seed},
            {"train_examples", data.pool.size()},
            {"test_examples", data.test ? data.test->size() : 0},
            {"classes", data.pool.classes},
            {"class_counts", data.pool.class_counts()},
            {"dimension", data.pool.dimension}};
  json fold_sizes = json::array();
  for (const auto& f : data.folds) fold_sizes.push_back(f.size());
  d["fold_sizes"] = fold_sizes;
  exp["data"] = d;
  results["experiment"] = exp;
  results["runs"] = runs;
  const json summary = summarize(e, runs);
  results["summary"] = summary;
  results["selection"] = selection;
  results["best"] = best;

  // Write everything only now: a failure above leaves no half-written folder.
  fs::create_directories(output_dir);
  const auto plots_start = Clock::now();
  std::vector<std::string> images;
  if (e.plots) {
    PlotSet plots;
    trace_plots(runs, plots);
    sweep_plots(e, summary, plots);
    if (best_outcome) {
      const AnyModel& model = *best_outcome->model;
      const Dataset& test = *data.test;
      if (model.binary()) curve_plots(best_outcome->evaluation->scores, test.labels, plots);
      confusion_plot(best_outcome->evaluation->full, model.classes(), plots);
    }
    images = write_plots(plots, (fs::path(output_dir) / "plots").string(), options.gnuplot, options.quiet);
  }
  json image_list = json::array();
  for (const auto& i : images) image_list.push_back(fs::path(i).lexically_relative(output_dir).string());
  results["plots"] = image_list;
  results["timing"] = {{"load_seconds", load_seconds},          {"runs_seconds", runs_seconds},
                       {"best_retrain_seconds", best_seconds},  {"plots_seconds", seconds_since(plots_start)},
                       {"total_seconds", seconds_since(start)}, {"threads", tbb::this_task_arena::max_concurrency()}};
  if (best_outcome)
    write_file_atomic((fs::path(output_dir) / "best_model.json").string(), best_outcome->model->to_json());
  write_file_atomic((fs::path(output_dir) / "results.csv").string(), results_csv(e, runs));
  write_file_atomic((fs::path(output_dir) / "results_no_timing.json").string(), without_timing(results).dump(2) + "\n");
  write_file_atomic((fs::path(output_dir) / "results.json").string(), results.dump(2) + "\n");

  if (!options.quiet) {
    std::fprintf(stderr, "%zu runs in %.1fs; results in %s\n", runs.size(), seconds_since(start), output_dir.c_str());
    if (select) {
      std::fprintf(stderr, "selected %s (mean cv %s %.4f)\n", params_text(e.points[best_point].params).c_str(),
                   e.select_metric.c_str(), selection["cv_mean"][best_point].get<double>());
    }
    if (!best.is_null()) {
      std::fprintf(stderr, "best run %zu (%s): test accuracy %.4f, balanced accuracy %.4f, objective %.6g\n", *best_run,
                   params_text(best["params"]).c_str(), metric_of(best["metrics"], "accuracy"),
                   metric_of(best["metrics"], "balanced_accuracy"), metric_of(best["metrics"], "objective"));
      if (const auto it = best["metrics"].find("at_max_fpr"); it != best["metrics"].end()) {
        std::fprintf(stderr, "  at FPR <= %g: threshold %.6g, FPR %.4f, precision %.4f, recall %.4f (class '%s')\n",
                     (*it)["max_fpr"].get<double>(), (*it)["threshold"].get<double>(),
                     (*it)["false_positive_rate"].get<double>(), (*it)["precision"].get<double>(),
                     (*it)["recall"].get<double>(), best["classes"].back().get<std::string>().c_str());
      }
    }
    for (const auto& i : images) std::fprintf(stderr, "plot: %s\n", i.c_str());
  }
  return results;
}

int run_experiment_command(const std::string& path, const std::string& output_dir, bool quiet) {
  const Experiment e = load_experiment(path);
  RunOptions options;
  options.output_dir = output_dir;
  options.quiet = quiet;
  run_experiment(e, options);
  return 0;
}

}  // namespace pegasos
