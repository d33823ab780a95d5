#include "core/text.hpp"

#include <xxhash.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cassert>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <stdexcept>
#include <unordered_map>

#include <nlohmann/json.hpp>
#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include "core/errors.hpp"

namespace pegasos {

using nlohmann::json;

// ---------------------------------------------------------------------------
// Term table: open addressing over 64-bit term hashes, strings kept in one
// arena. Ids are dense (0..size-1) in insertion order.
class TermTable {
 public:
  static constexpr std::uint32_t kAbsent = std::numeric_limits<std::uint32_t>::max();

  std::size_t size() const { return hashes_.size(); }
  std::string_view term(std::uint32_t id) const {
    return {arena_.data() + offsets_[id], static_cast<std::size_t>(offsets_[id + 1] - offsets_[id])};
  }
  std::uint64_t hash(std::uint32_t id) const { return hashes_[id]; }

  std::uint32_t find(std::string_view term, std::uint64_t hash) const {
    if (slots_.empty()) return kAbsent;
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = static_cast<std::size_t>(hash) & mask;; i = (i + 1) & mask) {
      const std::uint32_t slot = slots_[i];
      if (slot == 0) return kAbsent;
      if (hashes_[slot - 1] == hash && this->term(slot - 1) == term) return slot - 1;
    }
  }

  // {id, true} when `term` was new.
  std::pair<std::uint32_t, bool> insert(std::string_view term, std::uint64_t hash) {
    if (2 * (size() + 1) > slots_.size()) grow();  // load factor <= 1/2
    const std::size_t mask = slots_.size() - 1;
    std::size_t i = static_cast<std::size_t>(hash) & mask;
    for (;; i = (i + 1) & mask) {
      const std::uint32_t slot = slots_[i];
      if (slot == 0) break;
      if (hashes_[slot - 1] == hash && this->term(slot - 1) == term) return {slot - 1, false};
    }
    if (size() >= kAbsent - 1) throw std::length_error("more than 2^32 - 2 distinct terms");
    const auto id = static_cast<std::uint32_t>(size());
    hashes_.push_back(hash);
    arena_.append(term);
    offsets_.push_back(arena_.size());
    slots_[i] = id + 1;
    return {id, true};
  }

 private:
  void grow() {
    std::vector<std::uint32_t> slots(std::max<std::size_t>(slots_.size() * 2, 64), 0);
    const std::size_t mask = slots.size() - 1;
    for (std::size_t id = 0; id < size(); ++id) {
      std::size_t i = static_cast<std::size_t>(hashes_[id]) & mask;
      while (slots[i] != 0) i = (i + 1) & mask;
      slots[i] = static_cast<std::uint32_t>(id + 1);
    }
    slots_.swap(slots);
  }

  std::vector<std::uint32_t> slots_;  // id + 1; 0 = empty; size a power of two
  std::vector<std::uint64_t> hashes_;
  std::vector<std::uint64_t> offsets_{0};
  std::string arena_;
};

namespace {

// Documents per parallel work item in fit/transform: fixed (not per thread)
// so the work split, and with it the output, never depends on the threads.
constexpr std::size_t kDocsPerBlock = 32;
// Corpus files are cut into pieces of about this size at line ends.
constexpr std::size_t kCorpusChunkBytes = std::size_t{1} << 20;
constexpr int kTextFormatVersion = 1;

std::uint64_t term_hash(std::string_view term) {
  return XXH3_64bits_withSeed(term.data(), term.size(), kTextHashSeed);
}

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

// ---------------------------------------------------------------------------
// Terms of a token list (step 3). `fn(term)` gets a view that is valid only
// during the call.
template <class Fn>
void for_each_term(const TextOptions& o, TextScratch& s, Fn&& fn) {
  const std::vector<std::string_view>& tokens = s.tokens;
  if (o.word_ngrams >= 1) {
    for (std::string_view t : tokens) fn(t);
  }
  for (std::size_t n = 2; n <= static_cast<std::size_t>(std::max(o.word_ngrams, 0)); ++n) {
    for (std::size_t i = 0; i + n <= tokens.size(); ++i) {
      s.gram.assign(tokens[i]);
      for (std::size_t k = 1; k < n; ++k) {
        s.gram.push_back(' ');
        s.gram.append(tokens[i + k]);
      }
      fn(std::string_view(s.gram));
    }
  }
  if (o.char_ngrams_max <= 0) return;
  const auto n_min = static_cast<std::size_t>(o.char_ngrams_min);
  const auto n_max = static_cast<std::size_t>(o.char_ngrams_max);
  for (std::string_view t : tokens) {
    // gram = "#" + " " + token + " "; an n-gram starting at byte b of the
    // padded token is spelled "#" + slice: put the '#' at b - 1 for the call.
    s.gram.assign("# ");
    s.gram.append(t);
    s.gram.push_back(' ');
    s.starts.clear();
    for (std::size_t b = 1; b < s.gram.size(); ++b) {
      if ((static_cast<unsigned char>(s.gram[b]) & 0xC0u) != 0x80u) s.starts.push_back(static_cast<std::uint32_t>(b));
    }
    const std::size_t m = s.starts.size();  // code points of the padded token
    s.starts.push_back(static_cast<std::uint32_t>(s.gram.size()));
    auto emit = [&](std::size_t first, std::size_t n) {
      const std::size_t b = s.starts[first], e = s.starts[first + n];
      const char saved = s.gram[b - 1];
      s.gram[b - 1] = '#';
      fn(std::string_view(s.gram.data() + b - 1, e - b + 1));
      s.gram[b - 1] = saved;
    };
    if (m < n_min) {  // shorter than every n: the whole padded token, once
      emit(0, m);
      continue;
    }
    for (std::size_t n = n_min; n <= std::min(n_max, m); ++n) {
      for (std::size_t i = 0; i + n <= m; ++i) emit(i, n);
    }
  }
}

// Sort hashing-mode keys (bucket in the top `bits` bits) so that buckets are
// increasing and equal keys adjacent. A stable LSD radix sort on the bucket
// bits (11 bits per pass) orders the buckets; the rare bucket holding two
// different terms is then sorted on the full key. About 3x faster than
// std::sort on e-mail sized documents.
void sort_keys(std::vector<std::uint64_t>& keys, std::vector<std::uint64_t>& buffer, int bits) {
  constexpr std::size_t kRadixFrom = 256;  // below this std::sort wins
  constexpr int kPassBits = 11;
  const std::size_t n = keys.size();
  if (n < kRadixFrom) {
    std::sort(keys.begin(), keys.end());
    return;
  }
  buffer.resize(n);
  std::uint64_t* from = keys.data();
  std::uint64_t* to = buffer.data();
  for (int low = 64 - bits; low < 64; low += kPassBits) {
    const int width = std::min(kPassBits, 64 - low);
    const std::uint64_t mask = (std::uint64_t{1} << width) - 1;
    std::array<std::uint32_t, (1u << kPassBits) + 1> count{};
    for (std::size_t i = 0; i < n; ++i) ++count[((from[i] >> low) & mask) + 1];
    for (std::size_t d = 1; d < count.size(); ++d) count[d] += count[d - 1];
    for (std::size_t i = 0; i < n; ++i) to[count[(from[i] >> low) & mask]++] = from[i];
    std::swap(from, to);
  }
  if (from != keys.data()) std::copy(from, from + n, keys.data());
  const int shift = 64 - bits;
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i + 1;
    bool mixed = false;
    while (j < n && (keys[j] >> shift) == (keys[i] >> shift)) {
      mixed = mixed || keys[j] != keys[i];
      ++j;
    }
    if (mixed) std::sort(keys.begin() + static_cast<std::ptrdiff_t>(i), keys.begin() + static_cast<std::ptrdiff_t>(j));
    i = j;
  }
}

