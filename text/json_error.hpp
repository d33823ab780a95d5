// Internal to text/: the one error shape of the text JSON readers (options
// and saved featurizers), "NAME: POINTER/FIELD: problem".
#pragma once

#include <string>

#include "core/errors.hpp"

namespace pegasos::text_detail {

[[noreturn]] inline void bad_json(const std::string& name, const std::string& field, const std::string& what) {
  throw InputError(name + ": " + field + ": " + what);
}

}  // namespace pegasos::text_detail
