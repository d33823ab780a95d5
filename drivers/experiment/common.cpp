#include "drivers/experiment/common.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <filesystem>

#include "core/errors.hpp"
#include "drivers/config.hpp"

namespace pegasos::experiment_detail {

std::string usable_path(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path absolute = fs::absolute(path, ec).lexically_normal();
  if (!ec && absolute.native().size() < PATH_MAX) return absolute.string();
  const fs::path given = fs::path(path).lexically_normal();
  return given.empty() ? "." : given.string();
}

[[noreturn]] void fail(const std::string& origin, const std::string& key, const std::string& what) {
  throw ConfigError(origin + ": " + key + ": " + what);
}

std::string suggestion(const std::string& key, const std::vector<std::string>& names) {
  const std::string best = closest_name(key, names);
  return best.empty() ? "" : " (did you mean '" + best + "'?)";
}

std::string value_text(const json& v) {
  std::string s = v.is_string() ? v.get<std::string>() : v.dump();
  std::erase(s, '"');
  return s;
}

std::string params_text(const json& params) {
  std::string s;
  for (const auto& [k, v] : params.items()) s += (s.empty() ? "" : " ") + k + "=" + value_text(v);
  return s.empty() ? "base config" : s;
}

double metric_of(const json& metrics, const std::string& name) {
  auto it = metrics.find(name);
  return it != metrics.end() && it->is_number() ? it->get<double>() : std::nan("");
}

std::string number_text(const json& v) {
  if (v.is_null()) return "";
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

}  // namespace pegasos::experiment_detail
