// Field checks for reading JSON files (model files of either kind): errors
// are InputError "FILE: /json/pointer: what", never a JSON library exception.
#pragma once

#include <cmath>
#include <cstdint>
#include <algorithm>
#include <string>
#include <vector>
#include <string_view>
#include <type_traits>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "core/dataset.hpp"
#include "core/errors.hpp"
#include "core/json_nesting.hpp"
#include "core/json_fast.hpp"

namespace pegasos::json_checks {

[[noreturn]] inline void bad(const std::string& name, const std::string& field, const std::string& what) {
  throw InputError(name + ": " + field + ": " + what);
}

// j[key], or an error naming parent/key; `file_kind` says what the file should
// have been ("pegasos model").
inline const nlohmann::json& need(const nlohmann::json& j, const std::string& key, const std::string& name,
                                  const std::string& parent, const std::string& file_kind) {
  auto it = j.find(key);
  if (it == j.end()) bad(name, parent + "/" + key, "missing field (not a " + file_kind + " file, or a corrupt one)");
  return *it;
}

inline double finite_number(const nlohmann::json& v, const std::string& name, const std::string& field) {
  if (!v.is_number()) bad(name, field, "expected a number, found " + std::string(v.type_name()));
  const double d = v.get<double>();
  if (!std::isfinite(d)) bad(name, field, "not finite");
  return d;
}

// The same, the field's name built by `field()` only for a message: a model
// holds up to millions of numbers (2^20 hashed weights), and building
// "/weights/0/123456" for each took longer than reading it.
template <class Field, class = std::enable_if_t<std::is_invocable_r_v<std::string, const Field&>>>
double finite_number(const nlohmann::json& v, const std::string& name, const Field& field) {
  if (v.is_number()) {
    const double d = v.get<double>();
    if (std::isfinite(d)) return d;
  }
  return finite_number(v, name, field());
}

// An integer in [1, max] (InputError "NAME: FIELD: ..." otherwise).
inline std::uint64_t positive_integer(const nlohmann::json& v, const std::string& name, const std::string& field,
                                      std::uint64_t max) {
  if (!v.is_number_unsigned() || v.get<std::uint64_t>() < 1 || v.get<std::uint64_t>() > max) {
    bad(name, field, "expected an integer between 1 and " + std::to_string(max) + ", found " + v.dump());
  }
  return v.get<std::uint64_t>();
}

// What a model file is read for. kScoring leaves out the sections only a
// warm start or `inspect` reads: the dual variables (top-level "duals") and a
// text featurizer's bucket -> terms map ("bucket_terms" in "features"), half
// of a hashed spam model's 4 MB; they are still scanned as JSON. kPredict:
// as kScoring, and a linear model's weights in the compact scoring form
// (Model::weight_rows) where the dense one would be large and mostly zero —
// for `predict` and `eval` (whose objective densifies only the features the
// data has, drivers/registry.cpp model_objective) and `featurize --model`.
// kInspect: every section, as kAll, with kPredict's compact weights (the
// model is read, never written back).
enum class ModelUse { kAll, kScoring, kPredict, kInspect };

// The members kScoring leaves out: "duals" at the top level, "bucket_terms"
// in an object one level down (the only one with it: "features").
inline bool scoring_skips(int depth, std::string_view key) {
  return (depth == 1 && key == "duals") || (depth == 2 && key == "bucket_terms");
}

// "LINE:COLUMN" of the 0-based byte offset `at` in `text` (1-based, as in
// editors), and up to 24 bytes from there, for a message.
inline std::string json_text_position(std::string_view text, std::size_t at) {
  at = std::min(at, text.size());
  std::size_t line = 1, line_start = 0;
  for (std::size_t i = 0; i < at; ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  std::string near(text.substr(at, 24));
  near = near.substr(0, near.find('\n'));
  // Quoted bytes that are not printable ASCII (binary garbage, a NUL that
  // would end the message) are shown as '?'.
  for (char& c : near) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
  }
  return std::to_string(line) + ":" + std::to_string(at - line_start + 1) + (near.empty() ? "" : " near '" + near + "'");
}

// The JSON of a model file; a parse failure is an InputError naming the file
// and the line and column (NaN, a cut-off file, a stray comma).
// Read by the fast reader (core/json_fast.hpp), nlohmann where it declines.
inline nlohmann::json parse_model_file(std::string_view text, const std::string& name, ModelUse use = ModelUse::kAll) {
  if (json_nesting::too_deep(text)) throw InputError(name + ": not a valid model file (" + json_nesting::error() + ")");
  try {
    const bool skips = use == ModelUse::kScoring || use == ModelUse::kPredict;
    return json_fast::parse_or_throw(text, skips ? scoring_skips : nullptr);
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte: 1-based index of the byte the parser stopped at (past the end: a cut-off file).
    if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
      throw InputError(name + ": not a valid model file (the file is empty)");
    }
    if (e.byte >= text.size() + 1) throw InputError(name + ": not a valid model file (JSON ends early: the file is cut off)");
    throw InputError(name + ":" + json_text_position(text, e.byte > 0 ? e.byte - 1 : 0) +
                     ": not a valid model file (JSON syntax error)");
  } catch (const nlohmann::json::out_of_range& e) {  // a number that overflows a double (1e999)
    const std::string what = e.what();
    const std::size_t q1 = what.find('\''), q2 = q1 == std::string::npos ? q1 : what.find('\'', q1 + 1);
    const std::string token = q2 == std::string::npos ? "" : what.substr(q1 + 1, q2 - q1 - 1);
    const std::size_t at = token.empty() ? std::string_view::npos : text.find(token);
    throw InputError(name + (at == std::string_view::npos ? "" : ":" + json_text_position(text, at)) +
                     ": not a valid model file (a number beyond a double's range" +
                     (token.empty() ? "" : ", '" + token + "'") + ")");
  } catch (const nlohmann::json::exception& e) {
    throw InputError(name + ": not a valid model file (" + e.what() + ")");
  }
}