double tf_weight(std::size_t count, TermFrequency tf) {
  const double c = static_cast<double>(count);
  return tf == TermFrequency::kSublinear ? 1.0 + std::log(c) : c;
}

double smooth_idf(std::size_t documents, std::size_t df) {
  return std::log(static_cast<double>(documents + 1) / static_cast<double>(df + 1)) + 1.0;
}

[[noreturn]] void bad_json(const std::string& name, const std::string& field, const std::string& what) {
  throw InputError(name + ": " + field + ": " + what);
}

}  // namespace

// ---------------------------------------------------------------------------
// Options.

std::string_view to_string(TextMode mode) { return mode == TextMode::kHashing ? "hashing" : "vocabulary"; }
std::string_view to_string(TermFrequency tf) { return tf == TermFrequency::kRaw ? "raw" : "sublinear"; }

std::optional<TextMode> parse_text_mode(std::string_view name) {
  if (name == "hashing") return TextMode::kHashing;
  if (name == "vocabulary") return TextMode::kVocabulary;
  return std::nullopt;
}

std::optional<TermFrequency> parse_term_frequency(std::string_view name) {
  if (name == "raw") return TermFrequency::kRaw;
  if (name == "sublinear") return TermFrequency::kSublinear;
  return std::nullopt;
}

std::optional<std::pair<std::string, std::string>> text_options_error(const TextOptions& o) {
  using R = std::pair<std::string, std::string>;
  if (o.word_ngrams < 0 || o.word_ngrams > kMaxWordNgrams) {
    return R{"word_ngrams", "must be in 0.." + std::to_string(kMaxWordNgrams) + " (1 = unigrams, 2 = unigrams + bigrams)"};
  }
  if (o.char_ngrams_min < 0 || o.char_ngrams_max < 0 || o.char_ngrams_min > kMaxCharNgram ||
      o.char_ngrams_max > kMaxCharNgram) {
    return R{o.char_ngrams_min < 0 || o.char_ngrams_min > kMaxCharNgram ? "char_ngrams_min" : "char_ngrams_max",
             "must be in 0.." + std::to_string(kMaxCharNgram) + " (0 = no character n-grams)"};
  }
  if ((o.char_ngrams_min == 0) != (o.char_ngrams_max == 0)) {
    return R{o.char_ngrams_min == 0 ? "char_ngrams_min" : "char_ngrams_max",
             "set both char_ngrams_min and char_ngrams_max (e.g. 3 and 5), or both to 0"};
  }
  if (o.char_ngrams_min > o.char_ngrams_max) {
    return R{"char_ngrams_min", "must not exceed char_ngrams_max (" + std::to_string(o.char_ngrams_max) + ")"};
  }
  if (o.word_ngrams == 0 && o.char_ngrams_max == 0) {
    return R{"word_ngrams", "is 0 and character n-grams are off: there would be no features"};
  }
  if (o.mode == TextMode::kHashing && (o.hash_bits < 1 || o.hash_bits > kMaxHashBits)) {
    return R{"hash_bits", "must be in 1.." + std::to_string(kMaxHashBits) + " (2^hash_bits buckets)"};
  }
  if (o.min_df < 1) return R{"min_df", "must be >= 1 (a document count)"};
  if (!(o.max_df > 0.0 && o.max_df <= 1.0)) return R{"max_df", "must be a fraction in (0, 1]"};
  return std::nullopt;
}

void validate_text_options(const TextOptions& options) {
  if (auto e = text_options_error(options)) throw ConfigError(e->first + ": " + e->second);
}

