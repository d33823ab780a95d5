// Hashing mode's reverse map (the `keep_terms` text option): for every bucket
// that a training term fell in, its most frequent terms and how many distinct
// terms share it, so a hashed model's features can be named (`pegasos
// inspect`). Built while fitting on the training documents, saved in the
// model's featurizer as "bucket_terms", never used to featurise.
//
// Size: at most kBucketTermsKept terms for each bucket the training data
// touched, and at most kMaxBucketsWithTerms buckets (those whose most frequent
// term has the highest document frequency; rarer ones are left unnamed), so
// the section stays below about 4 MB of model file whatever the corpus. On
// the bundled 1500-message spam sample: 35758 buckets, 2.2 MB -> 4.0 MB.
// Fitting holds the corpus's distinct terms once (as vocabulary mode does).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "text/options.hpp"

namespace pegasos {

inline constexpr std::size_t kBucketTermsKept = 3;
inline constexpr std::size_t kMaxBucketsWithTerms = std::size_t{1} << 16;

struct BucketTerms {
  struct Entry {
    std::uint32_t bucket = 0;        // 0-based (feature index + 1 in model files)
    std::vector<std::string> terms;  // 1..kBucketTermsKept, most frequent first
    std::uint64_t distinct = 0;      // distinct training terms in the bucket (>= terms.size())
  };
  std::vector<Entry> entries;  // by increasing bucket

  bool empty() const { return entries.empty(); }
  // The bucket's entry, or nullptr when no training term fell in it.
  const Entry* find(std::uint32_t bucket) const;
};

// Terms ranked by document frequency over `docs`, then total count, then
// bytewise; parallel, independent of the thread count.
BucketTerms collect_bucket_terms(std::span<const std::string> docs, const TextOptions& options);

// {"kept_per_bucket": 3, "buckets": [...], "terms": [[...], ...], "distinct": [...]}.
nlohmann::json bucket_terms_to_json(const BucketTerms& terms);
// Throws InputError "NAME: POINTER/...: problem" for anything malformed,
// including a term that does not hash to its bucket with `hash_bits`.
BucketTerms bucket_terms_from_json(const nlohmann::json& j, int hash_bits, const std::string& name,
                                   const std::string& pointer);

}  // namespace pegasos
