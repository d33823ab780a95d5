// What every trained model has, linear (core/model.hpp) or kernel
// (kernel/kernel_model.hpp): the typed in-memory header, free of any file
// format. Model files are read into these structs and written from them by
// the serialisation layer (io/), so core/ knows nothing about JSON.
//
//   ModelHeader      objective, classes, dimension, outputs: how scores map to labels
//   TrainingSummary  the "training" block: run size, stopping, certificate, objective
// Besides these a model file carries `settings` (the resolved training
// configuration, echoed for reproducibility; predict does not read it) and
// `data` (the reader settings predict / eval apply). Both are written by the
// configuration layer and read by the data loader, at the edge (drivers/);
// core/ never looks inside, so a model keeps them as the text of JSON objects.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/calibration.hpp"

namespace pegasos {

// The class a model predicts from its scores, for every model kind: binary
// (outputs == 1) positive score ⇒ class 1, else 0; multiclass: argmax (first on ties).
inline int predicted_class(const double* scores, int outputs) {
  if (outputs == 1) return scores[0] > 0.0 ? 1 : 0;
  int best = 0;
  for (int k = 1; k < outputs; ++k) {
    if (scores[k] > scores[best]) best = k;
  }
  return best;
}

struct ModelHeader {
  explicit ModelHeader(std::string objective_name) : objective(std::move(objective_name)) {}

  std::string objective;
  std::vector<std::string> classes;
  std::uint32_t dimension = 0;
  int outputs = 1;  // 1 for binary, K for multiclass

  // The operating point chosen at training time (train --calibrate,
  // max_fpr / target_recall; drivers/fit.hpp), absent from other models.
  // calibration: one Platt sigmoid per output (empty: no probabilities);
  // threshold: binary models predict class 1 when score > threshold (0 when
  // absent). The blocks' other members (how they were chosen, out-of-fold
  // figures) are kept as the text of JSON objects, written back unchanged.
  std::vector<Platt> calibration;
  std::optional<double> threshold;
  std::string calibration_record, threshold_record;

  bool binary() const { return outputs == 1; }
  bool calibrated() const { return !calibration.empty(); }
  // Predicted class id from scores (binary: against the stored threshold).
  int predict_class(const double* scores) const {
    if (outputs == 1) return scores[0] > threshold.value_or(0.0) ? 1 : 0;
    return predicted_class(scores, outputs);
  }
  // P(class k) for every class (classes.size() values) from one row's scores.
  void probabilities(const double* scores, double* out) const {
    calibrated_probabilities(calibration, scores, outputs, out);
  }
};

// The "training" block of a model file. Every field is optional: a file
// holds the ones its trainer wrote (kernel models: no stopping or
// certificate; older files: fewer fields). NaN in dual_objective /
// relative_gap stands for null (no bound). Fields of an unexpected type, and
// fields this pegasos does not know (newer writers), are carried through
// untouched in `extra`, so a model reads and writes back byte for byte.
struct TrainingSummary {
  std::optional<std::uint64_t> examples, nnz, iterations;
  std::optional<double> epochs;
  std::optional<bool> converged;
  std::optional<std::string> stopped_by, solver, certificate;
  std::optional<double> objective, tolerance, dual_objective, relative_gap, regularizer;
  std::optional<std::vector<double>> class_cost;
  std::optional<std::uint64_t> support_vectors, evictions, kernel_evaluations;  // kernel models
  // Warm-started models only (init_model): the model it continued from (the
  // path as given), and the step t of Pegasos' 1/(λt) schedule its weights
  // stand at, counted over the whole chain of warm starts (without it, a
  // model's schedule stands at `iterations`, per class for one-vs-all).
  std::optional<std::string> warm_start;
  std::optional<std::uint64_t> schedule_steps;
  std::string extra;  // other members, as the text of a JSON object; empty = none
};

}  // namespace pegasos