// A model file is a JSON object with an integer format_version in 1..supported.
inline void check_model_header(const nlohmann::json& j, const std::string& name, long supported,
                               const std::string& file_kind) {
  if (!j.is_object()) bad(name, "/", "a model file is a JSON object");
  const nlohmann::json& version = need(j, "format_version", name, "", file_kind);
  if (!version.is_number_integer()) bad(name, "/format_version", "expected an integer");
  if (version.get<long>() > supported) {
    bad(name, "/format_version", "version " + std::to_string(version.get<long>()) +
                                     " is newer than this pegasos supports (" + std::to_string(supported) +
                                     "); upgrade pegasos");
  }
  if (version.get<long>() < 1) bad(name, "/format_version", "invalid version");
}

// A model's class names: at least two, none empty or holding a control
// character (predict prints them as a tab-separated column: a tab or a line
// break would split it, as the data readers refuse for labels), no repeats.
inline void check_model_classes(const std::vector<std::string>& classes, const std::string& name) {
  if (classes.size() < 2) bad(name, "/classes", "a model needs at least two classes");
  std::unordered_set<std::string_view> seen;  // by hash: a list of 10⁵ names took a minute pair by pair
  seen.reserve(classes.size());
  for (std::size_t a = 0; a < classes.size(); ++a) {
    const auto field = [&] { return "/classes/" + std::to_string(a); };
    if (classes[a].empty()) bad(name, field(), "a class name cannot be empty");
    if (has_control_character(classes[a])) bad(name, field(), "class name contains a control character (tab, line break, ...)");
    if (!seen.insert(classes[a]).second) bad(name, field(), "class '" + classes[a] + "' is repeated");
  }
}

}  // namespace pegasos::json_checks
