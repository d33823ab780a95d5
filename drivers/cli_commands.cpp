#include "drivers/cli_commands.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/errors.hpp"
#include "drivers/cli_docs.hpp"

namespace pegasos {
namespace {

// Command-line checks CLI11 lacks: a path that is not empty (an empty one
// would mean standard output to OutputFile), a number that is finite (NaN
// passes CLI::Range).
const CLI::Validator kNonEmptyPath(
    [](std::string& v) { return v.empty() ? std::string("an empty path (use - for standard output)") : std::string(); },
    "PATH");
// An input file: not empty ("error: : cannot open" named nothing, and an
// empty --init-model or --weights, read as "unset", trained from zero or
// unweighted without a word: an unset shell variable went unnoticed).
const CLI::Validator kInputPath(
    [](std::string& v) { return v.empty() ? std::string("an empty path (use - for standard input)") : std::string(); },
    "PATH");
// `run --output`: a folder (results.json, runs.jsonl, plots), never a stream.
const CLI::Validator kFolderPath(
    [](std::string& v) {
      if (v.empty()) return std::string("an empty path (give a folder)");
      if (v == "-") return std::string("a results folder, not standard output (give a folder)");
      return std::string();
    },
    "DIR");
const CLI::Validator kFinite(
    [](std::string& v) {
      char* end = nullptr;
      const double d = std::strtod(v.c_str(), &end);
      return end != v.c_str() && *end == '\0' && !std::isfinite(d) ? "not a finite number: " + v : std::string();
    },
    "NUMBER");

// A number, or a whole number, before any range check: "--top abc" was
// "Value abc not in range 0 to 1000000", "--cv abc" "Could not convert".
// Decimal only, as in data files (strtod took "0x10" as 16).
const CLI::Validator kNumber(
    [](std::string& v) {
      const char* first = v.data() + (!v.empty() && v[0] == '+' ? 1 : 0);
      const char* last = v.data() + v.size();
      double d = 0.0;
      const auto [end, ec] = std::from_chars(first, last, d, std::chars_format::general);
      const bool whole = first != last && end == last && (ec == std::errc() || ec == std::errc::result_out_of_range);
      return whole ? std::string() : "'" + v + "' is not a number";
    },
    "NUMBER");
const CLI::Validator kWholeNumber(
    [](std::string& v) {
      char* end = nullptr;
      (void)std::strtoll(v.c_str(), &end, 10);
      return v.empty() || end == v.c_str() || *end != '\0' ? "'" + v + "' is not a whole number" : std::string();
    },
    "INT");

// A rate strictly between 0 and 1 (--max-fpr; after kNumber), or in (0, 1]
// (--target-recall: recall 1 catches every positive), as the settings take
// them (drivers/config.cpp): named by its own flag, where the setting's check
// named a --set never typed.
const CLI::Validator kOpenUnit(
    [](std::string& v) {
      const double d = std::strtod(v.c_str(), nullptr);
      return d > 0.0 && d < 1.0 ? std::string() : "must be in (0, 1), got " + v;
    },
    "RATE");
const CLI::Validator kUnitUpToOne(
    [](std::string& v) {
      const double d = std::strtod(v.c_str(), nullptr);
      return d > 0.0 && d <= 1.0 ? std::string() : "must be in (0, 1], got " + v;
    },
    "RATE");

// --cv K: K >= 2 (0 or 1 used to train silently without cross-validation).
const CLI::Validator kFolds(
    [](std::string& v) {
      char* end = nullptr;
      const long k = std::strtol(v.c_str(), &end, 10);
      return end != v.c_str() && *end == '\0' && k < 2 ? "needs at least 2 folds, got " + v : std::string();
    },
    "K");

CLI::App* add_predict_command(CLI::App& app, Commands& c, bool options) {
  CLI::App* predict = app.add_subcommand("predict", "predict: one line per example, label TAB decision value(s)");
  if (!options) return predict;
  predict->add_option("model", c.model_path, "model file written by pegasos train")->required()->check(kInputPath);
  predict->add_option("data", c.data_path, "data to predict (labels optional)")->required()->check(kInputPath);
  predict->add_option("--output,-o", c.predict.output, "write predictions here instead of stdout")->check(kNonEmptyPath);
  predict->add_option("--format,-f", c.predict.format,
                      "how to read DATA: libsvm, csv, jsonl, text_tsv, text_dir or document (default: the model's "
                      "setting, else by the name; standard input by its content)");
  predict->add_flag("--ids", c.predict.ids,
                    "put an id first on each line: the line number, the file name (folders), or --id-field (JSONL)");
  predict->add_option("--id-field", c.predict.id_field, "JSONL: the field holding each record's id (implies --ids)")
      ->check(CLI::Validator([](std::string& v) { return v.empty() ? std::string("an empty field name") : std::string(); },
                             "FIELD"));
  predict->add_flag("--proba", c.predict.proba,
                    "calibrated probabilities instead of decision values (binary: of the positive class; a model "
                    "trained with --calibrate)");
  predict->add_option_function<double>(
      "--threshold", [&c](const double& t) { c.predict.threshold = t; },
      "binary: predict the positive class when score > T (default: the threshold stored by train --max-fpr / "
      "--target-recall, else 0; with --proba the class still follows the score, the probability is printed beside it)")
      ->check(kNumber.description(""))
      ->check(kFinite.description(""))
      ->type_name("T");
  predict->add_flag("--line-buffered", c.predict.line_buffered,
                    "write each line's prediction as soon as it is read (automatic when the output is a terminal or pipe)");
  predict->footer(
      "DATA may be - (standard input) or a named pipe; it is read in batches and predictions are written as it is\n"
      "read, so the input may be larger than memory. A raw-text model also predicts a folder of documents (one\n"
      "file each) or one document (a file not named .jsonl/.tsv/.txt). Feature indices beyond the model's\n"
      "dimension are ignored, and the rows that have them are counted in a note on standard error.");
  return predict;
}

CLI::App* add_featurize_command(CLI::App& app, Commands& c, bool options) {
  CLI::App* featurize = app.add_subcommand(
      "featurize", "write data as LIBSVM features: pegasos featurize [--config FILE] [--set KEY=VALUE]... | --model MODEL DATA OUT");
  if (!options) return featurize;
  featurize->add_option("--config,-c", c.config_path, "JSON configuration file (reader and text featurization settings)")
      ->check(CLI::ExistingFile);
  featurize->add_option("--set,-s", c.sets, "override a setting, KEY=VALUE (repeatable)");
  featurize->add_option("--model,-m", c.model_path, "use this model's reader settings and fitted featurizer (for test data)")
      ->check(kInputPath);
  featurize->add_flag("--quiet,-q", c.quiet, "no summary on stderr");
  featurize->add_option("data", c.data_path, "data (raw text, LIBSVM/SVMlight or CSV; - for standard input)")
      ->required()
      ->check(kInputPath);
  featurize->add_option("out", c.output, "where to write the LIBSVM file (- for standard output)")
      ->required()
      ->check(kNonEmptyPath);
  featurize->footer(
      "Raw text is featurised as `train` would (fitting vocabulary and idf on DATA), or with --model as the model\n"
      "does. Labels are written as they are when all are numbers, else -1/+1 (binary; the positive class is +1)\n"
      "or 1..K, and the mapping is printed. Rows without a label get 0.");
  return featurize;
}

CLI::App* add_inspect_command(CLI::App& app, Commands& c, bool options) {
  CLI::App* inspect = app.add_subcommand("inspect", "show a model: settings, training summary, bias, top weights per class");
  if (!options) return inspect;
  inspect->add_option("model", c.model_path, "model file written by pegasos train")->required()->check(kInputPath);
  inspect->add_option("--top,-n", c.inspect.top, "features per list (default 20; 0: summary only; at most 1000000)")
      ->check(kWholeNumber.description(""))
      ->check(CLI::Range(0, 1000000).description(""))
      ->type_name("N");
  inspect->add_option("--class", c.inspect.class_name, "multiclass: only this class's lists (a binary model has one output: both lists)")
      ->check(CLI::Validator([](std::string& v) { return v.empty() ? std::string("an empty class name") : std::string(); },
                             "CLASS"));
  inspect->add_flag("--json", c.inspect_json, "print the report as JSON");
  return inspect;
}

void add_cv_options(CLI::App& train, CvCommand& cv) {
  train.add_option("--cv", cv.folds, "cross-validate: K stratified folds (by the seed setting); scores on stdout")
      ->check(kWholeNumber.description(""))
      ->check(kFolds.description(""))
      ->type_name("K");
  train.add_option("--grid", cv.grid,
                   "with --cv: lambda=LOW:HIGH[:POINTS] (log grid, 10 points) or KEY=V1,V2,...; prints each value's "
                   "score and the best");
  train.add_flag("--refit", cv.refit, "with --cv: train the best value on all the data and write MODEL_OUT");
  train.add_flag("--cold", cv.cold, "with --cv --grid: fit every value from zero (no warm starts along the lambda path)");
}


void add_operating_options(CLI::App& train, OperatingFlags& o) {
  train.add_flag("--calibrate", o.calibrate,
                 "fit probabilities (Platt) on out-of-fold decision values and store them (predict --proba)");
  train.add_option("--max-fpr", o.max_fpr,
                   "binary: store the threshold whose out-of-fold false-positive rate is at most F (predict uses it)")
      ->check(kNumber.description(""))
      ->check(kOpenUnit.description(""))
      ->type_name("F");
  train.add_option("--target-recall", o.target_recall,
                   "binary: store the highest threshold whose out-of-fold recall is at least R")
      ->check(kNumber.description(""))
      ->check(kUnitUpToOne.description(""))
      ->type_name("R");
}


void add_input_options(CLI::App& train, TrainInputs& in) {
  train.add_option("--init-model", in.init_model,
                   "warm start: continue from this model (same objective, classes, features, bias); "
                   "the init_model setting")
      ->check(kInputPath);
  train.add_option("--weights", in.weights_file,
                   "per-example weights: one number >= 0 per training row, in the data's order (like LIBLINEAR -W); "
                   "the weights_file setting")
      ->check(kInputPath);
}


// The command a command line names: its first argument that is not an option
// (the top level has only flags: --help, --version, --man, ...), if it is a
// command's name, else "".
std::string_view named_command(int argc, char** argv) {
  static constexpr std::string_view kNames[] = {"train", "predict", "eval", "featurize", "run", "inspect"};
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.empty() || arg[0] == '-') continue;
    for (const std::string_view name : kNames) {
      if (arg == name) return name;
    }
    return "";
  }
  return "";
}

