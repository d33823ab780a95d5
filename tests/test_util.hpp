// Helpers shared by the test files: a temporary directory that removes
// itself, whole-file text reads and writes, gzip files, float bit patterns.
#pragma once

#include <stdlib.h>
#include <sys/wait.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include "core/buffer.hpp"
#include <system_error>
#include <vector>

#include <catch2/catch.hpp>
#include <zlib.h>

#include "core/random.hpp"

namespace testutil {

// Seed for the random cases: a fixed stream per GENERATE value, varied by
// Catch's --rng-seed.
inline std::uint64_t case_seed(std::uint64_t stream) { return stream * 0x9e3779b97f4a7c15ULL + Catch::rngSeed(); }

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

// gzip with zlib; `members` > 1 writes concatenated gzip members.
inline void write_gzip(const std::string& path, const std::string& text, int members = 1) {
  const std::size_t step = (text.size() + static_cast<std::size_t>(members) - 1) / static_cast<std::size_t>(members);
  for (int m = 0; m < members; ++m) {
    gzFile f = gzopen(path.c_str(), m == 0 ? "wb1" : "ab1");
    REQUIRE(f != nullptr);
    const std::size_t begin = std::min(text.size(), step * static_cast<std::size_t>(m));
    const std::size_t len = std::min(step, text.size() - begin);
    if (len > 0) REQUIRE(gzwrite(f, text.data() + begin, static_cast<unsigned>(len)) == static_cast<int>(len));
    REQUIRE(gzclose(f) == Z_OK);
  }
}

// Bit patterns, for exact comparisons of floats.
inline std::vector<std::uint32_t> bits(const std::vector<float>& v) {
  std::vector<std::uint32_t> out;
  for (float x : v) out.push_back(std::bit_cast<std::uint32_t>(x));
  return out;
}
inline std::vector<std::uint32_t> bits(const pegasos::Buffer<float>& v) {
  std::vector<std::uint32_t> out;
  for (float x : v) out.push_back(std::bit_cast<std::uint32_t>(x));
  return out;
}
inline std::vector<std::uint64_t> bits(const std::vector<double>& v) {
  std::vector<std::uint64_t> out;
  for (double x : v) out.push_back(std::bit_cast<std::uint64_t>(x));
  return out;
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

#ifdef PEGASOS_BINARY
// Single-quoted for the shell (the temp paths contain no quotes).
inline std::string q(const std::string& s) { return "'" + s + "'"; }

struct Run {
  int code = -1;
  std::string out, err;
};

// Run the real `pegasos ARGS` through the shell with stdout and stderr
// captured in `dir` and no standard input.
inline Run pegasos_run(const TempDir& dir, const std::string& args) {
  const std::string out = dir.file("stdout.txt"), err = dir.file("stderr.txt");
  const std::string command = q(PEGASOS_BINARY) + " " + args + " >" + q(out) + " 2>" + q(err) + " </dev/null";
  const int status = std::system(command.c_str());
  INFO("command: " << command);
  REQUIRE(status != -1);
  REQUIRE(WIFEXITED(status));
  return {WEXITSTATUS(status), read_text(out), read_text(err)};
}
#endif

// Optimality independently of a solver's own duality gap: P is convex, so no
// small random step from W (40 trials, steps of 1e-3 and 1e-5 an entry) may
// lower primal(W) = P below P·(1 − slack).
template <class Primal>
void check_no_small_step_lowers(const std::vector<std::vector<double>>& W, double P, double slack, std::uint64_t seed,
                                Primal&& primal) {
  pegasos::Rng rng(seed);
  for (int trial = 0; trial < 40; ++trial) {
    std::vector<std::vector<double>> V = W;
    const double eps = trial % 2 == 0 ? 1e-3 : 1e-5;
    for (auto& w : V) {
      for (double& v : w) v += eps * (rng.uniform() - 0.5);
    }
    CHECK(primal(V) >= P * (1 - slack));
  }
}

}  // namespace testutil
