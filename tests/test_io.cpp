// Readers (LIBSVM, CSV, gzip), Dataset::remap_classes, model files and
// atomic writes. Expected values are hand-written or come from a brute-force
// parser in this file; every error must name file:line:column.
#include <stdlib.h>
#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "core/output_file.hpp"
#include "core/dataset.hpp"
#include "core/errors.hpp"
#include "core/parse_chunks.hpp"
#include "core/model.hpp"
#include "core/random.hpp"
#include "io/model_json.hpp"
#include "io/model_sections_json.hpp"
#include "tests/test_util.hpp"

namespace {

using Catch::Contains;
using nlohmann::json;
using pegasos::Dataset;
using pegasos::InputError;
using pegasos::Model;
using pegasos::ReadOptions;
namespace fs = std::filesystem;
using testutil::TempDir;
using testutil::read_text;
using testutil::write_text;
using testutil::write_gzip;
using testutil::bits;

// Matches a message containing every one of `parts` (owns its strings, so
// unlike `Contains(a) && Contains(b)` it can be returned from a function).
class ContainsAll : public Catch::MatcherBase<std::string> {
 public:
  explicit ContainsAll(std::vector<std::string> parts) : parts_(std::move(parts)) {}
  bool match(const std::string& s) const override {
    return std::all_of(parts_.begin(), parts_.end(), [&](const std::string& p) { return s.find(p) != std::string::npos; });
  }
  std::string describe() const override {
    std::string d = "contains all of";
    for (const auto& p : parts_) d += " \"" + p + "\"";
    return d;
  }

 private:
  std::vector<std::string> parts_;
};

Dataset libsvm(const std::string& text, const ReadOptions& options = {}) {
  return pegasos::parse_libsvm(text, "t.svm", options);
}

Dataset csv(const std::string& text, const ReadOptions& options = {}) {
  return pegasos::parse_csv(text, "t.csv", options);
}

// Class name of every row ("" for unlabeled rows).
std::vector<std::string> row_labels(const Dataset& ds) {
  std::vector<std::string> out;
  for (int y : ds.labels) out.push_back(y < 0 ? "" : ds.classes.at(static_cast<std::size_t>(y)));
  return out;
}

void require_same_data(const Dataset& a, const Dataset& b) {
  REQUIRE(a.row_ptr == b.row_ptr);
  REQUIRE(a.indices == b.indices);
  REQUIRE(bits(a.values) == bits(b.values));
  REQUIRE(a.labels == b.labels);
  REQUIRE(a.classes == b.classes);
  REQUIRE(a.dimension == b.dimension);
}

// ---------------------------------------------------------------------------
// Brute-force LIBSVM parser: one line at a time, std::strtof for values.
struct Csr {
  std::vector<std::uint64_t> row_ptr{0};
  std::vector<std::uint32_t> indices;
  std::vector<float> values;
  std::vector<std::string> labels;  // canonical class name per row
  std::uint32_t dimension = 0;
};

std::vector<std::string> split_ws(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == ' ' || c == '\t') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

// Labels of the generated data are spellings of -1 and +1 only.
Csr brute_force_libsvm(const std::string& text) {
  Csr out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    std::string line = text.substr(pos, nl - pos);
    pos = nl + 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (const auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    const auto tokens = split_ws(line);
    if (tokens.empty()) continue;
    out.labels.push_back(std::stod(tokens[0]) > 0 ? "1" : "-1");
    for (std::size_t t = 1; t < tokens.size(); ++t) {
      const auto colon = tokens[t].find(':');
      if (tokens[t].substr(0, colon) == "qid") continue;
      const unsigned long long index = std::stoull(tokens[t].substr(0, colon));
      const float value = std::strtof(tokens[t].c_str() + colon + 1, nullptr);
      out.dimension = std::max(out.dimension, static_cast<std::uint32_t>(index));
      if (value != 0.0f) {
        out.indices.push_back(static_cast<std::uint32_t>(index - 1));
        out.values.push_back(value);
      }
    }
    out.row_ptr.push_back(out.indices.size());
  }
  return out;
}

// The reader's arrays equal the brute-force parse's, bit for bit.
void require_brute_force_rows(const Dataset& ds, const Csr& ref) {
  REQUIRE(ds.size() == ref.labels.size());
  REQUIRE(ds.row_ptr == ref.row_ptr);
  REQUIRE(ds.indices == ref.indices);
  REQUIRE(bits(ds.values) == bits(ref.values));
  REQUIRE(row_labels(ds) == ref.labels);
  REQUIRE(ds.dimension == ref.dimension);
}

// About `min_bytes` of LIBSVM text with comments, blank lines, CRLF, qid
// tokens, explicit zeros, '+' signs, exponents and several spellings of the
// labels. Returns the lines (without terminators) and the full text.
struct BigText {
  std::vector<std::string> lines;
  std::vector<std::string> terminators;
  std::string text() const {
    std::string t;
    for (std::size_t i = 0; i < lines.size(); ++i) t += lines[i] + terminators[i];
    return t;
  }
  // Byte offset at which line i (0-based) starts.
  std::size_t offset(std::size_t i) const {
    std::size_t o = 0;
    for (std::size_t k = 0; k < i; ++k) o += lines[k].size() + terminators[k].size();
    return o;
  }
};

BigText make_big_text(std::uint64_t seed, std::size_t min_bytes) {
  pegasos::Rng rng(seed);
  static const char* const kLabels[] = {"+1", "1", "1.0", "-1", "-1.0", "-1"};
  BigText big;
  std::size_t bytes = 0;
  char buf[64];
  while (bytes < min_bytes) {
    std::string line;
    const auto kind = rng.below(100);
    if (kind == 0) {
      line = "# comment line " + std::to_string(big.lines.size());
    } else if (kind == 1) {
      line = rng.below(2) ? "" : " \t ";
    } else {
      line = kLabels[rng.below(6)];
      if (rng.below(10) == 0) line += " qid:" + std::to_string(rng.below(50));
      std::uint64_t index = 0;
      const auto nnz = rng.below(14);
      for (std::uint64_t k = 0; k < nnz; ++k) {
        index += 1 + rng.below(3000);
        const auto form = rng.below(10);
        if (form == 0) {
          std::snprintf(buf, sizeof buf, "%s0", rng.below(2) ? "" : "-");  // explicit zero
        } else if (form == 1) {
          std::snprintf(buf, sizeof buf, rng.below(2) ? "%+d" : "%d", static_cast<int>(rng.below(200)) - 100);
        } else if (form == 2) {
          std::snprintf(buf, sizeof buf, rng.below(2) ? "%+.3E" : "%.3e", (rng.uniform() - 0.5) * 1e-6);
        } else {
          std::snprintf(buf, sizeof buf, "%.9g", (rng.uniform() - 0.5) * 20.0);
        }
        line += rng.below(8) == 0 ? '\t' : ' ';
        line += std::to_string(index);
        line += ':';
        line += buf;
      }
      if (rng.below(40) == 0) line += " # trailing comment 5:5";
    }
    const std::string term = rng.below(20) == 0 ? "\r\n" : "\n";
    bytes += line.size() + term.size();
    big.lines.push_back(std::move(line));
    big.terminators.push_back(term);
  }
  return big;
}

// ---------------------------------------------------------------------------
// Models.

// Dense when density >= 0.5 (the writer then stores an array), else sparse.
Model make_model(std::size_t n_classes, std::uint32_t dimension, std::vector<double> density, std::uint64_t seed) {
  pegasos::Rng rng(seed);
  Model m;
  m.objective = n_classes == 2 ? "hinge" : "ova";
  if (n_classes == 2) {
    m.classes = {"ham", "spam"};
  } else {
    for (std::size_t k = 0; k < n_classes; ++k) m.classes.push_back("class" + std::to_string(k));
  }
  m.outputs = n_classes == 2 ? 1 : static_cast<int>(n_classes);
  const std::size_t K = static_cast<std::size_t>(m.outputs);
  m.dimension = dimension;
  m.bias_mode = "unregularized";
  m.weights.assign(static_cast<std::size_t>(dimension) * K, 0.0);
  // Values whose shortest decimal form needs all 17 digits, denormals, extremes.
  const double special[] = {0.1,     1.0 / 3.0,  -2.0 / 3.0, 5e-324,  -DBL_MIN, DBL_MAX,
                            -1e-300, 123456789.123456789, std::nextafter(1.0, 2.0), std::nextafter(-1.0, 0.0)};
  for (std::size_t k = 0; k < K; ++k) {
    for (std::uint32_t j = 0; j < dimension; ++j) {
      if (rng.uniform() >= density[k]) continue;
      double w = rng.below(4) == 0 ? special[rng.below(std::size(special))]
                                   : (rng.uniform() - 0.5) * std::pow(10.0, static_cast<double>(rng.below(20)) - 10.0);
      if (w == 0.0) w = 0.25;
      m.weights[j * K + k] = w;
    }
  }
  for (std::size_t k = 0; k < K; ++k) m.bias.push_back(rng.uniform() - 0.5);
  m.lambda = 1e-4;
  m.settings = pegasos::json_object_text({{"lambda", 1e-4}, {"seed", 42}, {"output", "average"}});
  m.data = pegasos::json_object_text({{"format", "libsvm"}, {"label_column", 0}});
  m.training = pegasos::training_from_json({{"iterations", 12345}, {"epochs", 2.5}, {"converged", true}, {"objective", 0.123456789}});
  return m;
}

void require_same_model(const Model& a, const Model& b) {
  REQUIRE(a.objective == b.objective);
  REQUIRE(a.classes == b.classes);
  REQUIRE(a.dimension == b.dimension);
  REQUIRE(a.outputs == b.outputs);
  REQUIRE(a.bias_mode == b.bias_mode);
  REQUIRE(bits(a.weights) == bits(b.weights));
  REQUIRE(bits(a.bias) == bits(b.bias));
  REQUIRE(a.settings == b.settings);
  REQUIRE(a.data == b.data);
  REQUIRE(pegasos::training_to_json(a.training) == pegasos::training_to_json(b.training));
  REQUIRE(a.features == b.features);
  REQUIRE(bits(std::vector<double>{a.lambda}) == bits(std::vector<double>{b.lambda}));
  REQUIRE(a.normalize == b.normalize);
}

// A small valid binary model file (dense, dimension 4) as JSON.
json small_model_json() {
  Model m;
  m.classes = {"-1", "1"};
  m.dimension = 4;
  m.outputs = 1;
  m.weights = {0.5, -1.25, 2.0, 12345.5};
  m.bias = {0.75};
  return json::parse(pegasos::model_to_json(m));
}

Model from(const json& j) { return pegasos::model_from_json(j.dump(), "m.json"); }

std::string replace_all(std::string s, const std::string& what, const std::string& with) {
  for (std::size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + with.size())) {
    s.replace(p, what.size(), with);
  }
  return s;
}

}  // namespace

