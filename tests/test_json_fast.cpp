// The fast model-file reader (core/json_fast.hpp) against nlohmann's parser,
// the reference: on valid JSON the same value (types included: unsigned,
// integer and float numbers, bit for bit), never a value where nlohmann
// refuses the text, and the scoring reader's skipped members the same as
// nlohmann's parser callback leaves out. Hand-written cases, random
// documents written in random styles, and random byte edits of them.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "io/json_checks.hpp"
#include "core/json_fast.hpp"

using json = nlohmann::json;

namespace {

// Equal values of equal types all the way down (nlohmann's == calls 1, 1u
// and 1.0 equal); floats compared by their bits.
bool same(const json& a, const json& b) {
  if (a.type() != b.type()) return false;
  switch (a.type()) {
    case json::value_t::object: {
      if (a.size() != b.size()) return false;
      for (auto ia = a.begin(), ib = b.begin(); ia != a.end(); ++ia, ++ib) {
        if (ia.key() != ib.key() || !same(*ia, *ib)) return false;
      }
      return true;
    }
    case json::value_t::array: {
      if (a.size() != b.size()) return false;
      for (std::size_t i = 0; i < a.size(); ++i) {
        if (!same(a[i], b[i])) return false;
      }
      return true;
    }
    case json::value_t::number_float: {
      const double x = a.get<double>(), y = b.get<double>();
      return std::memcmp(&x, &y, sizeof x) == 0;
    }
    default:
      return a == b;
  }
}

std::optional<json> nlohmann_reference(const std::string& text) {
  try {
    return json::parse(text);
  } catch (const json::exception&) {
    return std::nullopt;
  }
}

// The property every input must have: where nlohmann refuses, the fast reader
// declines; where it accepts, the fast reader gives the same value (declining
// a valid text is allowed, the caller then uses nlohmann: counted in
// `declined`).
void check_against_reference(const std::string& text, int& declined) {
  const std::optional<json> want = nlohmann_reference(text);
  const std::optional<json> got = pegasos::json_fast::parse(text);
  INFO("text: " << text);
  if (!want) {
    CHECK_FALSE(got.has_value());
    return;
  }
  if (!got) {
    ++declined;
    return;
  }
  CHECK(same(*got, *want));
}

// A random JSON value of bounded depth: every kind of number the writers
// and other tools produce, strings with escapes and multi-byte characters.
json random_value(std::mt19937_64& rng, int depth) {
  std::uniform_int_distribution<int> kind(0, depth > 3 ? 6 : 8);
  switch (kind(rng)) {
    case 0:
      return nullptr;
    case 1:
      return (rng() & 1) != 0;
    case 2:
      return static_cast<std::uint64_t>(rng() >> (rng() % 64));
    case 3:
      return -static_cast<std::int64_t>(rng() >> (1 + rng() % 63));
    case 4: {
      std::uniform_real_distribution<double> u(-1.0, 1.0);
      const double scale = std::pow(10.0, static_cast<int>(rng() % 40) - 20);
      return u(rng) * scale;
    }
    case 5:
    case 6: {
      static const std::vector<std::string> pieces = {
          "a", "Z", "0", " ", "\"", "\\", "/", "\n", "\t", "\x01", "\x1f", "\x7f", "\xc3\xa9", "\xe2\x82\xac",
          "\xf0\x9f\x98\x80", "\xed\x9f\xbf", "\xef\xbf\xbf", std::string(1, '\0')};
      std::string s;
      const int len = static_cast<int>(rng() % 12);
      for (int i = 0; i < len; ++i) s += pieces[rng() % pieces.size()];
      return s;
    }
    case 7: {
      json a = json::array();
      const int len = static_cast<int>(rng() % 6);
      for (int i = 0; i < len; ++i) a.push_back(random_value(rng, depth + 1));
      return a;
    }
    default: {
      json o = json::object();
      const int len = static_cast<int>(rng() % 6);
      for (int i = 0; i < len; ++i) o["k" + std::to_string(rng() % 8)] = random_value(rng, depth + 1);
      return o;
    }
  }
}

}  // namespace

