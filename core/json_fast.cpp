#include "core/json_fast.hpp"

#include <cmath>
#include <cstdint>
#include <string>
#include <system_error>
#include <utility>

#include <fast_float/fast_float.h>

namespace pegasos::json_fast {
namespace {

using json = nlohmann::json;

// Anything nlohmann's parser would refuse; parse() returns nothing.
struct Invalid {};

bool is_digit(char c) { return c >= '0' && c <= '9'; }

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// A recursive-descent parser over [p_, e_). `build` false: the value is
// checked but not kept (a skipped member, or inside one), as nlohmann parses
// and then discards what its callback leaves out.
class Parser {
 public:
  Parser(std::string_view text, SkipKey skip) : p_(text.data()), e_(text.data() + text.size()), skip_(skip) {}

  json document() {
    // A byte-order mark is skipped, as nlohmann does; a partial one is an error.
    if (e_ - p_ >= 1 && static_cast<unsigned char>(*p_) == 0xEF) {
      if (e_ - p_ < 3 || static_cast<unsigned char>(p_[1]) != 0xBB || static_cast<unsigned char>(p_[2]) != 0xBF) {
        throw Invalid{};
      }
      p_ += 3;
    }
    space();
    json v = value(0, true);
    space();
    if (p_ != e_) throw Invalid{};
    return v;
  }

 private:
  void space() {
    while (p_ != e_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }
  char peek() const {
    if (p_ == e_) throw Invalid{};
    return *p_;
  }

  // `depth`: the containers open around this value.
  json value(int depth, bool build) {
    switch (peek()) {
      case '{':
        return object(depth + 1, build);
      case '[':
        return array(depth + 1, build);
      case '"': {
        ++p_;
        if (!build) {
          string_body(nullptr);
          return json();
        }
        std::string s;
        string_body(&s);
        return json(std::move(s));
      }
      case 't':
        literal("true");
        return json(true);
      case 'f':
        literal("false");
        return json(false);
      case 'n':
        literal("null");
        return json(nullptr);
      default:
        return number();
    }
  }

  void literal(std::string_view word) {
    if (static_cast<std::size_t>(e_ - p_) < word.size() || std::string_view(p_, word.size()) != word) throw Invalid{};
    p_ += word.size();
  }

  json object(int depth, bool build) {
    ++p_;  // '{'
    json out = build ? json::object() : json();
    space();
    if (peek() == '}') {
      ++p_;
      return out;
    }
    std::string key;
    while (true) {
      space();
      if (peek() != '"') throw Invalid{};
      ++p_;
      key.clear();
      string_body(&key);
      space();
      if (peek() != ':') throw Invalid{};
      ++p_;
      space();
      const bool keep = build && !(skip_ != nullptr && skip_(depth, key));
      json v = value(depth, keep);
      if (keep) out.get_ref<json::object_t&>()[key] = std::move(v);  // a later duplicate replaces
      space();
      const char c = peek();
      ++p_;
      if (c == ',') continue;
      if (c == '}') return out;
      throw Invalid{};
    }
  }

  json array(int depth, bool build) {
    ++p_;  // '['
    json out = build ? json::array() : json();
    space();
    if (peek() == ']') {
      ++p_;
      return out;
    }
    while (true) {
      space();
      json v = value(depth, build);
      if (build) out.get_ref<json::array_t&>().push_back(std::move(v));
      space();
      const char c = peek();
      ++p_;
      if (c == ',') continue;
      if (c == ']') return out;
      throw Invalid{};
    }
  }

  // JSON's grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?. Without a
  // fraction or exponent: number_unsigned (no sign) or number_integer (a
  // minus) where the value fits 64 bits, else a float, as nlohmann's lexer.
  json number() {
    const char* start = p_;
    const bool negative = *p_ == '-';
    if (negative) ++p_;
    if (p_ == e_) throw Invalid{};
    if (*p_ == '0') {
      ++p_;
    } else if (*p_ >= '1' && *p_ <= '9') {
      while (p_ != e_ && is_digit(*p_)) ++p_;
    } else {
      throw Invalid{};
    }
    const char* integer_end = p_;
    bool is_float = false;
    if (p_ != e_ && *p_ == '.') {
      ++p_;
      if (p_ == e_ || !is_digit(*p_)) throw Invalid{};
      while (p_ != e_ && is_digit(*p_)) ++p_;
      is_float = true;
    }
    if (p_ != e_ && (*p_ == 'e' || *p_ == 'E')) {
      ++p_;
      if (p_ != e_ && (*p_ == '+' || *p_ == '-')) ++p_;
      if (p_ == e_ || !is_digit(*p_)) throw Invalid{};
      while (p_ != e_ && is_digit(*p_)) ++p_;
      is_float = true;
    }
    if (!is_float) {
      std::uint64_t magnitude = 0;
      bool fits = true;
      for (const char* q = start + (negative ? 1 : 0); q < integer_end && fits; ++q) {
        fits = !__builtin_mul_overflow(magnitude, std::uint64_t{10}, &magnitude) &&
               !__builtin_add_overflow(magnitude, static_cast<std::uint64_t>(*q - '0'), &magnitude);
      }
      constexpr std::uint64_t kMinMagnitude = std::uint64_t{1} << 63;  // |INT64_MIN|
      if (fits && !negative) return json(static_cast<json::number_unsigned_t>(magnitude));
      if (fits && magnitude < kMinMagnitude) return json(-static_cast<json::number_integer_t>(magnitude));
      if (fits && magnitude == kMinMagnitude) return json(INT64_MIN);
    }
    double v = 0.0;
    const auto r = fast_float::from_chars(start, p_, v);
    // Overflow and underflow go to nlohmann (which refuses the one and
    // rounds the other as strtod does).
    if (r.ec != std::errc() || r.ptr != p_ || !std::isfinite(v)) throw Invalid{};
    return json(v);
  }

  // From after the opening quote to after the closing one; `out` (if any)
  // gets the decoded text.
  void string_body(std::string* out) {
    while (true) {
      const char* run = p_;
      while (p_ != e_) {
        const auto c = static_cast<unsigned char>(*p_);
        if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80) break;
        ++p_;
      }
      if (out != nullptr) out->append(run, p_);
      const auto c = static_cast<unsigned char>(peek());
      if (c == '"') {
        ++p_;
        return;
      }
      if (c < 0x20) throw Invalid{};  // control characters must be escaped
      if (c == '\\') {
        escape(out);
      } else {
        utf8_sequence(out);
      }
    }
  }