// ===========================================================================
// LIBSVM

TEST_CASE("libsvm: two labels map to two classes with the expected positive class", "[io]") {
  struct Case {
    std::string negative, positive, neg_name, pos_name;
  };
  const Case c = GENERATE(values<Case>({{"-1", "+1", "-1", "1"},
                                        {"0", "1", "0", "1"},
                                        {"1", "2", "1", "2"},
                                        {"ham", "spam", "ham", "spam"},
                                        {"9", "10", "9", "10"},  // numeric, not bytewise, order
                                        {"-2.5", "-1", "-2.5", "-1"}}));
  CAPTURE(c.negative, c.positive);
  // The positive label comes first in the file: order of appearance must not matter.
  const Dataset ds = libsvm(c.positive + " 1:1\n" + c.negative + " 2:1\n" + c.negative + " 1:2\n" + c.positive + " 3:1\n");
  REQUIRE(ds.classes == std::vector<std::string>{c.neg_name, c.pos_name});
  CHECK(ds.labels == std::vector<int>{1, 0, 0, 1});
  CHECK(ds.class_counts() == std::vector<std::size_t>{2, 2});
}

TEST_CASE("libsvm: +1, 1, 1.0 and 1e0 are one label, -1 and -1.0 another", "[io]") {
  const Dataset ds = libsvm("+1 1:1\n1 1:2\n1.0 1:3\n1e0 1:4\n-1 1:5\n-1.0 1:6\n-0 1:7\n0 1:8\n");
  REQUIRE(ds.classes == std::vector<std::string>{"-1", "0", "1"});
  CHECK(ds.labels == std::vector<int>{2, 2, 2, 2, 0, 0, 1, 1});
  CHECK(pegasos::canonical_label("+1") == "1");
  CHECK(pegasos::canonical_label("1.0") == "1");
  CHECK(pegasos::canonical_label("-0.0") == "0");
  CHECK(pegasos::canonical_label("spam") == "spam");
  CHECK(pegasos::canonical_label("+spam") == "+spam");
  CHECK_THROWS_WITH(pegasos::canonical_label("nan"), Contains("not finite"));
}

TEST_CASE("libsvm: CSR arrays, qid tokens, comments, blank lines, zeros and dimension", "[io]") {
  const Dataset ds = libsvm(
      "# a header comment\n"
      "\n"
      "1 qid:3 1:0.5 4:-2 # trailing comment 9:9\n"
      "   \t  \n"
      "-1 qid:17 2:0 3:1e-3 7:0.0\n"
      "  # indented comment\n"
      "-1\n"
      "1\t2:3\t5:-0\n");
  REQUIRE(ds.size() == 4);
  CHECK(ds.row_ptr == std::vector<std::uint64_t>{0, 2, 3, 3, 4});
  CHECK(ds.indices == std::vector<std::uint32_t>{0, 3, 2, 1});
  CHECK(ds.values == std::vector<float>{0.5f, -2.0f, 1e-3f, 3.0f});
  CHECK(row_labels(ds) == std::vector<std::string>{"1", "-1", "-1", "1"});
  // Explicit zeros are dropped but their index still counts for the dimension
  // (7 from "7:0.0"); the commented-out 9:9 does not.
  CHECK(ds.dimension == 7);
  CHECK(ds.nnz() == 4);
  CHECK(ds.source == "t.svm");
  const auto r = ds.row(1);
  CHECK(r.nnz == 1);
  CHECK(r.indices[0] == 2);
  CHECK(r.label == 0);
  CHECK(r.index == 1);
}

TEST_CASE("libsvm: CRLF line ends and a UTF-8 BOM give the same data as plain LF", "[io]") {
  const std::string lf = "1 1:0.5 3:2\n-1 2:1\n\n1 3:4 # note\n";
  const std::string crlf = "\xEF\xBB\xBF" "1 1:0.5 3:2\r\n-1 2:1\r\n\r\n1 3:4 # note\r\n";
  const Dataset a = libsvm(lf);
  const Dataset b = libsvm(crlf);
  require_same_data(a, b);
  CHECK(b.classes == std::vector<std::string>{"-1", "1"});
  // No trailing newline at all.
  require_same_data(a, libsvm("1 1:0.5 3:2\n-1 2:1\n1 3:4"));
}

// Read `text` with the fast path on and with the general parser only (both
// with `options` otherwise); both must give the same data (or the same
// error, thrown again).
Dataset libsvm_both(const std::string& text, const ReadOptions& options = {}) {
  ReadOptions fast = options, general = options;
  fast.libsvm_fast_path = true;
  general.libsvm_fast_path = false;
  std::string fast_error, general_error;
  Dataset a, b;
  try {
    a = libsvm(text, fast);
  } catch (const InputError& e) {
    fast_error = e.what();
  }
  try {
    b = libsvm(text, general);
  } catch (const InputError& e) {
    general_error = e.what();
  }
  REQUIRE(fast_error == general_error);
  if (!fast_error.empty()) throw InputError(fast_error);
  require_same_data(a, b);
  return a;
}

TEST_CASE("libsvm: the variants LIBLINEAR and scikit-learn read are read, by both parsers", "[io]") {
  // Issue 19: explicit '+' on values and labels, exponents, leading zeros in
  // indices, tabs and runs of spaces, qid, comments, CRLF, label-only rows
  // and blank lines.
  const Dataset ds = libsvm_both(
      "+1 1:+2 2:+.5 3:+7. 4:+1e-3 5:+2E+2\n"
      "-1\t\t002:-2e-1   0010:1.5E2\t 11:+0 \r\n"
      "\n"
      "  \t \r\n"
      "# a whole-line comment 1:1\n"
      "+1 qid:+12 1:3 # a trailing comment 4:4\n"
      "+2\n"
      "-1 qid:007 00000000000001:+4e0#no space before the comment\n"
      "1.0 3:-0 6:+3.25e+1 ");
  REQUIRE(ds.size() == 6);
  CHECK(row_labels(ds) == std::vector<std::string>{"1", "-1", "1", "2", "-1", "1"});
  CHECK(ds.row_ptr == std::vector<std::uint64_t>{0, 5, 7, 8, 8, 9, 10});
  CHECK(ds.indices == std::vector<std::uint32_t>{0, 1, 2, 3, 4, 1, 9, 0, 0, 5});
  CHECK(ds.values == std::vector<float>{2.0f, 0.5f, 7.0f, 1e-3f, 200.0f, -0.2f, 150.0f, 3.0f, 4.0f, 32.5f});
  CHECK(ds.dimension == 11);  // from "11:+0"
  // Each variant alone equals its plain spelling.
  const std::pair<std::string, std::string> same[] = {
      {"1 1:+2\n", "1 1:2\n"},          {"+1 1:2\n", "1 1:2\n"},
      {"1 1:+0.25\n", "1 1:0.25\n"},    {"1 1:2E+2\n", "1 1:200\n"},
      {"1 1:+1e-3\n", "1 1:0.001\n"},   {"1 007:1\n", "1 7:1\n"},
      {"1\t1:1  \t 2:2\n", "1 1:1 2:2\n"}, {"1 qid:3 1:1\n", "1 1:1\n"},
      {"1 qid:-3 1:1 qid:+0\n", "1 1:1\n"},
      {"1 1:1\r\n-1\r\n", "1 1:1\n-1\n"}, {"1 1:1 # c 2:2\n", "1 1:1\n"},
  };
  for (const auto& [variant, plain] : same) {
    CAPTURE(variant);
    require_same_data(libsvm_both(variant), libsvm(plain));
  }
}

TEST_CASE("libsvm: malformed signs, numbers and indices stay errors in both parsers", "[io]") {
  struct Case {
    std::string text, where, what;
  };
  const Case c = GENERATE(values<Case>({
      {"1 1:+\n", "t.svm:1:5:", "value '+' is not a number"},
      {"1 1:++2\n", "t.svm:1:5:", "value '++2' is not a number"},
      {"1 1:+-2\n", "t.svm:1:5:", "value '+-2' is not a number"},
      {"1 1:-+2\n", "t.svm:1:5:", "value '-+2' is not a number"},
      {"1 1:2+\n", "t.svm:1:5:", "value '2+' is not a number"},
      {"1 1:+2x\n", "t.svm:1:5:", "value '+2x' is not a number"},
      {"1 1:2x\n", "t.svm:1:5:", "value '2x' is not a number"},
      {"1 1:2e\n", "t.svm:1:5:", "value '2e' is not a number"},
      {"1 1:2e+\n", "t.svm:1:5:", "value '2e+' is not a number"},
      {"1 1:2e++3\n", "t.svm:1:5:", "value '2e++3' is not a number"},
      {"1 1:+.\n", "t.svm:1:5:", "value '+.' is not a number"},
      {"1 1:+0x1p3\n", "t.svm:1:5:", "is not a number"},
      {"1 1:+nan\n", "t.svm:1:5:", "is NaN"},
      {"1 1:+inf\n", "t.svm:1:5:", "infinite"},
      {"1 1:+1e39\n", "t.svm:1:5:", "out of range"},
      {"1 +:1\n", "t.svm:1:3:", "feature index '+' is not a positive integer"},
      {"1 +1:1\n", "t.svm:1:3:", "feature index '+1' is not a positive integer"},
      {"1 1:1 0:1\n", "t.svm:1:7:", "feature index 0 is not positive"},
      {"1 000:1\n", "t.svm:1:3:", "feature index 0 is not positive"},
      {"1 2:1 02:1\n", "t.svm:1:7:", "feature index 2 is repeated"},
      {"1 1:1\n-1 2:+ 3:1\n", "t.svm:2:6:", "value '+' is not a number"},
      {"1 qid: 1:1\n", "t.svm:1:7:", "qid value '' is not an integer"},
      {"1 qid:x 1:1\n", "t.svm:1:7:", "qid value 'x' is not an integer"},
      {"1 qid:1.5 1:1\n", "t.svm:1:7:", "qid value '1.5' is not an integer"},
      {"1 qid:++1 1:1\n", "t.svm:1:7:", "qid value '++1' is not an integer"},
      {"1 1:1 qid:1e3\n", "t.svm:1:11:", "qid value '1e3' is not an integer"},
      {"1 qid:99999999999999999999\n", "t.svm:1:7:", "does not fit in 64 bits"},
  }));
  CAPTURE(c.text);
  CHECK_THROWS_AS(libsvm_both(c.text), InputError);
  CHECK_THROWS_WITH(libsvm_both(c.text), Contains(c.where) && Contains(c.what));
}

