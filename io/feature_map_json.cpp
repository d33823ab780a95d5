#include "io/feature_map_json.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>

#include "core/errors.hpp"
#include "core/suggest.hpp"
#include "io/json_checks.hpp"
#include "io/json_numbers.hpp"

namespace pegasos {
namespace {

using nlohmann::json;
using json_checks::bad;

[[noreturn]] void refuse(const std::string& origin, const std::string& key, const std::string& what) {
  throw ConfigError(origin + ": kernel_approximation" + key + ": " + what);
}

using json_numbers::append_number;

// A JSON array of the values, ten to a line.
template <class T>
void append_array(std::string& out, const std::vector<T>& values) {
  json_numbers::append_array(out, values.size(), [&](std::size_t e) { return values[e]; });
}

const json& feature_map_field(const json& j, const char* key, const std::string& name) {
  return json_checks::need(j, key, name, "/feature_map", "pegasos model");
}

std::uint64_t unsigned_field(const json& j, const char* key, const std::string& name, std::uint64_t low,
                             std::uint64_t high) {
  const json& v = feature_map_field(j, key, name);
  if (!v.is_number_unsigned() || v.get<std::uint64_t>() < low || v.get<std::uint64_t>() > high) {
    bad(name, std::string("/feature_map/") + key,
        "expected an integer between " + std::to_string(low) + " and " + std::to_string(high));
  }
  return v.get<std::uint64_t>();
}

// An array of finite numbers that fit a float: exactly `count` of them, or
// (multiple > 0) a positive multiple of `multiple`, at most `count`.
template <class T>
std::vector<T> number_array(const json& j, const char* key, const std::string& name, std::size_t count,
                            std::size_t multiple = 0) {
  const json& a = feature_map_field(j, key, name);
  const std::string where = std::string("/feature_map/") + key;
  if (!a.is_array()) bad(name, where, "expected an array of numbers");
  if (multiple == 0 && a.size() != count) {
    bad(name, where, "has " + std::to_string(a.size()) + " numbers, expected " + std::to_string(count));
  }
  if (multiple > 0 && (a.empty() || a.size() % multiple != 0 || a.size() > count)) {
    bad(name, where, "expected a positive multiple of " + std::to_string(multiple) + " numbers, at most " +
                         std::to_string(count) + ", found " + std::to_string(a.size()));
  }
  std::vector<T> out(a.size());
  for (std::size_t e = 0; e < a.size(); ++e) {
    const auto at = [&] { return where + "/" + std::to_string(e); };  // built for a message only
    const double v = json_checks::finite_number(a[e], name, at);
    if (std::abs(v) > std::numeric_limits<float>::max()) bad(name, at(), "beyond float range");
    out[e] = static_cast<T>(v);
  }
  return out;
}

}  // namespace

FeatureMapSettings feature_map_settings_from_json(const json& value, const std::string& origin) {
  FeatureMapSettings s;
  json k = value.is_string() ? json{{"type", value}} : value;
  if (!k.is_object()) refuse(origin, "",
      "expected {\"type\": \"rff\" | \"nystroem\", \"components\": m, \"gamma\": ...}");
  for (const auto& [key, v] : k.items()) {
    if (key != "type" && key != "components" && key != "gamma") {
      refuse(origin, "/" + key,
             "unknown parameter" + did_you_mean(key, {"type", "components", "gamma"}) +
                 " (expected type, components or gamma)");
    }
  }
  if (!k.contains("type")) refuse(origin, "/type", "missing: rff (random Fourier features) or nystroem");
  if (!k["type"].is_string() || !parse_feature_map_type(k["type"].get<std::string>(), s.type)) {
    refuse(origin, "/type", "expected rff or nystroem, found " + k["type"].dump());
  }
  if (auto c = k.find("components"); c != k.end()) {
    const double v = c->is_number() ? c->get<double>() : -1.0;
    if (v != std::floor(v) || v < 1 || v > kMaxFeatureMapComponents) {
      refuse(origin, "/components", "must be an integer between 1 and " + std::to_string(kMaxFeatureMapComponents) +
                                      ", found " + c->dump());
    }
    s.components = static_cast<std::uint32_t>(v);
  }
  if (auto g = k.find("gamma"); g != k.end() && !(g->is_string() && *g == "scale")) {
    if (!g->is_number() || !std::isfinite(g->get<double>()) || !(g->get<double>() > 0)) {
      refuse(origin, "/gamma",
          "must be a number > 0 or \"scale\" (1/(d·Var(X)) on the training rows), found " + g->dump());
    }
    s.gamma = g->get<double>();
  }
  return s;
}

void append_feature_map_json(std::string& out, const FeatureMap& f) {
  out += "{\"type\": \"" + to_string(f.type) + "\", \"gamma\": ";
  append_number(out, f.gamma);
  out += ", \"components\": " + std::to_string(f.components) + ", \"input_dimension\": " +
         std::to_string(f.input_dimension) + ", \"output_dimension\": " + std::to_string(f.output_dimension()) +
         ", \"seed\": " + std::to_string(f.seed) + ",\n  \"basis\": ";
  append_array(out, f.basis);
  if (f.type == FeatureMapType::kRff) {
    out += ",\n  \"offset\": ";
    append_array(out, f.offset);
  } else {
    out += ",\n  \"projection\": ";
    append_array(out, f.projection);
  }
  out += '}';
}

FeatureMap feature_map_from_json(const json& j, const std::string& name) {
  if (!j.is_object()) bad(name, "/feature_map", "expected an object (the fitted kernel approximation)");
  FeatureMap f;
  const json& type = feature_map_field(j, "type", name);
  if (!type.is_string() || !parse_feature_map_type(type.get<std::string>(), f.type)) {
    bad(name, "/feature_map/type", "expected rff or nystroem, found " + type.dump());
  }
  f.gamma = json_checks::finite_number(feature_map_field(j, "gamma", name), name, "/feature_map/gamma");
  if (!(f.gamma > 0)) bad(name, "/feature_map/gamma", "must be > 0");
  f.components = static_cast<std::uint32_t>(unsigned_field(j, "components", name, 1, kMaxFeatureMapComponents));
  f.input_dimension = static_cast<std::uint32_t>(unsigned_field(j, "input_dimension", name, 0, (std::uint64_t{1} << 32) - 1));
  if (std::uint64_t{f.components} * f.input_dimension > kMaxFeatureMapFloats) {
    bad(name, "/feature_map/input_dimension", "components × input_dimension exceeds the map's limit of 2^28");
  }
  f.seed = unsigned_field(j, "seed", name, 0, std::numeric_limits<std::uint64_t>::max());
  const std::uint64_t out_dim = unsigned_field(j, "output_dimension", name, 1, f.components);
  f.basis = number_array<float>(j, "basis", name, std::size_t{f.components} * f.input_dimension);
  if (f.type == FeatureMapType::kRff) {
    f.offset = number_array<double>(j, "offset", name, f.components);
    for (std::size_t e = 0; e < f.offset.size(); ++e) {
      if (f.offset[e] < 0 || f.offset[e] > 2 * std::numbers::pi) {
        bad(name, "/feature_map/offset/" + std::to_string(e), "must be in [0, 2π]");
      }
    }
  } else {
    f.projection = number_array<float>(j, "projection", name, std::size_t{f.components} * f.components, f.components);
  }
  if (f.output_dimension() != out_dim) {
    bad(name, "/feature_map/output_dimension", std::to_string(out_dim) + " does not match the map's " +
                                                   std::to_string(f.output_dimension()) + " outputs");
  }
  f.finish();
  return f;
}

}  // namespace pegasos