  // One multi-byte UTF-8 sequence, well formed by RFC 3629 (no overlong
  // forms, no surrogates, nothing above U+10FFFF).
  void utf8_sequence(std::string* out) {
    const auto* q = reinterpret_cast<const unsigned char*>(p_);
    const unsigned char c = q[0];
    int n = 0;
    unsigned char low = 0x80, high = 0xBF;  // the second byte's range
    if (c >= 0xC2 && c <= 0xDF) {
      n = 2;
    } else if (c == 0xE0) {
      n = 3;
      low = 0xA0;
    } else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) {
      n = 3;
    } else if (c == 0xED) {
      n = 3;
      high = 0x9F;
    } else if (c == 0xF0) {
      n = 4;
      low = 0x90;
    } else if (c >= 0xF1 && c <= 0xF3) {
      n = 4;
    } else if (c == 0xF4) {
      n = 4;
      high = 0x8F;
    } else {
      throw Invalid{};
    }
    if (e_ - p_ < n || q[1] < low || q[1] > high) throw Invalid{};
    for (int k = 2; k < n; ++k) {
      if (q[k] < 0x80 || q[k] > 0xBF) throw Invalid{};
    }
    if (out != nullptr) out->append(p_, static_cast<std::size_t>(n));
    p_ += n;
  }

  std::uint32_t hex4() {
    if (e_ - p_ < 4) throw Invalid{};
    std::uint32_t v = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = *p_++;
      v <<= 4;
      if (c >= '0' && c <= '9') {
        v |= static_cast<std::uint32_t>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        v |= static_cast<std::uint32_t>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        v |= static_cast<std::uint32_t>(c - 'A' + 10);
      } else {
        throw Invalid{};
      }
    }
    return v;
  }

  void escape(std::string* out) {
    ++p_;  // the backslash
    const char c = peek();
    ++p_;
    char plain = 0;
    switch (c) {
      case '"':
      case '\\':
      case '/':
        plain = c;
        break;
      case 'b':
        plain = '\b';
        break;
      case 'f':
        plain = '\f';
        break;
      case 'n':
        plain = '\n';
        break;
      case 'r':
        plain = '\r';
        break;
      case 't':
        plain = '\t';
        break;
      case 'u': {
        std::uint32_t cp = hex4();
        if (cp >= 0xD800 && cp <= 0xDBFF) {  // a high surrogate: its low one must follow
          if (e_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u') throw Invalid{};
          p_ += 2;
          const std::uint32_t low = hex4();
          if (low < 0xDC00 || low > 0xDFFF) throw Invalid{};
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
          throw Invalid{};
        }
        if (out != nullptr) append_utf8(*out, cp);
        return;
      }
      default:
        throw Invalid{};
    }
    if (out != nullptr) out->push_back(plain);
  }

  const char* p_;
  const char* const e_;
  const SkipKey skip_;
};

}  // namespace

std::optional<nlohmann::json> parse(std::string_view text, SkipKey skip) {
  try {
    return Parser(text, skip).document();
  } catch (const Invalid&) {
    return std::nullopt;
  }
}

nlohmann::json parse_or_throw(std::string_view text, SkipKey skip) {
  if (std::optional<nlohmann::json> j = parse(text, skip)) return std::move(*j);
  if (skip == nullptr) return nlohmann::json::parse(text.begin(), text.end());
  const nlohmann::json::parser_callback_t keep = [skip](int depth, nlohmann::json::parse_event_t event,
                                                        nlohmann::json& parsed) {
    return event != nlohmann::json::parse_event_t::key || !skip(depth, parsed.get_ref<const std::string&>());
  };
  return nlohmann::json::parse(text.begin(), text.end(), keep);
}

}  // namespace pegasos::json_fast