std::vector<std::string> text_option_warnings(const TextOptions& o) {
  const TextOptions d;
  std::vector<std::string> w;
  if (o.mode == TextMode::kHashing) {
    if (o.min_df != d.min_df) w.push_back("min_df is ignored in mode=hashing");
    if (o.max_df != d.max_df) w.push_back("max_df is ignored in mode=hashing");
    if (o.max_features != d.max_features) w.push_back("max_features is ignored in mode=hashing (use hash_bits)");
  } else if (o.hash_bits != d.hash_bits) {
    w.push_back("hash_bits is ignored in mode=vocabulary");
  }
  return w;
}

json text_options_to_json(const TextOptions& o) {
  return json{{"lowercase", o.lowercase},
              {"strip_headers", o.strip_headers},
              {"stop_words", o.stop_words},
              {"word_ngrams", o.word_ngrams},
              {"char_ngrams_min", o.char_ngrams_min},
              {"char_ngrams_max", o.char_ngrams_max},
              {"mode", std::string(to_string(o.mode))},
              {"hash_bits", o.hash_bits},
              {"min_df", o.min_df},
              {"max_df", o.max_df},
              {"max_features", o.max_features},
              {"tf", std::string(to_string(o.tf))},
              {"idf", o.idf},
              {"normalize", o.normalize}};
}

TextOptions text_options_from_json(const json& j, const std::string& name, const std::string& pointer) {
  if (!j.is_object()) bad_json(name, pointer.empty() ? "/" : pointer, "expected an object of text options");
  TextOptions o;
  for (const auto& [key, v] : j.items()) {
    const std::string field = pointer + "/" + key;
    auto boolean = [&](bool& out) {
      if (!v.is_boolean()) bad_json(name, field, "expected true or false, found " + v.dump());
      out = v.get<bool>();
    };
    auto integer = [&](auto& out, long long lo, long long hi) {
      if (!v.is_number_integer() || v.get<long long>() < lo || v.get<long long>() > hi) {
        bad_json(name, field, "expected an integer in " + std::to_string(lo) + ".." + std::to_string(hi) + ", found " + v.dump());
      }
      out = static_cast<std::remove_reference_t<decltype(out)>>(v.get<long long>());
    };
    if (key == "lowercase") boolean(o.lowercase);
    else if (key == "strip_headers") boolean(o.strip_headers);
    else if (key == "stop_words") boolean(o.stop_words);
    else if (key == "idf") boolean(o.idf);
    else if (key == "normalize") boolean(o.normalize);
    else if (key == "word_ngrams") integer(o.word_ngrams, 0, kMaxWordNgrams);
    else if (key == "char_ngrams_min") integer(o.char_ngrams_min, 0, kMaxCharNgram);
    else if (key == "char_ngrams_max") integer(o.char_ngrams_max, 0, kMaxCharNgram);
    else if (key == "hash_bits") integer(o.hash_bits, 1, kMaxHashBits);
    else if (key == "min_df") integer(o.min_df, 1, std::numeric_limits<long long>::max());
    else if (key == "max_features") integer(o.max_features, 0, std::numeric_limits<long long>::max());
    else if (key == "max_df") {
      if (!v.is_number()) bad_json(name, field, "expected a number in (0, 1], found " + v.dump());
      o.max_df = v.get<double>();
    } else if (key == "mode" || key == "tf") {
      if (!v.is_string()) bad_json(name, field, "expected a string, found " + v.dump());
      const std::string s = v.get<std::string>();
      if (key == "mode") {
        auto m = parse_text_mode(s);
        if (!m) bad_json(name, field, "unknown mode " + v.dump() + " (hashing or vocabulary)");
        o.mode = *m;
      } else {
        auto t = parse_term_frequency(s);
        if (!t) bad_json(name, field, "unknown tf " + v.dump() + " (raw or sublinear)");
        o.tf = *t;
      }
    } else {
      bad_json(name, field, "unknown text option");
    }
  }
  if (auto e = text_options_error(o)) bad_json(name, pointer + "/" + e->first, e->second);
  return o;
}

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

HashedTerm hash_term(std::string_view term, int hash_bits) {
  assert(hash_bits >= 1 && hash_bits <= 32);
  const std::uint64_t h = term_hash(term);
  const std::uint64_t mask = (std::uint64_t{1} << hash_bits) - 1;
  return HashedTerm{static_cast<std::uint32_t>(h & mask), (h >> 63) != 0 ? -1 : 1};
}

// ---------------------------------------------------------------------------
// TextFeaturizer.

TextFeaturizer::TextFeaturizer(const TextOptions& options) : options_(options) {
  validate_text_options(options_);
}
TextFeaturizer::~TextFeaturizer() = default;
TextFeaturizer::TextFeaturizer(TextFeaturizer&&) noexcept = default;
TextFeaturizer& TextFeaturizer::operator=(TextFeaturizer&&) noexcept = default;
TextFeaturizer::TextFeaturizer(const TextFeaturizer& other)
    : options_(other.options_),
      fitted_(other.fitted_),
      documents_(other.documents_),
      vocabulary_(other.vocabulary_),
      idf_(other.idf_) {
  if (other.lookup_) build_lookup();
}
TextFeaturizer& TextFeaturizer::operator=(const TextFeaturizer& other) {
  if (this != &other) *this = TextFeaturizer(other);
  return *this;
}

void TextFeaturizer::build_lookup() {
  lookup_ = std::make_unique<TermTable>();
  for (const std::string& t : vocabulary_) lookup_->insert(t, term_hash(t));
}

std::uint32_t TextFeaturizer::dimension() const {
  if (options_.mode == TextMode::kHashing) return std::uint32_t{1} << options_.hash_bits;
  return static_cast<std::uint32_t>(vocabulary_.size());
}

double TextFeaturizer::idf(std::uint32_t feature) const {
  return idf_.empty() ? 1.0 : idf_.at(feature);
}

