#include "drivers/cross_validate.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <utility>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "core/errors.hpp"
#include "core/metrics.hpp"
#include "core/output_file.hpp"
#include "core/solver.hpp"
#include "drivers/experiment.hpp"
#include "drivers/fit.hpp"
#include "drivers/operating_point.hpp"
#include "drivers/status_line.hpp"
#include "drivers/registry.hpp"
#include "io/model_json.hpp"

namespace pegasos {

namespace {

// Settings that change how the data is read (read once for every grid point)
// or are not training settings at all.
bool not_griddable(const std::string& key) {
  static const std::vector<std::string> keys = {"format",      "label_column",      "normalize", "text_field",
                                                "label_field", "positive_label",    "features",  "init_model",
                                                "threads",     "max_feature_index", "strict",    "source_model",
                                                "keep_duals"};
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

[[noreturn]] void bad_grid(const std::string& what) { throw ConfigError("--grid: " + what); }

std::optional<double> parse_number(const std::string& text) {
  double v = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || r.ec != std::errc() || r.ptr != text.data() + text.size() || !std::isfinite(v)) return {};
  return v;
}

// Split at `sep` outside JSON strings, objects and arrays (so a list value
// may be {"spam":3,"ham":1}).
std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  int depth = 0;
  bool quoted = false;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size()) {
      const char c = text[i];
      if (quoted) {
        if (c == '\\') ++i;
        else if (c == '"') quoted = false;
        continue;
      }
      if (c == '"') quoted = true;
      if (c == '{' || c == '[') ++depth;
      if (c == '}' || c == ']') --depth;
    }
    if (i == text.size() || (text[i] == sep && depth == 0)) {
      parts.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  return parts;
}

// LOW:HIGH[:POINTS], log-spaced, largest first.
std::vector<std::string> log_range(const std::string& text, const std::string& spec) {
  const std::vector<std::string> parts = split(spec, ':');
  const auto bad = [&](const std::string& why) { bad_grid("bad range '" + text + "': " + why); };
  if (parts.size() > 3) bad("expected LOW:HIGH or LOW:HIGH:POINTS");
  const auto low = parse_number(parts[0]), high = parse_number(parts[1]);
  if (!low || !high) bad("LOW and HIGH must be numbers");
  if (!(*low > 0 && *low < *high)) bad("needs 0 < LOW < HIGH");
  int points = 10;
  if (parts.size() == 3) {
    const auto p = parse_number(parts[2]);
    if (!p || *p != std::floor(*p) || *p < 2 || *p > 1000) bad("POINTS must be a whole number from 2 to 1000");
    points = static_cast<int>(*p);
  }
  std::vector<std::string> values;
  const double a = std::log(*low), b = std::log(*high);
  for (int i = points - 1; i >= 0; --i) values.push_back(grid_value_text(std::exp(a + (b - a) * i / (points - 1))));
  return values;
}

}  // namespace

std::string grid_value_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