TEST_CASE("labels: one explicit '+' before a number, a second sign makes a name", "[io]") {
  CHECK(pegasos::canonical_label("+1") == "1");
  CHECK(pegasos::canonical_label("+.5") == "0.5");
  CHECK(pegasos::canonical_label("+1e1") == "10");
  CHECK(pegasos::canonical_label("+") == "+");
  CHECK(pegasos::canonical_label("+-1") == "+-1");  // used to be read as -1
  CHECK(pegasos::canonical_label("++1") == "++1");
  CHECK_THROWS_WITH(pegasos::canonical_label("+inf"), Contains("not finite"));
}

TEST_CASE("libsvm: unlabeled rows are accepted only when labels are optional", "[io]") {
  ReadOptions opt;
  opt.require_labels = false;
  const Dataset ds = libsvm("1:1 3:2\n-1 2:1\n", opt);
  REQUIRE(ds.size() == 2);
  CHECK(ds.labels == std::vector<int>{-1, 0});
  CHECK(ds.classes == std::vector<std::string>{"-1"});
  CHECK(ds.indices == std::vector<std::uint32_t>{0, 2, 1});
  CHECK_THROWS_WITH(libsvm("1:1 3:2\n"), Contains("t.svm:1:1:") && Contains("missing label"));
}

TEST_CASE("libsvm: max_feature_index is inclusive", "[io]") {
  ReadOptions opt;
  opt.max_feature_index = 100;
  const Dataset ds = libsvm("1 100:1\n-1 1:1\n", opt);
  CHECK(ds.dimension == 100);
  CHECK(ds.indices.front() == 99);
  CHECK_THROWS_WITH(libsvm("1 1:1\n-1 101:1\n", opt), Contains("t.svm:2:4:") && Contains("exceeds the maximum 100"));
}

TEST_CASE("libsvm: malformed input names file:line:column and the problem", "[io]") {
  struct Case {
    std::string text, where, what;
  };
  const Case c = GENERATE(values<Case>({
      {"1 0:1\n", "t.svm:1:3:", "feature index 0 is not positive"},
      {"-1 1:1\n1 3:1 2:1\n", "t.svm:2:7:", "smaller than the previous index 3"},
      {"1 2:1 2:1\n", "t.svm:1:7:", "feature index 2 is repeated"},
      {"1 1:nan\n", "t.svm:1:5:", "is NaN"},
      {"1 1:NaN\n", "t.svm:1:5:", "is NaN"},
      {"1 1:inf\n", "t.svm:1:5:", "infinite"},
      {"1 1:1 2:-inf\n", "t.svm:1:9:", "infinite"},
      {"1 1:1e999\n", "t.svm:1:5:", "out of range"},
      {"1 1:1e39\n", "t.svm:1:5:", "out of range"},  // finite as double, not as float32
      {"1 1:abc\n", "t.svm:1:5:", "value 'abc' is not a number"},
      {"1 1:0.5x\n", "t.svm:1:5:", "value '0.5x' is not a number"},
      {"1 1:2:3\n", "t.svm:1:5:", "value '2:3' is not a number"},
      {"1 1:\n", "t.svm:1:5:", "value '' is not a number"},
      {"1 -1:0.5\n", "t.svm:1:3:", "feature index '-1' is not a positive integer"},
      {"1 :0.5\n", "t.svm:1:3:", "is not a positive integer"},
      {"1 1.5:2\n", "t.svm:1:3:", "feature index '1.5' is not a positive integer"},
      {"1 1:1 abc\n", "t.svm:1:7:", "expected INDEX:VALUE, got 'abc'"},
      {"1:0.5 2:1\n", "t.svm:1:1:", "missing label"},
      {"1 1:1\n2:1 3:1\n", "t.svm:2:1:", "missing label"},
      {"nan 1:1\n", "t.svm:1:1:", "not finite"},
      {"-1 1:1\n+inf 1:1\n", "t.svm:2:1:", "not finite"},
      {"1 2147483649:1\n", "t.svm:1:3:", "exceeds the maximum 2147483648"},
      {"1 1099511627776:1\n", "t.svm:1:3:", "exceeds the maximum"},                // 2^40
      {"1 99999999999999999999999:1\n", "t.svm:1:3:", "exceeds the maximum"},      // > 2^64
      {"# c\n\n1 1:1\r\n\r\n-1 1:x\r\n", "t.svm:5:6:", "'x' is not a number"},  // blank, comment, CRLF lines count
      {"\xEF\xBB\xBF" "1 0:1\n", "t.svm:1:3:", "index 0"},
  }));
  CAPTURE(c.text);
  CHECK_THROWS_AS(libsvm(c.text), InputError);
  CHECK_THROWS_WITH(libsvm(c.text), Contains(c.where) && Contains(c.what));
}

TEST_CASE("libsvm: empty, blank and binary inputs are rejected by name", "[io]") {
  CHECK_THROWS_WITH(libsvm(""), Contains("t.svm") && Contains("no examples"));
  CHECK_THROWS_WITH(libsvm("  \n\t\n \r\n\n"), Contains("t.svm") && Contains("no examples"));
  CHECK_THROWS_WITH(libsvm("# only\n# comments\n"), Contains("t.svm") && Contains("no examples"));
  CHECK_THROWS_WITH(libsvm("\xEF\xBB\xBF"), Contains("t.svm") && Contains("no examples"));
  const std::string garbage("\x7f" "ELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\x03\0>\0\x01\0\0\0", 24);
  CHECK_THROWS_WITH(libsvm(garbage), Contains("t.svm") && Contains("binary data"));
  CHECK_THROWS_WITH(libsvm(std::string("1 1:1\n-1 2:1\n\0\0", 15)), Contains("t.svm") && Contains("binary data"));
}

TEST_CASE("read_dataset: files, format detection, errors name the path", "[io]") {
  TempDir dir;
  const std::string text = "1 1:0.5 3:2\n-1 2:1\n";
  const std::string svm = dir.file("a.svm");
  write_text(svm, text);
  const Dataset ds = pegasos::read_dataset(svm, {});
  require_same_data(ds, libsvm(text));
  CHECK(ds.source == svm);

  SECTION("empty and whitespace-only files") {
    write_text(dir.file("empty.svm"), "");
    CHECK_THROWS_WITH(pegasos::read_dataset(dir.file("empty.svm"), {}),
                      Contains(dir.file("empty.svm")) && Contains("no examples"));
    write_text(dir.file("blank.svm"), "\n  \n\t\n");
    CHECK_THROWS_WITH(pegasos::read_dataset(dir.file("blank.svm"), {}),
                      Contains(dir.file("blank.svm")) && Contains("no examples"));
  }
  SECTION("binary garbage") {
    std::string garbage;
    pegasos::Rng rng(99);
    for (int i = 0; i < 4096; ++i) garbage += static_cast<char>(rng.below(256));
    garbage[17] = '\0';
    write_text(dir.file("garbage.svm"), garbage);
    CHECK_THROWS_WITH(pegasos::read_dataset(dir.file("garbage.svm"), {}),
                      Contains(dir.file("garbage.svm")) && Contains("binary data"));
  }
  SECTION("errors carry the path and the absolute line") {
    write_text(dir.file("bad.svm"), "1 1:1\n# comment\n-1 2:1\n1 3:1 3:2\n");
    CHECK_THROWS_WITH(pegasos::read_dataset(dir.file("bad.svm"), {}),
                      Contains(dir.file("bad.svm") + ":4:7:") && Contains("repeated"));
  }
  SECTION("missing file and directory") {
    CHECK_THROWS_WITH(pegasos::read_dataset(dir.file("nope.svm"), {}),
                      Contains(dir.file("nope.svm")) && Contains("cannot open"));
    fs::create_directory(dir.file("sub.svm"));
    CHECK_THROWS_AS(pegasos::read_dataset(dir.file("sub.svm"), {}), InputError);
  }
  SECTION("a .csv or .tsv extension selects CSV; an explicit format overrides it") {
    write_text(dir.file("a.csv"), "y,f1,f2,f3\n1,0.5,0,2\n-1,0,1,0\n");
    require_same_data(pegasos::read_dataset(dir.file("a.csv"), {}), ds);
    write_text(dir.file("a.tsv"), "1\t0.5\t0\t2\n-1\t0\t1\t0\n");
    require_same_data(pegasos::read_dataset(dir.file("a.tsv"), {}), ds);
    write_text(dir.file("a.txt"), "1,0.5,0,2\n-1,0,1,0\n");
    ReadOptions opt;
    opt.format = pegasos::DataFormat::kCsv;
    require_same_data(pegasos::read_dataset(dir.file("a.txt"), opt), ds);
    write_text(dir.file("b.csv"), text);
    opt.format = pegasos::DataFormat::kLibsvm;
    require_same_data(pegasos::read_dataset(dir.file("b.csv"), opt), ds);
  }
}

