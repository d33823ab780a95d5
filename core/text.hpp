// Raw text -> sparse feature rows, so the Pegasos engine can train on e-mail
// and other documents with no change: a tokenizer, word and character
// n-grams, the hashing trick or a fitted vocabulary, tf-idf weighting and L2
// normalisation (the same formulas as scikit-learn's TfidfVectorizer /
// HashingVectorizer + TfidfTransformer), plus readers for text corpora (JSONL,
// TSV, one folder per class) and a bridge to pegasos::Dataset.
//
// Pipeline for one document (every step is deterministic and thread-free):
//   1. prepare_text: drop an RFC-822 header block (keeping Subject/From
//      values), lowercase ASCII.
//   2. tokenize: maximal runs of letters/digits (ASCII alnum and valid
//      non-ASCII UTF-8 characters other than Unicode spaces/punctuation);
//      every other byte, and every byte of an invalid UTF-8 sequence,
//      separates tokens. Tokens longer than kMaxTokenBytes are dropped (such
//      runs are base64 blobs or hex dumps; a prefix would be noise too).
//      Optional stop-word removal happens here, before n-grams are formed.
//   3. terms: word n-grams for n = 1..word_ngrams ("w1 w2": tokens joined by
//      one space) and character n-grams of each token padded with one space
//      on both sides (like scikit-learn's char_wb; counted in code points),
//      spelled "#" + n-gram so they never clash with word terms.
//   4. counting: hashing mode maps a term to bucket = low hash_bits bits of
//      XXH3-64(term, kTextHashSeed) and sign = bit 63 (so colliding terms
//      cancel on average); vocabulary mode looks the term up in the fitted,
//      sorted vocabulary (unknown terms are ignored).
//   5. weighting: tf(c) = c (raw) or 1 + ln c (sublinear), applied per term
//      (in hashing mode before the signs are summed into a bucket); times
//      idf = ln((1 + n) / (1 + df)) + 1 (smooth idf; df over the fit
//      documents, over buckets in hashing mode); then scaled to unit L2 norm.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/dataset.hpp"

namespace pegasos {

// Longer tokens are dropped, not truncated (see above).
constexpr std::size_t kMaxTokenBytes = 64;
// XXH3-64 seed for hashing mode. Part of the on-disk format: changing it
// changes every bucket, so models store and check it.
constexpr std::uint64_t kTextHashSeed = 0x5045474153u;  // "PEGAS"
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
// Non-default settings that the chosen mode ignores ("min_df is ignored in
// mode=hashing"), for the driver to print as warnings.
std::vector<std::string> text_option_warnings(const TextOptions& options);

nlohmann::json text_options_to_json(const TextOptions& options);
// Strict: unknown keys, wrong types and invalid values throw InputError
// "NAME: POINTER/KEY: problem". Missing keys keep their defaults.
TextOptions text_options_from_json(const nlohmann::json& j, const std::string& name,
                                   const std::string& pointer = "");

// Step 1. Returns `doc` itself when nothing changes, else a view of `scratch`.
std::string_view prepare_text(std::string_view doc, const TextOptions& options, std::string& scratch);

// Step 2 on prepared text: appends the tokens (views into `text`) to `tokens`.
// Never fails: any byte sequence (invalid UTF-8, NUL bytes) is accepted.
void tokenize_prepared(std::string_view text, const TextOptions& options,
                       std::vector<std::string_view>& tokens);

// Steps 1-2. The views point into `doc` or `scratch` (keep both alive).
std::vector<std::string_view> tokenize(std::string_view doc, const TextOptions& options, std::string& scratch);

// Steps 1-3: every term occurrence of `doc`, in order (all word unigrams,
// then bigrams, ..., then each token's char n-grams by n, then position).
// Allocates; meant for tests and inspection.
std::vector<std::string> text_terms(std::string_view doc, const TextOptions& options);

// The built-in English stop-word list (NLTK's; lowercase, apostrophe-free
// fragments such as "don" and "t" included since the tokenizer splits "don't").
bool is_stop_word(std::string_view token);

// Hashing mode's bucket and sign of a term string.
struct HashedTerm {
  std::uint32_t bucket;
  int sign;  // +1 or -1
};
HashedTerm hash_term(std::string_view term, int hash_bits);

// Compressed sparse rows: row i is [row_ptr[i], row_ptr[i+1]) of indices /
// values; indices 0-based and strictly increasing within a row; no zeros.
struct SparseRows {
  std::vector<std::uint64_t> row_ptr{0};
  std::vector<std::uint32_t> indices;
  std::vector<float> values;
  std::size_t size() const { return row_ptr.size() - 1; }
  std::uint64_t nnz() const { return row_ptr.back(); }
};

// Working memory for featurising one document at a time; one per thread.
// Contents are unspecified between calls; reusing it avoids allocation.
struct TextScratch {
  std::string text;
  std::vector<std::string_view> tokens;
  std::string gram;
  std::vector<std::uint64_t> keys, buffer;
  std::vector<std::uint32_t> ids;
  std::vector<std::uint32_t> starts;
  std::vector<std::pair<std::uint32_t, double>> row;
};

class TermTable;  // string -> id hash table (core/text.cpp)

class TextFeaturizer {
 public:
  // Throws ConfigError for invalid options (validate_text_options).
  explicit TextFeaturizer(const TextOptions& options = {});
  ~TextFeaturizer();
  TextFeaturizer(const TextFeaturizer& other);
  TextFeaturizer& operator=(const TextFeaturizer& other);
  TextFeaturizer(TextFeaturizer&&) noexcept;
  TextFeaturizer& operator=(TextFeaturizer&&) noexcept;

