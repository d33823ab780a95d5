// The LIBSVM / SVMlight reader: parse_libsvm (core/dataset.hpp).
#include <charconv>
#include <cmath>
#include <cstring>

#include "core/dataset.hpp"
#include "core/errors.hpp"
#include "core/parse_chunks.hpp"

namespace pegasos {
namespace {

using namespace reader_detail;

// Largest feature index ever accepted, whatever max_feature_index says: the
// dimension and the engine's extra bias feature (index = dimension) must both
// fit in a uint32.
constexpr std::uint64_t kMaxFeatureIndexLimit = (std::uint64_t{1} << 32) - 2;

// Eight bytes of text as a little-endian word (byte j of the text is bits
// 8j..8j+7), for the branch-free digit helpers below.
inline std::uint64_t load8(const char* p) {
  std::uint64_t w;
  std::memcpy(&w, p, 8);
  return w;
}
inline unsigned byte_of(std::uint64_t w, std::size_t j) { return static_cast<unsigned>(w >> (8 * j)) & 0xFFu; }

// The number of leading decimal digits of the word (8: all are digits),
// found without a branch per digit: a byte is a digit when its high nibble
// is 3 and adding 6 keeps it 3 (low nibble at most 9). A carry out of a
// byte (0xFA and above) only reaches later bytes, past the first
// non-digit, so the count is exact.
inline std::size_t leading_digits8(std::uint64_t w) {
  constexpr std::uint64_t kHigh = 0xF0F0F0F0F0F0F0F0ull, kThrees = 0x3030303030303030ull;
  const std::uint64_t non_digit = ((w & kHigh) ^ kThrees) | (((w + 0x0606060606060606ull) & kHigh) ^ kThrees);
  return non_digit == 0 ? 8 : static_cast<std::size_t>(__builtin_ctzll(non_digit)) / 8;
}

// The value of the word's first k decimal digits, 1 <= k <= 7 (k from
// leading_digits8): left-padded with '0' to eight digits, then pairs, quads
// and halves combined by three multiplications.
inline std::uint64_t digits8_value(std::uint64_t w, std::size_t k) {
  if (k <= 4) {  // four digits: two steps on 32 bits
    constexpr std::uint32_t kThrees4 = 0x30303030u;
    const unsigned pad4 = static_cast<unsigned>(4 - k) * 8;
    std::uint32_t v = static_cast<std::uint32_t>(w) << pad4;
    v = (v | (pad4 == 0 ? 0u : kThrees4 >> (32 - pad4))) - kThrees4;
    v = (v * 10 + (v >> 8)) & 0x00FF00FFu;
    return (v * 100 + (v >> 16)) & 0xFFFFu;
  }
  constexpr std::uint64_t kThrees = 0x3030303030303030ull;
  const unsigned pad = static_cast<unsigned>(8 - k) * 8;
  w = ((w << pad) | (kThrees >> (64 - pad))) - kThrees;  // byte j: digit j of eight, the first in the lowest
  w = (w * 10 + (w >> 8)) & 0x00FF00FF00FF00FFull;
  w = (w * 100 + (w >> 16)) & 0x0000FFFF0000FFFFull;
  return (w * 10000 + (w >> 32)) & 0xFFFFFFFFull;
}

// The commonest pair, "IDX:D" (at most 5 index digits, a one-digit value,
// then a space or the newline: count and indicator data, a9a's "5:1 "),
// read from one 8-byte load with no byte-by-byte loop, whose exit on
// indices of varying length is a mispredicted branch. kRead: stored (unless
// D is 0), p past the space or at the newline; kBadIndex: 0, not increasing or too
// large (the line fails); kOther: not of that form, nothing read. A line
// with a pair of another form reads its remaining pairs the general way,
// which is faster on longer tokens ("3113:0.10177").
enum class OneLoad { kRead, kBadIndex, kOther };
inline OneLoad one_load_pair(const char*& p, const char* end, Chunk& c, std::uint64_t& previous,
                             std::uint64_t max_index) {
  if (end - p < 8) return OneLoad::kOther;
  const std::uint64_t w = load8(p);
  const std::size_t k = leading_digits8(w);
  if (k - 1 >= 5 || byte_of(w, k) != ':') return OneLoad::kOther;
  const unsigned digit = byte_of(w, k + 1) - '0', term = byte_of(w, k + 2);
  if (digit > 9 || (term != ' ' && term != '\n')) return OneLoad::kOther;
  const std::uint64_t index = digits8_value(w, k);
  if (index == 0 || index <= previous || index > max_index) return OneLoad::kBadIndex;
  previous = index;
  if (digit != 0) {
    c.indices.push_back(static_cast<std::uint32_t>(index - 1));
    c.values.push_back(static_cast<float>(digit));
  }
  p += term == ' ' ? k + 3 : k + 2;  // past one space, or at the newline
  return OneLoad::kRead;
}

// The common case of a LIBSVM line in one pass: "LABEL IDX:VALUE ..." with
// decimal indices strictly increasing within 1..max, finite values (an
// explicit '+' allowed), nothing else. Returns false, having added nothing
// but possibly the label's id, for any other line (comments, qid:, anything
// malformed); the general parser below then reads it and reports errors.
// Both give the same rows. The line ends at the first '\n' or at `end`
// (where it ended goes to *line_end when given), so a caller need not find
// the newline first.
bool parse_libsvm_line_fast(const char* line, const char* end, Chunk& c, const ReadOptions& opt,
                            const char** line_end = nullptr) {
  const char* p = line;
  while (p < end && is_space(*p)) ++p;
  const char* tok = p;
  while (p < end && !is_space(*p) && *p != '\n') {
    if (*p == ':' || *p == '#') return false;
    ++p;
  }
  if (p == tok) return false;
  int label = 0;
  try {
    label = c.label_id(std::string_view(tok, static_cast<std::size_t>(p - tok)));
  } catch (const InputError&) {
    return false;
  }
  const std::size_t row_start = c.indices.size();
  const std::uint64_t max_index = std::min(opt.max_feature_index, kMaxFeatureIndexLimit);
  std::uint64_t previous = 0;
  bool fused_pairs = true;
  auto fail = [&] {
    c.indices.resize(row_start);
    c.values.resize(row_start);
    return false;
  };
  while (true) {
    while (p < end && is_space(*p)) ++p;
    if (p == end || *p == '\n') break;
    if (fused_pairs) {
      const OneLoad r = one_load_pair(p, end, c, previous, max_index);
      if (r == OneLoad::kRead) continue;
      if (r == OneLoad::kBadIndex) return fail();
      fused_pairs = false;  // the rest of the line the general way
    }
    std::uint64_t index = 0;
    const char* digits = p;
    while (p < end && *p >= '0' && *p <= '9') {
      index = index * 10 + static_cast<std::uint64_t>(*p - '0');
      ++p;
    }
    // At most 10 digits cannot overflow and covers every index ≤ max_index.
    if (p == digits || p - digits > 10 || p == end || *p != ':') return fail();
    if (index == 0 || index <= previous || index > max_index) return fail();
    p = skip_plus(p + 1, end);
    float v = 0;
    const char* after = nullptr;
    // Whether to store the value is decided from its digits, so that the
    // branch does not wait for the division in parse_simple_decimal.
    bool zero = false;
    if (!parse_simple_decimal(p, end, v, &after, &zero)) {
      const auto r = fast_float::from_chars(p, end, v);
      if (r.ec != std::errc() || r.ptr == p || !std::isfinite(v)) return fail();
      after = r.ptr;
      zero = v == 0.0f;
    }
    if (after != end && !is_space(*after) && *after != '\n') return fail();
    p = after;
    previous = index;
    if (!zero) {
      c.indices.push_back(static_cast<std::uint32_t>(index - 1));
      c.values.push_back(v);
    }
  }
  if (previous > c.max_index) c.max_index = previous;
  c.labels.push_back(label);
  c.row_ends.push_back(c.indices.size());
  if (line_end != nullptr) *line_end = p;
  return true;
}

// The value of an SVMlight "qid:N" token: an integer (optional sign, as
// scikit-learn reads it), else an error at `column`.
void check_qid(const char* begin, const char* end, std::size_t column) {
  std::int64_t id = 0;
  const char* digits = skip_plus(begin, end);
  const auto r = std::from_chars(digits, end, id);
  const std::string shown = quote(std::string_view(begin, static_cast<std::size_t>(end - begin)));
  if (r.ec == std::errc::result_out_of_range && r.ptr == end) {
    throw ParseFailure{column, "qid value " + shown + " does not fit in 64 bits"};
  }
  if (r.ec != std::errc() || r.ptr != end) throw ParseFailure{column, "qid value " + shown + " is not an integer"};
}

// For a line with no INDEX:VALUE pair at all: what it may be instead, and
// the setting that reads it ("" when it has a pair: a typo, not a format).
std::string not_libsvm_hint(const char* line, const char* end) {
  const auto n = static_cast<std::size_t>(end - line);
  if (std::memchr(line, ':', n) != nullptr) return "";
  if (std::memchr(line, '\t', n) != nullptr) {
    return " (no INDEX:VALUE pair on the line: if it is LABEL<TAB>TEXT, read it with --set format=text_tsv)";
  }
  if (std::memchr(line, ',', n) != nullptr) {
    return " (no INDEX:VALUE pair on the line: if it is CSV, name the file .csv or use --set format=csv)";
  }
  return " (no INDEX:VALUE pair on the line: not a LIBSVM row)";
}

// Parse one LIBSVM line [p, end) (no newline) into `c`.
void parse_libsvm_line(const char* line, const char* end, Chunk& c, const ReadOptions& opt) {
  if (opt.libsvm_fast_path && parse_libsvm_line_fast(line, end, c, opt)) return;
  if (const void* hash = std::memchr(line, '#', static_cast<std::size_t>(end - line))) {
    end = static_cast<const char*>(hash);
  }
  const char* p = line;
  auto col = [&](const char* q) { return static_cast<std::size_t>(q - line) + 1; };
  while (p < end && is_space(*p)) ++p;
  if (p == end) return;  // blank or comment-only line: skipped
  const char* tok = p;
  while (p < end && !is_space(*p)) ++p;
  std::string_view first(tok, static_cast<std::size_t>(p - tok));
  int label = -1;
  if (first.find(':') != std::string_view::npos) {  // a feature (or qid:) where the label belongs
    if (opt.require_labels) {
      throw ParseFailure{col(tok), "missing label: the line starts with feature " + quote(first)};
    }
    p = tok;  // unlabeled row (allowed for predict): parse it as a feature
  } else {
    try {
      label = c.label_id(first);
    } catch (const InputError& e) {
      throw ParseFailure{col(tok), e.what()};
    }
  }
  const std::size_t row_start = c.indices.size();
  std::uint64_t previous = 0;
  while (true) {
    while (p < end && is_space(*p)) ++p;
    if (p == end) break;
    tok = p;
    while (p < end && !is_space(*p)) ++p;
    std::string_view token(tok, static_cast<std::size_t>(p - tok));
    const std::size_t colon = token.find(':');
    if (colon == std::string_view::npos) {
      throw ParseFailure{col(tok), "expected INDEX:VALUE, got " + quote(token) + not_libsvm_hint(line, end)};
    }
    if (token.substr(0, colon) == "qid") {  // SVMlight query id: checked, then ignored
      check_qid(tok + colon + 1, p, col(tok + colon + 1));
      continue;
    }
    std::uint64_t index = 0;
    auto r = std::from_chars(tok, tok + colon, index);
    const std::uint64_t max_index = std::min(opt.max_feature_index, kMaxFeatureIndexLimit);
    if (r.ec == std::errc::result_out_of_range || (r.ptr == tok + colon && index > max_index)) {
      throw ParseFailure{col(tok), "feature index " + quote(token.substr(0, colon)) +
                                       " exceeds the maximum " + std::to_string(max_index) +
                                       (max_index < kMaxFeatureIndexLimit ? " (raise max_feature_index if this is intended)"
                                                                          : "")};
    }
    if (r.ec != std::errc() || r.ptr != tok + colon || colon == 0) {
      throw ParseFailure{col(tok), "feature index " + quote(token.substr(0, colon)) +
                                       " is not a positive integer"};
    }
    if (index == 0) {
      throw ParseFailure{col(tok), "feature index 0 is not positive (indices are 1-based)"};
    }
    if (index <= previous) {
      throw ParseFailure{col(tok), "feature index " + std::to_string(index) +
                                       (index == previous ? " is repeated" : " is smaller than the previous index " + std::to_string(previous)) +
                                       " (indices must be strictly increasing)"};
    }
    previous = index;
    const float v = parse_value(tok + colon + 1, p, col(tok + colon + 1));
    if (v != 0.0f) {
      c.indices.push_back(static_cast<std::uint32_t>(index - 1));
      c.values.push_back(v);
    }
  }
  if (previous > c.max_index) c.max_index = previous;
  (void)row_start;
  c.labels.push_back(label);
  c.row_ends.push_back(c.indices.size());
}

}  // namespace

Dataset parse_libsvm(std::string_view text, const std::string& name, const ReadOptions& options) {
  text = strip_bom(text);
  refuse_unsupported_compression(text, name);
  if (looks_binary(text)) throw InputError(name + ": binary data (NUL bytes), not a LIBSVM text file");
  const auto fast_line = [&](const char* p, const char* stop, Chunk& c, const char** line_end) {
    return options.libsvm_fast_path && parse_libsvm_line_fast(p, stop, c, options, line_end);
  };
  return parse_chunks(
      text, name, options.first_line,
      [&](const char* b, const char* e, Chunk& c) { parse_libsvm_line(b, e, c, options); },
      /*colon_per_value=*/true, fast_line, options.text_is_file_mapping);
}

}  // namespace pegasos