TEST_CASE("read_dataset: gzip input is detected by content", "[io]") {
  TempDir dir;
  const BigText big = make_big_text(7, 200000);
  const std::string text = big.text();
  const Dataset plain = libsvm(text);

  SECTION("one member, .gz name") {
    write_gzip(dir.file("d.svm.gz"), text);
    require_same_data(pegasos::read_dataset(dir.file("d.svm.gz"), {}), plain);
  }
  SECTION("no .gz in the name") {
    write_gzip(dir.file("d.svm"), text);
    require_same_data(pegasos::read_dataset(dir.file("d.svm"), {}), plain);
    CHECK(pegasos::read_file_bytes(dir.file("d.svm")) == text);
  }
  SECTION("concatenated members (cat a.gz b.gz)") {
    write_gzip(dir.file("d.svm.gz"), text, 3);
    require_same_data(pegasos::read_dataset(dir.file("d.svm.gz"), {}), plain);
  }
  SECTION("CSV inside .csv.gz") {
    write_gzip(dir.file("d.csv.gz"), "y,a,b\n1,1,0\n-1,0,2\n");
    const Dataset ds = pegasos::read_dataset(dir.file("d.csv.gz"), {});
    CHECK(ds.size() == 2);
    CHECK(ds.indices == std::vector<std::uint32_t>{0, 1});
  }
  SECTION("a truncated gzip file is an error naming the file") {
    write_gzip(dir.file("full.gz"), text);
    const std::string bytes = read_text(dir.file("full.gz"));
    write_text(dir.file("cut.svm.gz"), bytes.substr(0, bytes.size() / 2));
    CHECK_THROWS_WITH(pegasos::read_dataset(dir.file("cut.svm.gz"), {}),
                      Contains(dir.file("cut.svm.gz")) && Contains("gzip"));
  }
  SECTION("the trailer's size is a guess: too small, too large or corrupt") {  // (and concatenated members above)
    // The reader sizes its buffer from the last 4 bytes (the size mod 2^32).
    write_gzip(dir.file("full.gz"), text);
    const std::string bytes = read_text(dir.file("full.gz"));
    auto with_size = [&](std::uint32_t size) {
      std::string b = bytes;
      for (int k = 0; k < 4; ++k) b[b.size() - 4 + static_cast<std::size_t>(k)] = static_cast<char>(size >> (8 * k) & 0xff);
      return b;
    };
    const auto actual = static_cast<std::uint32_t>(text.size());
    // A wrong size fails zlib's length check whichever way it errs, without
    // a buffer of the claimed 4 GB.
    for (const std::uint32_t claimed : {actual / 3, actual + 1, 0xffffffffu}) {
      write_text(dir.file("bad_size.svm.gz"), with_size(claimed));
      CHECK_THROWS_WITH(pegasos::read_dataset(dir.file("bad_size.svm.gz"), {}),
                        Contains(dir.file("bad_size.svm.gz")) && Contains("corrupt gzip data"));
    }
    write_text(dir.file("same.svm.gz"), with_size(actual));
    require_same_data(pegasos::read_dataset(dir.file("same.svm.gz"), {}), plain);
  }
  SECTION("line numbers inside gzip data") {
    write_gzip(dir.file("bad.svm.gz"), "1 1:1\n-1 2:1\n\n1 0:1\n");
    CHECK_THROWS_WITH(pegasos::read_dataset(dir.file("bad.svm.gz"), {}),
                      Contains(dir.file("bad.svm.gz") + ":4:3:") && Contains("index 0"));
  }
}

TEST_CASE("libsvm: a multi-chunk parse equals a line-by-line brute-force parse", "[io]") {
  // > 10 MB: at least three 4 MB parse chunks.
  const BigText big = make_big_text(2024, std::size_t{10} << 20 | 12345);
  const std::string text = big.text();
  REQUIRE(text.size() > (std::size_t{10} << 20));
  const Dataset ds = libsvm(text);
  const Csr ref = brute_force_libsvm(text);
  require_brute_force_rows(ds, ref);
  REQUIRE(ds.classes == std::vector<std::string>{"-1", "1"});

  // The same bytes read from a file (memory-mapped) give the same arrays.
  TempDir dir;
  write_text(dir.file("big.svm"), text);
  require_same_data(pegasos::read_dataset(dir.file("big.svm"), {}), ds);
}

// About `min_bytes` of LIBSVM lines whose every value is stored: no zeros, no
// qid, no comments, so the counted bounds are exact; values with leading
// zeros, signs, exponents and short and long decimals.
std::string clean_libsvm_text(std::uint64_t seed, std::size_t min_bytes) {
  pegasos::Rng rng(seed);
  static const char* const kValues[] = {"1", "0.5", "007", "00.25", "+3", "-2.5", "1e-3", "-7E+2", "+.5",
                                        "0.000001", "123456789", "3.14159265358979", "-0.1"};
  std::string text;
  while (text.size() < min_bytes) {
    text += rng.below(2) ? "+1" : "-1";
    std::uint64_t index = 0;
    for (std::uint64_t k = rng.below(30); k > 0; --k) {
      index += 1 + rng.below(50);
      text += rng.below(9) == 0 ? "\t" : " ";
      if (rng.below(20) == 0) text += "0";  // a leading zero in the index
      text += std::to_string(index) + ":" + kValues[rng.below(std::size(kValues))];
    }
    text += rng.below(15) == 0 ? "\r\n" : "\n";
  }
  return text;
}

TEST_CASE("libsvm: rows parsed in place equal a brute-force parse wherever the bounds leave gaps", "[io]") {
  // Over 8 MB: several 4 MB chunks. Zeros, qid tokens and comments holding
  // colons make a chunk's counted room larger than its rows, so later chunks
  // slide down; clean text leaves no gap at all. The last text ends without
  // a newline.
  const std::string dirty = make_big_text(31, std::size_t{1} << 20).text();
  const std::string clean = clean_libsvm_text(32, std::size_t{9} << 20);
  for (const std::string& text : {clean, dirty + clean, clean + dirty, dirty + clean + dirty + clean.substr(0, clean.find('\n', 77))}) {
    const Dataset ds = libsvm_both(text);  // the general parser gives the same data
    const Csr ref = brute_force_libsvm(text);
    require_brute_force_rows(ds, ref);
  }
}

// Every row as row() hands it out, against a reference CSR.
void require_rows_as_views(const Dataset& ds, const Csr& ref) {
  REQUIRE(ds.size() + 1 == ref.row_ptr.size());
  for (std::size_t i = 0; i < ds.size(); ++i) {
    const pegasos::RowView x = ds.row(i);
    REQUIRE(x.nnz == ref.row_ptr[i + 1] - ref.row_ptr[i]);
    for (std::uint32_t j = 0; j < x.nnz; ++j) {
      REQUIRE(x.indices[j] == ref.indices[ref.row_ptr[i] + j]);
      REQUIRE(std::bit_cast<std::uint32_t>(x.values[j]) == std::bit_cast<std::uint32_t>(ref.values[ref.row_ptr[i] + j]));
    }
  }
}

// Indicator text as a9a: "LABEL IDX:1 IDX:1 ...", over `min_bytes`.
std::string indicator_text(std::uint64_t seed, std::size_t min_bytes, const char* separator = " ") {
  pegasos::Rng rng(seed);
  std::string text;
  while (text.size() < min_bytes) {
    text += rng.below(2) ? "+1" : "-1";
    std::uint64_t index = 0;
    for (std::uint64_t k = rng.below(20); k > 0; --k) {
      index += 1 + rng.below(rng.below(10) == 0 ? 5000 : 12);
      text += separator + std::to_string(index) + ":1";
    }
    text += rng.below(3) == 0 ? " \n" : "\n";
  }
  return text;
}

TEST_CASE("libsvm: indicator data (every value 1) stores no values and reads the same rows", "[io]") {
  // Over 8 MB (several chunks; 16 mappings of the ones' memory file or
  // more), short texts, a tab or CR after the values, the last value at the
  // very end of the text: the values are the ones of a brute-force parse,
  // through values[] and through row(), by both parsers.
  std::vector<std::string> texts = {indicator_text(3, std::size_t{9} << 20), indicator_text(4, 5000, "\t"),
                                    "1 1:1 3:1\r\n-1 2:1\r\n", "1 1:1\n-1 4:1 7:1", "1 1:1 qid:1 2:1\n-1 2:1\n",
                                    "1 1:1\n-1\n\n1 5:1 # c\n"};
  for (const std::string& text : texts) {
    INFO(text.substr(0, 60));
    const Dataset ds = libsvm_both(text);  // the general parser gives the same data
    CHECK(ds.has_unit_values());
    const Csr ref = brute_force_libsvm(text);
    require_brute_force_rows(ds, ref);
    require_rows_as_views(ds, ref);
  }
  // Any other value anywhere (also 1 spelled otherwise, a 1 in a comment's
  // pair, an explicit zero): the values are stored as usual.
  const std::string big = indicator_text(5, std::size_t{9} << 20);
  for (const std::string& text : std::vector<std::string>{big + "1 3:2\n", "1 1:1 2:1.0\n", "1 1:10\n", "1 1:1 # a:2\n", "1 1:1 2:0\n",
                                   "1 1:01\n", "-1 2:+1\n" + big}) {
    INFO(text.substr(0, 60));
    const Dataset ds = libsvm(text);
    CHECK_FALSE(ds.has_unit_values());
    require_brute_force_rows(ds, brute_force_libsvm(text));
  }
}

