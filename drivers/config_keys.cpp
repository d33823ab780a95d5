// config_keys(): every accepted configuration key, its default and help.
#include <cmath>
#include <string>
#include <vector>

#include "drivers/config.hpp"
#include "drivers/config_keys.hpp"
#include "io/feature_map_json.hpp"
#include "io/kernel_settings_json.hpp"
#include "text/options.hpp"

namespace pegasos {
namespace {

using config_keys_detail::is_kernel;
using config_keys_detail::needs_source;
using config_keys_detail::uses_class_weights;

// "hinge | weighted_hinge | ... | ova (one-vs-all) | ...": every row, with its gloss.
std::string objective_help() {
  std::string s = std::string(kAutoObjective) + " (" + std::string(kAutoObjectiveHelp) + ")";
  for (const ObjectiveRow& row : kObjectiveTable) {
    s += (s.empty() ? "" : " | ") + std::string(row.name);
    if (!row.help.empty()) s += " (" + std::string(row.help) + ")";
  }
  return s;
}

// The kernel_hinge keys, in --help order.
std::vector<ConfigKey> kernel_key_list() {
  return {
      {"kernel", default_kernel_json(), objective_names(is_kernel) + ": {\"type\": linear|polynomial|rbf, \"gamma\", \"degree\", \"coef0\"}"},
      {"max_support_vectors", 0, objective_names(is_kernel) + ": budget on support vectors (0 = none; kernel Pegasos)", true},
      {"budget_maintenance", nullptr, objective_names(is_kernel) + " with max_support_vectors: merge (rbf's default) | remove",
       false, "merge with the rbf kernel, else remove"},
      {"budget_refit", nullptr,
       objective_names(is_kernel) + " with max_support_vectors and the rbf kernel: after the budgeted run, re-solve the "
       "support vectors' coefficients exactly on their span (true | false)",
       false, "true with the rbf kernel and a budget, else false"},
      {"kernel_cache_mb", 1024, objective_names(is_kernel) + ": kernel-row cache size (a run setting)"},
      {"multiclass", "ova",
       objective_names(is_kernel) + " with more than two classes: ova (one-vs-all) | ovo (one-vs-one, LIBSVM's: a "
       "binary problem per pair of classes on their rows, the model votes; kernel SDCA, and its default with bias "
       "unregularized)",
       false, "ovo for kernel SDCA with bias unregularized (its default), else ova"},
  };
}

// Every accepted key, in --help order (config_keys() completes the solver's help).
std::vector<ConfigKey> key_list() {
  std::vector<ConfigKey> keys = {
      {"objective", std::string(kAutoObjective), objective_help()},
      {"class_weight", nullptr, objective_names(uses_class_weights, " / ", " / ") + ": \"balanced\" or {\"label\": cost, ...} (costs in (0, 1e15])",
       false, "unset (every class weighs 1)"},
  };
  for (ConfigKey& k : kernel_key_list()) keys.push_back(std::move(k));
  const std::vector<ConfigKey> rest = {
      {"kernel_approximation", nullptr,
       "linear objectives (not transfer): train on explicit RBF-kernel features fitted on the training rows and "
       "stored in the model: {\"type\": rff (random Fourier features) | nystroem (landmark rows), \"components\": m "
       "(default 1000), \"gamma\": γ > 0 or \"scale\" (default: 1/(d·Var(X)))}"},
      {"source_model", "", objective_names(needs_source) + ": model file of the source domain (w_R)"},
      {"init_model", "",
       "warm start: continue training from this model (same objective, classes, features, bias) instead of from "
       "zero; also train --init-model"},
      {"warm_schedule", "capped",
       "Pegasos warm start (init_model): capped = continue the old run's 1/(λt) schedule from its step count, at most "
       "4 epochs' worth of the new data (retraining on a new day's data); continue = from its whole count, as one "
       "run going on (chunks of one stream: Python partial_fit)",
       true},
      {"weights_file", "",
       "per-example weights: a file with one number >= 0 per training row, in the data's order (0 = row left out; "
       "the loss is (1/sum s) sum s_i loss_i); also train --weights; linear objectives only"},
      {"lambda", 1e-4,
       "regularisation strength λ > 0 (C = 1/(λn) in LIBLINEAR terms), or \"auto\": chosen by stratified "
       "cv_folds-fold cross-validation along a warm-started path, C = 0.01..1000 (README § Choosing λ)"},
      {"solver", "auto",
       "pegasos (stochastic sub-gradient) | sdca (dual coordinate ascent; every linear objective and kernel_hinge) | "
       "auto: sdca for kernel_hinge and for the linear objectives with bias none or feature, else pegasos; pegasos whenever "},  // + below
      {"epochs", 0, "passes over the data; 0 = stop automatically (see tolerance; kernel_hinge with solver pegasos: 5)"},
      {"iterations", 0, "number of Pegasos steps T; 0 = use epochs", true},
      {"batch_size", 1, "examples per step k (1 = the classic algorithm)", true},
      {"projection", true, "project onto the ball ‖w‖ ≤ 1/√λ after each step", true},
      {"output", "average", "which iterate is the model: last | average | random", true},
      {"average_gamma", 10.0, "polynomial-decay averaging weight γ ≥ 0 (0 = plain average)", true},
      {"sampling", "permutation",
       "uniform (with replacement) | permutation (cache-friendly blocks on large data of short rows) | "
       "shuffle (a uniform permutation every pass) | sequential | balanced",
       true},
      {"bias", "feature",
       "none | feature (constant feature, regularised; kernel_hinge: the kernel + 1 trick) | unregularized (linear: "
       "Pegasos only; kernel_hinge: kernel SDCA's default, LIBSVM's intercept)",
       false, "unregularized for kernel SDCA, else feature"},
      {"seed", 42, "random seed; the same seed gives a byte-identical model"},
      {"threads", 0, "worker threads; 0 = all cores"},
      {"tolerance", 1e-3,
       "automatic stopping: relative duality gap (P - D)/P that certifies convergence (\"converged\" is a certificate)"},
      {"max_epochs", 0,
       "automatic stopping: cap on epochs (Pegasos) or passes (SDCA); 0 = sized from the problem's conditioning; "
       "a run that reaches it warns with its gap"},
      {"keep_duals", true,
       "SDCA: store the non-zero dual variables in the model (a row hash and α per support vector, the `duals` "
       "section) so a warm start (init_model) resumes from them; false: a smaller file, warm starts rebuild them from "
       "the margins (a run setting)"},
      {"cv_folds", 5, "folds of the cross-validation inside training: lambda \"auto\", calibrate, max_fpr, target_recall"},
      {"calibrate", false,
       "fit Platt probabilities (a sigmoid per output) on out-of-fold decision values and store them in the model "
       "(predict --proba; also train --calibrate)"},
      {"max_fpr", nullptr,
       "binary: store the decision threshold whose out-of-fold false-positive rate is at most this (also train --max-fpr)"},
      {"target_recall", nullptr,
       "binary: store the highest decision threshold whose out-of-fold recall is at least this (also train "
       "--target-recall)"},
      {"strict", false, "fail (exit 3, no model written) when training ends without certified convergence (a run setting)"},
      {"format", "auto", "data format: auto (by extension or folder) | libsvm | csv | jsonl | text_tsv | text_dir"},
      {"features", nullptr, "raw text: featurisation settings (tokenizer, n-grams, hashing or vocabulary, tf-idf)", false,
       "each features.KEY below at its default"},
      {"text_field", "text", "JSONL: field holding the document text"},
      {"label_field", "label", "JSONL: field holding the label"},
      {"label_column", 0, "CSV: label field (0-based index, negative from the end, or header name)"},
      {"normalize", "none", "row scaling applied when reading (also at predict): none | l2 (unit norm rows)"},
      {"max_feature_index", 2147483648.0, "largest accepted feature index"},
      {"positive_label", "", "binary: the label treated as +1 (default: the larger one)"},
  };
  keys.insert(keys.end(), rest.begin(), rest.end());
  return keys;
}

}  // namespace

const std::vector<ConfigKey>& config_keys() {
  static const std::vector<ConfigKey> keys = [] {
    std::vector<ConfigKey> k = key_list();
    std::vector<std::string> pegasos_only;
    for (const ConfigKey& key : k) {
      if (key.pegasos_only) pegasos_only.push_back(key.name);
    }
    std::string names;
    for (std::size_t i = 0; i < pegasos_only.size(); ++i) {
      names += (i == 0 ? "" : i + 1 == pegasos_only.size() ? " or " : ", ") + pegasos_only[i];
    }
    for (ConfigKey& key : k) {
      if (key.name == "solver") key.help += names + " has a non-default value";
    }
    return k;
  }();
  return keys;
}

std::string shown_default(const ConfigKey& key) {
  if (!key.default_shown.empty()) return key.default_shown;
  const nlohmann::json& v = key.default_value;
  if (v.is_null()) return "unset";
  if (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>() && std::abs(v.get<double>()) < 9.0e15) {
    return std::to_string(static_cast<long long>(v.get<double>()));
  }
  return v.dump();
}

}  // namespace pegasos
