// The command line of `pegasos`: its commands and their options (CLI11), and
// what they set. Only the command a command line names gets its options built.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "drivers/cross_validate.hpp"
#include "drivers/inspect.hpp"
#include "drivers/predict.hpp"

namespace pegasos {

// A flag that is the short form of a setting, given beside `--set` of the
// same key (`--calibrate --set calibrate=false`): which one was meant is
// not ours to guess, so it is an error naming both (exit 2).
void refuse_flag_and_set(const std::vector<std::string>& sets, const std::string& key, const std::string& flag);

// train --calibrate / --max-fpr / --target-recall: the settings of the same
// names (README § Probabilities and thresholds), appended to --set.
struct OperatingFlags {
  bool calibrate = false;
  std::string max_fpr, target_recall;
  void add_to(std::vector<std::string>& sets) const;
};

// Files `train` reads beside the data: a model to continue from, weights per row.
struct TrainInputs {
  std::string init_model, weights_file;
  void add_to(std::vector<std::string>& sets) const;
};

// What the command line sets, for every command (each fills its own part).
struct Commands {
  std::string config_path, data_path, model_path, output, json_path, experiment_path;
  std::vector<std::string> sets;
  bool quiet = false, strict = false, resume = false, inspect_json = false;
  double max_fpr = -1;
  TrainInputs inputs;
  CvCommand cv;
  OperatingFlags operating;
  PredictOptions predict;
  InspectOptions inspect;
};

// The commands, as added to the top-level app.
struct CommandApps {
  CLI::App *train, *predict, *eval, *featurize, *run, *inspect;
};

// Adds every command to `app`, writing into `c`. Only the command that
// argv names gets its options (building all of them was a third of a small
// run's start-up); with no command named (--help, --man, a misspelt
// command), all of them.
CommandApps add_commands(CLI::App& app, Commands& c, int argc, char** argv);

}  // namespace pegasos
