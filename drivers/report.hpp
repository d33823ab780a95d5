// Human-readable and JSON renderings of evaluation results.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/metrics.hpp"

namespace pegasos {

nlohmann::json metrics_to_json(const Metrics& m);
std::string metrics_to_text(const Metrics& m);

}  // namespace pegasos