void TextFeaturizer::weigh_terms(std::string_view doc, TextScratch& s, bool apply_tf) const {
  s.tokens.clear();
  tokenize_prepared(prepare_text(doc, options_, s.text), options_, s.tokens);
  s.row.clear();
  auto weight = [&](std::size_t count) {
    return apply_tf ? tf_weight(count, options_.tf) : static_cast<double>(count);
  };
  if (options_.mode == TextMode::kHashing) {
    // Key = hash rotated so the bucket (low bits) comes first: one sort groups
    // equal terms (to count them) inside their bucket (to sum signed weights),
    // in increasing bucket order.
    const int bits = options_.hash_bits;
    s.keys.clear();
    for_each_term(options_, s, [&](std::string_view t) { s.keys.push_back(std::rotr(term_hash(t), bits)); });
    sort_keys(s.keys, s.buffer, bits);
    for (std::size_t i = 0; i < s.keys.size();) {
      std::size_t j = i + 1;
      while (j < s.keys.size() && s.keys[j] == s.keys[i]) ++j;
      const auto bucket = static_cast<std::uint32_t>(s.keys[i] >> (64 - bits));
      const bool negative = (std::rotl(s.keys[i], bits) >> 63) != 0;
      const double v = negative ? -weight(j - i) : weight(j - i);
      if (!s.row.empty() && s.row.back().first == bucket) {
        s.row.back().second += v;
      } else {
        s.row.emplace_back(bucket, v);
      }
      i = j;
    }
    std::erase_if(s.row, [](const auto& e) { return e.second == 0.0; });  // exact cancellation
  } else {
    if (!lookup_) throw std::logic_error("TextFeaturizer: vocabulary mode needs fit() or from_json() first");
    s.ids.clear();
    for_each_term(options_, s, [&](std::string_view t) {
      const std::uint32_t id = lookup_->find(t, term_hash(t));
      if (id != TermTable::kAbsent) s.ids.push_back(id);
    });
    std::sort(s.ids.begin(), s.ids.end());
    for (std::size_t i = 0; i < s.ids.size();) {
      std::size_t j = i + 1;
      while (j < s.ids.size() && s.ids[j] == s.ids[i]) ++j;
      s.row.emplace_back(s.ids[i], weight(j - i));
      i = j;
    }
  }
}

std::vector<std::pair<std::uint32_t, double>> TextFeaturizer::term_counts(std::string_view doc) const {
  TextScratch s;
  weigh_terms(doc, s, false);
  return s.row;
}

void TextFeaturizer::transform_document(std::string_view doc, TextScratch& s, std::vector<std::uint32_t>& indices,
                                        std::vector<float>& values) const {
  if (needs_fit() && !fitted_) {
    throw std::logic_error("TextFeaturizer: transform before fit (mode=" + std::string(to_string(options_.mode)) +
                           (options_.idf ? ", idf on)" : ")"));
  }
  weigh_terms(doc, s, true);
  if (!idf_.empty()) {
    for (auto& [j, v] : s.row) v *= idf_[j];
  }
  double norm = 1.0;
  if (options_.normalize) {
    double sq = 0.0;
    for (const auto& e : s.row) sq += e.second * e.second;
    if (sq > 0.0) norm = std::sqrt(sq);
  }
  for (const auto& [j, v] : s.row) {
    const auto x = static_cast<float>(v / norm);
    if (x == 0.0f) continue;  // underflow: keep the rows free of explicit zeros
    indices.push_back(j);
    values.push_back(x);
  }
}

SparseRows TextFeaturizer::transform(std::span<const std::string> docs) const {
  if (needs_fit() && !fitted_) {
    throw std::logic_error("TextFeaturizer: transform before fit (mode=" + std::string(to_string(options_.mode)) +
                           (options_.idf ? ", idf on)" : ")"));
  }
  const std::size_t n = docs.size();
  const std::size_t n_blocks = (n + kDocsPerBlock - 1) / kDocsPerBlock;
  std::vector<SparseRows> blocks(n_blocks);
  tbb::enumerable_thread_specific<TextScratch> scratch;
  tbb::parallel_for(std::size_t{0}, n_blocks, [&](std::size_t b) {
    TextScratch& s = scratch.local();
    SparseRows& out = blocks[b];
    const std::size_t end = std::min(n, (b + 1) * kDocsPerBlock);
    for (std::size_t i = b * kDocsPerBlock; i < end; ++i) {
      transform_document(docs[i], s, out.indices, out.values);
      out.row_ptr.push_back(out.indices.size());
    }
  });
  std::vector<std::uint64_t> nnz_offset(n_blocks + 1, 0);
  for (std::size_t b = 0; b < n_blocks; ++b) nnz_offset[b + 1] = nnz_offset[b] + blocks[b].nnz();
  SparseRows rows;
  rows.row_ptr.resize(n + 1, 0);
  rows.indices.resize(nnz_offset[n_blocks]);
  rows.values.resize(nnz_offset[n_blocks]);
  tbb::parallel_for(std::size_t{0}, n_blocks, [&](std::size_t b) {
    SparseRows& block = blocks[b];
    for (std::size_t r = 0; r < block.size(); ++r) {
      rows.row_ptr[b * kDocsPerBlock + r + 1] = nnz_offset[b] + block.row_ptr[r + 1];
    }
    std::copy(block.indices.begin(), block.indices.end(), rows.indices.begin() + static_cast<std::ptrdiff_t>(nnz_offset[b]));
    std::copy(block.values.begin(), block.values.end(), rows.values.begin() + static_cast<std::ptrdiff_t>(nnz_offset[b]));
    block = SparseRows{};  // release early
  });
  return rows;
}

