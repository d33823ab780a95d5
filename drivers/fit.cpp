#include "drivers/fit.hpp"

#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/calibration.hpp"
#include "core/errors.hpp"
#include "core/metrics.hpp"
#include "drivers/cross_validate.hpp"

namespace pegasos {
namespace {

// C = 10^(-2 + i/3), i = 0..15.
constexpr int kAutoPoints = 16, kPointsPerDecade = 3, kAutoPatience = 4, kAutoClearPatience = 2;
constexpr double kAutoLowestC = 0.01;
// Where the best point is the range's first (C = 0.01; a tie goes there),
// the range extends by this many points below C = 0.01 (down to
// C = 1e-4): data with large raw features (unscaled pixels 0..16) is best
// regularised more than C = 0.01 says (UCI-like digits: 1.3 pt of test
// accuracy).
constexpr int kAutoExtraPoints = 6;

// λ = 1/(C n) for C = C_min·10^(i/3), as printed (6 significant digits).
double auto_lambda(std::size_t n, int i) {
  const double C = kAutoLowestC * std::pow(10.0, static_cast<double>(i) / kPointsPerDecade);
  return std::stod(grid_value_text(1.0 / (C * static_cast<double>(n))));
}

// The configurations of auto_lambda(n, i) for i in [first, last), largest λ first.
std::vector<TrainConfig> lambda_configs(const TrainConfig& config, std::size_t n, int first, int last, GridSpec& grid) {
  grid.key = "lambda";
  std::vector<TrainConfig> configs;
  for (int i = first; i < last; ++i) {
    const double lambda = auto_lambda(n, i);
    TrainConfig c = config;
    c.lambda_auto = false;
    c.engine.lambda = lambda;
    c.resolved["lambda"] = lambda;
    grid.values.push_back(grid_value_text(lambda));
    configs.push_back(std::move(c));
  }
  return configs;
}

api::CvOptions cv_options(const TrainConfig& config) {
  api::CvOptions o;
  o.folds = config.cv_folds;
  o.warm_path = true;
  o.refit = false;
  return o;
}

struct Chosen {
  TrainConfig config;        // at the chosen λ
  nlohmann::json selection;  // training.selection
  std::vector<double> oof;   // out-of-fold scores at the chosen λ (when asked)
};

// lambda "auto": the path, and the configuration at its best point.
Chosen choose_lambda(const TrainConfig& config, const Dataset& data, const nlohmann::json& features, bool keep_oof) {
  GridSpec grid;
  std::vector<TrainConfig> configs = lambda_configs(config, data.size(), 0, kAutoPoints, grid);
  PathControl control;
  control.patience = kAutoPatience;
  control.clear_patience = kAutoClearPatience;
  // Transfer: where the CV cannot tell points apart (a tie), the smaller λ.
  // As λ grows the model tends to the source w_R, which ignores the target
  // rows; the smaller λ keeps the target rows' evidence at the least change
  // to w_R. With 25 target mails and 5-fold CV every point of the path can
  // score the same (5 mails a fold); ties to the larger λ then returned the
  // source model, 1.5–2 pt below any λ ≤ 0.01 on the rest of the target
  // mail (README § Transfer).
  control.ties_to_later = config.objective.needs_source_model;
  // ... and a mean one validation example below the top is a tie too: a
  // single mail is the CV's resolution, not evidence for the source. (At 25
  // target mails, 5 a fold, one mail in favour of a large λ returned nearly
  // the source model, 2 pt below the smallest λ on the rest of the target
  // mail.) One example of the smallest fold weighs 1/(K·⌊n/K⌋) in the mean.
  if (control.ties_to_later && config.cv_folds > 0 && data.size() >= static_cast<std::size_t>(config.cv_folds)) {
    const double K = static_cast<double>(config.cv_folds);
    control.tie_margin = 1.0 / (K * std::floor(static_cast<double>(data.size()) / K)) + 1e-12;
  }
  control.keep_oof = keep_oof;
  control.what = "lambda \"auto\" (cv_folds)";
  CvRun run = cross_validate_data(configs, grid, data, features, config.engine.seed, cv_options(config), control);
  int extra = 0;  // the extension's points run (its path may stop early, from C = 1e-4 up)
  if (run.result.best == 0 && run.result.points.size() > 1) {  // the best at the range's edge: look past it
    GridSpec more;
    std::vector<TrainConfig> wider = lambda_configs(config, data.size(), -kAutoExtraPoints, 0, more);
    CvRun ext = cross_validate_data(wider, more, data, features, config.engine.seed, cv_options(config), control);
    extra = static_cast<int>(ext.result.points.size());
    const api::CvResult& a = ext.result;
    const double gain = a.mean(a.points[a.best]) - run.result.mean(run.result.points[0]);
    // Only a better score moves the choice past C = 0.01: where the curve is
    // flat out there (every fold's model the majority class at the largest
    // λ), C = 0.01 stays, as the path rules keep a flat start from counting.
    const bool take = gain > (control.ties_to_later ? control.tie_margin : 0.0);
    api::CvResult joined = a;
    joined.points.insert(joined.points.end(), run.result.points.begin(), run.result.points.end());
    if (take) {
      run.oof = std::move(ext.oof);
      configs = std::move(wider);
    } else {
      joined.best = a.points.size();
      configs.insert(configs.begin(), wider.begin(), wider.begin() + static_cast<std::ptrdiff_t>(extra));
    }
    run.result = std::move(joined);
  }
  const api::CvResult& r = run.result;
  Chosen out{configs[r.best], selection_json(r), std::move(run.oof)};
  const double c_min = kAutoLowestC * std::pow(10.0, -static_cast<double>(extra > 0 ? kAutoExtraPoints : 0) / kPointsPerDecade);
  out.selection["auto"] = {{"C_min", c_min},
                           {"points_per_decade", kPointsPerDecade},
                           {"points_run", r.points.size()},
                           {"points_max", kAutoPoints + (extra > 0 ? kAutoExtraPoints : 0)},
                           {"stop_after_below", kAutoPatience},
                           {"stop_after_clearly_below", kAutoClearPatience},
                           {"ties", control.ties_to_later ? "smaller lambda" : "larger lambda"},
                           {"lambda", "1/(C n)"},
                           {"examples", data.size()}};
  if (control.tie_margin > 0) out.selection["auto"]["tie_margin"] = control.tie_margin;
  return out;
}

// Out-of-fold scores of `config` (no grid): cv_folds fits.
std::vector<double> out_of_fold_scores(const TrainConfig& config, const Dataset& data, const nlohmann::json& features) {
  PathControl control;
  control.keep_oof = true;
  control.what = "calibrate / max_fpr / target_recall (cv_folds)";
  return cross_validate_data({config}, GridSpec{}, data, features, config.engine.seed, cv_options(config), control).oof;
}

// Platt sigmoids on the out-of-fold scores, and their out-of-fold log-loss and Brier score.
void calibrate(const TrainConfig& config, const Dataset& data, const std::vector<double>& oof, ModelHeader& h) {
  const std::size_t K = static_cast<std::size_t>(h.outputs), n = data.size(), C = h.classes.size();
  h.calibration.assign(K, Platt{});
  for (std::size_t k = 0; k < K; ++k) {
    std::vector<double> s(n);
    std::vector<char> positive(n);
    for (std::size_t i = 0; i < n; ++i) {
      s[i] = oof[i * K + k];
      positive[i] = static_cast<std::size_t>(data.labels[i]) == (K == 1 ? 1 : k);
    }
    h.calibration[k] = platt_fit(s, positive, data.weights);
  }
  std::vector<double> p(n * C);
  for (std::size_t i = 0; i < n; ++i) h.probabilities(&oof[i * K], &p[i * C]);
  nlohmann::json record = {{"fitted_on", "out-of-fold decision values"},
                           {"folds", config.cv_folds},
                           {"examples", n},
                           {"out_of_fold",
                            {{"log_loss", log_loss(p, data.labels, C, data.weights)},
                             {"brier", brier_score(p, data.labels, C, data.weights)}}}};
  if (!data.weights.empty()) record["weighted_by"] = "sample weights";
  if (K > 1) record["multiclass"] = "one-vs-rest sigmoids, normalised to sum to 1";
  h.calibration_record = record.dump();
}

// The stored threshold (binary) met on the out-of-fold scores.
void choose_threshold(const TrainConfig& config, const Dataset& data, const std::vector<double>& oof, ModelHeader& h) {
  if (h.outputs != 1) throw ConfigError("max_fpr / target_recall: a decision threshold is for binary models");
  std::vector<char> positive(data.size());
  for (std::size_t i = 0; i < data.size(); ++i) positive[i] = data.labels[i] == 1;
  const auto op = config.max_fpr ? threshold_for_fpr(oof, positive, *config.max_fpr, data.weights)
                                 : threshold_for_recall(oof, positive, *config.target_recall, data.weights);
  if (!op) throw InputError(data.source + ": a threshold needs examples of both classes");
  h.threshold = op->threshold;
  nlohmann::json record = {{"chosen_on", "out-of-fold decision values"},
                           {"folds", config.cv_folds},
                           {"positive_class", h.classes[1]},
                           {"out_of_fold",
                            {{"false_positive_rate", op->false_positive_rate},
                             {"recall", op->recall},
                             {"precision", op->precision}}}};
  if (!data.weights.empty()) record["weighted_by"] = "sample weights";
  if (config.max_fpr) record["max_fpr"] = *config.max_fpr;
  if (config.target_recall) record["target_recall"] = *config.target_recall;
  h.threshold_record = record.dump();
}

// `on_epoch` told the seconds since the fit began (EpochInfo::seconds): the
// clock starts here, after the data was read and any lambda "auto" search
// ran, so a progress line times the fit it reports on. Empty stays empty.
std::function<bool(const EpochInfo&)> timed(const std::function<bool(const EpochInfo&)>& on_epoch) {
  if (!on_epoch) return {};
  const auto start = std::chrono::steady_clock::now();
  return [start, on_epoch](const EpochInfo& e) {
    EpochInfo told = e;
    told.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return on_epoch(told);
  };
}

}  // namespace

std::vector<double> auto_lambda_grid(std::size_t n) {
  std::vector<double> grid;
  for (int i = 0; i < kAutoPoints; ++i) grid.push_back(auto_lambda(n, i));
  return grid;
}

AnyModel fit_model(const TrainConfig& config, const Dataset& data, const nlohmann::json& features,
                   const std::function<bool(const EpochInfo&)>& on_epoch) {
  const bool threshold = config.max_fpr || config.target_recall;
  const bool want_oof = config.calibrate || threshold;
  if (!config.lambda_auto && !want_oof) return train_any_model(config, data, features, timed(on_epoch));
  std::optional<Chosen> chosen;
  if (config.lambda_auto) chosen = choose_lambda(config, data, features, want_oof);
  const TrainConfig& final_config = chosen ? chosen->config : config;
  AnyModel model = train_any_model(final_config, data, features, timed(on_epoch));
  if (chosen) add_selection(model, chosen->selection);
  if (!want_oof) return model;
  const std::vector<double> oof = chosen ? std::move(chosen->oof) : out_of_fold_scores(final_config, data, features);
  ModelHeader& h = model.header();
  if (config.calibrate) calibrate(config, data, oof, h);
  if (threshold) choose_threshold(config, data, oof, h);
  return model;
}

}  // namespace pegasos
