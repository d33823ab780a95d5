// One run of an experiment: train a grid point's config with one seed on the
// training part (the pool, or all folds but one), evaluate it, and describe it
// as a JSON record (results.json's "runs"); and the parallel loop over runs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/metrics.hpp"
#include "drivers/any_model.hpp"
#include "drivers/experiment.hpp"
#include "drivers/experiment/common.hpp"
#include "drivers/experiment/load.hpp"

namespace pegasos::experiment_detail {

class ProgressBar;
class RunJournal;

enum class Phase { kCv, kTest, kFinal };
inline const char* phase_name(Phase p) { return p == Phase::kCv ? "cv" : p == Phase::kTest ? "test" : "final"; }

struct RunSpec {
  Phase phase = Phase::kTest;
  std::size_t point = 0;
  int repeat = 0;
  int fold = -1;  // cv runs: the held-out fold
  std::uint64_t seed = 0;
};

struct Evaluation {
  json metrics;
  Metrics full;
  std::vector<double> scores;  // K per row
};

struct RunOutcome {
  json record;
  std::optional<AnyModel> model;  // kept only when asked (the best run)
  std::optional<Evaluation> evaluation;
};

// Trains and evaluates run `id` (record["id"]); keeps the model and its
// evaluation when `keep`.
RunOutcome execute(const Experiment& e, const LoadedData& d, std::size_t id, const RunSpec& spec, bool keep);

// Runs `specs` in parallel; records[first + i] receives run i, which is
// appended to `journal` as it finishes. Slots that are not null (runs restored
// from the journal) are skipped. A record is stored as read back from its JSON
// text, so a fresh run and a restored one are the same value.
void run_all(const Experiment& e, const LoadedData& d, const std::vector<RunSpec>& specs, std::size_t first,
             std::vector<nlohmann::json>& records, ProgressBar& progress, RunJournal& journal);

}  // namespace pegasos::experiment_detail