void TextFeaturizer::fit(std::span<const std::string> docs) {
  if (docs.empty()) throw InputError("text featurizer: no documents to fit");
  const std::size_t n = docs.size();
  const TextOptions& o = options_;
  if (o.mode == TextMode::kHashing) {
    fitted_ = true;
    documents_ = n;
    idf_.clear();
    if (!o.idf) return;
    const std::size_t dim = dimension();
    struct Local {
      std::vector<std::uint32_t> df;
      TextScratch s;
    };
    tbb::enumerable_thread_specific<Local> locals;
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, kDocsPerBlock), [&](const auto& r) {
      Local& L = locals.local();
      if (L.df.empty()) L.df.assign(dim, 0);
      for (std::size_t i = r.begin(); i < r.end(); ++i) {
        weigh_terms(docs[i], L.s, true);  // the buckets transform will fill
        for (const auto& e : L.s.row) ++L.df[e.first];
      }
    });
    std::vector<std::uint32_t> df(dim, 0);
    for (Local& L : locals) {
      for (std::size_t b = 0; b < L.df.size(); ++b) df[b] += L.df[b];
    }
    idf_.resize(dim);
    for (std::size_t b = 0; b < dim; ++b) idf_[b] = smooth_idf(n, df[b]);
    return;
  }

  // Vocabulary mode: count df (documents containing the term) and cf (total
  // occurrences) per thread, merge (sums: order-independent), prune, sort.
  struct Local {
    TermTable table;
    std::vector<std::uint64_t> df, cf, last_doc;
    TextScratch s;
  };
  tbb::enumerable_thread_specific<Local> locals;
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, kDocsPerBlock), [&](const auto& r) {
    Local& L = locals.local();
    for (std::size_t i = r.begin(); i < r.end(); ++i) {
      L.s.tokens.clear();
      tokenize_prepared(prepare_text(docs[i], o, L.s.text), o, L.s.tokens);
      for_each_term(o, L.s, [&](std::string_view t) {
        const auto [id, inserted] = L.table.insert(t, term_hash(t));
        if (inserted) {
          L.df.push_back(0);
          L.cf.push_back(0);
          L.last_doc.push_back(std::numeric_limits<std::uint64_t>::max());
        }
        ++L.cf[id];
        if (L.last_doc[id] != i) {
          L.last_doc[id] = i;
          ++L.df[id];
        }
      });
    }
  });
  std::vector<Local*> parts;
  for (Local& L : locals) parts.push_back(&L);
  if (parts.empty()) throw InputError("text featurizer: no documents to fit");
  std::sort(parts.begin(), parts.end(), [](const Local* a, const Local* b) { return a->table.size() > b->table.size(); });
  Local& all = *parts[0];
  for (std::size_t p = 1; p < parts.size(); ++p) {
    Local& other = *parts[p];
    for (std::uint32_t id = 0; id < other.table.size(); ++id) {
      const auto [gid, inserted] = all.table.insert(other.table.term(id), other.table.hash(id));
      if (inserted) {
        all.df.push_back(0);
        all.cf.push_back(0);
      }
      all.df[gid] += other.df[id];
      all.cf[gid] += other.cf[id];
    }
    other = Local{};
  }
  std::vector<std::uint64_t>().swap(all.last_doc);
  if (all.table.size() == 0) throw InputError("text featurizer: the documents contain no terms");

  const double max_count = o.max_df * static_cast<double>(n);
  std::vector<std::uint32_t> kept;
  for (std::uint32_t id = 0; id < all.table.size(); ++id) {
    if (all.df[id] >= o.min_df && static_cast<double>(all.df[id]) <= max_count) kept.push_back(id);
  }
  if (kept.empty()) {
    throw InputError("text featurizer: no term is left after pruning with min_df = " + std::to_string(o.min_df) +
                     " and max_df = " + json(o.max_df).dump() + " over " + std::to_string(n) +
                     " documents; lower min_df or raise max_df");
  }
  if (o.max_features > 0 && kept.size() > o.max_features) {
    const auto by_frequency = [&](std::uint32_t a, std::uint32_t b) {
      if (all.cf[a] != all.cf[b]) return all.cf[a] > all.cf[b];
      return all.table.term(a) < all.table.term(b);
    };
    std::nth_element(kept.begin(), kept.begin() + static_cast<std::ptrdiff_t>(o.max_features), kept.end(), by_frequency);
    kept.resize(o.max_features);
  }
  std::sort(kept.begin(), kept.end(),
            [&](std::uint32_t a, std::uint32_t b) { return all.table.term(a) < all.table.term(b); });
  vocabulary_.clear();
  vocabulary_.reserve(kept.size());
  idf_.clear();
  for (std::uint32_t id : kept) {
    vocabulary_.emplace_back(all.table.term(id));
    if (o.idf) idf_.push_back(smooth_idf(n, all.df[id]));
  }
  documents_ = n;
  fitted_ = true;
  build_lookup();
}

SparseRows TextFeaturizer::fit_transform(std::span<const std::string> docs) {
  fit(docs);
  return transform(docs);
}

// ---------------------------------------------------------------------------
// Serialisation.

json TextFeaturizer::to_json() const {
  if (needs_fit() && !fitted_) throw std::logic_error("TextFeaturizer::to_json before fit");
  json j{{"format_version", kTextFormatVersion},
         {"kind", "text_featurizer"},
         {"options", text_options_to_json(options_)},
         {"dimension", dimension()},
         {"documents", documents_}};
  if (options_.mode == TextMode::kHashing) {
    j["hash"] = json{{"function", "xxh3_64"}, {"seed", kTextHashSeed}, {"bucket", "low hash_bits bits"}, {"sign", "bit 63"}};
    if (options_.idf) {
      // Sparse: buckets never seen while fitting share the default weight.
      const double unseen = smooth_idf(documents_, 0);
      json indices = json::array(), values = json::array();
      for (std::size_t b = 0; b < idf_.size(); ++b) {
        if (idf_[b] != unseen) {
          indices.push_back(b);
          values.push_back(idf_[b]);
        }
      }
      j["idf"] = json{{"default", unseen}, {"indices", std::move(indices)}, {"values", std::move(values)}};
    }
  } else {
    j["vocabulary"] = vocabulary_;
    if (options_.idf) j["idf"] = idf_;
  }
  return j;
}