TEST_CASE("libsvm: changing or copying unit values copies them out first", "[io]") {
  const std::string text = indicator_text(6, std::size_t{5} << 20);
  const Csr ref = brute_force_libsvm(text);
  Dataset ds = libsvm(text);
  REQUIRE(ds.has_unit_values());
  const Dataset copy = ds;  // an owning copy: rows read at their own offsets
  CHECK_FALSE(copy.has_unit_values());
  require_rows_as_views(copy, ref);
  // A change (here through own(), as normalize_rows and the sample-weight
  // filter do): every row still reads its own values, the changed one too.
  std::vector<float>& values = ds.values.own();
  CHECK_FALSE(ds.has_unit_values());
  REQUIRE(values.size() == ref.values.size());
  const std::size_t last = ds.size() - 1;
  REQUIRE(ds.row_ptr[last + 1] > ds.row_ptr[last]);
  values[ds.row_ptr[last]] = 4.0f;
  Csr changed = ref;
  changed.values[ds.row_ptr[last]] = 4.0f;
  require_rows_as_views(ds, changed);
  // normalize_rows on unit values: each row 1/sqrt(nnz), as on stored ones.
  Dataset unit = libsvm(text);
  Dataset stored = unit;
  unit.normalize_rows();
  stored.normalize_rows();
  require_same_data(unit, stored);
}

TEST_CASE("libsvm: text of explicit zeros leaves no unused room in the Dataset", "[io]") {
  // Nine of ten values are zeros: the counted room is ten times the rows'
  // non-zeros; what is not used is given back.
  std::string text;
  while (text.size() < (std::size_t{9} << 20)) text += "1 1:0 2:0 3:0 4:0 5:-0 6:0.0 7:0 8:0 9:0 10:2.5\n-1 3:0 4:1\n";
  const Dataset ds = libsvm(text);
  require_brute_force_rows(ds, brute_force_libsvm(text));
  CHECK(ds.indices.capacity() <= ds.indices.size() + ds.indices.size() / 4 + 4096);
  CHECK(ds.values.capacity() <= ds.values.size() + ds.values.size() / 4 + 4096);
}

TEST_CASE("readers: counting colons and newlines agrees with a byte loop at every length and offset", "[io]") {
  pegasos::Rng rng(5);
  std::string text;
  for (int i = 0; i < 300; ++i) text += ":\nab1 "[rng.below(6)];
  // Stretches of indicator pairs, so that the unit verdict is true for
  // some ranges (at every alignment within the 16-byte steps).
  for (int i = 0; i < 40; ++i) text += rng.below(4) == 0 ? "\t7:1\r" : " 12:1";
  for (int i = 0; i < 100; ++i) text += ":\n1 \x80"[rng.below(5)];
  std::vector<std::size_t> begins;
  for (std::size_t b = 0; b < 40; ++b) begins.push_back(b);
  for (std::size_t b = 300; b < 340; ++b) begins.push_back(b);
  for (const std::size_t begin : begins) {
    for (std::size_t end = begin; end <= text.size(); end += 1 + rng.below(5)) {
      bool unit = true;
      const auto [colons, newlines] =
          pegasos::reader_detail::count_colons_newlines(text.data() + begin, text.data() + end, &unit);
      REQUIRE(colons == static_cast<std::size_t>(std::count(text.begin() + begin, text.begin() + end, ':')));
      REQUIRE(newlines == static_cast<std::size_t>(std::count(text.begin() + begin, text.begin() + end, '\n')));
      // Every ':' followed by "1" and then the end or a byte <= ' ' (signed).
      bool ones = true;
      for (std::size_t q = begin; q < end; ++q) {
        if (text[q] != ':') continue;
        const bool one = q + 1 < end && text[q + 1] == '1' &&
                         (q + 2 == end || static_cast<signed char>(text[q + 2]) <= ' ');
        ones = ones && one;
      }
      REQUIRE(unit == ones);
    }
  }
}

TEST_CASE("libsvm: the one-pass fast path and the general parser agree on every line", "[io]") {
  // Random lines mixing ordinary features with everything the fast path hands
  // over to the general parser: comments, qid, bad indices, odd values.
  const char* labels[] = {"1", "-1", "+1", "1.0", "spam", "ham", "1#c", "-1:2", "\xff"};
  const char* values[] = {"1", "0.25", "-3.5e-2", "0", "-0", ".5", "5.", "+2", "1e-45", "3.4e38",
                          "1e40", "nan", "inf", "", "0x1p3", "2#x", "1.5e", "7e+3"};
  const char* extras[] = {"qid:7", "#", "# tail comment", "x:1", "0:1", "03:2", "4294967294:1",
                          "4294967295:1", "12345678901:1", "1:2:3", ":5", "\t", "\v"};
  pegasos::Rng rng(99);
  for (int trial = 0; trial < 2000; ++trial) {
    std::string text;
    const int lines = 1 + static_cast<int>(rng.below(6));
    for (int l = 0; l < lines; ++l) {
      text += labels[rng.below(rng.uniform() < 0.9 ? 2 : std::size(labels))];
      std::uint64_t index = 0;
      const int features = static_cast<int>(rng.below(8));
      for (int f = 0; f < features; ++f) {
        text += rng.uniform() < 0.3 ? "\t" : " ";
        if (rng.uniform() < 0.12) {
          text += extras[rng.below(std::size(extras))];
          continue;
        }
        index += rng.uniform() < 0.05 ? 0 : 1 + rng.below(40);  // sometimes repeated
        text += std::to_string(index) + ":";
        if (rng.uniform() < 0.5) {  // a random decimal: digits, point, digits (the fast value path and beyond)
          if (rng.uniform() < 0.3) text += "-";
          for (std::uint64_t d = rng.below(9); d > 0; --d) text += static_cast<char>('0' + rng.below(10));
          if (rng.uniform() < 0.8) text += ".";
          for (std::uint64_t d = rng.below(13); d > 0; --d) text += static_cast<char>('0' + rng.below(10));
          if (rng.uniform() < 0.05) text += "e-7";
        } else {
          text += values[rng.below(rng.uniform() < 0.8 ? 4 : std::size(values))];
        }
      }
      if (rng.uniform() < 0.1) text += "\r";
      text += "\n";
    }
    INFO(text);
    for (const bool require_labels : {true, false}) {
      ReadOptions options;
      options.require_labels = require_labels;
      try {
        libsvm_both(text, options);  // the same data or the same error
      } catch (const InputError&) {
      }
    }
  }
  // Values alone, on valid lines: both paths give the correctly rounded float
  // (std::strtof, an independent conversion), exact-decimal shortcut or not.
  std::string text;
  std::vector<float> expected;
  for (int i = 0; i < 50000; ++i) {
    std::string value = rng.uniform() < 0.5 ? "-" : "";
    for (std::uint64_t d = rng.below(9); d > 0; --d) value += static_cast<char>('0' + rng.below(10));
    value += ".";
    for (std::uint64_t d = 1 + rng.below(12); d > 0; --d) value += static_cast<char>('0' + rng.below(10));
    text += "1 1:" + value + "\n";
    expected.push_back(std::strtof(value.c_str(), nullptr));
  }
  ReadOptions general;
  general.libsvm_fast_path = false;
  for (const ReadOptions& options : {ReadOptions{}, general}) {
    const Dataset ds = pegasos::parse_libsvm(text, "v.svm", options);
    REQUIRE(ds.size() == expected.size());
    for (std::size_t i = 0; i < ds.size(); ++i) {
      const float got = ds.row_ptr[i + 1] > ds.row_ptr[i] ? ds.values[ds.row_ptr[i]] : 0.0f;
      INFO("row " << i);
      REQUIRE(std::bit_cast<std::uint32_t>(got) == std::bit_cast<std::uint32_t>(expected[i] == 0.0f ? 0.0f : expected[i]));
    }
  }
}

TEST_CASE("libsvm: pairs read from one 8-byte load agree with the general parser", "[io]") {
  // The fast path reads "IDX:D" + space or newline (at most 5 index digits, a
  // one-digit value) from one load. Indices of 1 to 10 digits (5 and 6 are
  // the edge), leading zeros, every digit as the value (0 is not stored), and
  // every way a pair can end: space, tab, CR, newline, or the end of the text
  // within the 8 bytes (the last line has no newline half the time).
  pegasos::Rng rng(2024);
  const char* ends[] = {" ", " ", " ", "  ", "\t", "\r", ".5 ", "0 ", "e1 ", "#"};
  for (int trial = 0; trial < 3000; ++trial) {
    std::string text;
    const int lines = 1 + static_cast<int>(rng.below(4));
    for (int l = 0; l < lines; ++l) {
      text += rng.uniform() < 0.5 ? "+1" : "-1";
      std::uint64_t index = 0;
      const int features = static_cast<int>(rng.below(7));
      for (int f = 0; f < features; ++f) {
        text += " ";
        const int digits = 1 + static_cast<int>(rng.below(rng.uniform() < 0.05 ? 10 : 8));
        std::uint64_t step = 1;
        for (int d = 1; d < digits; ++d) step *= 10;
        index = std::max(index + 1, step + rng.below(step));  // increasing, with about `digits` digits
        if (rng.uniform() < 0.1) text += "00";  // leading zeros: more digits for the same index
        text += std::to_string(index) + ":" + static_cast<char>('0' + rng.below(10));
        if (rng.uniform() < 0.15) text += ends[rng.below(std::size(ends))];
      }
      if (l + 1 < lines || rng.uniform() < 0.5) text += rng.uniform() < 0.3 ? " \n" : "\n";
    }
    INFO(text);
    try {
      libsvm_both(text);  // the same data or the same error
    } catch (const InputError&) {
    }
  }
}

TEST_CASE("libsvm: errors in late chunks report the absolute line number", "[io]") {
  BigText big = make_big_text(77, std::size_t{10} << 20 | 999);
  TempDir dir;
  const std::size_t n = big.lines.size();
  // First line starting beyond 6 MB (second chunk) and one near the end (last chunk).
  std::size_t middle = 0;
  for (std::size_t o = 0; middle < n; ++middle) {
    if (o > (std::size_t{6} << 20)) break;
    o += big.lines[middle].size() + big.terminators[middle].size();
  }
  const std::size_t late = n - 3;
  REQUIRE(big.offset(late) > (std::size_t{8} << 20));

  SECTION("one error on a late line") {
    big.lines[late] = "-1 5:1 3:1";
    write_text(dir.file("big.svm"), big.text());
    CHECK_THROWS_WITH(pegasos::read_dataset(dir.file("big.svm"), {}),
                      Contains(dir.file("big.svm") + ":" + std::to_string(late + 1) + ":8:") &&
                          Contains("smaller than the previous index 5"));
  }
  SECTION("two errors in different chunks: the first one is reported") {
    big.lines[late] = "1 0:1";
    big.lines[middle] = "1 1:1 2:nan";
    CHECK_THROWS_WITH(libsvm(big.text()),
                      Contains("t.svm:" + std::to_string(middle + 1) + ":9:") && Contains("NaN"));
  }
}