TEST_CASE("json_fast: hand-written valid documents give nlohmann's values", "[json_fast]") {
  const std::vector<std::string> docs = {
      "0", "-0", "1", "-1", "123456789", "1.5", "-1.5e-3", "1E+2", "1e2", "2.5E-300", "0.1", "-0.0",
      "9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
      "18446744073709551615", "18446744073709551616", "123456789012345678901234567890",
      "1.7976931348623157e308", "4.9406564584124654e-324", "0.30000000000000004",
      "true", "false", "null", "\"\"", "\"plain\"", R"("\"\\\/\b\f\n\r\t")", R"("\u0000\u001f\u00e9\u20ac")",
      R"("\ud83d\ude00 and \uD83D\uDE00")", "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf\"",
      "\"\x7f\"", "[]", "{}", " [ ] ", "\t{\r\n}\n", "[1,2,3]", "[1, [2, [3, [4]]], {\"a\": {\"b\": []}}]",
      R"({"a": 1, "b": [true, false, null], "c": {"d": "e"}})", R"({"a": 1, "a": 2})",
      R"({"z": 1, "a": 2, "m": {"y": [1.0, 2, -3]}})", "\xef\xbb\xbf{\"bom\": 1}"};
  int declined = 0;
  for (const std::string& d : docs) {
    REQUIRE(nlohmann_reference(d).has_value());
    check_against_reference(d, declined);
  }
  CHECK(declined == 0);
  // Underflow: nlohmann rounds like strtod; the fast reader may leave it to
  // nlohmann, and parse_model_file gives nlohmann's value either way.
  const std::string tiny = R"({"x": 1e-400})";
  CHECK(same(pegasos::json_checks::parse_model_file(tiny, "m.json"), json::parse(tiny)));
  // nlohmann takes a NUL byte after the value for the end of the text; the
  // fast reader declines, and the model reader gives nlohmann's value.
  const std::string nul("{\"x\": 1}\0 trailing", 17);
  CHECK_FALSE(pegasos::json_fast::parse(nul).has_value());
  CHECK(same(pegasos::json_checks::parse_model_file(nul, "m.json"), json::parse(nul)));
}

TEST_CASE("json_fast: what nlohmann refuses is declined", "[json_fast]") {
  const std::vector<std::string> bad = {
      "", " ", "[", "]", "{", "}", "[1,]", "{\"a\":1,}", "[1 2]", "{\"a\" 1}", "{a: 1}", "01", "-01", "1.", ".5",
      "-", "+1", "1e", "1e+", "1.e5", "tru", "nul", "True", "NaN", "Infinity", "1e999", "-1e999", "\"abc", "\"\\x\"",
      "\"\\u12\"", "\"\\u12g4\"", "\"\\ud800\"", "\"\\ud800\\u0041\"", "\"\\udc00\"", "\"a\nb\"", "\"\x01\"",
      "\"\xc0\x80\"", "\"\xc1\xbf\"", "\"\xe0\x80\x80\"", "\"\xed\xa0\x80\"", "\"\xf4\x90\x80\x80\"", "\"\xf5\x80\x80\x80\"",
      "\"\xc3\"", "\"\xe2\x82\"", "\"\x80\"", "\"\xff\"", "1 2", "[] []", "{} x", "\xef\xbb{}", "\xef{}",
      std::string("\"a\0b\"", 5), std::string("[1,\0]", 5), std::string("\0", 1), "// c\n1", "[1,,2]"};
  for (const std::string& d : bad) {
    INFO("text: " << d);
    REQUIRE_FALSE(nlohmann_reference(d).has_value());
    CHECK_FALSE(pegasos::json_fast::parse(d).has_value());
  }
}