TextFeaturizer TextFeaturizer::from_json(const json& j, const std::string& name, const std::string& pointer) {
  const std::string& P = pointer;
  if (!j.is_object()) bad_json(name, P.empty() ? "/" : P, "expected a text featurizer object");
  auto need = [&](const char* key) -> const json& {
    auto it = j.find(key);
    if (it == j.end()) bad_json(name, P + "/" + key, "missing field");
    return *it;
  };
  const json& version = need("format_version");
  if (!version.is_number_integer() || version.get<long long>() < 1) bad_json(name, P + "/format_version", "expected a positive integer");
  if (version.get<long long>() > kTextFormatVersion) {
    bad_json(name, P + "/format_version", "version " + version.dump() + " is newer than this pegasos supports (" +
                                              std::to_string(kTextFormatVersion) + "); upgrade pegasos");
  }
  if (need("kind") != "text_featurizer") bad_json(name, P + "/kind", "expected \"text_featurizer\", found " + need("kind").dump());
  TextFeaturizer f(text_options_from_json(need("options"), name, P + "/options"));
  const TextOptions& o = f.options_;

  const json& documents = need("documents");
  if (!documents.is_number_unsigned()) bad_json(name, P + "/documents", "expected a non-negative integer");
  f.documents_ = documents.get<std::size_t>();

  auto finite_positive = [&](const json& v, const std::string& field) {
    if (!v.is_number()) bad_json(name, field, "expected a number, found " + v.dump());
    const double d = v.get<double>();
    if (!std::isfinite(d) || d <= 0.0) bad_json(name, field, "expected a finite positive number, found " + v.dump());
    return d;
  };

  if (o.mode == TextMode::kHashing) {
    const json& hash = need("hash");
    if (!hash.is_object()) bad_json(name, P + "/hash", "expected an object");
    if (hash.value("function", json()) != "xxh3_64") {
      bad_json(name, P + "/hash/function", "unsupported hash function " + hash.value("function", json()).dump() + " (expected \"xxh3_64\")");
    }
    const json seed = hash.value("seed", json());
    if (!seed.is_number_unsigned() || seed.get<std::uint64_t>() != kTextHashSeed) {
      bad_json(name, P + "/hash/seed", "seed " + seed.dump() + " differs from this pegasos's " + std::to_string(kTextHashSeed) +
                                           ": the features could not be reproduced");
    }
    if (o.idf) {
      const json& idf = need("idf");
      const std::string field = P + "/idf";
      if (!idf.is_object()) bad_json(name, field, "expected {default, indices, values}");
      auto member = [&](const char* key) -> const json& {
        auto it = idf.find(key);
        if (it == idf.end()) bad_json(name, field + "/" + key, "missing field");
        return *it;
      };
      const double unseen = finite_positive(member("default"), field + "/default");
      const json& indices = member("indices");
      const json& values = member("values");
      if (!indices.is_array() || !values.is_array() || indices.size() != values.size()) {
        bad_json(name, field, "indices and values must be arrays of equal length");
      }
      const std::uint32_t dim = f.dimension();
      f.idf_.assign(dim, unseen);
      std::uint64_t next = 0;  // indices strictly increasing
      for (std::size_t e = 0; e < indices.size(); ++e) {
        const std::string at = field + "/indices/" + std::to_string(e);
        if (!indices[e].is_number_unsigned()) bad_json(name, at, "expected a bucket number, found " + indices[e].dump());
        const std::uint64_t b = indices[e].get<std::uint64_t>();
        if (b < next || b >= dim) {
          bad_json(name, at, "bucket " + std::to_string(b) + " is out of order or outside 0.." + std::to_string(dim - 1));
        }
        next = b + 1;
        f.idf_[b] = finite_positive(values[e], field + "/values/" + std::to_string(e));
      }
    }
  } else {
    const json& vocab = need("vocabulary");
    if (!vocab.is_array()) bad_json(name, P + "/vocabulary", "expected an array of terms");
    f.vocabulary_.reserve(vocab.size());
    for (std::size_t i = 0; i < vocab.size(); ++i) {
      const std::string at = P + "/vocabulary/" + std::to_string(i);
      if (!vocab[i].is_string()) bad_json(name, at, "expected a string, found " + vocab[i].dump());
      const std::string& term = vocab[i].get_ref<const std::string&>();
      if (!f.vocabulary_.empty() && !(f.vocabulary_.back() < term)) {
        bad_json(name, at, "term " + vocab[i].dump() + " is out of order or repeated (the vocabulary is sorted)");
      }
      f.vocabulary_.push_back(term);
    }
    if (f.vocabulary_.size() >= std::numeric_limits<std::uint32_t>::max()) bad_json(name, P + "/vocabulary", "too many terms");
    if (o.idf) {
      const json& idf = need("idf");
      if (!idf.is_array() || idf.size() != f.vocabulary_.size()) {
        bad_json(name, P + "/idf", "expected an array of " + std::to_string(f.vocabulary_.size()) + " numbers (one per term)");
      }
      f.idf_.reserve(idf.size());
      for (std::size_t i = 0; i < idf.size(); ++i) f.idf_.push_back(finite_positive(idf[i], P + "/idf/" + std::to_string(i)));
    }
    f.build_lookup();
  }
  const json& dim = need("dimension");
  if (!dim.is_number_unsigned() || dim.get<std::uint64_t>() != f.dimension()) {
    bad_json(name, P + "/dimension", "expected " + std::to_string(f.dimension()) + " (from the options and vocabulary), found " + dim.dump());
  }
  f.fitted_ = true;
  return f;
}

// ---------------------------------------------------------------------------
// Corpus readers.