TEST_CASE("read_dataset: normalize_rows scales every row to unit L2 norm", "[io]") {
  TempDir dir;
  const std::string text = "1 1:3 2:4\n-1 5:-2\n1\n-1 1:1 2:1 3:1 4:1\n1 7:0\n";
  write_text(dir.file("n.svm"), text);
  ReadOptions opt;
  opt.normalize_rows = true;
  const Dataset ds = pegasos::read_dataset(dir.file("n.svm"), opt);
  const Dataset raw = libsvm(text);
  CHECK(ds.row_ptr == raw.row_ptr);
  CHECK(ds.indices == raw.indices);
  CHECK(ds.dimension == raw.dimension);
  CHECK(ds.values == std::vector<float>{0.6f, 0.8f, -1.0f, 0.5f, 0.5f, 0.5f, 0.5f});  // empty rows stay empty
}

// ===========================================================================
// CSV

TEST_CASE("csv: header detection and label column by index, from the end, or by name", "[io]") {
  // Every layout below holds the same two rows: (label 1: 0.5, 0) and (label -1: 0, 2.5).
  const Dataset expected = libsvm("1 1:0.5 2:0\n-1 2:2.5\n");
  ReadOptions last;
  last.label_column = -1;
  ReadOptions by_name;
  by_name.label_column_name = "y";
  ReadOptions middle;
  middle.label_column = 1;

  require_same_data(csv("label,f1,f2\n1,0.5,0\n-1,0,2.5\n"), expected);
  require_same_data(csv("1,0.5,0\n-1,0,2.5\n"), expected);            // no header
  require_same_data(csv("f1,f2,label\n0.5,0,1\n0,2.5,-1\n", last), expected);
  require_same_data(csv("0.5,0,1\n0,2.5,-1\n", last), expected);
  require_same_data(csv("f1,y,f2\n0.5,1,0\n0,-1,2.5\n", by_name), expected);
  require_same_data(csv("0.5,+1,0\n0,-1.0,2.5\n", middle), expected);
  require_same_data(csv("\"y\",\"f1\",\"f2\"\n\"1\",0.5,0\n-1,0,2.5\n"), expected);  // quoted fields
  require_same_data(csv("\xEF\xBB\xBF" "y,f1,f2\r\n1,0.5,0\r\n\r\n-1, 0 ,2.5\r\n", by_name), expected);
  require_same_data(csv("\n\ny,f1,f2\n1,0.5,0\n-1,0,2.5\n"), expected);  // leading blank lines
  // Dimension is the number of feature columns, even when the last is all zero.
  const Dataset zeros = csv("y,a,b,c\nham,1,0,0\nspam,0,2,0\n");
  CHECK(zeros.dimension == 3);
  CHECK(zeros.classes == std::vector<std::string>{"ham", "spam"});
  CHECK(zeros.labels == std::vector<int>{0, 1});
}

TEST_CASE("csv read for a model: its feature columns by name and count, unlabelled rows, wrong columns refused", "[io]") {
  // A model trained on "label,a,b,c": the same rows in every accepted layout.
  ReadOptions model;
  model.model_feature_names = {"a", "b", "c"};
  model.model_features = 3;
  ReadOptions predict = model;
  predict.require_labels = false;
  const Dataset expected = csv("label,a,b,c\n1,1,0,2\n-1,0,3,0\n");
  REQUIRE(expected.csv_features == 3);
  require_same_data(csv("label,a,b,c\n1,1,0,2\n-1,0,3,0\n", model), expected);
  require_same_data(csv("1,1,0,2\n-1,0,3,0\n", model), expected);  // no header: the count
  // Exactly the model's features and no label column: unlabelled rows for
  // predict, by header or by count; eval (labels required) refuses them.
  for (const std::string& text : {std::string("a,b,c\n1,0,2\n0,3,0\n"), std::string("1,0,2\n0,3,0\n")}) {
    CAPTURE(text);
    const Dataset u = csv(text, predict);
    CHECK(u.labels == std::vector<int>{-1, -1});
    CHECK(u.row_ptr == expected.row_ptr);
    CHECK(u.indices == expected.indices);
    CHECK(u.values == expected.values);
    CHECK(u.dimension == 3);
    CHECK_THROWS_WITH(csv(text, model), Contains("t.csv:1:") && Contains("no label column"));
  }
  ReadOptions by_name = predict;
  by_name.label_column_name = "y";
  CHECK(csv("a,b,c\n1,0,2\n", by_name).labels == std::vector<int>{-1});
  // Columns that would be read silently as other features are refused,
  // naming the column.
  CHECK_THROWS_WITH(csv("label,b,a,c\n1,0,1,2\n", predict), Contains("t.csv:1:") && Contains("another order") &&
                                                                   Contains("'b' here and 'a' in the model"));
  CHECK_THROWS_WITH(csv("label,a,b,c,d\n1,1,0,2,5\n", predict), Contains("column 'd' is not one of the model's features"));
  CHECK_THROWS_WITH(csv("label,a,b\n1,1,0\n", predict), Contains("feature column 'c' is not in the header"));
  CHECK_THROWS_WITH(csv("label,a,a,b,c\n1,1,1,0,2\n", predict),
                    Contains("t.csv:1: column name 'a' appears twice in the header (columns 2 and 3)"));
  CHECK_THROWS_WITH(csv("label,a,b,a\n1,1,0,2\n"), Contains("column name 'a' appears twice"));  // training data too
  CHECK_THROWS_WITH(csv("1,1,0,2,5\n", predict), Contains("t.csv:1: 4 feature columns, but the model was trained on 3 (a, b, c)"));
  CHECK_THROWS_WITH(csv("1,1\n", predict), Contains("1 feature column, but"));
  // A model trained without a header checks the count only.
  ReadOptions count_only = predict;
  count_only.model_feature_names.clear();
  CHECK(csv("x,y,z,w\n1,1,0,2\n", count_only).size() == 1);
  CHECK_THROWS_WITH(csv("1,1,0,2,5\n", count_only), Contains("4 feature columns, but the model was trained on 3") &&
                                                         !Contains("("));
}

TEST_CASE("csv: explicit '+' signs and exponents in values, also on the first row", "[io]") {
  const Dataset expected = libsvm("1 1:0.5 2:0\n-1 2:2.5\n");
  // A first row of signed numbers is data, not a header.
  require_same_data(csv("+1,+0.5,+0\n-1,-0,+2.5\n"), expected);
  require_same_data(csv("+1,+5e-1,0\n-1,0E+0,+25E-1\n"), expected);
  require_same_data(csv("y,a,b\n+1,+.5,0\n-1,0,+2.5\n"), expected);
  const std::string bad[] = {"1,+,2\n", "1,++2,2\n", "1,+-2,2\n", "1,2,+2x\n", "1,2,+nan\n"};
  for (const std::string& row : bad) {
    CAPTURE(row);
    CHECK_THROWS_WITH(csv("y,a,b\n1,1,1\n" + row), Contains("t.csv:3:"));
  }
}

TEST_CASE("csv: values with spaces, quotes, signs, exponents and long digits read as strtof reads them", "[io]") {
  // Label first; every value field is one of the forms below, padded or
  // quoted at random; the expected floats come from std::strtof.
  pegasos::Rng rng(11);
  static const char* const kForms[] = {"0", "1", "-1", "+2", "0.5", "-0.25", "007", "1e-3", "-7E+2", "+.5", "3.",
                                       ".5", "-0", "0.000001", "16777217", "123456789012", "3.14159265358979"};
  std::string text;
  std::vector<std::vector<float>> expected;
  for (int row = 0; row < 3000; ++row) {
    text += rng.below(2) ? "1" : "-1";
    std::vector<float> dense;
    for (int f = 0; f < 6; ++f) {
      const std::string value = kForms[rng.below(std::size(kForms))];
      dense.push_back(std::strtof(value.c_str(), nullptr));
      const auto style = rng.below(6);
      text += ",";
      text += style == 0 ? " " + value : style == 1 ? value + " " : style == 2 ? "\"" + value + "\"" : value;
    }
    expected.push_back(dense);
    text += rng.below(10) == 0 ? "\r\n" : "\n";
  }
  const Dataset ds = csv(text);
  REQUIRE(ds.size() == expected.size());
  for (std::size_t i = 0; i < ds.size(); ++i) {
    std::vector<float> dense(6, 0.0f);
    for (std::uint64_t e = ds.row_ptr[i]; e < ds.row_ptr[i + 1]; ++e) dense[ds.indices[e]] = ds.values[e];
    INFO("row " << i);
    for (std::size_t f = 0; f < 6; ++f) {
      const float want = expected[i][f] == 0.0f ? 0.0f : expected[i][f];
      REQUIRE(std::bit_cast<std::uint32_t>(dense[f]) == std::bit_cast<std::uint32_t>(want));
    }
  }
}

TEST_CASE("csv: tab and semicolon delimiters", "[io]") {
  const Dataset expected = libsvm("spam 1:0.5 3:-1\nham 2:2.5\n");
  require_same_data(csv("label\tf1\tf2\tf3\nspam\t0.5\t0\t-1\nham\t0\t2.5\t0\n"), expected);
  require_same_data(csv("label;f1;f2;f3\nspam;0.5;0;-1\nham;0;2.5;0\n"), expected);
  require_same_data(csv("spam;0.5;0;-1\nham;0;2.5;0\n"), expected);
}