GridSpec parse_grid(const std::string& text) {
  GridSpec grid;
  if (text.empty()) return grid;
  const std::size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    bad_grid("expected KEY=LOW:HIGH[:POINTS] or KEY=V1,V2,..., got '" + text + "'");
  }
  grid.key = text.substr(0, eq);
  const std::string spec = text.substr(eq + 1);
  const auto& keys = config_keys();
  const auto is_setting = [&](const std::string& key) {
    return std::any_of(keys.begin(), keys.end(), [&](const ConfigKey& k) { return k.name == key; });
  };
  // A nested setting (--set's dotted KEY.SUB): the grid takes whole settings.
  if (const std::size_t dot = grid.key.find('.'); dot != std::string::npos && is_setting(grid.key.substr(0, dot))) {
    const std::string outer = grid.key.substr(0, dot);
    if (not_griddable(outer)) {
      bad_grid("'" + grid.key + "': " + outer + " cannot be gridded here (it changes how the data is read, or is a "
               "run setting); use pegasos run for that");
    }
    bad_grid("'" + grid.key + "': the grid takes whole settings; list whole " + outer + " values (" + outer +
             "={...},{...})");
  }
  if (!is_setting(grid.key)) {
    const std::string near = closest_key(grid.key);
    bad_grid("'" + grid.key + "' is not a setting" + (near.empty() ? "" : " (did you mean '" + near + "'?)"));
  }
  if (not_griddable(grid.key)) {
    bad_grid("'" + grid.key + "' cannot be gridded here (it changes how the data is read, or is a run setting); "
             "use pegasos run for that");
  }
  if (split(spec, ':').size() > 1) {  // a ':' outside JSON values
    if (grid.key != "lambda") bad_grid("a LOW:HIGH range is for lambda; list the values of " + grid.key + " (V1,V2,...)");
    grid.values = log_range(text, spec);
    return grid;
  }
  for (const std::string& v : split(spec, ',')) {
    if (v.empty()) bad_grid("empty value in '" + text + "'");
    if (grid.key == "lambda" && !parse_number(v)) bad_grid("lambda value '" + v + "' is not a number");
    grid.values.push_back(v);
  }
  if (grid.key == "lambda") {  // a path from the largest λ down
    std::stable_sort(grid.values.begin(), grid.values.end(),
                     [](const std::string& a, const std::string& b) { return *parse_number(a) > *parse_number(b); });
  }
  return grid;
}

std::vector<TrainConfig> grid_configs(const std::string& config_path, const std::vector<std::string>& overrides,
                                      const GridSpec& grid) {
  if (grid.key.empty()) return {load_train_config(config_path, overrides)};
  std::vector<TrainConfig> configs;
  for (const std::string& value : grid.values) {
    std::vector<std::string> sets = overrides;
    sets.push_back(grid.key + "=" + value);
    try {
      configs.push_back(load_train_config(config_path, sets));
    } catch (const ConfigError& e) {
      // The grid's own value is not a --set the user typed: "--grid: seed: ...".
      std::string what = e.what();
      const std::string set = "--set: ";
      if (what.rfind(set + grid.key + ":", 0) == 0) what.erase(0, set.size());
      throw ConfigError("--grid: " + what);
    }
  }
  return configs;
}

AnyModel train_on_path(const TrainConfig& config, const Dataset& train, const nlohmann::json& features,
                       const std::shared_ptr<const Model>& previous) {
  TrainConfig c = config;
  c.keep_duals = true;  // the next point's warm start resumes from them
  if (previous == nullptr || c.objective.kernel) return train_any_model(c, train, features, {});
  c.init = previous;
  c.init_model = "(lambda path)";  // recorded in the fold's model only, which is never written
  AnyModel out;
  out.linear = train_model(c, train, {});
  out.linear->features = features_text(features);
  return out;
}

bool warm_path_applies(const GridSpec& grid, const TrainConfig& config) {
  return grid.key == "lambda" && !config.objective.kernel && use_sdca(config.engine);
}

