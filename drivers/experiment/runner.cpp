// `pegasos run`: load the data, run the grid (cv, test, final runs), pick the
// best run, write results.json / results.csv / best_model.json and the plots.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <numeric>
#include <optional>
#include <stdexcept>

#include <tbb/global_control.h>
#include <tbb/task_arena.h>

#include "core/output_file.hpp"
#include "core/errors.hpp"
#include "drivers/experiment.hpp"
#include "drivers/experiment/common.hpp"
#include "drivers/experiment/journal.hpp"
#include "drivers/experiment/load.hpp"
#include "drivers/experiment/plots.hpp"
#include "drivers/experiment/progress.hpp"
#include "drivers/experiment/results.hpp"
#include "drivers/experiment/run.hpp"
#include "drivers/report.hpp"

namespace pegasos {

using namespace experiment_detail;
namespace fs = std::filesystem;

namespace {

// Data errors name the data file; prefix the experiment so both are known.
LoadedData load_prefixed(const Experiment& e, const std::string& origin) {
  try {
    return load_data(e);
  } catch (const ConfigError& err) {
    throw ConfigError(origin + ": " + err.what());
  } catch (const InputError& err) {
    throw InputError(origin + ": " + err.what());
  }
}

// The run list: cv runs (point, repeat, fold), then test runs (point, repeat)
// unless a point is selected (its final runs come after the selection).
std::vector<RunSpec> sweep_runs(const Experiment& e, bool test_runs) {
  std::vector<RunSpec> specs;
  for (std::size_t g = 0; g < e.points.size(); ++g) {
    for (int r = 0; r < e.repeats; ++r) {
      const std::uint64_t seed = e.points[g].config.engine.seed + static_cast<std::uint64_t>(r);
      for (int f = 0; f < e.data.folds; ++f) specs.push_back({Phase::kCv, g, r, f, seed});
    }
  }
  if (test_runs) {
    for (std::size_t g = 0; g < e.points.size(); ++g) {
      for (int r = 0; r < e.repeats; ++r) {
        specs.push_back({Phase::kTest, g, r, -1, e.points[g].config.engine.seed + static_cast<std::uint64_t>(r)});
      }
    }
  }
  return specs;
}

void announce(const Experiment& e, const LoadedData& data, std::size_t runs) {
  std::fprintf(stderr, "%s: %zu grid point%s x %d repeat%s; %zu runs on %zu training examples%s\n", e.name.c_str(),
               e.points.size(), e.points.size() == 1 ? "" : "s", e.repeats, e.repeats == 1 ? "" : "s", runs,
               data.pool.size(),
               data.test ? (", " + std::to_string(data.test->size()) + " test examples").c_str() : "");
}

struct Selection {
  json record = nullptr;  // results.json's "selection"
  std::size_t best_point = 0;
};

// Cross-validated model selection: the point with the best mean of the
// select metric over its cv runs (runs[0, cv_end)).
Selection select_point(const Experiment& e, const std::vector<json>& runs, std::size_t cv_end,
                       const std::string& origin) {
  Selection s;
  const bool maximize = metric_is_maximized(e.select_metric, origin);
  std::vector<double> mean(e.points.size(), 0.0), std(e.points.size(), 0.0);
  for (std::size_t g = 0; g < e.points.size(); ++g) {
    std::vector<double> v;
    for (std::size_t i = 0; i < cv_end; ++i) {
      const json& r = runs[i];
      if (r["phase"] == "cv" && r["point"] == g) v.push_back(metric_of(r["metrics"], e.select_metric));
    }
    mean[g] = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
    double ss = 0.0;
    for (double x : v) ss += (x - mean[g]) * (x - mean[g]);
    std[g] = v.size() > 1 ? std::sqrt(ss / static_cast<double>(v.size() - 1)) : 0.0;
  }
  s.best_point = best_index(mean, maximize);
  s.record = {{"metric", e.select_metric}, {"maximize", maximize},
              {"cv_mean", mean},           {"cv_std", std},
              {"best_point", s.best_point}, {"params", e.points[s.best_point].params}};
  return s;
}

// The final runs of the selected point: one per repeat.
std::vector<RunSpec> final_runs(const Experiment& e, std::size_t best_point) {
  std::vector<RunSpec> finals;
  for (int r = 0; r < e.repeats; ++r) {
    finals.push_back(
        {Phase::kFinal, best_point, r, -1, e.points[best_point].config.engine.seed + static_cast<std::uint64_t>(r)});
  }
  return finals;
}

// The best run: the selected point's first final run (at `first_final`),
// else the test run with the best rank metric; none without a test set.
std::optional<std::size_t> best_run_id(const Experiment& e, const std::vector<json>& runs, bool select,
                                       std::size_t first_final, bool has_test, const std::string& origin) {
  std::optional<std::size_t> best_run;
  if (select) {
    best_run = first_final;
  } else if (has_test) {
    std::vector<double> v;
    std::vector<std::size_t> ids;
    for (const json& r : runs) {
      if (r["phase"] != "test") continue;
      v.push_back(metric_of(r["metrics"], e.rank_metric));
      ids.push_back(r["id"].get<std::size_t>());
    }
    best_run = ids[best_index(v, metric_is_maximized(e.rank_metric, origin))];
  }
  return best_run;
}

struct BestRun {
  json record = nullptr;  // results.json's "best"
  std::optional<RunOutcome> outcome;
  double seconds = 0.0;
};

// The best run is trained again (deterministically: the same model) so no
// model had to be kept during the sweep; throws if it differs: a
// ConfigError when the run came from the journal of a resumed sweep (written
// by another pegasos build, whose solvers may differ), else a logic_error.
BestRun retrain_best(const Experiment& e, const LoadedData& data, const std::vector<json>& runs,
                     std::size_t best_run, bool select, const RunJournal& journal) {
  BestRun b;
  const json& r = runs[best_run];
  const RunSpec spec{select ? Phase::kFinal : Phase::kTest, r["point"].get<std::size_t>(), r["repeat"].get<int>(), -1,
                     r["seed"].get<std::uint64_t>()};
  const auto t0 = Clock::now();
  b.outcome = execute(e, data, best_run, spec, true);
  b.seconds = seconds_since(t0);
  // Compared as text: `r` was read back from its JSON text (NaN is null there).
  if (without_timing(b.outcome->record).dump() != without_timing(r).dump()) {
    if (journal.restored().count(best_run) != 0) {
      throw ConfigError(journal.path() + ": run " + std::to_string(best_run) +
                        " (the best, restored from the journal) trains to a different result now: the journal was "
                        "written by another pegasos build; run without --resume to start over");
    }
    throw std::logic_error("retraining the best run did not reproduce it (non-deterministic training)");
  }
  const Evaluation& ev = *b.outcome->evaluation;
  json full = metrics_to_json(ev.full);
  b.record = {{"run", best_run},
              {"phase", r["phase"]},
              {"point", r["point"]},
              {"params", r["params"]},
              {"seed", r["seed"]},
              {"metrics", r["metrics"]},
              {"classes", b.outcome->model->classes()},
              {"per_class", full["per_class"]},
              {"confusion_matrix", full["confusion_matrix"]},
              {"model_file", "best_model.json"}};
  return b;
}

// Puts the journal's runs among `specs` (ids first, first + 1, ...) into their
// slots; each must be the run the experiment has at that id.
void restore(const RunJournal& journal, const std::vector<RunSpec>& specs, std::size_t first, std::vector<json>& runs) {
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const auto it = journal.restored().find(first + i);
    if (it == journal.restored().end()) continue;
    const json& r = it->second;
    const RunSpec& s = specs[i];
    if (r["phase"] != phase_name(s.phase) || r["point"] != s.point || r["repeat"] != s.repeat ||
        r["fold"] != (s.fold >= 0 ? json(s.fold) : json(nullptr)) || r["seed"] != s.seed) {
      throw ConfigError(journal.path() + ": run " + std::to_string(first + i) +
                        " is not the run this experiment has at that id; run without --resume to start over");
    }
    runs[first + i] = r;
  }
}

struct Sweep {
  std::vector<json> runs;
  Selection selection;
  double seconds = 0.0;
};

// Every run: `specs` (cv, test), then with `select` the selection and the
// final runs. Runs the journal holds are restored instead of run.
Sweep run_sweep(const Experiment& e, const LoadedData& data, const std::vector<RunSpec>& specs, std::size_t total,
                RunJournal& journal, bool quiet, const std::string& origin) {
  Sweep s;
  s.runs.resize(total);
  ProgressBar progress(total - journal.restored().size(), quiet);
  const auto start = Clock::now();
  restore(journal, specs, 0, s.runs);
  run_all(e, data, specs, 0, s.runs, progress, journal);
  if (!e.select_metric.empty()) {
    s.selection = select_point(e, s.runs, specs.size(), origin);
    const std::vector<RunSpec> finals = final_runs(e, s.selection.best_point);
    restore(journal, finals, specs.size(), s.runs);
    run_all(e, data, finals, specs.size(), s.runs, progress, journal);
  }
  progress.finish();
  s.seconds = seconds_since(start);
  return s;
}

// results.json's "experiment": the experiment as run, with its data.
json experiment_record(const Experiment& e, const LoadedData& data) {
  json exp = {{"name", e.name},
              {"file", e.path.empty() ? json(nullptr) : json(usable_path(e.path))},
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
  return exp;
}

// Draws (or writes the scripts of) every plot into OUTPUT/plots; returns the images made.
std::vector<std::string> make_plots(const Experiment& e, const LoadedData& data, const std::vector<json>& runs,
                                    const json& summary, const std::optional<RunOutcome>& best_outcome,
                                    const std::string& output_dir, const RunOptions& options) {
  PlotSet plots;
  trace_plots(runs, plots);
  sweep_plots(e, summary, plots);
  if (best_outcome) {
    const AnyModel& model = *best_outcome->model;
    const Dataset& test = *data.test;
    if (model.binary()) curve_plots(best_outcome->evaluation->scores, test.labels, plots);
    confusion_plot(best_outcome->evaluation->full, model.classes(), plots);
  }
  return write_plots(plots, (fs::path(output_dir) / "plots").string(), options.gnuplot, options.quiet);
}

void write_outputs(const Experiment& e, const std::string& output_dir, const json& results,
                   const std::vector<json>& runs, const std::optional<RunOutcome>& best_outcome) {
  if (best_outcome)
    write_output((fs::path(output_dir) / "best_model.json").string(), best_outcome->model->to_json());
  write_output((fs::path(output_dir) / "results.csv").string(), results_csv(e, runs));
  write_output((fs::path(output_dir) / "results_no_timing.json").string(), without_timing(results).dump(2) + "\n");
  write_output((fs::path(output_dir) / "results.json").string(), results.dump(2) + "\n");
}

// The closing lines on stderr: where the results are, the selection, the best run, the plots.
void report_done(const Experiment& e, std::size_t runs, double seconds, const std::string& output_dir,
                 const Selection& selection, const json& results, std::optional<std::size_t> best_run,
                 const std::vector<std::string>& images) {
  std::fprintf(stderr, "%zu runs in %.1fs; results in %s\n", runs, seconds, output_dir.c_str());
  print_best_by_metric(results["best_by_metric"]);
  if (!e.select_metric.empty()) {
    std::fprintf(stderr, "selected %s (mean cv %s %.4f)\n", params_text(e.points[selection.best_point].params).c_str(),
                 e.select_metric.c_str(), selection.record["cv_mean"][selection.best_point].get<double>());
  }
  const json& best = results["best"];
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

// The files run writes into its folder.
constexpr const char* kOutputFiles[] = {"best_model.json", "results.csv", "results_no_timing.json", "results.json",
                                        "runs.jsonl"};

// The files run writes into its folder must not be any of its inputs (`run
// e.json -o dir` with dir/results.csv as the data replaced the data with the
// results table): exit 2 before anything is read or written. Inputs: the
// experiment file, the data files and every grid point's source model, warm
// start and weights file; a plot replaces files in OUT/plots, so no input may
// be there either.
void refuse_outputs_over_inputs(const Experiment& e, const std::string& output_dir) {
  std::vector<NamedInput> inputs = {{"the experiment", &e.path}, {"the data", &e.data.file},
                                    {"the training data", &e.data.train}, {"the test data", &e.data.test}};
  for (const GridPoint& p : e.points) {
    inputs.push_back({"a source model", &p.config.source_model});
    inputs.push_back({"a warm start's model", &p.config.init_model});
    inputs.push_back({"a weights file", &p.config.weights_file});
  }
  for (const char* name : kOutputFiles) {
    refuse_overwriting((fs::path(output_dir) / name).string(), inputs);
  }
  std::error_code ec;
  // A data folder (text_dir: a folder per class) must not hold the results:
  // `-o tdir/ham` added them to the ham documents, `-o tdir/new` a class.
  const fs::path out = fs::weakly_canonical(output_dir, ec);
  for (const std::string* data : {&e.data.file, &e.data.train, &e.data.test}) {
    std::error_code ec2;
    if (ec || data->empty() || !fs::is_directory(*data, ec2)) continue;
    const fs::path folder = fs::weakly_canonical(*data, ec2);
    if (ec2) continue;
    if (std::mismatch(folder.begin(), folder.end(), out.begin(), out.end()).first == folder.end()) {  // out is under it
      throw InputError(output_dir + ": the results folder is inside the data folder " + *data +
                       " (its files would become documents of the next run); choose another output folder");
    }
  }
  const fs::path plots = fs::weakly_canonical(fs::path(output_dir) / "plots", ec);
  for (const auto& [what, path] : inputs) {
    if (ec || path->empty() || *path == "-") continue;
    std::error_code ec2;
    const fs::path where = fs::weakly_canonical(*path, ec2);
    if (!ec2 && where.parent_path() == plots) {
      throw InputError(*path + ": " + what + " is in the plots folder that pegasos run writes (" + plots.string() +
                       "); move it or choose another output folder");
    }
  }
}

// The files written at the end, checked before the first run (a folder
// named best_model.json, or a file named plots, failed after hours of runs):
// exit 2 with the journal untouched.
void check_outputs_writable(const Experiment& e, const std::string& output_dir) {
  for (const char* name : kOutputFiles) {
    check_output_creatable((fs::path(output_dir) / name).string());
  }
  std::error_code ec;
  const fs::path plots = fs::path(output_dir) / "plots";
  if (e.plots && fs::exists(fs::symlink_status(plots, ec)) && !fs::is_directory(plots, ec)) {
    throw InputError(plots.string() + ": cannot create the output folder: a file of that name is in the way");
  }
}

// roc_auc and the FPR operating point are binary measures: on more classes
// they are null, and a selection by them chose arbitrarily (`train
// --max-fpr` and `eval --max-fpr` refuse multiclass data alike).
void refuse_binary_metrics_on_multiclass(const Experiment& e, const LoadedData& data, const std::string& origin) {
  const std::size_t K = data.pool.classes.size();
  if (K <= 2) return;
  if (e.select_metric == "roc_auc" || e.select_metric == "recall_at_max_fpr") {
    fail(origin, "select/metric", e.select_metric + " is for two classes; the data has " + std::to_string(K) +
                                      " (use accuracy, balanced_accuracy, macro_f1 or weighted_f1)");
  }
  if (e.max_fpr) {
    fail(origin, "max_fpr", "the false-positive rate is for two classes; the data has " + std::to_string(K));
  }
}

}  // namespace

json run_experiment(const Experiment& e, const RunOptions& options) {
  const auto start = Clock::now();
  const std::string origin = e.path.empty() ? "experiment" : e.path;
  if (e.points.empty()) throw ConfigError(origin + ": no grid point to run");
  std::optional<tbb::global_control> limit;
  const int threads = e.points.front().config.threads;
  if (threads > 0) limit.emplace(tbb::global_control::max_allowed_parallelism, threads);

  const std::string output_dir =
      options.output_dir.empty() ? usable_path((fs::path(e.directory) / (e.name + "_results")).string()) : options.output_dir;
  refuse_outputs_over_inputs(e, output_dir);
  const LoadedData data = load_prefixed(e, origin);
  const double load_seconds = seconds_since(start);
  refuse_binary_metrics_on_multiclass(e, data, origin);

  const bool select = !e.select_metric.empty();
  const std::vector<RunSpec> specs = sweep_runs(e, data.test && !select);
  const std::size_t total = specs.size() + (select ? static_cast<std::size_t>(e.repeats) : 0);
  if (!options.quiet) announce(e, data, total);
  json results;
  results["format_version"] = 1;
  results["experiment"] = experiment_record(e, data);
  // From here on the folder exists and holds the journal: each finished run is kept.
  make_output_directory(output_dir);
  check_outputs_writable(e, output_dir);
  RunJournal journal((fs::path(output_dir) / "runs.jsonl").string(),
                     experiment_fingerprint(results["experiment"], data), e.name, total, options.resume, options.quiet);
  const Sweep sweep = run_sweep(e, data, specs, total, journal, options.quiet, origin);
  const std::vector<json>& runs = sweep.runs;

  const std::optional<std::size_t> best_run =
      best_run_id(e, runs, select, specs.size(), data.test.has_value(), origin);
  BestRun best;
  if (best_run) best = retrain_best(e, data, runs, *best_run, select, journal);

  results["runs"] = runs;
  const json summary = summarize(e, runs);
  results["summary"] = summary;
  results["best_by_metric"] = best_by_metric(summary);
  results["selection"] = sweep.selection.record;
  results["best"] = best.record;

  // The other files only now: a failure above leaves the journal, nothing half-written.
  const auto plots_start = Clock::now();
  std::vector<std::string> images;
  if (e.plots) images = make_plots(e, data, runs, summary, best.outcome, output_dir, options);
  json image_list = json::array();
  for (const auto& i : images) image_list.push_back(fs::path(i).lexically_relative(output_dir).string());
  results["plots"] = image_list;
  results["timing"] = {{"load_seconds", load_seconds},          {"runs_seconds", sweep.seconds},
                       {"best_retrain_seconds", best.seconds},  {"plots_seconds", seconds_since(plots_start)},
                       {"total_seconds", seconds_since(start)}, {"threads", tbb::this_task_arena::max_concurrency()},
                       {"restored_runs", journal.restored().size()}};
  write_outputs(e, output_dir, results, runs, best.outcome);

  if (!options.quiet) {
    report_done(e, runs.size(), seconds_since(start), output_dir, sweep.selection, results, best_run, images);
  }
  return results;
}

int run_experiment_command(const std::string& path, const std::string& output_dir, bool quiet, bool resume) {
  const Experiment e = load_experiment(path);
  RunOptions options;
  options.output_dir = output_dir;
  options.quiet = quiet;
  options.resume = resume;
  run_experiment(e, options);
  return 0;
}

}  // namespace pegasos
