// Field checks for reading JSON files (model files of either kind): errors
// are InputError "FILE: /json/pointer: what", never a JSON library exception.
#pragma once

#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "core/errors.hpp"

namespace pegasos::json_checks {

[[noreturn]] inline void bad(const std::string& name, const std::string& field, const std::string& what) {
  throw InputError(name + ": " + field + ": " + what);
}

// j[key], or an error naming parent/key; `file_kind` says what the file should
// have been ("pegasos model").
inline const nlohmann::json& need(const nlohmann::json& j, const std::string& key, const std::string& name,
                                  const std::string& parent, const std::string& file_kind) {
  auto it = j.find(key);
  if (it == j.end()) bad(name, parent + "/" + key, "missing field (not a " + file_kind + " file, or a corrupt one)");
  return *it;
}

inline double finite_number(const nlohmann::json& v, const std::string& name, const std::string& field) {
  if (!v.is_number()) bad(name, field, "expected a number, found " + std::string(v.type_name()));
  const double d = v.get<double>();
  if (!std::isfinite(d)) bad(name, field, "not finite");
  return d;
}

}  // namespace pegasos::json_checks
