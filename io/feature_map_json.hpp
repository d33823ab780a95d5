// The kernel approximation (core/feature_map.hpp) as JSON: the setting
// `kernel_approximation` of a configuration, and the fitted map as the
// `feature_map` section of a linear model file.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/feature_map.hpp"

namespace pegasos {

// The setting: {"type": "rff" | "nystroem", "components": 1..100000 (default
// 1000), "gamma": number > 0 or "scale" (default)}; the string "rff" or
// "nystroem" is short for {"type": ...}. Throws ConfigError
// "origin: kernel_approximation/components: must be between 1 and 100000" etc.
FeatureMapSettings feature_map_settings_from_json(const nlohmann::json& value, const std::string& origin);

// The model section, written directly (the arrays hold m·d numbers):
//   "feature_map": {"type", "gamma", "components", "input_dimension",
//                   "output_dimension", "seed", "basis": [m·d floats, row-major],
//                   "offset": [m] (rff) | "projection": [r·m floats] (nystroem)}
void append_feature_map_json(std::string& out, const FeatureMap& map);
// Reads it back with every field checked: InputError "NAME: /feature_map/FIELD: ...".
FeatureMap feature_map_from_json(const nlohmann::json& section, const std::string& name);

}  // namespace pegasos