namespace {

struct LineFailure {
  std::size_t column;  // 0 = not known
  std::string message;
};

struct CorpusChunk {
  std::vector<std::string> labels, texts;
  std::size_t lines = 0;
  std::size_t error_line = 0, error_column = 0;
  std::string error;
};

bool blank(std::string_view line) {
  return std::all_of(line.begin(), line.end(), [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; });
}

std::string label_or_throw(std::string_view token, std::size_t column) {
  try {
    return canonical_label(token);
  } catch (const InputError& e) {
    throw LineFailure{column, e.what()};
  }
}

// Parse `text` line by line in parallel chunks; `parse(line, chunk)` may throw
// LineFailure. Errors report the first bad line of the file.
template <class ParseLine>
TextCorpus parse_corpus_lines(std::string_view text, const std::string& name, ParseLine parse) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  std::vector<std::size_t> bounds{0};
  while (bounds.back() < text.size()) {
    std::size_t next = bounds.back() + kCorpusChunkBytes;
    if (next >= text.size()) {
      next = text.size();
    } else {
      const std::size_t nl = text.find('\n', next);
      next = nl == std::string_view::npos ? text.size() : nl + 1;
    }
    bounds.push_back(next);
  }
  const std::size_t n_chunks = bounds.size() - 1;
  std::vector<CorpusChunk> chunks(n_chunks);
  tbb::parallel_for(std::size_t{0}, n_chunks, [&](std::size_t ci) {
    CorpusChunk& c = chunks[ci];
    std::size_t pos = bounds[ci];
    while (pos < bounds[ci + 1]) {
      std::size_t nl = text.find('\n', pos);
      if (nl == std::string_view::npos || nl >= bounds[ci + 1]) nl = bounds[ci + 1];
      std::string_view line = text.substr(pos, nl - pos);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      ++c.lines;
      pos = nl + 1;
      if (blank(line)) continue;
      try {
        parse(line, c);
      } catch (const LineFailure& f) {
        c.error_line = c.lines;
        c.error_column = f.column;
        c.error = f.message;
        return;
      }
    }
  });
  TextCorpus corpus;
  corpus.source = name;
  std::size_t line_offset = 0, docs = 0;
  for (const CorpusChunk& c : chunks) {
    if (!c.error.empty()) throw InputError(location(name, line_offset + c.error_line, c.error_column) + ": " + c.error);
    line_offset += c.lines;
    docs += c.texts.size();
  }
  corpus.labels.reserve(docs);
  corpus.texts.reserve(docs);
  for (CorpusChunk& c : chunks) {
    std::move(c.labels.begin(), c.labels.end(), std::back_inserter(corpus.labels));
    std::move(c.texts.begin(), c.texts.end(), std::back_inserter(corpus.texts));
    c = CorpusChunk{};
  }
  if (corpus.size() == 0) throw InputError(name + ": no documents (the file is empty or has only blank lines)");
  return corpus;
}