  // Learns what transform needs: vocabulary mode the vocabulary (pruned by
  // min_df / max_df / max_features, indices in sorted term order) and, with
  // idf, the document frequencies; hashing mode with idf the per-bucket df.
  // Throws InputError if `docs` is empty or no term survives pruning.
  // Parallel over documents (TBB); result independent of the thread count.
  // Memory: the distinct terms of the corpus (vocabulary mode) or one
  // 4-byte counter per bucket per thread (hashing mode).
  void fit(std::span<const std::string> docs);

  // Rows for `docs` (one per document, in order). Requires fit() unless in
  // hashing mode without idf (std::logic_error otherwise). Parallel over
  // blocks of documents; bit-identical whatever the thread count. Memory:
  // the output plus per-thread scratch.
  SparseRows transform(std::span<const std::string> docs) const;
  SparseRows fit_transform(std::span<const std::string> docs);

  // One document, appended to indices/values (the caller closes the row).
  void transform_document(std::string_view doc, TextScratch& scratch, std::vector<std::uint32_t>& indices,
                          std::vector<float>& values) const;
  // (feature index, count) pairs of one document before tf/idf/normalisation,
  // sorted by index. Hashing mode: the signed sum of the counts of the terms in
  // each bucket (pairs summing to 0 are left out). Vocabulary mode requires fit.
  std::vector<std::pair<std::uint32_t, double>> term_counts(std::string_view doc) const;

  // Hashing: 2^hash_bits; vocabulary: number of terms (0 before fit).
  std::uint32_t dimension() const;
  const TextOptions& options() const { return options_; }
  bool needs_fit() const { return options_.mode == TextMode::kVocabulary || options_.idf; }
  bool fitted() const { return fitted_; }
  std::size_t documents() const { return documents_; }  // fit corpus size
  // Vocabulary mode: the terms, index = feature index.
  const std::vector<std::string>& vocabulary() const { return vocabulary_; }
  // idf weight of a feature (1 when idf is off).
  double idf(std::uint32_t feature) const;

  // Everything transform needs: options, hash settings or vocabulary, idf.
  nlohmann::json to_json() const;
  // Throws InputError "NAME: POINTER/FIELD: problem" for anything missing,
  // mistyped or inconsistent (pointer locates the object inside its file).
  static TextFeaturizer from_json(const nlohmann::json& j, const std::string& name,
                                  const std::string& pointer = "");

 private:
  // Signed/raw term counts -> weighted (pre-idf) values in scratch.row.
  void weigh_terms(std::string_view doc, TextScratch& s, bool apply_tf) const;
  void build_lookup();

  TextOptions options_;
  bool fitted_ = false;
  std::size_t documents_ = 0;
  std::vector<std::string> vocabulary_;
  std::unique_ptr<TermTable> lookup_;  // vocabulary mode: term -> index
  std::vector<double> idf_;            // per feature when idf is on (after fit)
};

// ---------------------------------------------------------------------------
// Corpora: (label, text) pairs.

enum class TextFormat { kAuto, kJsonl, kTsv, kDirectory };

struct TextReadOptions {
  TextFormat format = TextFormat::kAuto;
  std::string text_field = "text";    // JSONL
  std::string label_field = "label";  // JSONL; a string or a number
  // false (predict): a missing/null label (JSONL), a line without a tab (TSV)
  // gives an unlabeled document (label "").
  bool require_labels = true;
};

struct TextCorpus {
  std::vector<std::string> labels;  // canonical_label() spelling; "" = unlabeled
  std::vector<std::string> texts;
  std::string source;               // path, for messages
  std::size_t size() const { return texts.size(); }
};

// Format by name: a directory -> one sub-folder per class (each regular file
// directly inside a sub-folder is one document, label = folder name; files
// and folders are taken in sorted order; names starting with '.' and files at
// the top level are skipped); otherwise, after removing ".gz", ".jsonl",
// ".ndjson" or ".json" -> JSONL, ".tsv" or ".txt" -> TSV. gzip is detected by
// content. Throws InputError naming file:line for malformed input and for a
// corpus without documents.
TextCorpus read_text_corpus(const std::string& path, const TextReadOptions& options);
// One JSON object per line (blank lines skipped, UTF-8 BOM and CRLF accepted).
TextCorpus parse_jsonl_corpus(std::string_view bytes, const std::string& name, const TextReadOptions& options);
// LABEL<TAB>TEXT per line; TEXT is the rest of the line (further tabs included).
TextCorpus parse_tsv_corpus(std::string_view bytes, const std::string& name, const TextReadOptions& options);
TextCorpus read_directory_corpus(const std::string& path, const TextReadOptions& options);

// A Dataset over `rows` whose classes come from `labels` exactly as the LIBSVM
// reader makes them (canonical_label, then sort_classes; "" = unlabeled, -1).
// dimension is the featurizer's, so training and test sets agree.
Dataset make_text_dataset(SparseRows rows, std::span<const std::string> labels, std::uint32_t dimension,
                          const std::string& source);
// transform + make_text_dataset.
Dataset featurize_corpus(const TextFeaturizer& featurizer, const TextCorpus& corpus);

}  // namespace pegasos
