// `--set KEY=VALUE`: VALUE is JSON where it parses as JSON, else a bare word
// (a string); see parse_override in drivers/config.hpp.
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "core/errors.hpp"
#include "core/json_nesting.hpp"
#include "drivers/config.hpp"

namespace pegasos {

using nlohmann::json;

std::pair<std::string, json> parse_override(const std::string& text) {
  const std::size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw ConfigError("--set " + text + ": expected KEY=VALUE");
  }
  std::string key = text.substr(0, eq);
  std::string value = text.substr(eq + 1);
  // A dotted key names a nested setting (features.mode); an empty part is a typo.
  if (key.front() == '.' || key.back() == '.' || key.find("..") != std::string::npos) {
    throw ConfigError("--set " + key + ": an empty setting name in a dotted key (NAME=VALUE or NAME.PART=VALUE)");
  }
  if (json_nesting::too_deep(value)) throw ConfigError("--set " + key + ": " + json_nesting::error());
  // Parsed without exceptions first: most values are bare words
  // (objective=hinge), and a thrown exception costs a process that trains
  // for a few milliseconds a noticeable share of its time.
  json parsed = json::parse(value, nullptr, /*allow_exceptions=*/false);
  const bool is_json = !parsed.is_discarded();
  if (!is_json) {
    const std::size_t first = value.find_first_not_of(" \t\r\n");
    if (first != std::string::npos && (value[first] == '{' || value[first] == '[' || value[first] == '"')) {
      // Meant as JSON (an object, an array, a quoted string) but not valid:
      // say why, as a config file would, rather than take it for a bare word.
      try {
        [[maybe_unused]] const json reparsed = json::parse(value);
      } catch (const json::exception& e) {
        std::string why = e.what();
        if (const std::size_t cut = why.find("] "); cut != std::string::npos) why = why.substr(cut + 2);
        throw ConfigError("--set " + key + ": invalid JSON value: " + why);
      }
    }
  }
  if (!is_json) {
    // A number JSON cannot hold (1e400) is an error, not the string "1e400".
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(value.c_str(), &end);
    if (!value.empty() && end == value.c_str() + value.size() && !std::isspace(static_cast<unsigned char>(value[0])) &&
        (errno == ERANGE || !std::isfinite(v)) && value.find_first_of("0123456789") != std::string::npos) {
      throw ConfigError("--set " + text + ": " + value + " is beyond the range of a double");
    }
    parsed = value;  // a bare word is a string
  }
  return {key, parsed};
}

}  // namespace pegasos
