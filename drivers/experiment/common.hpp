// Helpers shared by the parts of the experiment runner (drivers/experiment/):
// clocks, config errors, and how values, parameters and metrics are written.
// Internal to the runner; the public interface is drivers/experiment.hpp.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace pegasos::experiment_detail {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// `path` as an absolute, lexically normal path (results.json records where
// the data came from), unless that is too long to open (PATH_MAX, a working
// directory deeper than 4096 bytes): then as given, which still opens.
std::string usable_path(const std::string& path);

// Throws ConfigError("origin: key: what").
[[noreturn]] void fail(const std::string& origin, const std::string& key, const std::string& what);

// " (did you mean 'x'?)" for the closest of `names`, or "".
std::string suggestion(const std::string& key, const std::vector<std::string>& names);

// A value as plain text for labels: strings bare, JSON without quotes
// ({"ham":1} -> {ham:1}) so it is safe in gnuplot strings and data files.
std::string value_text(const json& v);

// "key=value key=value", or "base config" for no parameters.
std::string params_text(const json& params);

// metrics[name] when it is a number, else NaN.
double metric_of(const json& metrics, const std::string& name);

// A JSON value as a CSV / data-file field: null -> "", strings bare, numbers as dumped.
std::string number_text(const json& v);

}  // namespace pegasos::experiment_detail