CLI::App* add_train_command(CLI::App& app, Commands& c, bool options) {
  CLI::App* train = app.add_subcommand("train", "train a model: pegasos train [--config FILE] [--set KEY=VALUE]... DATA MODEL_OUT | --cv K [--grid KEY=SPEC] [--refit] DATA [MODEL_OUT]");
  if (!options) return train;
  train->add_option("--config,-c", c.config_path, "JSON configuration file")->check(CLI::ExistingFile);
  // One value per --set: MODEL_OUT is optional with --cv, so the option must
  // not take the positionals that follow it.
  train->add_option("--set,-s", c.sets, "override a setting, KEY=VALUE (repeatable; VALUE is JSON or a word)")
      ->allow_extra_args(false);
  train->add_flag("--quiet,-q", c.quiet, "no progress or summary on stderr (warnings still)");
  train->add_flag("--strict", c.strict,
                  "exit 3 without writing the model unless training converged (a duality gap within tolerance; a "
                  "budget kernel model: its refit's, on the support vectors' span)");
  add_input_options(*train, c.inputs);
  train->add_option("data", c.data_path,
                    "training data: LIBSVM/SVMlight, CSV, raw text (JSONL, TSV, a folder per class), optionally .gz; "
                    "- for standard input")
      ->required()
      ->check(kInputPath);
  train->add_option("model", c.model_path, "where to write the model (JSON); with --cv only with --refit")->check(kNonEmptyPath);
  add_cv_options(*train, c.cv);
  add_operating_options(*train, c.operating);
  // Made when shown (it lists every setting); CLI11 puts a newline after it.
  train->footer([] {
    std::string footer = train_help_footer();
    if (!footer.empty() && footer.back() == '\n') footer.pop_back();
    return footer;
  });
  return train;
}