namespace {

struct FoldScore {
  double accuracy = 0, balanced = 0, passes = 0, seconds = 0;
  std::size_t outputs = 0;  // scores per row
};

// Every class keeps at least one row in every training part (`what` names
// the setting or flag in the message).
void check_folds(const Dataset& data, const std::vector<std::vector<std::size_t>>& folds, const std::string& what) {
  const auto counts = data.class_counts();
  for (const auto& fold : folds) {
    std::vector<std::size_t> held(counts.size(), 0);
    for (std::size_t i : fold) ++held[static_cast<std::size_t>(data.labels[i])];
    for (std::size_t k = 0; k < counts.size(); ++k) {
      if (held[k] == counts[k]) {
        throw InputError(what + " " + std::to_string(folds.size()) + ": class '" + data.classes[k] + "' has only " +
                         std::to_string(counts[k]) + " example(s) in " + data.source +
                         ", so a training part would have none of it; use fewer folds");
      }
    }
  }
}

// One fold at one grid point: trained on the other folds' rows (warm-started
// from `previous` when given), scored on its own. With `oof`, the scores of
// its rows go to their places there (rows × outputs; folds are disjoint).
// Returns the fit, for the next point's warm start.
std::shared_ptr<const Model> run_fold_point(const TrainConfig& config, const Dataset& data,
                                            const nlohmann::json& features, const std::vector<std::size_t>& fold,
                                            const std::shared_ptr<const Model>& previous, FoldScore& out,
                                            std::vector<double>* oof) {
  std::vector<std::size_t> rest;
  rest.reserve(data.size() - fold.size());
  for (std::size_t i = 0, f = 0; i < data.size(); ++i) {
    if (f < fold.size() && fold[f] == i) {
      ++f;
    } else {
      rest.push_back(i);
    }
  }
  const Dataset train = subset(data, rest), test = subset(data, fold);
  const auto start = std::chrono::steady_clock::now();
  AnyModel m = train_on_path(config, train, features, previous);
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  out.passes = m.training().value("epochs", 0.0);
  const std::vector<double> scores = m.scores(test);
  const std::size_t K = static_cast<std::size_t>(m.outputs());
  out.outputs = K;
  std::vector<int> predicted(test.size());
  for (std::size_t i = 0; i < test.size(); ++i) predicted[i] = m.predict_class(&scores[i * K]);
  const Metrics metrics = classification_metrics(test.labels, predicted, test.classes);
  out.accuracy = metrics.accuracy;
  out.balanced = metrics.balanced_accuracy;
  if (oof != nullptr) {
    for (std::size_t i = 0; i < fold.size(); ++i) std::copy_n(&scores[i * K], K, &(*oof)[fold[i] * K]);
  }
  if (!m.linear) return nullptr;
  return std::make_shared<const Model>(std::move(*m.linear));
}

// Mean and standard deviation (n − 1 denominator) of field `f` over the folds.
std::pair<double, double> mean_std(const std::vector<std::vector<FoldScore>>& scores, std::size_t p,
                                   double FoldScore::*f) {
  double sum = 0;
  for (const auto& fold : scores) sum += fold[p].*f;
  const double n = static_cast<double>(scores.size()), mean = sum / n;
  double sq = 0;
  for (const auto& fold : scores) sq += (fold[p].*f - mean) * (fold[p].*f - mean);
  return {mean, n > 1 ? std::sqrt(sq / (n - 1)) : 0.0};
}

api::CvPoint summarise(const std::vector<std::vector<FoldScore>>& scores, std::size_t p, const std::string& value) {
  api::CvPoint point;
  point.value = value;
  std::tie(point.accuracy_mean, point.accuracy_std) = mean_std(scores, p, &FoldScore::accuracy);
  std::tie(point.balanced_mean, point.balanced_std) = mean_std(scores, p, &FoldScore::balanced);
  point.passes = mean_std(scores, p, &FoldScore::passes).first;
  for (const auto& fold : scores) point.seconds += fold[p].seconds;
  return point;
}

}  // namespace

// The `selection` block of a refit model's training summary.
nlohmann::json selection_json(const api::CvResult& r) {
  nlohmann::json curve = nlohmann::json::array();
  const auto value_of = [&](const api::CvPoint& p) { return parse_override(r.key + "=" + p.value).second; };
  for (const api::CvPoint& p : r.points) {
    nlohmann::json point = {{"mean", r.mean(p)}, {"std", r.std_dev(p)}};
    if (!r.key.empty()) point["value"] = value_of(p);
    curve.push_back(std::move(point));
  }
  nlohmann::json s = {{"method", "cross-validation"}, {"folds", r.folds},   {"stratified", true},
                      {"seed", r.seed},                {"metric", r.metric}, {"warm_path", r.warm_path}};
  if (!r.key.empty()) {
    s["key"] = r.key;
    s["value"] = value_of(r.points[r.best]);
  }
  s["curve"] = std::move(curve);
  return s;
}

void add_selection(AnyModel& model, const nlohmann::json& selection) {
  TrainingSummary& t = model.linear ? model.linear->training : model.kernel->training;
  nlohmann::json extra = t.extra.empty() ? nlohmann::json::object() : nlohmann::json::parse(t.extra);
  extra["selection"] = selection;
  t.extra = extra.dump();
}

