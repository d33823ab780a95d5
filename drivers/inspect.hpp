// `pegasos inspect MODEL [--top N] [--class C] [--json]`: what a model is and
// what drives it — settings, training summary, bias, and the N largest
// positive and negative weights per class with readable feature names
// (vocabulary terms; hashing buckets named by the training terms kept in the
// model, shared buckets flagged; LIBSVM indices as written, 1-based; CSV
// header names). Kernel models: kernel and support vectors, no weights.
#pragma once

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

namespace pegasos {

struct AnyModel;

struct InspectOptions {
  std::size_t top = 20;    // features per list (0: summary only)
  std::string class_name;  // "" = every class; else only this one
};

// The report as JSON (stable keys; README § inspect). Throws InputError for
// a class the model does not have (naming the valid ones) and for a
// malformed featurizer section.
nlohmann::json inspect_report(const AnyModel& model, const std::string& path, const InspectOptions& options);
// The same report as text for people.
std::string inspect_text(const nlohmann::json& report);

// Loads MODEL (the model loader's errors: InputError) and prints the report
// (JSON with as_json) to stdout. Returns the exit code.
int run_inspect(const std::string& path, const InspectOptions& options, bool as_json);

}  // namespace pegasos