// "syntax error while parsing value - invalid literal; last read: 'x'" from
// nlohmann's "[json.exception.parse_error.101] parse error at line 1, column 2: ...".
std::string json_reason(const std::string& what) {
  std::size_t at = what.find("column ");
  at = at == std::string::npos ? what.find("] ") : what.find(": ", at);
  std::string reason = at == std::string::npos ? what : what.substr(at + 2);
  for (char& c : reason) {  // "last read" may quote control or invalid bytes
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
  }
  constexpr std::size_t kShown = 160;
  if (reason.size() > kShown) reason = reason.substr(0, kShown) + "...";
  return reason;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

TextCorpus parse_jsonl_corpus(std::string_view bytes, const std::string& name, const TextReadOptions& options) {
  return parse_corpus_lines(bytes, name, [&](std::string_view line, CorpusChunk& c) {
    json j;
    try {
      j = json::parse(line);
    } catch (const json::parse_error& e) {
      throw LineFailure{e.byte, "invalid JSON: " + json_reason(e.what())};
    } catch (const json::exception& e) {  // e.g. a number that overflows a double
      throw LineFailure{0, "invalid JSON: " + json_reason(e.what())};
    }
    if (!j.is_object()) throw LineFailure{0, std::string("expected a JSON object, found ") + j.type_name()};
    auto text = j.find(options.text_field);
    if (text == j.end()) throw LineFailure{0, "missing text field \"" + options.text_field + "\""};
    if (!text->is_string()) {
      throw LineFailure{0, "field \"" + options.text_field + "\" must be a string, found " + text->type_name()};
    }
    std::string label;
    auto l = j.find(options.label_field);
    if (l == j.end() || l->is_null()) {
      if (options.require_labels) throw LineFailure{0, "missing label field \"" + options.label_field + "\""};
    } else if (l->is_string()) {
      if (l->get_ref<const std::string&>().empty()) throw LineFailure{0, "empty label in field \"" + options.label_field + "\""};
      label = label_or_throw(l->get_ref<const std::string&>(), 0);
    } else if (l->is_number()) {
      label = label_or_throw(l->dump(), 0);
    } else {
      throw LineFailure{0, "field \"" + options.label_field + "\" must be a string or a number, found " + l->type_name()};
    }
    c.labels.push_back(std::move(label));
    c.texts.push_back(std::move(text->get_ref<std::string&>()));
  });
}

TextCorpus parse_tsv_corpus(std::string_view bytes, const std::string& name, const TextReadOptions& options) {
  return parse_corpus_lines(bytes, name, [&](std::string_view line, CorpusChunk& c) {
    const std::size_t tab = line.find('\t');
    if (tab == std::string_view::npos) {
      if (options.require_labels) throw LineFailure{0, "expected LABEL<TAB>TEXT: the line has no tab"};
      c.labels.emplace_back();
      c.texts.emplace_back(line);
      return;
    }
    std::string_view label = line.substr(0, tab);
    std::size_t column = 1;
    while (!label.empty() && label.front() == ' ') {
      label.remove_prefix(1);
      ++column;
    }
    while (!label.empty() && label.back() == ' ') label.remove_suffix(1);
    if (label.empty()) {
      if (options.require_labels) throw LineFailure{1, "empty label before the tab"};
      c.labels.emplace_back();
    } else {
      c.labels.push_back(label_or_throw(label, column));
    }
    c.texts.emplace_back(line.substr(tab + 1));
  });
}

TextCorpus read_directory_corpus(const std::string& path, const TextReadOptions& /*options*/) {
  namespace fs = std::filesystem;
  auto hidden = [](const fs::path& p) { return p.filename().string().starts_with("."); };
  std::vector<fs::path> folders;
  std::error_code ec;
  fs::directory_iterator top(path, ec);
  if (ec) throw InputError(path + ": cannot list directory: " + ec.message());
  for (const auto& e : top) {
    if (!hidden(e.path()) && e.is_directory(ec)) folders.push_back(e.path());
  }
  std::sort(folders.begin(), folders.end());
  std::vector<fs::path> files;
  TextCorpus corpus;
  corpus.source = path;
  for (const fs::path& folder : folders) {
    std::string label;
    try {
      label = canonical_label(folder.filename().string());
    } catch (const InputError& e) {
      throw InputError(folder.string() + ": folder name is not a usable label: " + e.what());
    }
    std::vector<fs::path> inside;
    fs::directory_iterator it(folder, ec);
    if (ec) throw InputError(folder.string() + ": cannot list directory: " + ec.message());
    for (const auto& e : it) {
      if (!hidden(e.path()) && e.is_regular_file(ec)) inside.push_back(e.path());
    }
    std::sort(inside.begin(), inside.end());
    for (auto& f : inside) {
      files.push_back(std::move(f));
      corpus.labels.push_back(label);
    }
  }
  if (files.empty()) {
    throw InputError(path + ": no documents (expected one sub-folder per class, each holding one file per document)");
  }
  corpus.texts.resize(files.size());
  std::vector<std::string> errors(files.size());
  tbb::parallel_for(std::size_t{0}, files.size(), [&](std::size_t i) {
    try {
      corpus.texts[i] = read_file_bytes(files[i].string());
    } catch (const std::exception& e) {
      errors[i] = e.what();
    }
  });
  for (const std::string& e : errors) {
    if (!e.empty()) throw InputError(e);  // the first failure in file order
  }
  return corpus;
}

TextCorpus read_text_corpus(const std::string& path, const TextReadOptions& options) {
  TextFormat format = options.format;
  std::error_code ec;
  const bool directory = std::filesystem::is_directory(path, ec);
  if (!directory && !std::filesystem::exists(path, ec)) throw InputError(path + ": no such file or directory");
  if (format == TextFormat::kAuto) {
    std::string_view base = path;
    if (ends_with(base, ".gz")) base.remove_suffix(3);
    if (directory) format = TextFormat::kDirectory;
    else if (ends_with(base, ".jsonl") || ends_with(base, ".ndjson") || ends_with(base, ".json")) format = TextFormat::kJsonl;
    else if (ends_with(base, ".tsv") || ends_with(base, ".txt")) format = TextFormat::kTsv;
    else {
      throw InputError(path + ": cannot tell the text format from the name (expected a directory, or .jsonl / .tsv / .txt, "
                              "optionally .gz)");
    }
  }
  if (format == TextFormat::kDirectory) {
    if (!directory) throw InputError(path + ": not a directory");
    return read_directory_corpus(path, options);
  }
  if (directory) throw InputError(path + ": is a directory, expected a " + (format == TextFormat::kJsonl ? "JSONL" : "TSV") + " file");
  const std::string bytes = read_file_bytes(path);
  return format == TextFormat::kJsonl ? parse_jsonl_corpus(bytes, path, options) : parse_tsv_corpus(bytes, path, options);
}

// ---------------------------------------------------------------------------
// Dataset bridge.

Dataset make_text_dataset(SparseRows rows, std::span<const std::string> labels, std::uint32_t dimension,
                          const std::string& source) {
  if (rows.size() != labels.size()) {
    throw std::logic_error("make_text_dataset: " + std::to_string(rows.size()) + " rows but " +
                           std::to_string(labels.size()) + " labels");
  }
  if (rows.size() == 0) throw InputError(source + ": no documents");
  Dataset ds;
  ds.source = source;
  ds.dimension = dimension;
  std::vector<std::string> canonical(labels.size());
  std::unordered_map<std::string, int> ids;
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (labels[i].empty()) continue;  // unlabeled
    try {
      canonical[i] = canonical_label(labels[i]);
    } catch (const InputError& e) {
      throw InputError(source + ": document " + std::to_string(i + 1) + ": " + e.what());
    }
    if (ids.emplace(canonical[i], 0).second) ds.classes.push_back(canonical[i]);
  }
  sort_classes(ds.classes);
  for (std::size_t k = 0; k < ds.classes.size(); ++k) ids[ds.classes[k]] = static_cast<int>(k);
  ds.labels.resize(labels.size());
  for (std::size_t i = 0; i < labels.size(); ++i) ds.labels[i] = labels[i].empty() ? -1 : ids.at(canonical[i]);
  assert(std::all_of(rows.indices.begin(), rows.indices.end(), [&](std::uint32_t j) { return j < dimension; }));
  ds.row_ptr = std::move(rows.row_ptr);
  ds.indices = std::move(rows.indices);
  ds.values = std::move(rows.values);
  return ds;
}

Dataset featurize_corpus(const TextFeaturizer& featurizer, const TextCorpus& corpus) {
  return make_text_dataset(featurizer.transform(corpus.texts), corpus.labels, featurizer.dimension(), corpus.source);
}

}  // namespace pegasos