CLI::App* add_eval_command(CLI::App& app, Commands& c, bool options) {
  CLI::App* eval = app.add_subcommand("eval", "evaluate a model on labelled data");
  if (!options) return eval;
  eval->add_option("model", c.model_path, "model file written by pegasos train")->required()->check(kInputPath);
  eval->add_option("data", c.data_path, "labelled data (- for standard input)")->required()->check(kInputPath);
  eval->add_option("--json,-j", c.json_path, "also write the metrics as JSON to this file (- : standard output, and the text report goes to standard error)")->check(kNonEmptyPath);
  eval->add_option("--max-fpr", c.max_fpr, "binary: report the threshold meeting this false-positive rate F in [0, 1]")
      ->check(kNumber.description(""))
      ->check((kFinite & CLI::Range(0.0, 1.0)).description(""))
      ->type_name("F");
  return eval;
}

CLI::App* add_run_command(CLI::App& app, Commands& c, bool options) {
  CLI::App* run =
      app.add_subcommand("run", "run an experiment: pegasos run EXPERIMENT.json [--output DIR] [--quiet] [--resume]");
  if (!options) return run;
  run->add_option("experiment", c.experiment_path, "experiment file (JSON; see docs/experiments.md)")->required()->check(kInputPath);
  run->add_option("--output,-o", c.output, "results folder (default: <name>_results/ next to the experiment file)")
      ->check(kFolderPath);
  run->add_flag("--quiet,-q", c.quiet, "no progress bar or summary on stderr");
  run->add_flag("--resume", c.resume, "continue an interrupted run: skip the runs in the results folder's runs.jsonl");
  return run;
}

}  // namespace

