// The `duals` section of a linear model file (core/model.hpp StoredDuals):
//   "duals": {"hash": "xxh3-64", "outputs": K, "scale": "fraction of the box bound",
//             "rows": ["16 hex digits", ...], "alpha": [rows × K numbers, row-major],
//             "copies": [rows counts ≥ 1]}   (only when some row hash is shared)
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/model.hpp"

namespace pegasos {

// Appends the section's value, written directly (ten entries to a line, numbers
// in their shortest round-trip form, like the weights).
void append_duals_json(std::string& out, const StoredDuals& duals);

// Validates every field (InputError "NAME: /duals/FIELD: what"): the hash
// name, outputs equal to the model's, at most StoredDuals::kMaxEntries rows of
// 16 hex digits in increasing order, and rows × outputs finite numbers in
// [−1, 1]; the optional copies, rows counts of at least 1.
StoredDuals duals_from_json(const nlohmann::json& j, const std::string& name, int model_outputs);

}  // namespace pegasos
