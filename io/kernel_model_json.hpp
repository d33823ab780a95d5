// Kernel model files (format in kernel/kernel_model.hpp): the JSON of a
// KernelModel, written field by field and read with every field checked.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "kernel/kernel_model.hpp"

namespace pegasos {

// Serialise (throws std::logic_error on a non-finite number: a model file
// never contains NaN) and parse (throws InputError naming the file and the
// JSON field, e.g. "m.json: /support_vectors/3: ...").
std::string kernel_model_to_json(const KernelModel& model);
KernelModel kernel_model_from_json(const std::string& text, const std::string& name);
KernelModel kernel_model_from_json(const nlohmann::json& j, const std::string& name);

void save_kernel_model(const KernelModel& model, const std::string& path);  // atomic
KernelModel load_kernel_model(const std::string& path);

// "linear" or "kernel": the "kind" field of a parsed model file (throws
// InputError naming the file when it is missing or not a string).
std::string model_kind(const nlohmann::json& j, const std::string& name);

}  // namespace pegasos
