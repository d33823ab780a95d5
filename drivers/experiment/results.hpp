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

// results.csv: one line per run, a column per swept setting and metric.
std::string results_csv(const Experiment& e, const std::vector<nlohmann::json>& runs);

}  // namespace pegasos::experiment_detail
