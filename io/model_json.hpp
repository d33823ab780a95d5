// Linear model files (format in core/model.hpp): the JSON of a Model,
// written from it and read with every field checked.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/model.hpp"

namespace pegasos {

// Models write format_version 1, unless they carry a kernel approximation
// (`feature_map`): 2, so a pegasos that does not know the section refuses the
// file instead of scoring unmapped rows. Readers accept up to kModelFormatVersionMax.
inline constexpr int kModelFormatVersion = 1;
inline constexpr int kModelFormatVersionFeatureMap = 2;
inline constexpr int kModelFormatVersionMax = kModelFormatVersionFeatureMap;

// Serialise (throws std::logic_error on non-finite weights: a model file never
// contains NaN) and parse (throws InputError naming the file and JSON field).
std::string model_to_json(const Model& model);
Model model_from_json(const std::string& text, const std::string& name);
// Already parsed. compact_weights: the weights in the scoring-only compact
// form (Model::weight_rows) when every output is stored sparse, the dense form
// would hold at least Model::kCompactMinWeights weights and at most half of
// the features have one (multiclass hashed text).
Model model_from_json_value(const nlohmann::json& j, const std::string& name, bool compact_weights = false);

// A model's featurizer as JSON (null for numeric data), and the featurizer
// JSON (null: none) as Model::features.
nlohmann::json features_json(const Model& model);
std::string features_text(const nlohmann::json& features);

void save_model(const Model& model, const std::string& path);  // atomic
Model load_model(const std::string& path);

}  // namespace pegasos
