#include "text/tokenizer.hpp"

#include <array>

namespace pegasos {

namespace {

// ---------------------------------------------------------------------------
// Tokenizer character classes.

// Byte classes: ASCII separator, ASCII letter/digit, start of a non-ASCII
// sequence (decoded to decide).
enum ByteClass : std::uint8_t { kSeparatorByte = 0, kWordByte = 1, kMultiByte = 2 };
constexpr std::array<std::uint8_t, 256> make_byte_classes() {
  std::array<std::uint8_t, 256> t{};
  for (int c = '0'; c <= '9'; ++c) t[static_cast<std::size_t>(c)] = kWordByte;
  for (int c = 'a'; c <= 'z'; ++c) t[static_cast<std::size_t>(c)] = kWordByte;
  for (int c = 'A'; c <= 'Z'; ++c) t[static_cast<std::size_t>(c)] = kWordByte;
  for (int c = 0x80; c <= 0xFF; ++c) t[static_cast<std::size_t>(c)] = kMultiByte;
  return t;
}
constexpr std::array<std::uint8_t, 256> kByteClass = make_byte_classes();

// Non-ASCII code points that separate words: C1 controls, Latin-1
// punctuation and symbols (but not ª µ º, superscript digits, fractions),
// × ÷, the General Punctuation block (Unicode spaces, dashes, curly quotes),
// CJK punctuation, fullwidth ASCII punctuation, BOM and U+FFFD.
bool is_separator(char32_t cp) {
  if (cp <= 0x9F) return true;
  if (cp <= 0xBF) {
    return !(cp == 0xAA || cp == 0xB2 || cp == 0xB3 || cp == 0xB5 || cp == 0xB9 || cp == 0xBA ||
             (cp >= 0xBC && cp <= 0xBE));
  }
  if (cp == 0xD7 || cp == 0xF7 || cp == 0x1680 || cp == 0xFEFF || cp == 0xFFFD) return true;
  if (cp >= 0x2000 && cp <= 0x206F) return true;
  if (cp >= 0x3000 && cp <= 0x303F) return true;
  if (cp >= 0xFF01 && cp <= 0xFF0F) return true;
  if (cp >= 0xFF1A && cp <= 0xFF20) return true;
  if (cp >= 0xFF3B && cp <= 0xFF40) return true;
  if (cp >= 0xFF5B && cp <= 0xFF65) return true;
  return false;
}

// Length of the well-formed UTF-8 sequence at s (s[0] >= 0x80, `avail` bytes
// readable) and its code point; 0 if ill-formed (stray continuation byte,
// overlong form, surrogate, > U+10FFFF, truncated).
std::size_t decode_utf8(const unsigned char* s, std::size_t avail, char32_t& cp) {
  const unsigned c = s[0];
  auto cont = [&](std::size_t k) { return (s[k] & 0xC0u) == 0x80u; };
  if (c < 0xC2) return 0;
  if (c < 0xE0) {
    if (avail < 2 || !cont(1)) return 0;
    cp = ((c & 0x1Fu) << 6) | (s[1] & 0x3Fu);
    return 2;
  }
  if (c < 0xF0) {
    if (avail < 3) return 0;
    const unsigned lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    if (s[1] < lo || s[1] > hi || !cont(2)) return 0;
    cp = ((c & 0x0Fu) << 12) | ((s[1] & 0x3Fu) << 6) | (s[2] & 0x3Fu);
    return 3;
  }
  if (c < 0xF5) {
    if (avail < 4) return 0;
    const unsigned lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    if (s[1] < lo || s[1] > hi || !cont(2) || !cont(3)) return 0;
    cp = ((c & 0x07u) << 18) | ((s[1] & 0x3Fu) << 12) | ((s[2] & 0x3Fu) << 6) | (s[3] & 0x3Fu);
    return 4;
  }
  return 0;
}

// Branch-free so the compiler vectorises it.
void ascii_lowercase(std::string& s) {
  auto* p = reinterpret_cast<unsigned char*>(s.data());
  const std::size_t n = s.size();
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned char c = p[i];
    p[i] = static_cast<unsigned char>(c + (static_cast<unsigned char>(c - 'A') < 26 ? 32 : 0));
  }
}

// NLTK's English stop words, sorted (binary search).
constexpr std::string_view kStopWords[] = {
    "a", "about", "above", "after", "again", "against", "ain", "all", "am", "an", "and", "any", "are",
    "aren", "as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but",
    "by", "can", "couldn", "d", "did", "didn", "do", "does", "doesn", "doing", "don", "down", "during",
    "each", "few", "for", "from", "further", "had", "hadn", "has", "hasn", "have", "haven", "having",
    "he", "her", "here", "hers", "herself", "him", "himself", "his", "how", "i", "if", "in", "into",
    "is", "isn", "it", "its", "itself", "just", "ll", "m", "ma", "me", "mightn", "more", "most",
    "mustn", "my", "myself", "needn", "no", "nor", "not", "now", "o", "of", "off", "on", "once", "only",
    "or", "other", "our", "ours", "ourselves", "out", "over", "own", "re", "s", "same", "shan", "she",
    "should", "shouldn", "so", "some", "such", "t", "than", "that", "the", "their", "theirs", "them",
    "themselves", "then", "there", "these", "they", "this", "those", "through", "to", "too", "under",
    "until", "up", "ve", "very", "was", "wasn", "we", "were", "weren", "what", "when", "where", "which",
    "while", "who", "whom", "why", "will", "with", "won", "wouldn", "y", "you", "your", "yours",
    "yourself", "yourselves"};
constexpr std::size_t kLongestStopWord = 10;
static_assert(std::is_sorted(std::begin(kStopWords), std::end(kStopWords)));

// ---------------------------------------------------------------------------
// Mail headers.

// "Name:" with Name made of printable ASCII other than ':' (RFC 5322 field
// name); returns the position of the colon, or npos.
std::size_t header_colon(std::string_view line) {
  std::size_t i = 0;
  while (i < line.size() && line[i] != ':') {
    const auto c = static_cast<unsigned char>(line[i]);
    if (c <= 32 || c >= 127) return std::string_view::npos;
    ++i;
  }
  return (i > 0 && i < line.size()) ? i : std::string_view::npos;
}

bool iequals_ascii(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x + 32);
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y + 32);
    if (x != y) return false;
  }
  return true;
}

