// pegasos: train / predict / eval linear SVMs with the Pegasos solver.
//
// Exit codes: 0 success, 2 bad input (data, config, model, command line),
// 1 internal failure.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <csignal>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>

#include "core/output_file.hpp"
#include "core/mapped_input.hpp"
#include "core/dataset.hpp"
#include "core/errors.hpp"
#include "core/metrics.hpp"
#include "kernel/kernel_model.hpp"
#include "kernel/kernel_trainer.hpp"
#include "core/model.hpp"
#include "drivers/any_model.hpp"
#include "drivers/model_input.hpp"
#include "drivers/api.hpp"
#include "drivers/cli_commands.hpp"
#include "drivers/cli_docs.hpp"
#include "drivers/cli_suggest.hpp"
#include "drivers/config.hpp"
#include "drivers/cross_validate.hpp"
#include "drivers/data.hpp"
#include "drivers/experiment.hpp"
#include "drivers/predict.hpp"
#include "drivers/inspect.hpp"
#include "drivers/operating_point.hpp"
#include "drivers/status_line.hpp"
#include "drivers/registry.hpp"
#include "drivers/report.hpp"
#include "io/model_json.hpp"
#include "text/options.hpp"

namespace pegasos {
namespace {

using Clock = std::chrono::steady_clock;

// Exit code of `train --strict` when the model is not certified converged.
constexpr int kExitNotConverged = 3;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

class Progress {
 public:
  explicit Progress(bool quiet) : quiet_(quiet), start_(Clock::now()), tty_(::isatty(2) != 0) {}
  bool operator()(const EpochInfo& e) {
    if (quiet_) return true;
    // The fit's own clock (drivers/fit.cpp), not the process's: reading
    // the data and a lambda "auto" search are not the epochs' time.
    const double elapsed = e.seconds >= 0.0 ? e.seconds : seconds_since(start_);
    // Quiet for short runs; then at most a few lines a second.
    if (elapsed < 1.0 || elapsed - last_ < (tty_ ? 0.2 : 2.0)) return true;
    last_ = elapsed;
    char objective[64] = "";
    if (e.has_objective) std::snprintf(objective, sizeof objective, "  objective %.6g", e.sample_objective);
    std::fprintf(stderr, "%sepoch %d  iterations %llu%s  %.1fs%s", tty_ ? "\r" : "", e.epoch,
                 static_cast<unsigned long long>(e.iterations), objective, elapsed, tty_ ? "   " : "\n");
    printed_ = true;
    return true;
  }
  void finish() {
    if (printed_ && tty_) std::fputc('\n', stderr);
  }

