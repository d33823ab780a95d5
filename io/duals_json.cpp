#include "io/duals_json.hpp"

#include <charconv>
#include <cmath>
#include <stdexcept>
#include <cstdint>

#include "io/json_checks.hpp"
#include "io/json_numbers.hpp"

namespace pegasos {

using nlohmann::json;
using json_checks::bad;

namespace {

constexpr const char* kScale = "fraction of the box bound";

// "h" as 16 hex digits in quotes.
void append_hex16(std::string& out, std::uint64_t h) {
  static constexpr char kDigits[] = "0123456789abcdef";
  char s[18];
  s[0] = s[17] = '"';
  for (int p = 16; p >= 1; --p, h >>= 4) s[p] = kDigits[h & 15];
  out.append(s, sizeof s);
}

const json& duals_field(const json& j, const char* key, const std::string& name) {
  return json_checks::need(j, key, name, "/duals", "pegasos model");
}

void read_rows(const json& rows, const std::string& name, StoredDuals& d) {
  if (!rows.is_array()) bad(name, "/duals/rows", "expected an array of 16-hex-digit row hashes");
  if (rows.size() > StoredDuals::kMaxEntries) {
    bad(name, "/duals/rows", std::to_string(rows.size()) + " entries, more than " +
                                 std::to_string(StoredDuals::kMaxEntries));
  }
  d.rows.reserve(rows.size());
  for (std::size_t e = 0; e < rows.size(); ++e) {
    const auto at = [&] { return "/duals/rows/" + std::to_string(e); };  // built for a message only
    if (!rows[e].is_string()) bad(name, at(), "expected a string of 16 hex digits");
    const std::string& s = rows[e].get_ref<const std::string&>();
    std::uint64_t h = 0;
    const auto r = std::from_chars(s.data(), s.data() + s.size(), h, 16);
    if (s.size() != 16 || r.ec != std::errc() || r.ptr != s.data() + s.size() || s.find_first_of("+-") != std::string::npos) {
      bad(name, at(), "expected 16 hex digits, found \"" + s + "\"");
    }
    if (!d.rows.empty() && h <= d.rows.back()) bad(name, at(), "row hashes must be distinct and in increasing order");
    d.rows.push_back(h);
  }
}

}  // namespace

void append_duals_json(std::string& out, const StoredDuals& d) {
  for (const double a : d.alpha) {
    if (!std::isfinite(a)) throw std::logic_error("refusing to save a non-finite dual variable");
  }
  // About 22 bytes an α and 20 a row: the text is reserved once, not doubled.
  out.reserve(out.size() + 160 + 20 * d.rows.size() + 24 * d.alpha.size() + 8 * d.copies.size());
  out += "{\"hash\": \"";
  out += StoredDuals::kHash;
  out += "\", \"outputs\": " + std::to_string(d.outputs) + ", \"scale\": \"" + kScale + "\",\n   \"rows\": [";
  json_numbers::append_items(out, d.rows.size(), [&](std::size_t e, std::string& to) { append_hex16(to, d.rows[e]); });
  out += "],\n   \"alpha\": [";
  // The shortest text that reads back the same.
  json_numbers::append_items(out, d.alpha.size(), [&](std::size_t e, std::string& to) { json_numbers::append_number(to, d.alpha[e]); });
  if (!d.copies.empty()) {
    out += "],\n   \"copies\": [";
    json_numbers::append_items(out, d.copies.size(), [&](std::size_t e, std::string& to) { json_numbers::append_number(to, d.copies[e]); });
  }
  out += "]}";
}

StoredDuals duals_from_json(const json& j, const std::string& name, int model_outputs) {
  if (!j.is_object()) bad(name, "/duals", "expected an object (SDCA's dual variables) or null");
  StoredDuals d;
  if (duals_field(j, "hash", name) != StoredDuals::kHash) {
    bad(name, "/duals/hash", "unsupported row hash " + j.at("hash").dump() + " (expected \"" + StoredDuals::kHash + "\")");
  }
  const json& outputs = duals_field(j, "outputs", name);
  if (!outputs.is_number_integer() || outputs.get<long long>() != model_outputs) {
    bad(name, "/duals/outputs", "expected " + std::to_string(model_outputs) + " (the model's outputs), found " + outputs.dump());
  }
  d.outputs = model_outputs;
  if (duals_field(j, "scale", name) != kScale) bad(name, "/duals/scale", std::string("expected \"") + kScale + "\"");
  read_rows(duals_field(j, "rows", name), name, d);
  const json& alpha = duals_field(j, "alpha", name);
  const std::size_t count = d.rows.size() * static_cast<std::size_t>(model_outputs);
  if (!alpha.is_array() || alpha.size() != count) {
    bad(name, "/duals/alpha", "expected an array of " + std::to_string(count) + " numbers (rows × outputs)");
  }
  d.alpha.reserve(count);
  for (std::size_t e = 0; e < count; ++e) {
    const auto at = [&] { return "/duals/alpha/" + std::to_string(e); };  // built for a message only
    const double a = json_checks::finite_number(alpha[e], name, at);
    if (a < -1.0 || a > 1.0) bad(name, at(), "a fraction of the box bound must be in [-1, 1], found " + alpha[e].dump());
    d.alpha.push_back(a);
  }
  if (const auto it = j.find("copies"); it != j.end()) {
    if (!it->is_array() || it->size() != d.rows.size()) {
      bad(name, "/duals/copies", "expected an array of " + std::to_string(d.rows.size()) + " counts (one per row)");
    }
    d.copies.reserve(d.rows.size());
    for (std::size_t e = 0; e < it->size(); ++e) {
      d.copies.push_back(static_cast<std::uint32_t>(
          json_checks::positive_integer((*it)[e], name, "/duals/copies/" + std::to_string(e), UINT32_MAX)));
    }
  }
  return d;
}

}  // namespace pegasos