TEST_CASE("json_fast: random documents in random styles give nlohmann's values", "[json_fast]") {
  std::mt19937_64 rng(20261128);
  int declined = 0, floats = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    const json v = random_value(rng, 0);
    if (v.is_number_float()) ++floats;
    // nlohmann's own writer, indented or not, with non-ASCII escaped or not
    // (\uXXXX with surrogate pairs).
    const int indent = static_cast<int>(rng() % 3) - 1;
    const bool ascii = (rng() & 1) != 0;
    check_against_reference(v.dump(indent, ' ', ascii), declined);
  }
  CHECK(floats > 100);
  CHECK(declined == 0);
}

TEST_CASE("json_fast: random byte edits are accepted only where nlohmann accepts them, with its value",
          "[json_fast]") {
  std::mt19937_64 rng(7);
  static const char alphabet[] = "{}[],:\"\\-+.0123456789eEtrufalsn u \t\n\x01\x80\xc3\xa9\xed\xf4\xff";
  int declined = 0, accepted = 0;
  for (int trial = 0; trial < 6000; ++trial) {
    std::string text = random_value(rng, 0).dump(static_cast<int>(rng() % 2) - 1, ' ', (rng() & 1) != 0);
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits && !text.empty(); ++e) {
      const std::size_t at = rng() % text.size();
      const char c = alphabet[rng() % (sizeof alphabet - 1)];
      switch (rng() % 3) {
        case 0:
          text[at] = c;
          break;
        case 1:
          text.insert(text.begin() + static_cast<std::ptrdiff_t>(at), c);
          break;
        default:
          text.erase(at, 1);
      }
    }
    if (nlohmann_reference(text)) ++accepted;
    check_against_reference(text, declined);
  }
  CHECK(accepted > 300);  // the edits leave valid JSON often enough to compare values too
  CHECK(declined == 0);
}

TEST_CASE("json_fast: the scoring reader leaves out what nlohmann's callback does", "[json_fast]") {
  const std::string model = R"({"duals": {"rows": ["a"]}, "features": {"bucket_terms": {"terms": [["x"]]},
      "mode": "hashing", "nested": {"bucket_terms": 1}}, "weights": [{"bucket_terms": 2, "duals": 3}],
      "bucket_terms": 4, "x": {"duals": 5}})";
  using Event = json::parse_event_t;
  const json::parser_callback_t keep = [](int depth, Event event, json& parsed) {
    if (event != Event::key) return true;
    if (depth == 1) return parsed != "duals";
    return depth != 2 || parsed != "bucket_terms";
  };
  const json want = json::parse(model, keep);
  const json got = pegasos::json_checks::parse_model_file(model, "m.json", pegasos::json_checks::ModelUse::kScoring);
  CHECK(same(got, want));
  // The fast reader itself, with the same rule (parse_model_file would fall
  // back to nlohmann if it declined): keys spelled with escapes, a duplicate
  // kept key, "duals" inside an array.
  const pegasos::json_fast::SkipKey skip = [](int depth, std::string_view key) {
    return (depth == 1 && key == "duals") || (depth == 2 && key == "bucket_terms");
  };
  for (const std::string& text :
       {model, std::string(R"({"duals": [1], "features": {"bucket_terms": 2, "k": 3}, "a": 1, "a": 2})"),
        std::string(R"([{"duals": 1, "x": {"bucket_terms": 2}}, {"bucket_terms": 3}])")}) {
    INFO(text);
    const std::optional<json> fast = pegasos::json_fast::parse(text, skip);
    REQUIRE(fast.has_value());
    CHECK(same(*fast, json::parse(text, keep)));
  }
  CHECK_FALSE(got.contains("duals"));
  CHECK_FALSE(got["features"].contains("bucket_terms"));
  CHECK(got["features"]["nested"].contains("bucket_terms"));  // depth 3: kept
  CHECK(got["weights"][0].contains("bucket_terms"));
  CHECK(got.contains("bucket_terms"));
  // A skipped member is still checked: invalid JSON inside it is an error.
  CHECK_THROWS_WITH(pegasos::json_checks::parse_model_file(R"({"duals": [1,]})", "m.json",
                                                           pegasos::json_checks::ModelUse::kScoring),
                    Catch::Contains("m.json:1:14 near ']}': not a valid model file (JSON syntax error)"));
}