PathSelector::Step PathSelector::add(double mean, double std_dev) {
  means_.push_back(mean);
  stds_.push_back(std_dev);
  const std::size_t p = means_.size() - 1;
  Step step;
  if (p == 0 || mean > means_[top_]) top_ = p;  // the earliest of equal tops
  // Whether the curve has left its first value. A flat start is no evidence
  // that the path has passed its best: at the largest λ of a small set every
  // fold's model may predict the majority class (25 mails at C = 0.01), and a
  // transfer model stays at its source w_R, for several points before the
  // data moves them. The stopping rules count only once the curve has moved.
  moved_ = moved_ || mean != means_[0];
  const double top = means_[top_];
  // Ties go to the earlier point (the larger λ) unless ties_to_later; with
  // a tie_margin a mean that far below the top is a tie too.
  const bool tie = control_.ties_to_later && mean >= top - control_.tie_margin;
  if (top_ == p || tie) {
    best_ = p;
    step.chosen = true;
    stale_ = clearly_ = 0;
    return step;
  }
  if (!moved_) return step;
  const double standard_error = stds_[top_] / std::sqrt(static_cast<double>(folds_));
  clearly_ = mean < top - std::max(standard_error, control_.tie_margin) ? clearly_ + 1 : 0;
  ++stale_;
  step.stop = (control_.patience > 0 && stale_ >= static_cast<std::size_t>(control_.patience)) ||
              (control_.clear_patience > 0 && top > means_[0] && clearly_ >= static_cast<std::size_t>(control_.clear_patience));
  return step;
}

CvRun cross_validate_data(const std::vector<TrainConfig>& configs, const GridSpec& grid, const Dataset& data,
                          const nlohmann::json& features, std::uint64_t fold_seed, const api::CvOptions& options,
                          const PathControl& control) {
  const int K = options.folds;
  if (K < 2) throw ConfigError(control.what + ": needs at least 2 folds, got " + std::to_string(K));
  if (static_cast<std::size_t>(K) > data.size()) {
    throw ConfigError(control.what + ": " + std::to_string(K) + " folds but " + data.source + " has only " +
                      std::to_string(data.size()) + " examples");
  }
  if (std::any_of(configs.begin(), configs.end(), [](const TrainConfig& c) { return c.lambda_auto; })) {
    throw ConfigError(control.what + ": lambda \"auto\" chooses lambda by cross-validation itself; to "
                      "cross-validate a choice of lambda, grid it (--grid lambda=LOW:HIGH)");
  }
  const auto folds = make_folds(data.labels, K, true, fold_seed);
  check_folds(data, folds, control.what);
  const bool warm = options.warm_path && warm_path_applies(grid, configs.front());
  CvRun run;
  api::CvResult& r = run.result;
  r.key = grid.key;
  r.folds = K;
  r.examples = data.size();
  r.seed = fold_seed;
  r.warm_path = warm;
  const bool weighted = std::any_of(configs.begin(), configs.end(), [](const TrainConfig& c) {
    return !std::holds_alternative<std::monostate>(c.class_weight);
  });
  r.metric = weighted ? "balanced_accuracy" : "accuracy";
  // Point by point, the folds in parallel (each fold's fit warm-started from
  // its own fit at the previous point), so the path can stop early.
  std::vector<std::vector<FoldScore>> scores(folds.size(), std::vector<FoldScore>(configs.size()));
  std::vector<std::shared_ptr<const Model>> previous(folds.size());
  std::vector<double> oof(control.keep_oof ? data.size() * data.classes.size() : 0);
  PathSelector selector(control, K);
  for (std::size_t p = 0; p < configs.size(); ++p) {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, folds.size(), 1), [&](const auto& range) {
      for (std::size_t f = range.begin(); f != range.end(); ++f) {
        auto fit = run_fold_point(configs[p], data, features, folds[f], warm ? previous[f] : nullptr, scores[f][p],
                                  control.keep_oof ? &oof : nullptr);
        if (warm) previous[f] = std::move(fit);
      }
    });
    r.points.push_back(summarise(scores, p, grid.key.empty() ? "" : grid.values[p]));
    char shown[160];
    std::snprintf(shown, sizeof shown, "%s: %zu/%zu done%s%s%s, mean %s %.4f", control.what.c_str(), p + 1,
                  configs.size(), grid.key.empty() ? "" : " (", grid.key.empty() ? "" : (grid.key + "=" + grid.values[p]).c_str(),
                  grid.key.empty() ? "" : ")", r.metric.c_str(), r.mean(r.points[p]));
    status_line(shown);
    const PathSelector::Step step = selector.add(r.mean(r.points[p]), r.std_dev(r.points[p]));
    if (step.chosen) {
      r.best = p;
      if (control.keep_oof) run.oof.assign(oof.begin(), oof.begin() + data.size() * scores[0][p].outputs);
    }
    if (step.stop) break;
  }
  clear_status_line();
  if (options.refit) {
    TrainConfig best = configs[r.best];
    run.refit = fit_model(best, data, features, {});
    add_selection(*run.refit, selection_json(r));
  }
  return run;
}

}  // namespace pegasos

