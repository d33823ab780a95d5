// Error types shared by every layer.
//
// Bad user input (data files, configs, model files) throws InputError or
// ConfigError; the driver maps them to exit code 2. Anything else reaching the
// driver is an internal failure (exit code 1). Nothing below main() exits.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace pegasos {

// A problem with a user-supplied file or value. The message already names the
// location ("data/train.svm:17:9: ...").
class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& what) : std::runtime_error(what) {}
};

// A problem with the configuration ("configs/x.json: lambda: must be > 0").
class ConfigError : public InputError {
 public:
  explicit ConfigError(const std::string& what) : InputError(what) {}
};

// "file:line:column: message"; line/column are 1-based, 0 means "not known".
inline std::string location(const std::string& file, std::size_t line, std::size_t column = 0) {
  std::string s = file;
  if (line > 0) s += ":" + std::to_string(line);
  if (column > 0) s += ":" + std::to_string(column);
  return s;
}

}  // namespace pegasos
