#include "drivers/experiment/run.hpp"

#include <time.h>

#include <algorithm>
#include <cmath>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "core/random.hpp"
#include "drivers/experiment/common.hpp"
#include "drivers/experiment/journal.hpp"
#include "drivers/experiment/progress.hpp"
#include "drivers/fit.hpp"
#include "drivers/registry.hpp"
#include "io/model_json.hpp"

namespace pegasos::experiment_detail {
namespace {

// CPU time of the calling thread: unlike wall time it does not grow when
// other processes share the cores. Exact with threads = 1; otherwise it misses
// work TBB hands to other threads (one-vs-all classes, objective passes over
// > 4096 rows) and may include another run's work stolen while waiting.
double thread_cpu_seconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

struct TracePoint {
  int epoch = 0;
  std::uint64_t iterations = 0;
  double objective = 0.0;
  std::optional<double> test_error;
  double seconds = 0.0;
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

// The point's config for this run: its seed, and the experiment's trace settings.
TrainConfig run_config(const Experiment& e, const LoadedData& d, const RunSpec& spec) {
  TrainConfig config = e.points[spec.point].config;
  resolve_objective(config, d.pool);  // objective auto: by the pool's classes (every fold shares them)
  if (config.objective.needs_source_model) config.source = d.sources.at(config.source_model);
  config.engine.seed = spec.seed;
  config.resolved["seed"] = spec.seed;
  if (e.trace_every > 0) {
    config.engine.trace_objective = true;
    config.engine.trace_every = e.trace_every;
    config.engine.trace_iterations = e.trace_iterations;
    config.engine.trace_sample = e.trace_sample;
  }
  return config;
}

// A cv run's training part: the pool without fold `fold` (a copy).
Dataset without_fold(const LoadedData& d, int fold) {
  std::vector<std::size_t> rows;
  rows.reserve(d.pool.size());
  for (std::size_t i = 0; i < d.pool.size(); ++i) {
    if (d.fold_of[i] != fold) rows.push_back(i);
  }
  return subset(d.pool, rows);
}

// Intermediate trace points measure the error on a fixed sample of the
// evaluation set (the same fraction as the engine's objective sample);
// empty = all rows.
std::vector<std::size_t> trace_rows_of(const Experiment& e, const Dataset& eval, std::uint64_t seed) {
  std::vector<std::size_t> trace_rows;
  if (e.trace_every > 0) {
    const std::size_t m = eval.size();
    const std::size_t size = trace_sample_size(e.trace_sample, m);
    if (size < m) trace_rows = Rng(derive_seed(seed, 7)).sample_indices(m, size);
  }
  return trace_rows;
}

struct Trained {
  AnyModel model;
  std::vector<TracePoint> trace;
  double seconds = 0.0, cpu_seconds = 0.0;
};

// Trains `config` on `train`, recording a trace point at every traced epoch.
Trained train_traced(const TrainConfig& config, const Dataset& train, const Dataset& eval,
                     const std::vector<std::size_t>& trace_rows) {
  std::vector<TracePoint> trace;
  const auto start = Clock::now();
  const double cpu_start = thread_cpu_seconds();
  // Transfer exposes only the correction u of w = w_R + u: no error trace.
  const bool error_trace = !config.objective.needs_source_model;
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
  AnyModel model = fit_model(config, train, nullptr, on_epoch);
  const double train_seconds = seconds_since(start);
  const double train_cpu_seconds = thread_cpu_seconds() - cpu_start;
  return Trained{std::move(model), std::move(trace), train_seconds, train_cpu_seconds};
}

// The final model closes the trace (its objective is on the whole training set).
void close_trace(const AnyModel& model, const Evaluation& ev, double train_seconds, std::vector<TracePoint>& trace) {
  const std::uint64_t iterations = model.training().value("iterations", std::uint64_t{0});
  if (trace.empty() || trace.back().iterations != iterations) {
    TracePoint p;
    p.epoch = static_cast<int>(std::ceil(model.training().value("epochs", 0.0) - 1e-9));
    p.iterations = iterations;
    p.objective = model.training().value("objective", std::nan(""));
    p.test_error = 1.0 - ev.full.accuracy;
    p.seconds = train_seconds;
    trace.push_back(p);
  }
}

// results.json's record of one run (without "trace" and "timing").
json run_record(const Experiment& e, const LoadedData& d, std::size_t id, const RunSpec& spec,
                const TrainConfig& config, const Dataset& eval, const Evaluation& ev, const AnyModel& model) {
  const std::uint64_t iterations = model.training().value("iterations", std::uint64_t{0});
  json r;
  r["id"] = id;
  r["phase"] = phase_name(spec.phase);
  r["point"] = spec.point;
  r["params"] = e.points[spec.point].params;
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
  // lambda "auto": the λ its cross-validation chose (drivers/fit.hpp).
  if (config.lambda_auto) r["training"]["lambda_chosen"] = model.lambda();
  // A budget refit's outcome (drivers/budget_refit.hpp), skipped or not.
  if (const json t = model.training(); t.contains("budget_refit")) r["training"]["budget_refit"] = t["budget_refit"];
  return r;
}

}  // namespace

RunOutcome execute(const Experiment& e, const LoadedData& d, std::size_t id, const RunSpec& spec, bool keep) {
  const TrainConfig config = run_config(e, d, spec);
  std::optional<Dataset> part;  // cv: the other folds (a copy; freed after training)
  if (spec.fold >= 0) part = without_fold(d, spec.fold);
  const Dataset& train = part ? *part : d.pool;
  const Dataset& eval = spec.fold >= 0 ? d.fold_eval[static_cast<std::size_t>(spec.fold)] : *d.test;
  const std::vector<std::size_t> trace_rows = trace_rows_of(e, eval, spec.seed);
  Trained trained = train_traced(config, train, eval, trace_rows);
  AnyModel& model = trained.model;
  std::vector<TracePoint>& trace = trained.trace;
  part.reset();

  const auto eval_start = Clock::now();
  Evaluation ev = evaluate(model, eval, e.max_fpr);
  if (e.trace_every > 0) close_trace(model, ev, trained.seconds, trace);

  json trace_json = json::array(), trace_seconds = json::array();
  for (const TracePoint& p : trace) {
    json t = {{"epoch", p.epoch}, {"iterations", p.iterations}, {"objective", p.objective}};
    if (p.test_error) t["test_error"] = *p.test_error;
    trace_json.push_back(std::move(t));
    trace_seconds.push_back(p.seconds);
  }
  json r = run_record(e, d, id, spec, config, eval, ev, model);
  if (e.trace_every > 0) r["trace"] = trace_json;
  r["timing"] = {{"train_seconds", trained.seconds},
                 {"train_cpu_seconds", trained.cpu_seconds},
                 {"eval_seconds", seconds_since(eval_start)}};
  if (e.trace_every > 0) r["timing"]["trace_seconds"] = trace_seconds;

  RunOutcome out;
  out.record = std::move(r);
  if (keep) {
    if (model.linear) model.linear->features = features_text(d.features);  // so `pegasos predict` can featurise raw text
    out.model = std::move(model);
    out.evaluation = std::move(ev);
  }
  return out;
}

void run_all(const Experiment& e, const LoadedData& d, const std::vector<RunSpec>& specs, std::size_t first,
             std::vector<json>& records, ProgressBar& progress, RunJournal& journal) {
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, specs.size(), 1), [&](const tbb::blocked_range<std::size_t>& r) {
    for (std::size_t i = r.begin(); i != r.end(); ++i) {
      json& slot = records[first + i];
      if (!slot.is_null()) continue;  // restored from the journal
      // Through its text, as a restored run is (NaN becomes null in both).
      json record = json::parse(execute(e, d, first + i, specs[i], false).record.dump());
      journal.append(record);
      slot = std::move(record);
      progress.run_done();
    }
  });
}

}  // namespace pegasos::experiment_detail