TEST_CASE("csv: malformed rows name file:line:column", "[io]") {
  struct Case {
    std::string text, where, what;
  };
  const Case c = GENERATE(values<Case>({
      {"1,2,3\n1,2\n", "t.csv:2:4:", "expected 3 fields, found 2"},
      {"y,a,b\n1,2,3\n-1,2\n", "t.csv:3:5:", "expected 3 fields, found 2"},
      {"1,2,3\n1,2,3,4\n", "t.csv:2:7:", "too many fields: expected 3"},
      {"1,2,3\n1,,3\n", "t.csv:2:3:", "empty field 2"},
      {"1,2,3\n-1,2,\n", "t.csv:2:6:", "empty field 3"},
      {"1,2,3\n,2,3\n", "t.csv:2:1:", "missing label"},
      {"1,2,3\n1,x,3\n", "t.csv:2:3:", "value 'x' is not a number"},
      {"y,a,b\n1,2,3\n1,2,nan\n", "t.csv:3:5:", "NaN"},
      {"y;a;b\n1;2;3\n1;2;1e999\n", "t.csv:3:5:", "out of range"},
      {"\n\ny\ta\n1\t2\n\n-1\tx\n", "t.csv:6:4:", "'x' is not a number"},
      {"y,a,b\r\n1,2,3\r\n1,2,3,4\r\n", "t.csv:3:7:", "too many fields"},
  }));
  CAPTURE(c.text);
  CHECK_THROWS_AS(csv(c.text), InputError);
  CHECK_THROWS_WITH(csv(c.text), Contains(c.where) && Contains(c.what));
}

TEST_CASE("csv: labels in a named column other than the one read: the error says which to set", "[io]") {
  CHECK_THROWS_WITH(csv("a,b,Class\n1,2,x\n3,4,y\n"),
                    Contains("t.csv:2:5: value 'x' is not a number") &&
                        Contains("the labels are read from column 0, 'a'; for the header's 'Class': --set label_column=Class"));
  // No such name in the header, or no header: the plain error.
  CHECK_THROWS_WITH(csv("a,b,c\n1,2,x\n"), !Contains("label_column"));
  CHECK_THROWS_WITH(csv("1,2,3\n1,x,3\n"), !Contains("label_column"));
  // Named, it reads.
  ReadOptions by_name;
  by_name.label_column_name = "Class";
  const Dataset d = csv("a,b,Class\n1,2,x\n3,4,y\n", by_name);
  CHECK(d.size() == 2);
  CHECK(d.classes.size() == 2);
}

TEST_CASE("csv: layout errors", "[io]") {
  ReadOptions by_name;
  by_name.label_column_name = "label";
  CHECK_THROWS_WITH(csv("y,a,b\n1,2,3\n", by_name), Contains("t.csv:1:") && Contains("no column named 'label'"));
  ReadOptions far;
  far.label_column = 3;
  CHECK_THROWS_WITH(csv("1,2,3\n", far), Contains("t.csv:1:") && Contains("label_column 3 is outside the 3 fields"));
  far.label_column = -4;
  CHECK_THROWS_WITH(csv("1,2,3\n", far), Contains("outside the 3 fields"));
  CHECK_THROWS_WITH(csv("\n\n1\n2\n"), Contains("t.csv:3:") && Contains("at least one feature"));
  CHECK_THROWS_WITH(csv(""), Contains("t.csv") && Contains("no examples"));
  CHECK_THROWS_WITH(csv("y,a,b\n"), Contains("t.csv") && Contains("no examples"));
  CHECK_THROWS_WITH(csv(std::string("1,2\0,3\n", 7)), Contains("t.csv") && Contains("binary data"));
}

// A file's pages are dropped from the process as its chunks are read
// (ReadOptions::text_is_file_mapping): what is read back must be what a
// parse of the same bytes in memory gives, for mapped LIBSVM and CSV files of
// several 4 MB chunks (each page read twice: counted, then parsed), with the
// CSV header's names kept, an error in the last chunk at its line; and
// gunzipped text, which lives in ordinary memory, must never be dropped (its
// pages would read back as zeros).
TEST_CASE("read_dataset: files of many chunks read the same with their pages dropped as they are read", "[io]") {
  TempDir dir;
  const std::string svm = clean_libsvm_text(91, std::size_t{13} << 20);
  const Dataset from_memory = libsvm(svm);
  write_text(dir.file("big.svm"), svm);
  require_same_data(pegasos::read_dataset(dir.file("big.svm"), {}), from_memory);
  write_gzip(dir.file("big.svm.gz"), svm);
  require_same_data(pegasos::read_dataset(dir.file("big.svm.gz"), {}), from_memory);

  pegasos::Rng rng(92);
  std::string table = "label,alpha,beta,gamma\n";
  std::size_t lines = 1;
  while (table.size() < (std::size_t{9} << 20)) {
    table += (rng.below(2) ? "1," : "-1,") + std::to_string(rng.below(1000)) + "." + std::to_string(rng.below(100)) +
             ",0," + std::to_string(rng.below(7)) + "\n";
    ++lines;
  }
  write_text(dir.file("big.csv"), table);
  const Dataset read = pegasos::read_dataset(dir.file("big.csv"), {});
  const Dataset parsed = csv(table);
  require_same_data(read, parsed);
  CHECK(read.feature_names == std::vector<std::string>{"alpha", "beta", "gamma"});
  CHECK(read.size() == lines - 1);
  write_text(dir.file("bad.csv"), table + "1,2,x,3\n");
  CHECK_THROWS_WITH(pegasos::read_dataset(dir.file("bad.csv"), {}),
                    Contains(dir.file("bad.csv") + ":" + std::to_string(lines + 1) + ":"));
}

// ===========================================================================
// Dataset::remap_classes

TEST_CASE("Dataset::remap_classes re-expresses labels and reports unknown ones", "[io]") {
  ReadOptions opt;
  opt.require_labels = false;
  Dataset ds = libsvm("a 1:1\nb 1:1\nc 1:1\nb 1:1\n2:1\n", opt);
  REQUIRE(ds.classes == std::vector<std::string>{"a", "b", "c"});
  REQUIRE(ds.labels == std::vector<int>{0, 1, 2, 1, -1});

  SECTION("target with a subset in another order") {
    const auto unknown = ds.remap_classes({"c", "x", "a"});
    CHECK(unknown == std::vector<std::string>{"b"});
    CHECK(ds.classes == std::vector<std::string>{"c", "x", "a"});
    CHECK(ds.labels == std::vector<int>{2, -1, 0, -1, -1});
  }
  SECTION("a permutation keeps every row") {
    const auto unknown = ds.remap_classes({"b", "c", "a"});
    CHECK(unknown.empty());
    CHECK(ds.labels == std::vector<int>{2, 0, 1, 0, -1});
    CHECK(row_labels(ds) == std::vector<std::string>{"a", "b", "c", "b", ""});
  }
}

// ===========================================================================
// Model files

TEST_CASE("model: save -> load is exact", "[io]") {
  struct Case {
    std::size_t classes;
    std::uint32_t dimension;
    std::vector<double> density;
    std::vector<bool> dense;  // expected storage form per output
  };
  const Case c = GENERATE(values<Case>({
      {2, 50, {1.0}, {true}},
      {2, 400, {0.05}, {false}},
      {2, 7, {0.0}, {false}},  // all-zero weights
      {3, 60, {1.0, 0.1, 0.0}, {true, false, false}},
      {3, 500, {0.9, 0.7, 0.02}, {true, true, false}},
  }));
  CAPTURE(c.classes, c.dimension);
  const Model m = make_model(c.classes, c.dimension, c.density, 1234 + c.dimension);
  const std::string text = pegasos::model_to_json(m);
  const json j = json::parse(text);
  REQUIRE(j["weights"].size() == c.dense.size());
  for (std::size_t k = 0; k < c.dense.size(); ++k) {
    CAPTURE(k);
    CHECK(j["weights"][k].is_array() == c.dense[k]);
    CHECK(j["weights"][k].is_object() == !c.dense[k]);
  }
  CHECK(j["format_version"] == pegasos::kModelFormatVersion);

  TempDir dir;
  const std::string path = dir.file("model.json");
  pegasos::save_model(m, path);
  CHECK(read_text(path) == text);
  const Model back = pegasos::load_model(path);
  require_same_model(back, m);
  // And once more: the re-serialised model is byte-identical.
  CHECK(pegasos::model_to_json(back) == text);
}

TEST_CASE("model: weights are written as the shortest text that reads back to the same double", "[io]") {
  // Extremes of the double range, values with no short decimal form, and
  // both storage forms (dense: all non-zero; sparse: mostly zero).
  const std::vector<double> odd{4.9406564584124654e-324, 1.7976931348623157e308, -1e-300, 0.1,
                                1.0 / 3.0, -2.5e-8, 123456789.0, -7.0};
  for (const bool sparse : {false, true}) {
    CAPTURE(sparse);
    Model m;
    m.classes = {"-1", "1"};
    m.outputs = 1;
    m.bias = {-1.0 / 7.0};
    for (double w : odd) {
      m.weights.push_back(w);
      if (sparse) m.weights.insert(m.weights.end(), 3, 0.0);
    }
    m.dimension = static_cast<std::uint32_t>(m.weights.size());
    const std::string text = pegasos::model_to_json(m);
    const json j = json::parse(text);  // valid JSON
    CHECK(j["weights"][0].is_object() == sparse);
    const Model back = pegasos::model_from_json(text, "m.json");
    REQUIRE(back.weights.size() == m.weights.size());
    CHECK(bits(back.weights) == bits(m.weights));
    CHECK(bits(back.bias) == bits(m.bias));
    CHECK(pegasos::model_to_json(back) == text);
  }
}

TEST_CASE("model: scores and predictions", "[io]") {
  Model m = make_model(3, 4, {1.0, 1.0, 1.0}, 5);
  m.weights = {1, 0, 0,  //
               0, 1, 0,  //
               0, 0, 1,  //
               1, 1, 1};
  m.bias = {0.0, 0.5, -0.5};
  const std::vector<std::uint32_t> idx{0, 2, 3, 10};  // 10 is beyond the dimension: ignored
  const std::vector<float> val{2.0f, 3.0f, 1.0f, 100.0f};
  pegasos::RowView row{val.data(), idx.data(), 4, -1, 0};
  double s[3];
  m.scores(row, s);
  CHECK(s[0] == 3.0);
  CHECK(s[1] == 1.5);
  CHECK(s[2] == 3.5);
  CHECK(m.predict_class(s) == 2);

  Model b = make_model(2, 3, {1.0}, 6);
  b.weights = {1.0, -2.0, 0.5};
  b.bias = {-1.0};
  b.scores(row, s);  // 2*1 + 3*0.5 - 1; index 3 and 10 are beyond dimension 3
  CHECK(s[0] == 2.5);
  CHECK(b.predict_class(s) == 1);
  const double zero = 0.0;
  CHECK(b.predict_class(&zero) == 0);  // positive only when the score is > 0
}