namespace pegasos {

namespace {

std::string plus_minus(double mean, double sd) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4f ± %.4f", mean, sd);
  return buf;
}

// "largest" / "smallest" where a λ grid's best point is its first / last and
// strictly above its neighbour (the curve rises toward the edge), else "".
std::string grid_edge(const api::CvResult& r) {
  const std::size_t n = r.points.size();
  if (r.key != "lambda" || n < 3 || (r.best != 0 && r.best != n - 1)) return "";
  const std::size_t next = r.best == 0 ? 1 : n - 2;
  if (!(r.mean(r.points[next]) < r.mean(r.points[r.best]))) return "";
  return r.best == 0 ? "largest" : "smallest";
}

void print_cv(const api::CvResult& r, const std::string& objective, std::FILE* to) {
  std::string text = std::to_string(r.folds) + "-fold stratified cross-validation (seed " + std::to_string(r.seed) +
                     ") of " + objective + " on " + std::to_string(r.examples) + " examples";
  const bool balanced = r.metric == "balanced_accuracy";
  if (r.key.empty()) {
    const api::CvPoint& p = r.points.front();
    text += "\naccuracy           " + plus_minus(p.accuracy_mean, p.accuracy_std) + "\nbalanced accuracy  " +
            plus_minus(p.balanced_mean, p.balanced_std) + (balanced ? "  (the class-weighted objective's metric)" : "") +
            "\n";
  } else {
    text += "; selected by " + std::string(balanced ? "balanced accuracy" : "accuracy") +
            (r.warm_path ? "; lambda path, warm-started" : "") + "\n";
    char buf[256];
    std::snprintf(buf, sizeof buf, "%-14s %-15s  %-17s  %8s\n", r.key.c_str(), "accuracy", "balanced accuracy",
                  "passes");
    text += buf;
    for (const api::CvPoint& p : r.points) {
      std::snprintf(buf, sizeof buf, "%-14s %s  %s    %8.1f%s\n", p.value.c_str(),
                    plus_minus(p.accuracy_mean, p.accuracy_std).c_str(),
                    plus_minus(p.balanced_mean, p.balanced_std).c_str(), p.passes,
                    &p == &r.points[r.best] ? "  *" : "");
      text += buf;
    }
    const api::CvPoint& b = r.points[r.best];
    text += "best: " + r.key + "=" + b.value + "  " + (balanced ? "balanced accuracy " : "accuracy ") +
            plus_minus(r.mean(b), r.std_dev(b)) +
            (r.key == "lambda" ? "  (ties go to the larger lambda)\n" : "  (ties go to the first value listed)\n");
  }
  if (to == stdout) {
    write_output("-", text);  // every write checked, a failure named with its errno
  } else {
    std::fputs(text.c_str(), to);
  }
  if (const std::string edge = grid_edge(r); !edge.empty()) {
    std::fprintf(stderr, "note: the best lambda is the %s of the grid, and its neighbour scores lower: a grid "
                 "reaching past it may score better\n", edge.c_str());
  }
}

void check_cv_flags(const CvCommand& cv, const std::string& model_path) {
  if (cv.folds == 0) {
    if (!cv.grid.empty()) throw ConfigError("--grid: needs --cv K");
    if (cv.refit) throw ConfigError("--refit: needs --cv K");
    if (cv.cold) throw ConfigError("--cold: needs --cv K");
    if (model_path.empty()) throw ConfigError("train: MODEL_OUT is required (or --cv K to cross-validate)");
    return;
  }
  if (cv.cold && cv.grid.empty()) {
    throw ConfigError("--cold: needs --grid lambda=... (it fits each value of the grid from zero instead of along "
                      "the warm-started path)");
  }
  if (cv.refit && model_path.empty()) throw ConfigError("--refit: needs MODEL_OUT, where the refit model is written");
  if (!cv.refit && !model_path.empty()) {
    throw ConfigError("--cv: MODEL_OUT '" + model_path + "' given without --refit; with --cv a model is written only "
                      "with --refit (the best setting trained on all the data)");
  }
}

}  // namespace

