// Experiments: one JSON file names the data, a base training config, an
// optional grid of settings to sweep, repeats over seeds, cross-validated
// model selection and objective traces. `pegasos run` validates all of it,
// loads the data once, trains every run in parallel (TBB, one sequential
// engine per run, results in preallocated slots) and writes results.json,
// results.csv, best_model.json and gnuplot plots. See docs/experiments.md.
//
// Determinism: splits depend only on the split seed, each run only on its
// config and seed, so re-running an experiment reproduces results.json byte
// for byte except the values under "timing" keys (results_no_timing.json
// drops those).
//
// The implementation is in drivers/experiment/, one file per job: spec.cpp
// (keys, grid expansion, validation), splits.cpp, load.cpp (data read once),
// run.cpp (one run), journal.cpp (runs.jsonl, --resume), progress.cpp,
// results.cpp (summary, CSV), plots.cpp (gnuplot) and runner.cpp
// (run_experiment); internals live in namespace
// experiment_detail.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/dataset.hpp"
#include "drivers/config.hpp"

namespace pegasos {

struct ExperimentData {
  std::string train, test, file;  // resolved paths ("" = not given)
  double holdout = 0.0;           // file: fraction held out as the test set
  int folds = 0;                  // > 1: k-fold cross-validation on the training part
  bool stratified = false;        // keep class proportions in every split
  std::uint64_t seed = 42;        // split seed (default: the config's seed)
};

// One point of the swept grid.
struct GridPoint {
  nlohmann::json params = nlohmann::json::object();  // swept keys -> values
  TrainConfig config;                                // base config + params, validated
};

struct Experiment {
  std::string name;       // results go to <name>_results/ by default
  std::string path;       // the experiment file ("" when built in memory)
  std::string directory;  // the experiment file's folder as given ("" for the current one): relative paths resolve against it
  std::string prepare;    // the command that makes missing inputs, named when one is missing ("" = none)
  ExperimentData data;
  nlohmann::json base_config = nlohmann::json::object();  // "config" as given (paths resolved)
  nlohmann::json grid = nlohmann::json::object();         // "grid" as given
  nlohmann::json zip = nlohmann::json::object();          // "zip" as given
  std::vector<std::string> swept_keys;                    // expansion order (grid keys, then zip keys)
  std::vector<GridPoint> points;
  int repeats = 1;                // seeds seed, seed+1, ...
  std::string select_metric;      // "" = no model selection
  std::string rank_metric;        // ranks test runs (select metric, else balanced_accuracy)
  int trace_every = 0;            // epochs between trace points; 0 = no trace
  std::uint64_t trace_iterations = 0;  // > 0: steps between trace points instead (sets trace_every = 1)
  // Intermediate trace points: objective and error on fixed samples of this
  // fraction of the training and evaluation rows (at least 200); 1 = whole sets.
  double trace_sample = 0.1;
  std::optional<double> max_fpr;  // binary: also report the operating point at this FPR
  bool plots = true;
};

// Metrics a run reports that can rank runs, and whether larger is better.
// Throws ConfigError naming `origin` for anything else.
bool metric_is_maximized(const std::string& metric, const std::string& origin);

// The grid as a list of parameter objects. `grid`: {key: [values]} expanded as
// a Cartesian product, keys in sorted order, the last key varying fastest,
// values in the order listed; `zip`: {key: [values]} lists of equal length
// varied together (point i takes the i-th value of each), varying fastest of
// all. Both empty -> one empty point. Throws ConfigError for unknown keys
// (with the closest valid one), empty or non-list values, keys the data
// loading depends on, and keys given twice.
std::vector<nlohmann::json> expand_grid(const nlohmann::json& grid, const nlohmann::json& zip,
                                        const std::string& origin);

// Validate a parsed experiment (file = its path, for messages and relative
// paths). Checks every key, every grid point's config and that the data files
// exist; reads no data. Throws ConfigError / InputError naming file and key.
Experiment parse_experiment(const nlohmann::json& j, const std::string& file);
Experiment load_experiment(const std::string& path);

// Deterministic splits of rows 0..labels.size()-1 (labels are class ids).
// make_folds: `folds` disjoint sorted lists covering every row, sizes within
// one of each other (per class when stratified: each class is shuffled and
// dealt round-robin, continuing where the previous class stopped).
std::vector<std::vector<std::size_t>> make_folds(const std::vector<int>& labels, int folds, bool stratified,
                                                 std::uint64_t seed);
struct HoldoutSplit {
  std::vector<std::size_t> train, test;  // sorted, disjoint, covering every row
};
// round(fraction · n) rows (per class when stratified) go to the test side.
HoldoutSplit holdout_split(const std::vector<int>& labels, double fraction, bool stratified, std::uint64_t seed);

// Index of the best value (first one on ties). Requires a non-empty list;
// NaN never wins.
std::size_t best_index(const std::vector<double>& values, bool maximize);

struct RunOptions {
  std::string output_dir;           // "" = <name>_results/ next to the experiment file
  bool quiet = false;               // no progress bar or messages on stderr
  std::string gnuplot = "gnuplot";  // program (searched in PATH); "" = write scripts only
  // Continue the journal OUTPUT/runs.jsonl of an interrupted run: its runs are
  // not run again. Without: a new journal replaces any earlier one.
  bool resume = false;
};

// Load the data, run everything, write the output folder; returns results.json.
// Nothing is written (and no run starts) until the data has been loaded and
// checked against every grid point. Then the folder is created and each run is
// appended to its journal (runs.jsonl) as it finishes; the other files are
// written at the end. Throws InputError / ConfigError (also for a journal that
// --resume cannot continue).
nlohmann::json run_experiment(const Experiment& experiment, const RunOptions& options);

// `json` without any member named "timing", at any depth.
nlohmann::json without_timing(const nlohmann::json& json);

// `pegasos run`: load_experiment + run_experiment. Returns the exit code.
int run_experiment_command(const std::string& path, const std::string& output_dir, bool quiet, bool resume);

}  // namespace pegasos
