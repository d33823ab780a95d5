// What `pegasos run` reports: per-group summaries and results.csv.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "drivers/experiment.hpp"

namespace pegasos::experiment_detail {

// Mean and sample standard deviation of each metric over the runs of one
// (phase, point) group: results.json's "summary".
nlohmann::json summarize(const Experiment& e, const std::vector<nlohmann::json>& runs);

// results.json's "best_by_metric": for each reported metric (accuracy,
// balanced_accuracy, macro_f1, weighted_f1, roc_auc, recall_at_max_fpr,
// objective, eval_objective; those the runs have) the grid point with the best
// mean in `summary`, over the test runs when there are any, else the cv runs:
// {"phase", "metrics": {metric: {maximize, point, params, mean, runs}}}.
nlohmann::json best_by_metric(const nlohmann::json& summary);

// "best accuracy: lambda=0.0001 (0.9712)", ... on stderr, one line per metric.
void print_best_by_metric(const nlohmann::json& best);

// results.csv: one line per run, a column per swept setting and metric.
std::string results_csv(const Experiment& e, const std::vector<nlohmann::json>& runs);

}  // namespace pegasos::experiment_detail
