// Internal to text/: what the featurizer and the bucket-term map share — the
// term hash, the fixed block size of the parallel loops over documents, and
// per-term document / total counts over a corpus.
#pragma once

#include <xxhash.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "text/options.hpp"
#include "text/term_table.hpp"
#include "text/tokenizer.hpp"

namespace pegasos::text_detail {

// XXH3-64 seed of every term hash (kTextHashSeed in text/featurizer.hpp).
inline constexpr std::uint64_t kTermHashSeed = 0x5045474153u;  // "PEGAS"

inline std::uint64_t term_hash(std::string_view term) {
  return XXH3_64bits_withSeed(term.data(), term.size(), kTermHashSeed);
}

// Documents per parallel work item in fit/transform: fixed (not per thread)
// so the work split, and with it the output, never depends on the threads.
inline constexpr std::size_t kDocsPerBlock = 32;

// Statistics of a corpus per distinct term: df (documents containing it) and
// cf (total occurrences); the table keeps each term's hash (term_hash).
struct TermCounts {
  TermTable table;
  std::vector<std::uint64_t> df, cf, last_doc;
  TextScratch s;
};

// Counts per thread, then merges them (sums: order-independent) into the
// largest table (empty when the documents hold no term). Throws InputError
// when there are no documents.
TermCounts count_terms(std::span<const std::string> docs, const TextOptions& o);

}  // namespace pegasos::text_detail
