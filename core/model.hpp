// A trained linear model: label mapping, weights, bias, and everything needed
// to apply it again (reader settings, training settings), stored as JSON.
//
// File format (format_version 1):
//   { "format_version": 1, "kind": "linear", "objective": "hinge",
//     "classes": ["-1", "1"], "dimension": d, "outputs": K, "bias_mode": "...",
//     "weights": [[...] per output] (dense) or [{"indices": [...], "values": [...]}],
//     "bias": [K numbers], "settings": {...}, "data": {...}, "training": {...} }
// For binary problems K = 1 and a positive score means classes[1].
// Feature indices in files are 1-based; weights[k][j] belongs to index j + 1.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/dataset.hpp"

namespace pegasos {

inline constexpr int kModelFormatVersion = 1;

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

struct Model {
  std::string objective = "hinge";
  std::vector<std::string> classes;
  std::uint32_t dimension = 0;
  int outputs = 1;                 // 1 for binary, K for multiclass
  std::string bias_mode = "feature";
  std::vector<double> weights;     // dimension × outputs, feature-major
  std::vector<double> bias;        // outputs
  nlohmann::json settings = nlohmann::json::object();  // training configuration
  nlohmann::json data = nlohmann::json::object();      // reader settings (format, label_column)
  nlohmann::json training = nlohmann::json::object();  // summary: iterations, objective, ...
  nlohmann::json features;         // raw-text featurizer (text/featurizer.hpp), null for numeric data

  bool binary() const { return outputs == 1; }
  // scores[k] = w_k·x + b_k; features at or beyond `dimension` are ignored.
  void scores(const RowView& x, double* out) const;
  // Predicted class id from scores.
  int predict_class(const double* scores) const;
  // λ/2‖W‖² (bias excluded unless it is a regularised feature; see settings).
  double weight_squared_norm() const;
};

// Serialise (throws std::logic_error on non-finite weights: a model file never
// contains NaN) and parse (throws InputError naming the file and JSON field).
std::string model_to_json(const Model& model);
Model model_from_json(const std::string& text, const std::string& name);
Model model_from_json_value(const nlohmann::json& j, const std::string& name);  // already parsed

void save_model(const Model& model, const std::string& path);  // atomic
Model load_model(const std::string& path);

}  // namespace pegasos
