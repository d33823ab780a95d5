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
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/dataset.hpp"
#include "core/feature_map.hpp"
#include "core/model_header.hpp"
#include "core/objective_table.hpp"

namespace pegasos {

// SDCA's dual point as a model keeps it (README § Warm start): one entry per
// distinct training row (content hash, drivers/duals.hpp) with a non-zero dual
// variable, `outputs` values per entry (row-major): α as a fraction of its box
// bound (core/warm_start.hpp box_fractions: binary α_i/c_i ∈ [0, 1],
// Crammer–Singer α_i^m/C_i ∈ [−1, 1]). File section `duals`.
struct StoredDuals {
  // The name of the row hash in the file, and the most entries a model
  // stores (beyond it none are stored, and the train summary says so).
  static constexpr const char* kHash = "xxh3-64";
  static constexpr std::size_t kMaxEntries = 2'000'000;

  std::vector<std::uint64_t> rows;
  std::vector<double> alpha;  // rows.size() × outputs
  int outputs = 1;
  // How many training rows share each entry (rows.size() counts ≥ 1), or
  // empty: every entry one row (files store it only when some entry has
  // more; files from before it count as "unknown", and every matching row of
  // the new data then gets the entry).
  std::vector<std::uint32_t> copies;
};

struct Model : ModelHeader {
  Model() : ModelHeader(std::string(objective_row(ObjectiveId::kHinge).name)) {}

  std::string bias_mode = "feature";
  std::vector<double> weights;     // dimension × outputs, feature-major (or weight_rows.size() × outputs)
  // Empty: `weights` is dense. Else the compact scoring form that `predict`
  // reads hashed-text models in (io/model_json.hpp, compact_weights): row r
  // of `weights` belongs to feature weight_rows[r] (ascending), every other
  // feature's weights are 0. Only scores() and weight_squared_norm() read
  // it; such a model is never trained from, evaluated or written.
  std::vector<std::uint32_t> weight_rows;
  // The smallest dense form (dimension × outputs weights, 32 MB) the compact
  // one is considered for: below it the dense form costs little memory and
  // scores faster (a binary model over 2^20 buckets, 8 MB: 15k mails 0.52 s
  // dense, 0.66 s compact); a 28-class one is 235 MB.
  static constexpr std::uint64_t kCompactMinWeights = std::uint64_t{1} << 22;
  std::vector<double> bias;        // outputs
  // What is read back from the settings: λ (0 when a file has none) and the
  // row normalisation of the training data ("none" or "l2"; a transfer
  // target must match its source's).
  double lambda = 0.0;
  std::string normalize = "none";
  // settings (the resolved training configuration, echoed for
  // reproducibility) and data (reader settings: format, label_column,
  // normalize, text_field, label_field) as the text of JSON objects: written
  // and read by the configuration layer (drivers/), never looked into here.
  std::string settings = "{}";
  std::string data = "{}";
  TrainingSummary training;
  // The raw-text featurizer (text/featurizer.hpp) as the text of a JSON
  // object; empty for numeric data.
  std::string features;
  // SDCA's dual variables (absent: trained by Pegasos, with keep_duals false,
  // or by a pegasos before them).
  std::optional<StoredDuals> duals;
  // The kernel approximation (setting kernel_approximation) the weights apply
  // to: rows are mapped by it before scoring, and `dimension` is its output
  // dimension. Null: the weights apply to the rows as read. Shared: a map
  // holds m·d floats and models are copied (warm starts, folds).
  std::shared_ptr<const FeatureMap> feature_map;

  // scores[k] = w_k·x + b_k; features at or beyond `dimension` are ignored.
  // x is a row of the weights' space (mapped already when feature_map is set).
  void scores(const RowView& x, double* out) const;
  // ‖W‖² (the bias excluded).
  double weight_squared_norm() const;
};

}  // namespace pegasos
