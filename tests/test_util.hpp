// Helpers shared by the test files: a temporary directory that removes
// itself, and whole-file text reads and writes.
#pragma once

#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include <catch2/catch.hpp>

namespace testutil {

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Writes `text` to `path` (creating missing parent directories); the write must succeed.
inline void write_text(const std::string& path, const std::string& text) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  std::ofstream out(path, std::ios::binary);
  out << text;
  REQUIRE(out.good());
}

// A fresh directory $TMPDIR/pegasos-TAG-XXXXXX, removed with everything in it.
class TempDir {
 public:
  explicit TempDir(const std::string& tag = "test") {
    std::string tmpl = (std::filesystem::temp_directory_path() / ("pegasos-" + tag + "-XXXXXX")).string();
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string path() const { return path_.string(); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  // Writes file(name) with write_text and returns its path.
  std::string write(const std::string& name, const std::string& text) const {
    write_text(file(name), text);
    return file(name);
  }
  // Names in the directory that start with `prefix`, sorted.
  std::vector<std::string> entries(const std::string& prefix = "") const {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(path_)) {
      const std::string n = e.path().filename().string();
      if (n.rfind(prefix, 0) == 0) names.push_back(n);
    }
    std::sort(names.begin(), names.end());
    return names;
  }

 private:
  std::filesystem::path path_;
};

}  // namespace testutil
