// Raw-text featurisation settings (the `features` config key and the
// "options" object saved in a model): tokenizer switches, n-gram ranges,
// hashing or vocabulary mode, tf-idf and normalisation, with their limits,
// validation and JSON form. Used by text/tokenizer.hpp and text/featurizer.hpp.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace pegasos {

// 2^26 buckets: the dense idf table (8 bytes/bucket) and the model's weights
// (8 bytes/bucket/output) stay below a gigabyte.
constexpr int kMaxHashBits = 26;
constexpr int kMaxWordNgrams = 8;
constexpr int kMaxCharNgram = 16;

enum class TextMode { kHashing, kVocabulary };
enum class TermFrequency { kRaw, kSublinear };

struct TextOptions {
  bool lowercase = true;         // ASCII A-Z -> a-z
  // E-mail: when the text starts with an RFC-822 header block (optionally
  // after an mbox "From " line: `Name: value` lines and their continuation
  // lines, ended by an empty line), keep only the values of Subject: and
  // From: and then the body. Anything else is left untouched.
  bool strip_headers = true;
  bool stop_words = false;       // drop the built-in English list (is_stop_word)
  int word_ngrams = 1;           // n = 1..word_ngrams; 0 = no word terms (char n-grams only)
  int char_ngrams_min = 0;       // 0/0 = off; e.g. 3..5
  int char_ngrams_max = 0;
  TextMode mode = TextMode::kHashing;
  int hash_bits = 20;            // hashing mode: 2^hash_bits buckets
  // Vocabulary mode: keep terms with min_df <= df <= max_df * n_documents,
  // then (max_features > 0) the max_features most frequent ones (total count
  // over the fit documents; ties by term).
  std::size_t min_df = 1;
  double max_df = 1.0;
  std::size_t max_features = 0;  // 0 = unlimited
  TermFrequency tf = TermFrequency::kSublinear;
  bool idf = true;
  bool normalize = true;         // scale each row to unit L2 norm
  // Hashing mode: keep in the model, for each bucket a training term fell in,
  // its kBucketTermsKept most frequent terms (by document frequency) and the
  // number of distinct terms sharing it, so `pegasos inspect` can name the
  // buckets (text/bucket_terms.hpp). false keeps model files smaller.
  bool keep_terms = true;
};

std::string_view to_string(TextMode mode);
std::string_view to_string(TermFrequency tf);
std::optional<TextMode> parse_text_mode(std::string_view name);         // "hashing" | "vocabulary"
std::optional<TermFrequency> parse_term_frequency(std::string_view name);  // "raw" | "sublinear"

// First invalid setting as {key, problem} (key = the TextOptions field name),
// or nothing when the options are usable.
std::optional<std::pair<std::string, std::string>> text_options_error(const TextOptions& options);
// Throws ConfigError("KEY: problem") for the first invalid setting.
void validate_text_options(const TextOptions& options);
// Non-default settings that the chosen mode would ignore, as {key, problem}
// ({"min_df", "only used with mode=vocabulary (mode is hashing)"}): the config
// door refuses them (a setting is never silently ignored). Stored models are
// read as they are.
std::vector<std::pair<std::string, std::string>> text_option_conflicts(const TextOptions& options);

nlohmann::json text_options_to_json(const TextOptions& options);
// Strict: unknown keys, wrong types and invalid values throw InputError
// "NAME: POINTER/KEY: problem". Missing keys keep their defaults.
TextOptions text_options_from_json(const nlohmann::json& j, const std::string& name,
                                   const std::string& pointer = "");

}  // namespace pegasos