// If `doc` starts with a header block, writes Subject/From values and the
// body to `out` and returns true; otherwise returns false (`out` is garbage).
bool strip_mail_headers(std::string_view doc, std::string& out) {
  out.clear();
  std::size_t pos = 0;
  auto next_line = [&](std::string_view& line) {
    if (pos >= doc.size()) return false;
    const std::size_t nl = doc.find('\n', pos);
    const std::size_t end = nl == std::string_view::npos ? doc.size() : nl;
    line = doc.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    pos = nl == std::string_view::npos ? doc.size() : nl + 1;
    return true;
  };
  if (doc.substr(0, 3) == "\xEF\xBB\xBF") pos = 3;
  std::string_view line;
  if (!next_line(line)) return false;
  if (line.substr(0, 5) == "From ") {  // mbox envelope line
    if (!next_line(line)) return false;
  }
  if (header_colon(line) == std::string_view::npos) return false;
  bool keep = false;
  while (true) {
    if (line.empty()) {  // end of the header block
      out.append(doc.substr(pos));
      return true;
    }
    if (line.front() == ' ' || line.front() == '\t') {  // folded continuation
      if (keep) out.append(line).push_back('\n');
    } else {
      const std::size_t colon = header_colon(line);
      if (colon == std::string_view::npos) return false;  // not a header block after all
      const std::string_view name = line.substr(0, colon);
      keep = iequals_ascii(name, "subject") || iequals_ascii(name, "from");
      if (keep) out.append(line.substr(colon + 1)).push_back('\n');
    }
    if (!next_line(line)) return false;  // no empty line: not a header block
  }
}

}  // namespace

// ---------------------------------------------------------------------------
// Steps 1-3.

std::string_view prepare_text(std::string_view doc, const TextOptions& options, std::string& scratch) {
  bool copied = false;
  if (options.strip_headers) copied = strip_mail_headers(doc, scratch);
  if (!options.lowercase) return copied ? std::string_view(scratch) : doc;
  if (!copied) scratch.assign(doc);
  ascii_lowercase(scratch);
  return scratch;
}

bool is_stop_word(std::string_view token) {
  if (token.empty() || token.size() > kLongestStopWord) return false;
  return std::binary_search(std::begin(kStopWords), std::end(kStopWords), token);
}

void tokenize_prepared(std::string_view text, const TextOptions& options, std::vector<std::string_view>& tokens) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  auto emit = [&](std::size_t begin, std::size_t end) {
    const std::string_view tok = text.substr(begin, end - begin);
    if (tok.size() > kMaxTokenBytes) return;
    if (options.stop_words && is_stop_word(tok)) return;
    tokens.push_back(tok);
  };
  // Length of the word character at i (0 = separator).
  auto word_char = [&](std::size_t i) -> std::size_t {
    const std::uint8_t cls = kByteClass[s[i]];
    if (cls != kMultiByte) return cls;
    char32_t cp = 0;
    const std::size_t len = decode_utf8(s + i, n - i, cp);
    return len != 0 && !is_separator(cp) ? len : 0;
  };
  std::size_t i = 0;
  while (i < n) {
    std::size_t len = 0;
    while (i < n) {  // skip separators
      if (kByteClass[s[i]] == kSeparatorByte) {
        ++i;
      } else if ((len = word_char(i)) != 0) {
        break;
      } else {
        ++i;  // an invalid or separating non-ASCII sequence: skip its lead byte
      }
    }
    if (i >= n) break;
    const std::size_t start = i;
    i += len;
    while (i < n) {  // extend the token
      if (kByteClass[s[i]] == kWordByte) {
        ++i;
      } else if (kByteClass[s[i]] == kMultiByte && (len = word_char(i)) != 0) {
        i += len;
      } else {
        break;
      }
    }
    emit(start, i);
  }
}

std::vector<std::string_view> tokenize(std::string_view doc, const TextOptions& options, std::string& scratch) {
  std::vector<std::string_view> tokens;
  tokenize_prepared(prepare_text(doc, options, scratch), options, tokens);
  return tokens;
}

std::vector<std::string> text_terms(std::string_view doc, const TextOptions& options) {
  TextScratch s;
  tokenize_prepared(prepare_text(doc, options, s.text), options, s.tokens);
  std::vector<std::string> terms;
  for_each_term(options, s, [&](std::string_view t) { terms.emplace_back(t); });
  return terms;
}

}  // namespace pegasos
