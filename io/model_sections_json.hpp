// JSON of the parts every model file shares (core/model_header.hpp): the
// "training" block as a typed TrainingSummary, and the settings / data
// objects carried as JSON text.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/model_header.hpp"

namespace pegasos {

// The "training" object: the typed fields that are present, merged with the
// members kept in `extra` (keys sorted, as nlohmann::json writes objects).
// Throws std::logic_error on a non-finite number (NaN in dual_objective or
// relative_gap is written as null).
nlohmann::json training_to_json(const TrainingSummary& summary);
// Reads a "training" object (never throws): a known field with the type its
// writer gives it (unsigned integer, floating-point number — or null for
// dual_objective / relative_gap —, bool, string, array of numbers) is typed;
// anything else stays in `extra`, so training_to_json writes the same text.
TrainingSummary training_from_json(const nlohmann::json& object);

// Checks the parts of a model file (either kind) that pegasos reads besides
// the weights: "objective" (a name of core/objective_table.hpp, a kernel one
// iff `kernel`) and the optional "settings", "data" and "training" objects —
// each field pegasos uses, or that its writer types, with that type and a
// valid value (settings/data "normalize" none or l2, "format" a data format;
// training's typed fields as training_from_json reads them, class_cost one
// positive number per class of the model's `classes`). Other members are
// accepted (forward compatible). Throws InputError
// "NAME: /training/converged: expected true or false, found string".
void check_model_sections(const nlohmann::json& model, const std::string& name, bool kernel, std::size_t classes);

// The numbers model_objective reads back: the typed field, or else a member
// of `extra` that is a number (an array of numbers) written as an integer by
// another writer, which training_from_json leaves untyped.
std::optional<double> training_regularizer(const TrainingSummary& summary);
std::optional<std::vector<double>> training_class_cost(const TrainingSummary& summary);

// The operating point blocks of a model file (either kind), present only when
// training chose them (core/model_header.hpp):
//   "calibration": {"method": "platt", "a": [outputs], "b": [outputs], ...}
//   "threshold":   {"score": t, ...}   (binary models)
// Other members are carried as text. operating_point_from_json throws
// InputError "NAME: /calibration/a/0: ..." for a malformed block.
void operating_point_to_json(const ModelHeader& header, nlohmann::json& model);
void operating_point_from_json(const nlohmann::json& model, const std::string& name, ModelHeader& header);

// The text of a JSON object (settings, data, features) and back.
std::string json_object_text(const nlohmann::json& object);
nlohmann::json json_object_of(const std::string& text);

}  // namespace pegasos
