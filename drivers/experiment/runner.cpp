// `pegasos run`: load the data, run the grid (cv, test, final runs), pick the
// best run, write results.json / results.csv / best_model.json and the plots.
#include <cstdio>
#include <filesystem>
#include <numeric>
#include <optional>
#include <stdexcept>

#include <tbb/global_control.h>
#include <tbb/task_arena.h>

#include "core/atomic_file.hpp"
#include "core/errors.hpp"
#include "drivers/experiment.hpp"
#include "drivers/experiment/common.hpp"
#include "drivers/experiment/load.hpp"
#include "drivers/experiment/plots.hpp"
#include "drivers/experiment/progress.hpp"
#include "drivers/experiment/results.hpp"
#include "drivers/experiment/run.hpp"
#include "drivers/report.hpp"

namespace pegasos {

using namespace experiment_detail;
namespace fs = std::filesystem;

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
