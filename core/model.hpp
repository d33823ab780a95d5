// A trained linear model: label mapping, weights, bias, and everything needed
// to apply it again (reader settings, training settings). Model files are
// read and written by io/model_json.hpp.
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
#include "core/model_header.hpp"

namespace pegasos {

struct Model : ModelHeader {
  Model() : ModelHeader("hinge") {}

  std::string bias_mode = "feature";
  std::vector<double> weights;     // dimension × outputs, feature-major
  std::vector<double> bias;        // outputs
  nlohmann::json settings = nlohmann::json::object();  // training configuration
  nlohmann::json data = nlohmann::json::object();      // reader settings (format, label_column)
  nlohmann::json training = nlohmann::json::object();  // summary: iterations, objective, ...
  nlohmann::json features;         // raw-text featurizer (text/featurizer.hpp), null for numeric data

  // scores[k] = w_k·x + b_k; features at or beyond `dimension` are ignored.
  void scores(const RowView& x, double* out) const;
  // λ/2‖W‖² (bias excluded unless it is a regularised feature; see settings).
  double weight_squared_norm() const;
};

}  // namespace pegasos
