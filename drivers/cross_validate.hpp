// Cross-validation in `pegasos train --cv K [--grid KEY=SPEC] [--refit]`
// (the library's door: api::cross_validate in drivers/api.hpp; README §
// Choosing λ). Folds come from the experiment runner's make_folds
// (stratified, by the seed setting); a λ grid is a path from the largest λ
// down on which each fold's fit is warm-started, in memory, from its fit at
// the previous λ through the warm-start machinery (drivers/warm_start.hpp):
// SDCA resumes from that fit's stored dual variables (fractions of the box
// bound, free of λ; drivers/duals.hpp).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/dataset.hpp"
#include "core/model.hpp"
#include "drivers/any_model.hpp"
#include "drivers/api.hpp"
#include "drivers/config.hpp"

namespace pegasos {

// A parsed --grid: the key and its values as `--set` text, in the order they
// are run (a λ grid: largest first).
struct GridSpec {
  std::string key;  // "" = no grid
  std::vector<std::string> values;
};

// A computed grid value as it is printed and trained: 6 significant digits.
std::string grid_value_text(double v);

// "lambda=LOW:HIGH[:POINTS]" (log-spaced, POINTS ≥ 2, default 10, values
// rounded to 6 significant digits) or "KEY=V1,V2,..."; "" = no grid.
// ConfigError naming --grid: no '=', a key that is not a setting or that
// changes how data is read, a bad range or list.
GridSpec parse_grid(const std::string& text);

// The configuration of every grid point (one, the settings as given, without
// a grid): config file ← overrides ← KEY=VALUE, each validated (ConfigError
// naming --grid and the key).
std::vector<TrainConfig> grid_configs(const std::string& config_path, const std::vector<std::string>& overrides,
                                      const GridSpec& grid);

// Train `config` on `train` (labels prepared), from zero or, when `previous`
// is a linear fit on the same rows (e.g. at the previous λ of a path), warm-
// started from it (init_model in memory: its stored duals, else its margins).
// The result stores its dual variables (keep_duals) for the next point.
AnyModel train_on_path(const TrainConfig& config, const Dataset& train, const nlohmann::json& features,
                       const std::shared_ptr<const Model>& previous);

// Whether a grid over `grid.key` with `config` runs as a warm-started λ path:
// a λ grid and a linear objective trained by SDCA.
bool warm_path_applies(const GridSpec& grid, const TrainConfig& config);

struct CvRun {
  api::CvResult result;
  std::optional<AnyModel> refit;  // options.refit: all the data at the best point, with `selection`
  // PathControl::keep_oof: the best point's out-of-fold scores, rows ×
  // outputs (each row scored by the fold model that did not see it).
  std::vector<double> oof;
};

// How a path is run beyond api::CvOptions (drivers/fit.hpp's lambda "auto").
struct PathControl {
  // Stop after this many points in a row below the best (0: every point),
  // or after `clear_patience` in a row clearly below it — a mean under the
  // best's by more than the best's standard error (std / √folds) — once the
  // curve has risen (the best scores above the first point: at the largest λ
  // the curve may dip before it rises). Both count only once the curve has
  // left its first value (a flat start is no evidence: majority-class folds,
  // a transfer model still at its source).
  int patience = 0, clear_patience = 0;
  // Ties on the CV score go to the later point (the smaller λ) instead of
  // the earlier: lambda "auto" with transfer (drivers/fit.cpp).
  bool ties_to_later = false;
  // With ties_to_later: a mean within this much below the top of the curve
  // so far is a tie too (lambda "auto" with transfer: one validation
  // example's worth of accuracy). "Below" for the stopping rules then means
  // below the top by more than the margin.
  double tie_margin = 0;
  bool keep_oof = false;
  std::string what = "--cv";  // the flag or setting named in errors
};

// The path's bookkeeping, point by point: which point is the best so far and
// whether to stop (PathControl's rules). add() takes the next point's mean
// score over the folds and its standard deviation.
class PathSelector {
 public:
  PathSelector(const PathControl& control, std::size_t folds) : control_(control), folds_(folds) {}
  struct Step {
    bool chosen = false;  // this point is the best so far
    bool stop = false;    // the path ends here
  };
  Step add(double mean, double std_dev);
  std::size_t best() const { return best_; }

 private:
  PathControl control_;
  std::size_t folds_;
  std::vector<double> means_, stds_;
  std::size_t best_ = 0, top_ = 0, stale_ = 0, clearly_ = 0;
  bool moved_ = false;  // the curve has left its first value
};

// Cross-validate every configuration on `data` (labels prepared against each
// with check_config_against_data), folds by `fold_seed`: point by point in
// the order given, the folds of each point in parallel. With options.refit
// the best point is trained on all the data by fit_model (drivers/fit.hpp).
CvRun cross_validate_data(const std::vector<TrainConfig>& configs, const GridSpec& grid, const Dataset& data,
                          const nlohmann::json& features, std::uint64_t fold_seed, const api::CvOptions& options,
                          const PathControl& control = {});

// The record of a selection (method, folds, seed, metric, the CV curve and
// the chosen value) and where a model keeps it: training.selection.
nlohmann::json selection_json(const api::CvResult& r);
void add_selection(AnyModel& model, const nlohmann::json& selection);

// `pegasos train --cv K [--grid KEY=SPEC] [--refit] [--cold] DATA [MODEL]`:
// the flags as given (folds = 0: --cv not given).
struct CvCommand {
  int folds = 0;
  std::string grid;
  bool refit = false, cold = false;
};

// Checks the flags (ConfigError naming the flag), cross-validates, prints the
// scores on stdout and, with --refit, writes MODEL (a summary on stderr).
// Returns the exit code (3: --strict and the refit model did not converge).
int run_cv_command(const std::string& config_path, const std::vector<std::string>& sets, const std::string& data_path,
                   const std::string& model_path, const CvCommand& cv, bool quiet, bool strict);

}  // namespace pegasos