void refuse_flag_and_set(const std::vector<std::string>& sets, const std::string& key, const std::string& flag) {
  for (const std::string& kv : sets) {
    const std::size_t eq = kv.find('=');
    std::string_view k = std::string_view(kv).substr(0, eq);
    while (!k.empty() && (k.front() == ' ' || k.front() == '\t')) k.remove_prefix(1);
    while (!k.empty() && (k.back() == ' ' || k.back() == '\t')) k.remove_suffix(1);
    if (k == key) {
      throw ConfigError(flag + " and --set " + kv + " both set '" + key + "': give one of them");
    }
  }
}

void OperatingFlags::add_to(std::vector<std::string>& sets) const {
  if (!max_fpr.empty() && !target_recall.empty()) {
    throw ConfigError("--max-fpr and --target-recall both choose the threshold: give one of them");
  }
  if (calibrate) refuse_flag_and_set(sets, "calibrate", "--calibrate");
  if (!max_fpr.empty()) refuse_flag_and_set(sets, "max_fpr", "--max-fpr " + max_fpr);
  if (!target_recall.empty()) refuse_flag_and_set(sets, "target_recall", "--target-recall " + target_recall);
  if (calibrate) sets.push_back("calibrate=true");
  if (!max_fpr.empty()) sets.push_back("max_fpr=" + max_fpr);
  if (!target_recall.empty()) sets.push_back("target_recall=" + target_recall);
}

void TrainInputs::add_to(std::vector<std::string>& sets) const {
  if (!init_model.empty()) refuse_flag_and_set(sets, "init_model", "--init-model " + init_model);
  if (!weights_file.empty()) refuse_flag_and_set(sets, "weights_file", "--weights " + weights_file);
  if (!init_model.empty()) sets.push_back("init_model=" + nlohmann::json(init_model).dump());
  if (!weights_file.empty()) sets.push_back("weights_file=" + nlohmann::json(weights_file).dump());
}

CommandApps add_commands(CLI::App& app, Commands& c, int argc, char** argv) {
  const std::string_view named = named_command(argc, argv);
  const auto full = [named](std::string_view name) { return named.empty() || named == name; };
  CommandApps apps{};
  apps.train = add_train_command(app, c, full("train"));
  apps.predict = add_predict_command(app, c, full("predict"));
  apps.eval = add_eval_command(app, c, full("eval"));
  apps.featurize = add_featurize_command(app, c, full("featurize"));
  apps.run = add_run_command(app, c, full("run"));
  apps.inspect = add_inspect_command(app, c, full("inspect"));
  return apps;
}

}  // namespace pegasos