TEST_CASE("model: malformed model files are rejected naming the file and field", "[io]") {
  const json base = small_model_json();
  REQUIRE_NOTHROW(from(base));
  const std::string text = base.dump();
  REQUIRE(text.find("12345.5") != std::string::npos);

  auto with = [&](const std::function<void(json&)>& change) {
    json j = base;
    change(j);
    return j;
  };
  auto err = [](const std::string& a, const std::string& b) { return ContainsAll({"m.json", a, b}); };

  SECTION("not JSON / not an object") {
    CHECK_THROWS_WITH(pegasos::model_from_json("this is not json {", "m.json"), err("not a valid model file", ""));
    CHECK_THROWS_WITH(pegasos::model_from_json(text.substr(0, text.size() / 2), "m.json"), err("not a valid model file", ""));
    CHECK_THROWS_WITH(pegasos::model_from_json("", "m.json"), err("not a valid model file", ""));
    CHECK_THROWS_WITH(pegasos::model_from_json("[1, 2]", "m.json"), err("JSON object", ""));
  }
  SECTION("missing fields") {
    for (const char* field : {"format_version", "kind", "classes", "dimension", "outputs", "bias", "weights", "bias_mode"}) {
      CAPTURE(field);
      CHECK_THROWS_WITH(from(with([&](json& j) { j.erase(field); })), err(std::string("/") + field, "missing field"));
    }
  }
  SECTION("wrong types") {
    CHECK_THROWS_WITH(from(with([](json& j) { j["classes"] = 5; })), err("wrong type", ""));
    CHECK_THROWS_WITH(from(with([](json& j) { j["objective"] = json::array(); })), err("wrong type", ""));
    CHECK_THROWS_WITH(from(with([](json& j) { j["dimension"] = "4"; })), err("/dimension", "32-bit integer"));
    CHECK_THROWS_WITH(from(with([](json& j) { j["dimension"] = -4; })), err("/dimension", "32-bit integer"));
    CHECK_THROWS_WITH(from(with([](json& j) { j["outputs"] = 1.5; })), err("/outputs", "positive integer"));
    CHECK_THROWS_WITH(from(with([](json& j) { j["format_version"] = "1"; })), err("/format_version", "integer"));
    CHECK_THROWS_WITH(from(with([](json& j) { j["bias"][0] = "x"; })), err("/bias/0", "expected a number, found string"));
    CHECK_THROWS_WITH(from(with([](json& j) { j["bias"] = 0.5; })), err("/bias", "array of 1"));
    CHECK_THROWS_WITH(from(with([](json& j) { j["weights"][0] = "abc"; })), err("/weights/0", "expected an array"));
    CHECK_THROWS_WITH(from(with([](json& j) { j["weights"][0][2] = true; })), err("/weights/0/2", "found boolean"));
    CHECK_THROWS_WITH(from(with([](json& j) { j["kind"] = "tree"; })), err("/kind", "unsupported"));
  }
  SECTION("versions") {
    CHECK_THROWS_WITH(from(with([](json& j) { j["format_version"] = pegasos::kModelFormatVersionMax + 1; })),
                      err("/format_version", "newer"));
    CHECK_THROWS_WITH(from(with([](json& j) { j["format_version"] = 0; })), err("/format_version", "invalid"));
  }
  SECTION("shapes") {
    CHECK_THROWS_WITH(from(with([](json& j) { j["weights"][0].erase(3); })), err("/weights/0", "has 3 entries, dimension is 4"));
    CHECK_THROWS_WITH(from(with([](json& j) { j["weights"][0].push_back(1.0); })), err("/weights/0", "has 5 entries"));
    CHECK_THROWS_WITH(from(with([](json& j) {
                        const json first = j["weights"][0];
                        j["weights"].push_back(first);
                      })),
                      err("/weights", "1 weight vectors"));
    CHECK_THROWS_WITH(from(with([](json& j) { j["outputs"] = 3; })), err("/outputs", "do not match"));
    CHECK_THROWS_WITH(from(with([](json& j) { j["classes"] = {"a"}; })), err("/classes", "at least two"));
    // A two-class objective with more classes (and as many outputs) is not scored as one-vs-all.
    CHECK_THROWS_WITH(from(with([](json& j) {
                        j["classes"] = {"a", "b", "c"};
                        j["outputs"] = 3;
                      })),
                      err("/classes", "objective hinge has two classes, found 3"));
    CHECK_THROWS_WITH(from(with([](json& j) { j["objective"] = "foo"; })), err("/objective", "not the objective of a linear model"));
    CHECK_THROWS_WITH(from(with([](json& j) { j["objective"] = "kernel_hinge"; })), err("/objective", "linear model"));
  }
  SECTION("non-finite values") {
    CHECK_THROWS_WITH(from(with([](json& j) { j["weights"][0][1] = "NaN"; })), err("/weights/0/1", "found string"));
    CHECK_THROWS_WITH(from(with([](json& j) { j["weights"][0][1] = nullptr; })), err("/weights/0/1", "found null"));
    // JSON has no NaN/inf literal; 1e999 overflows a double.
    const std::string huge = replace_all(text, "12345.5", "1e999");
    CHECK_THROWS_AS(pegasos::model_from_json(huge, "m.json"), InputError);
    CHECK_THROWS_WITH(pegasos::model_from_json(huge, "m.json"), Contains("m.json"));
    const std::string huge_bias = replace_all(text, "0.75", "-1e400");
    CHECK_THROWS_AS(pegasos::model_from_json(huge_bias, "m.json"), InputError);
    CHECK_THROWS_AS(pegasos::model_from_json(replace_all(text, "12345.5", "NaN"), "m.json"), InputError);
  }
  SECTION("sparse weights") {
    auto sparse = [&](json idx, json val) {
      return with([&](json& j) {
        json w = json::object();
        w["indices"] = idx;
        w["values"] = val;
        j["weights"][0] = w;
      });
    };
    const Model ok = from(sparse({1, 4}, {2.0, -3.0}));
    CHECK(ok.weights == std::vector<double>{2.0, 0.0, 0.0, -3.0});
    CHECK_THROWS_WITH(from(sparse({3, 2}, {1.0, 1.0})), err("/weights/0/indices/1", "out of order"));
    CHECK_THROWS_WITH(from(sparse({2, 2}, {1.0, 1.0})), err("/weights/0/indices/1", "out of order"));
    CHECK_THROWS_WITH(from(sparse({0}, {1.0})), err("/weights/0/indices/0", "outside 1..4"));
    CHECK_THROWS_WITH(from(sparse({5}, {1.0})), err("/weights/0/indices/0", "outside 1..4"));
    CHECK_THROWS_WITH(from(sparse({-1}, {1.0})), err("/weights/0/indices/0", "positive integer"));
    CHECK_THROWS_WITH(from(sparse({1, 2}, {1.0})), err("/weights/0", "equal length"));
    CHECK_THROWS_WITH(from(sparse({1}, {"NaN"})), err("/weights/0/values/0", "found string"));
    CHECK_THROWS_WITH(from(with([](json& j) { j["weights"][0] = {{"indices", {1}}}; })), err("values", "missing field"));
  }
}

TEST_CASE("model: a model with non-finite weights or bias is refused by model_to_json", "[io]") {
  const double bad = GENERATE(std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                              -std::numeric_limits<double>::infinity());
  CAPTURE(bad);
  for (bool dense : {true, false}) {
    Model m = make_model(3, 20, {dense ? 1.0 : 0.1, 1.0, 0.0}, 3);
    m.weights[7 * 3 + 0] = bad;
    CHECK_THROWS_AS(pegasos::model_to_json(m), std::logic_error);
    CHECK_THROWS_WITH(pegasos::model_to_json(m), Contains("feature 8"));
  }
  Model m = make_model(2, 5, {1.0}, 4);
  m.bias[0] = bad;
  CHECK_THROWS_AS(pegasos::model_to_json(m), std::logic_error);
  TempDir dir;
  CHECK_THROWS(pegasos::save_model(m, dir.file("m.json")));
  CHECK(dir.entries().empty());  // nothing written, not even a temp file
}

// ===========================================================================
// write_output

TEST_CASE("write_output replaces content and leaves no temporary files", "[io]") {
  TempDir dir;
  const std::string path = dir.file("out.txt");
  pegasos::write_output(path, "first version, longer than the second\n");
  CHECK(read_text(path) == "first version, longer than the second\n");
  pegasos::write_output(path, "second");
  CHECK(read_text(path) == "second");
  std::string big(3 << 20, 'x');
  for (std::size_t i = 0; i < big.size(); i += 4099) big[i] = static_cast<char>('a' + i % 26);
  pegasos::write_output(path, big);
  CHECK(read_text(path) == big);
  pegasos::write_output(path, "");
  CHECK(read_text(path).empty());
  CHECK(dir.entries() == std::vector<std::string>{"out.txt"});
  struct stat st{};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0644);

  SECTION("an unwritable target is an error naming it, and leaves nothing behind") {
    const std::string missing_dir = dir.file("no/such/dir/out.txt");
    CHECK_THROWS_WITH(pegasos::write_output(missing_dir, "x"), Contains(missing_dir));
    fs::create_directory(dir.file("target"));
    CHECK_THROWS_AS(pegasos::write_output(dir.file("target"), "x"), InputError);
    CHECK(dir.entries() == std::vector<std::string>{"out.txt", "target"});
    CHECK(fs::is_empty(dir.file("target")));
  }
}
