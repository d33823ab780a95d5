#include "text/options.hpp"

#include <limits>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/errors.hpp"
#include "core/suggest.hpp"
#include "text/json_error.hpp"

namespace pegasos {

using nlohmann::json;
using text_detail::bad_json;

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

std::vector<std::pair<std::string, std::string>> text_option_conflicts(const TextOptions& o) {
  const TextOptions d;
  std::vector<std::pair<std::string, std::string>> c;
  if (o.mode == TextMode::kHashing) {
    const std::string why = "only used with mode=vocabulary (mode is hashing)";
    if (o.min_df != d.min_df) c.emplace_back("min_df", why);
    if (o.max_df != d.max_df) c.emplace_back("max_df", why);
    if (o.max_features != d.max_features) c.emplace_back("max_features", why + "; hashing has 2^hash_bits features");
  } else {
    if (o.hash_bits != d.hash_bits) c.emplace_back("hash_bits", "only used with mode=hashing (mode is vocabulary)");
    if (o.keep_terms != d.keep_terms) {
      c.emplace_back("keep_terms", "only used with mode=hashing (mode is vocabulary: the vocabulary names every feature)");
    }
  }
  return c;
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
              {"normalize", o.normalize},
              {"keep_terms", o.keep_terms}};
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
    else if (key == "keep_terms") boolean(o.keep_terms);
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
      std::vector<std::string> known;
      const json defaults = text_options_to_json(TextOptions{});  // alive through the loop
      for (const auto& item : defaults.items()) known.push_back(item.key());
      bad_json(name, field, "unknown text option" + did_you_mean(key, known));
    }
  }
  if (auto e = text_options_error(o)) bad_json(name, pointer + "/" + e->first, e->second);
  return o;
}

}  // namespace pegasos
