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
//
// Layout: text/options.hpp (settings), text/tokenizer.hpp (steps 1-3), this
// header (steps 4-5, fit and serialisation), text/corpus.hpp (reading
// corpora, and the bridge to pegasos::Dataset). text/ depends on core/ (the
// Dataset, labels, errors), never the reverse.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "text/bucket_terms.hpp"
#include "text/options.hpp"
#include "text/tokenizer.hpp"

namespace pegasos {

// XXH3-64 seed for hashing mode. Part of the on-disk format: changing it
// changes every bucket, so models store and check it.
constexpr std::uint64_t kTextHashSeed = 0x5045474153u;  // "PEGAS"

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

class TermTable;  // string -> id hash table (text/term_table.hpp)

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
  // idf, the document frequencies; hashing mode with idf the per-bucket df,
  // and with keep_terms the bucket -> terms map (bucket_terms()).
  // Throws InputError if `docs` is empty or no term survives pruning.
  // Parallel over documents (TBB); result independent of the thread count.
  // Memory: the distinct terms of the corpus (vocabulary mode, and hashing
  // with keep_terms) and one 4-byte counter per bucket per thread (hashing
  // with idf).
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
  // fit() learns something: needs_fit(), or hashing's keep_terms map.
  bool learns_from_fit() const { return needs_fit() || options_.keep_terms; }
  bool fitted() const { return fitted_; }
  std::size_t documents() const { return documents_; }  // fit corpus size
  // Vocabulary mode: the terms, index = feature index.
  const std::vector<std::string>& vocabulary() const { return vocabulary_; }
  // Hashing mode with keep_terms: the training terms of each bucket (empty
  // otherwise, and for models saved without them).
  const BucketTerms& bucket_terms() const { return bucket_terms_; }
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
  // The two halves of fit (docs not empty).
  void fit_hashing(std::span<const std::string> docs);
  void fit_vocabulary(std::span<const std::string> docs);
  // The mode-specific halves of from_json: hash settings and idf, or the
  // vocabulary and its idf (pointer locates the featurizer object).
  void hashing_from_json(const nlohmann::json& j, const std::string& name, const std::string& pointer);
  void vocabulary_from_json(const nlohmann::json& j, const std::string& name, const std::string& pointer);

  TextOptions options_;
  bool fitted_ = false;
  std::size_t documents_ = 0;
  std::vector<std::string> vocabulary_;
  std::unique_ptr<TermTable> lookup_;  // vocabulary mode: term -> index
  std::vector<double> idf_;            // per feature when idf is on (after fit)
  BucketTerms bucket_terms_;           // hashing mode with keep_terms (after fit)
};

}  // namespace pegasos