int run_cv_command(const std::string& config_path, const std::vector<std::string>& sets, const std::string& data_path,
                   const std::string& model_path, const CvCommand& cv, bool quiet, bool strict) {
  check_cv_flags(cv, model_path);
  if (strict && !cv.refit) {
    throw ConfigError("--strict: with --cv it judges the model --refit writes; without --refit no model is written");
  }
  enable_status_line(!quiet);
  api::CvOptions options;
  options.folds = cv.folds;
  options.grid = cv.grid;
  options.warm_path = !cv.cold;
  options.refit = cv.refit;
  const auto start = std::chrono::steady_clock::now();
  const std::vector<TrainConfig> configs = grid_configs(config_path, sets, parse_grid(cv.grid));  // before any data is read
  const TrainConfig& first = configs.front();
  if (!cv.refit && (first.calibrate || first.max_fpr || first.target_recall)) {
    const char* what = first.calibrate ? "calibrate" : first.max_fpr ? "max_fpr" : "target_recall";
    throw ConfigError(std::string("--cv: ") + what + " is stored in the model --refit writes; without --refit no "
                                                     "model is written");
  }
  if (cv.refit) {
    for (const TrainConfig& c : configs) refuse_model_over_inputs(c, model_path);
  }
  const api::CvResult r = api::cross_validate(config_path, sets, data_path, options);
  // The scores on standard output, unless the refit model goes there (`--refit DATA -`).
  print_cv(r, r.objective, cv.refit && names_standard_output(model_path) ? stderr : stdout);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!quiet) {
    double train = 0;
    for (const api::CvPoint& p : r.points) train += p.seconds;
    std::fprintf(stderr, "cross-validation: %zu value(s) x %d folds, training %.2fs (summed over folds), %.2fs in all\n",
                 r.points.size(), r.folds, train, seconds);
  }
  if (!r.model) return 0;
  const nlohmann::json training = r.model->any().training();
  const bool converged = training.value("converged", false) || r.model->kernel();
  if ((strict || first.strict) && !converged) {
    std::fprintf(stderr, "error: --strict: the refit model did not converge; no model written\n");
    return 3;
  }
  r.model->save(model_path);
  if (!quiet) std::fputs(fit_summary(r.model->any()).c_str(), stderr);  // --calibrate, --max-fpr
  if (!converged) std::fprintf(stderr, "warning: the refit model did not converge (see its training block)\n");
  if (!quiet) {
    const std::string at = r.key.empty() ? "" : " at " + r.key + "=" + r.points[r.best].value;
    std::fprintf(stderr, "refit%s on all %zu examples: objective %.6g; %.2fs in all; model written to %s\n", at.c_str(),
                 r.examples, training.value("objective", 0.0),
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), model_path.c_str());
  }
  return 0;
}

}  // namespace pegasos