 private:
  bool quiet_;
  Clock::time_point start_;
  bool tty_;
  double last_ = 0.0;
  bool printed_ = false;
};

// "12", "2.5", "1000" (never "1e+03").
std::string count_text(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, v >= 1000 ? "%.0f" : "%.3g", v);
  return buf;
}

// "3 epochs" / "2.5 passes" for the solver (Pegasos counts epochs, the dual
// solvers passes), singular when the count shows as 1.
std::string epochs_text(double v, const std::string& solver) {
  const std::string count = count_text(v);
  const bool one = count == "1";
  return count + " " + (solver == "pegasos" ? (one ? "epoch" : "epochs") : (one ? "pass" : "passes"));
}

// What a model's `training` block says of convergence, one sentence: empty
// when it converged (certified), else why not and how far it may be.
std::string convergence_problem(const nlohmann::json& training,
                                const char* no_bound = "bias unregularized has no dual bound here") {
  if (training.value("converged", false)) return "";
  const std::string stopped = training.value("stopped_by", "");
  const auto gap = training.find("relative_gap");
  const double tolerance = training.value("tolerance", 0.0);
  const std::string solver = training.value("solver", "pegasos");
  const std::string ran = epochs_text(training.value("epochs", 0.0), solver);
  std::string why;
  if (stopped == "max_epochs") {
    why = "stopped at the cap of " + ran + " (max_epochs)";
  } else if (stopped == "budget") {
    why = "ran the requested " + ran;
  } else if (stopped == "estimate") {
    why = "stopped where progress slowed";
  } else {
    why = "stopped early";
  }
  char buf[160];
  if (gap != training.end() && gap->is_number()) {
    std::snprintf(buf, sizeof buf, " with relative duality gap %.3g > tolerance %g", gap->get<double>(), tolerance);
    why += buf;
  } else {
    why += std::string("; no duality gap certifies it (") + no_bound + ")";
  }
  return "not converged: " + why;
}

// A budget refit's outcome (drivers/budget_refit.hpp), empty without one:
// "converged on the support vectors' span (sdca, relative duality gap 0.0009)",
// "not converged (...)", "not certified (...): ..." or "skipped: ...".
std::string budget_refit_text(const nlohmann::json& training) {
  const auto it = training.find("budget_refit");
  if (it == training.end() || !it->is_object()) return "";
  if (it->contains("skipped")) return "skipped: " + it->value("skipped", "");
  char buf[200];
  std::snprintf(buf, sizeof buf, "(%s, relative duality gap %.2g on the support vectors' span)",
                it->value("solver", "").c_str(), it->value("relative_gap", 0.0));
  if (it->contains("disagreement")) {
    std::snprintf(buf, sizeof buf, "(%s): its objective on the features, %.6g, and the coefficients' kernel objective, "
                  "%.6g, differ by more than the tolerance",
                  it->value("solver", "").c_str(), it->value("objective_on_features", 0.0), training.value("objective", 0.0));
    return std::string("not certified ") + buf;
  }
  return std::string(it->value("converged", false) ? "converged " : "not converged ") + buf;
}

// The kernel model's closing line on stderr: solver, certificate, how long it
// ran (as the linear summary says it; one-vs-one: the most passes of any
// pair), support vectors, times.
void print_kernel_summary(const api::Trained& result, const std::string& problem, const std::string& refit,
                          const std::string& model_path) {
  const AnyModel& trained = result.model.any();
  const nlohmann::json training = trained.training();
  char converged[96] = "";
  if (problem.empty()) std::snprintf(converged, sizeof converged, ", converged: relative duality gap %.2g", training.value("relative_gap", 0.0));
  const std::string gap = problem.empty() ? converged : refit.empty() ? "" : "; budget refit " + refit;
  const std::string solver = training.value("solver", "pegasos");
  const std::string ran = training.contains("epochs") ? epochs_text(training.value("epochs", 0.0), solver) + ", " : "";
  std::fprintf(stderr,
               "trained kernel_hinge (%s%s) on %zu examples: %s%zu support vectors; load %.2fs, train %.2fs; model "
               "written to %s\n",
               solver.c_str(), gap.c_str(), result.examples, ran.c_str(), trained.kernel->num_support_vectors(),
               result.load_seconds, result.train_seconds, model_path.c_str());
}

int run_train(const std::string& config_path, const std::vector<std::string>& sets, const std::string& data_path,
              const std::string& model_path, bool quiet, bool strict) {
  const api::Settings settings = api::Settings::load(config_path, sets);  // validated before any data is read
  refuse_model_over_inputs(settings.config(), model_path);  // read once: --config may be a pipe
  strict = strict || settings.strict();
  enable_status_line(!quiet);
  Progress progress(quiet);
  const api::Trained result = api::train(settings, data_path, [&](const EpochInfo& e) { return progress(e); });
  progress.finish();
  const double load_seconds = result.load_seconds;
  const double train_seconds = result.train_seconds;
  const AnyModel& trained = result.model.any();
  if (trained.kernel) {  // kernel SDCA certifies by its duality gap; kernel Pegasos cannot
    const nlohmann::json training = trained.training();
    const std::string problem = convergence_problem(training, "kernel Pegasos has no dual bound; solver sdca has");
    const std::string refit = budget_refit_text(training);
    // A budget model is the refit's: certified optimal on its support
    // vectors' span (the best model the budget allows), which --strict takes;
    // the full kernel problem stays uncertified (converged: false).
    const bool span_certified = refit.rfind("converged", 0) == 0;
    if (strict && !problem.empty() && !span_certified) {
      std::fprintf(stderr, "error: --strict: %s%s; no model written\n", problem.c_str(),
                   refit.empty() ? "" : ("; budget refit " + refit).c_str());
      return kExitNotConverged;
    }
    trained.save(model_path);
    if (!problem.empty() && training.value("solver", "") == "sdca") std::fprintf(stderr, "warning: %s\n", problem.c_str());
    if (!refit.empty() && !span_certified) std::fprintf(stderr, "warning: budget_refit %s\n", refit.c_str());
    if (quiet) return 0;
    std::fputs(fit_summary(trained).c_str(), stderr);
    print_kernel_summary(result, problem, refit, model_path);
    return 0;
  }
  const Model& model = *trained.linear;
  const nlohmann::json training = trained.training();
  const std::string problem = convergence_problem(training);
  if (strict && !problem.empty()) {
    std::fprintf(stderr, "error: --strict: %s; no model written\n", problem.c_str());
    return kExitNotConverged;
  }
  trained.save(model_path);
  if (!problem.empty()) std::fprintf(stderr, "warning: %s\n", problem.c_str());  // even with --quiet
  if (quiet) return 0;
  std::fputs(fit_summary(trained).c_str(), stderr);
  const std::string solver = training.value("solver", "pegasos");
  std::string converged;
  if (problem.empty()) {
    char buf[128];
    std::snprintf(buf, sizeof buf, ", converged: relative duality gap %.2g <= %g",
                  training.value("relative_gap", 0.0), training.value("tolerance", 0.0));
    converged = buf;
  }
  std::string warm = model.training.warm_start ? ", warm-started from " + *model.training.warm_start : "";
  if (training.contains("warm_start_duals")) warm += ", stored duals for " + training.value("warm_start_duals", "");
  std::fprintf(stderr,
               "trained %s (%s%s) on %zu examples, %u features, %zu nnz: %llu iterations (%s%s), objective %.6g\n"
               "load %.2fs, train %.2fs; model written to %s\n",
               model.objective.c_str(), solver.c_str(), warm.c_str(), result.examples, static_cast<unsigned>(result.features),
               static_cast<std::size_t>(result.nnz),
               static_cast<unsigned long long>(training["iterations"].get<std::uint64_t>()),
               epochs_text(training["epochs"].get<double>(), solver).c_str(),
               converged.c_str(), training["objective"].get<double>(), load_seconds, train_seconds,
               model_path.c_str());
  if (model.feature_map) {
    const FeatureMap& f = *model.feature_map;
    std::fprintf(stderr, "kernel approximation %s (%u components, gamma %.6g, %u features): fit %.2fs, map %.2fs (within train)\n",
                 to_string(f.type).c_str(), f.components, f.gamma, f.output_dimension(), result.map_fit_seconds,
                 result.map_seconds);
  }
  return 0;
}

// Labels for exported LIBSVM files: the class names when they are all
// numbers (as LIBLINEAR and scikit-learn need), else -1/+1 for two classes
// (the positive class, classes[1], is +1) and 1..K for more.
std::vector<std::string> numeric_label_text(const std::vector<std::string>& classes) {
  const bool numeric = std::all_of(classes.begin(), classes.end(), [](const std::string& c) {
    double v = 0;
    const auto r = std::from_chars(c.data(), c.data() + c.size(), v);
    return !c.empty() && r.ec == std::errc() && r.ptr == c.data() + c.size();
  });
  if (numeric) return classes;
  if (classes.size() == 2) return {"-1", "+1"};
  std::vector<std::string> text;
  for (std::size_t c = 0; c < classes.size(); ++c) text.push_back(std::to_string(c + 1));
  return text;
}

// Labels re-expressed in a model's classes; a label the model does not know
// is an InputError naming the first row that has it (rows count from 1, as
// the data rows of the file: blank lines, comments and a header are not rows).
void remap_to_model_classes(Dataset& data, const std::vector<std::string>& classes, const std::string& data_path) {
  // The data's classes the model lacks, found before the labels are
  // re-expressed (which turns them into -1, as absent labels).
  std::vector<int> unknown;
  for (std::size_t k = 0; k < data.classes.size(); ++k) {
    if (std::find(classes.begin(), classes.end(), data.classes[k]) == classes.end()) unknown.push_back(static_cast<int>(k));
  }
  if (unknown.empty()) {
    data.remap_classes(classes);
    return;
  }
  const auto row = static_cast<std::size_t>(std::find(data.labels.begin(), data.labels.end(), unknown.front()) -
                                            data.labels.begin());
  throw InputError(data_path + ": " + row_and_line(data_path, row, data.size()) + ": label '" + data.classes[unknown.front()] +
                   "' does not occur in the model's classes (" + class_list(classes) + ")" +
                   (unknown.size() > 1 ? "; " + std::to_string(unknown.size() - 1) + " other unknown label" +
                                             (unknown.size() > 2 ? "s" : "")
                                       : "") +
                   // a CSV line read as LIBSVM is all label
                   (data.classes[unknown.front()].find(',') != std::string::npos
                        ? " (if the file is CSV, name it .csv or use --set format=csv)"
                        : ""));
}

int run_featurize(const std::string& config_path, const std::vector<std::string>& sets, const std::string& model_path,
                  const std::string& data_path, const std::string& out_path, bool quiet) {
  Dataset data;
  if (!model_path.empty()) {
    if (!config_path.empty() || !sets.empty()) {
      throw ConfigError("featurize: give either --model (the model's featurization) or --config/--set, not both");
    }
    const AnyModel model = AnyModel::load(model_path, json_checks::ModelUse::kPredict);
    data = model.read(data_path, false);
    remap_to_model_classes(data, model.classes(), data_path);
  } else {
    TrainConfig config = load_train_config(config_path, sets);  // unknown keys: an error with a suggestion
    // --set of a training setting does nothing here: refused, as a typo would
    // be (a --config file may hold them: one file for train and featurize).
    static const char* const reading[] = {"format", "features", "text_field", "label_field", "label_column",
                                          "normalize", "max_feature_index", "positive_label"};
    for (const std::string& kv : sets) {
      std::string key = kv.substr(0, kv.find('='));
      key.erase(0, key.find_first_not_of(" \t"));
      key = key.substr(0, std::min(key.find('.'), key.find_last_not_of(" \t") + 1));
      if (std::none_of(std::begin(reading), std::end(reading), [&](const char* r) { return key == r; })) {
        throw ConfigError("featurize: --set " + kv + ": '" + key +
                          "' is a training setting, which featurize does not use (it applies format, features.*, "
                          "text_field, label_field, label_column, normalize, max_feature_index, positive_label)");
      }
    }
    data = load_training_data(config, data_path).data;
    if (data.classes.size() == 2 && !config.positive_label.empty()) {
      config.objective = objective_row(ObjectiveId::kHinge);  // only the choice of the positive class applies here
      prepare_labels(config, data);
    }
  }
  const std::vector<std::string> labels = numeric_label_text(data.classes);
  write_output(out_path, to_libsvm_text(data, labels));
  if (quiet) return 0;
  std::string mapping;
  for (std::size_t c = 0; c < labels.size(); ++c) {
    if (labels[c] != data.classes[c]) mapping += (mapping.empty() ? "" : ", ") + data.classes[c] + " -> " + labels[c];
  }
  std::fprintf(stderr, "wrote %zu rows, %u features, %llu nnz to %s%s%s\n", data.size(), data.dimension,
               static_cast<unsigned long long>(data.nnz()), out_path.c_str(), mapping.empty() ? "" : "; labels: ",
               mapping.c_str());
  return 0;
}

// eval's two-class sections: ROC-AUC and the threshold at --max-fpr (or why they are missing).
void report_binary(const AnyModel& model, const Dataset& data, const std::vector<double>& scores,
                   std::optional<double> max_fpr, Metrics& m, std::string& text, nlohmann::json& report) {
  std::vector<char> positive(data.size());
  for (std::size_t i = 0; i < data.size(); ++i) positive[i] = data.labels[i] == 1;
  m.roc_auc = roc_auc(scores, positive);
  if (m.roc_auc) {
    report["roc_auc"] = *m.roc_auc;
    text = metrics_to_text(m);
  }
  report["positive_class"] = model.classes()[1];
  if (!m.roc_auc) text += "\nROC-AUC: not defined (the data has examples of one class only)\n";
  if (max_fpr) {
    auto op = threshold_for_fpr(scores, positive, *max_fpr);
    if (!op) {
      char note[160];
      std::snprintf(note, sizeof note, "at FPR <= %g: no threshold (false-positive rates need examples of both classes)\n",
                    *max_fpr);
      text += note;
      report["at_max_fpr"] = {{"max_fpr", *max_fpr}, {"threshold", nullptr}};
    } else {
      report["at_max_fpr"] = {{"max_fpr", *max_fpr},
                              {"threshold", op->threshold},
                              {"false_positive_rate", op->false_positive_rate},
                              {"precision", op->precision},
                              {"recall", op->recall}};
      char buf[256];
      std::snprintf(buf, sizeof buf,
                    "\nat FPR <= %g: threshold %.6g, FPR %.4f, precision %.4f, recall %.4f (class '%s')\n",
                    *max_fpr, op->threshold, op->false_positive_rate, op->precision, op->recall,
                    model.classes()[1].c_str());
      text += buf;
    }
  }
}

int run_eval(const std::string& model_path, const std::string& data_path, const std::string& json_path,
             std::optional<double> max_fpr) {
  const AnyModel model = AnyModel::load(model_path, json_checks::ModelUse::kPredict);
  if (max_fpr && !model.binary()) {
    throw InputError("--max-fpr: " + model_path + " is a model of " + std::to_string(model.classes().size()) +
                     " classes; a threshold at a false-positive rate is for two-class models");
  }
  Dataset data = model.read(data_path, true);
  remap_to_model_classes(data, model.classes(), data_path);
  FeaturesBeyond beyond(model.input_dimension());
  beyond.count(data);
  const std::optional<Dataset> mapped = model.map_features(data);  // once, for the scores and the objective
  const std::vector<double> scores = model.scores(data, mapped);
  const std::size_t K = static_cast<std::size_t>(model.outputs());
  std::vector<int> predicted(data.size());
  for (std::size_t i = 0; i < data.size(); ++i) predicted[i] = model.predict_class(&scores[i * K]);
  Metrics m = classification_metrics(data.labels, predicted, model.classes());
  nlohmann::json report = metrics_to_json(m);
  std::string text = metrics_to_text(m);
  if (model.binary()) report_binary(model, data, scores, max_fpr, m, text, report);
  report_operating_point(model, data, scores, text, report);
  const double objective = model.objective(data, mapped);
  report["objective"] = objective;
  report["lambda"] = model.lambda();
  report["model"] = model_path;
  report["data"] = data_path;
  char buf[128];
  std::snprintf(buf, sizeof buf, "objective          %.8g  (lambda %g)\n", objective, model.lambda());
  text = text.substr(0, text.find('\n') + 1) + buf + text.substr(text.find('\n') + 1);
  const std::string problem = convergence_problem(model.training());
  report["training"] = {{"converged", model.training().value("converged", false)},
                        {"stopped_by", model.training().value("stopped_by", "")},
                        {"relative_gap", model.training().value("relative_gap", nlohmann::json())}};
  if (!problem.empty() && !model.kernel) text += "\nwarning: this model did not converge in training: " + problem + "\n";
  if (beyond.rows > 0) {
    text += "\n" + beyond.note(data_path);
    report["rows_with_ignored_features"] = beyond.rows;
    report["largest_feature_index"] = beyond.largest;
  }
  if (names_standard_output(json_path)) {
    // `--json -`: the JSON alone on standard output, the text report on standard error.
    std::fputs(text.c_str(), stderr);
  } else {
    OutputFile out("-");
    out.write(text);
    out.commit();
  }
  // Paths from argv may be invalid UTF-8, which JSON cannot hold: replace it.
  if (!json_path.empty()) {
    write_output(json_path, report.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  }
  return 0;
}

// An output that is the very file of an input (same device and inode: the
// same path, a link, another spelling) would be replaced by the temp-file
// rename: `pegasos train data.svm data.svm` lost the data. Refused, exit 2.
// (--init-model is not an input here: retraining a model in place is the
// daily update, and the old file is read before the new one is renamed in.)
void refuse_output_over_input(const Commands& c, bool train, bool predict, bool featurize, bool no_output) {
  std::vector<NamedInput> inputs = {{"the data", &c.data_path}, {"the config", &c.config_path}, {"the weights", &c.inputs.weights_file}};
  if (!train) inputs.push_back({"the model", &c.model_path});
  inputs.push_back({"the experiment", &c.experiment_path});
  refuse_standard_output_over_inputs(inputs);
  if (no_output) return;
  const std::string& out = train ? c.model_path : predict ? c.predict.output : featurize ? c.output : c.json_path;
  inputs.pop_back();
  refuse_overwriting(out, inputs);
  // A path the output cannot be written to fails now, not after the
  // training (or cross-validation) it would have ended.
  check_output_creatable(out);
}

int main_impl(int argc, char** argv) {
  CLI::App app{"pegasos: linear SVMs trained with the Pegasos stochastic sub-gradient solver"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "pegasos 0.1.0");

  Commands c;
  const CommandApps apps = add_commands(app, c, argc, argv);
  CLI::App *train = apps.train, *predict = apps.predict, *featurize = apps.featurize, *run = apps.run,
           *inspect = apps.inspect;

  if (const auto doc = cli_document(app, argc, argv)) {  // --man
    write_output("-", *doc);
    return 0;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return report_parse_error(app, e, argc, argv);
  }
  // Standard input feeds one input at most (read once, it cannot be both the
  // model and the data, or the data and the weights).
  std::vector<std::string> from_stdin;
  for (const auto& [what, path] : {std::pair<const char*, const std::string*>{"--config", &c.config_path},
                                   {"MODEL", &c.model_path}, {"DATA", &c.data_path},
                                   {"--weights", &c.inputs.weights_file}, {"--init-model", &c.inputs.init_model}}) {
    // "-" or a name of descriptor 0 (/dev/stdin, /dev/fd/0, /proc/self/fd/0)
    const bool stdin_named = *path == "-" || *path == "/dev/stdin" || *path == "/dev/fd/0" || *path == "/proc/self/fd/0";
    if (stdin_named && !(what == std::string("MODEL") && train->parsed())) from_stdin.push_back(what + (*path == "-" ? "" : " (" + *path + ")"));  // train: MODEL is the output
  }
  if (from_stdin.size() > 1) {
    std::string list;
    for (const auto& w : from_stdin) list += (list.empty() ? "" : " and ") + w;
    throw InputError("standard input (-) can be read for one input only, not for " + list);
  }
  refuse_output_over_input(c, train->parsed(), predict->parsed(), featurize->parsed(), run->parsed() || inspect->parsed());
  c.inputs.add_to(c.sets);
  c.operating.add_to(c.sets);
  if (train->parsed() && c.cv.folds == 0 && !c.model_path.empty() && c.cv.grid.empty() && !c.cv.refit && !c.cv.cold) {
    return run_train(c.config_path, c.sets, c.data_path, c.model_path, c.quiet, c.strict);
  }
  if (train->parsed()) return run_cv_command(c.config_path, c.sets, c.data_path, c.model_path, c.cv, c.quiet, c.strict);
  if (predict->parsed()) {
    run_predict(c.model_path, c.data_path, c.predict);
    return 0;
  }
  if (run->parsed()) return run_experiment_command(c.experiment_path, c.output, c.quiet, c.resume);
  if (inspect->parsed()) return run_inspect(c.model_path, c.inspect, c.inspect_json);
  if (featurize->parsed()) return run_featurize(c.config_path, c.sets, c.model_path, c.data_path, c.output, c.quiet);
  return run_eval(c.model_path, c.data_path, c.json_path, c.max_fpr >= 0 ? std::optional<double>(c.max_fpr) : std::nullopt);
}

}  // namespace
}  // namespace pegasos

int main(int argc, char** argv) {
  pegasos::reserve_standard_descriptors();  // `>&-`: no file of ours becomes fd 1
  pegasos::remove_temp_files_on_signals();  // Ctrl-C while writing leaves no PATH.tmp-* file
  pegasos::report_shrunk_mappings_on_sigbus();  // an input truncated while mapped: exit 2 naming it
  try {
    const int code = pegasos::main_impl(argc, argv);
    pegasos::check_standard_output();  // `pegasos ... > /dev/full` must not exit 0
    // `2> /dev/full`: a summary or warning was lost and cannot be reported.
    if (code == 0 && pegasos::standard_error_failed()) return 1;
    return code;
  } catch (const pegasos::BrokenPipe&) {
    // The reader went away (`pegasos predict m x | head`): end quietly, as a
    // filter killed by SIGPIPE does, after the unwinding removed temp files.
    std::signal(SIGPIPE, SIG_DFL);
    std::raise(SIGPIPE);
    return 128 + SIGPIPE;
  } catch (const pegasos::OutputError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  } catch (const pegasos::InputError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "error: out of memory\n");
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "internal error: %s\n", e.what());
    return 1;
  }
}
