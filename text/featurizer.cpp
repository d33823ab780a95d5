#include "text/featurizer.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cassert>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <nlohmann/json.hpp>
#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include "core/errors.hpp"
#include "core/fresh_memory.hpp"
#include "text/json_error.hpp"
#include "text/term_counts.hpp"
#include "text/term_table.hpp"

namespace pegasos {

using nlohmann::json;
using text_detail::bad_json;
using text_detail::count_terms;
using text_detail::kDocsPerBlock;
using text_detail::term_hash;
using text_detail::TermCounts;

static_assert(text_detail::kTermHashSeed == kTextHashSeed);

namespace {

constexpr int kTextFormatVersion = 1;

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

}  // namespace

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
      idf_(other.idf_),
      bucket_terms_(other.bucket_terms_) {
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

namespace {

// The terms kept by min_df / max_df over n documents, then (max_features > 0)
// the max_features most frequent (ties by term); ids in term order. Throws
// InputError when pruning leaves nothing.
std::vector<std::uint32_t> select_terms(const TermCounts& all, const TextOptions& o, std::size_t n) {
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
  return kept;
}

}  // namespace

void TextFeaturizer::fit(std::span<const std::string> docs) {
  if (docs.empty()) throw InputError("text featurizer: no documents to fit");
  if (options_.mode == TextMode::kHashing) {
    fit_hashing(docs);
  } else {
    fit_vocabulary(docs);
  }
}

// Hashing mode: with idf, the document frequency of every bucket (counters
// per thread, summed).
void TextFeaturizer::fit_hashing(std::span<const std::string> docs) {
  const std::size_t n = docs.size();
  fitted_ = true;
  documents_ = n;
  idf_.clear();
  bucket_terms_ = options_.keep_terms ? collect_bucket_terms(docs, options_) : BucketTerms{};
  if (!options_.idf) return;
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
}

// Vocabulary mode: count df (documents containing the term) and cf (total
// occurrences) per thread, merge, prune, sort.
void TextFeaturizer::fit_vocabulary(std::span<const std::string> docs) {
  const std::size_t n = docs.size();
  const TermCounts all = count_terms(docs, options_);
  if (all.table.size() == 0) throw InputError("text featurizer: the documents contain no terms");
  const std::vector<std::uint32_t> kept = select_terms(all, options_, n);
  vocabulary_.clear();
  vocabulary_.reserve(kept.size());
  idf_.clear();
  for (std::uint32_t id : kept) {
    vocabulary_.emplace_back(all.table.term(id));
    if (options_.idf) idf_.push_back(smooth_idf(n, all.df[id]));
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
    if (!bucket_terms_.empty()) j["bucket_terms"] = bucket_terms_to_json(bucket_terms_);
  } else {
    j["vocabulary"] = vocabulary_;
    if (options_.idf) j["idf"] = idf_;
  }
  return j;
}

namespace {

// j[key], or InputError "NAME: POINTER/KEY: missing field".
const json& need_field(const json& j, const char* key, const std::string& name, const std::string& pointer) {
  auto it = j.find(key);
  if (it == j.end()) bad_json(name, pointer + "/" + key, "missing field");
  return *it;
}

// The field's name is built by `field()` only for a message (an idf value per
// bucket or term: 100k entries a model).
template <class Field>
double finite_positive(const json& v, const std::string& name, const Field& field) {
  if (!v.is_number()) bad_json(name, field(), "expected a number, found " + v.dump());
  const double d = v.get<double>();
  if (!std::isfinite(d) || d <= 0.0) bad_json(name, field(), "expected a finite positive number, found " + v.dump());
  return d;
}

}  // namespace

TextFeaturizer TextFeaturizer::from_json(const json& j, const std::string& name, const std::string& pointer) {
  const std::string& P = pointer;
  if (!j.is_object()) bad_json(name, P.empty() ? "/" : P, "expected a text featurizer object");
  auto need = [&](const char* key) -> const json& { return need_field(j, key, name, P); };
  const json& version = need("format_version");
  if (!version.is_number_integer() || version.get<long long>() < 1) bad_json(name, P + "/format_version", "expected a positive integer");
  if (version.get<long long>() > kTextFormatVersion) {
    bad_json(name, P + "/format_version", "version " + version.dump() + " is newer than this pegasos supports (" +
                                              std::to_string(kTextFormatVersion) + "); upgrade pegasos");
  }
  if (need("kind") != "text_featurizer") bad_json(name, P + "/kind", "expected \"text_featurizer\", found " + need("kind").dump());
  TextFeaturizer f(text_options_from_json(need("options"), name, P + "/options"));

  const json& documents = need("documents");
  if (!documents.is_number_unsigned()) bad_json(name, P + "/documents", "expected a non-negative integer");
  f.documents_ = documents.get<std::size_t>();

  if (f.options_.mode == TextMode::kHashing) {
    f.hashing_from_json(j, name, P);
  } else {
    f.vocabulary_from_json(j, name, P);
  }
  const json& dim = need("dimension");
  if (!dim.is_number_unsigned() || dim.get<std::uint64_t>() != f.dimension()) {
    bad_json(name, P + "/dimension", "expected " + std::to_string(f.dimension()) + " (from the options and vocabulary), found " + dim.dump());
  }
  f.fitted_ = true;
  return f;
}

void TextFeaturizer::hashing_from_json(const json& j, const std::string& name, const std::string& pointer) {
  const std::string& P = pointer;
  const json& hash = need_field(j, "hash", name, P);
  if (!hash.is_object()) bad_json(name, P + "/hash", "expected an object");
  if (hash.value("function", json()) != "xxh3_64") {
    bad_json(name, P + "/hash/function", "unsupported hash function " + hash.value("function", json()).dump() + " (expected \"xxh3_64\")");
  }
  const json seed = hash.value("seed", json());
  if (!seed.is_number_unsigned() || seed.get<std::uint64_t>() != kTextHashSeed) {
    bad_json(name, P + "/hash/seed", "seed " + seed.dump() + " differs from this pegasos's " + std::to_string(kTextHashSeed) +
                                         ": the features could not be reproduced");
  }
  if (auto it = j.find("bucket_terms"); it != j.end()) {
    bucket_terms_ = bucket_terms_from_json(*it, options_.hash_bits, name, P + "/bucket_terms");
  }
  if (!options_.idf) return;
  const json& idf = need_field(j, "idf", name, P);
  const std::string field = P + "/idf";
  if (!idf.is_object()) bad_json(name, field, "expected {default, indices, values}");
  auto member = [&](const char* key) -> const json& {
    auto it = idf.find(key);
    if (it == idf.end()) bad_json(name, field + "/" + key, "missing field");
    return *it;
  };
  const double unseen = finite_positive(member("default"), name, [&] { return field + "/default"; });
  const json& indices = member("indices");
  const json& values = member("values");
  if (!indices.is_array() || !values.is_array() || indices.size() != values.size()) {
    bad_json(name, field, "indices and values must be arrays of equal length");
  }
  const std::uint32_t dim = dimension();
  fill_fresh(idf_, dim, unseen);  // 2^20 buckets: 8 MB
  std::uint64_t next = 0;  // indices strictly increasing
  for (std::size_t e = 0; e < indices.size(); ++e) {
    const auto at = [&] { return field + "/indices/" + std::to_string(e); };  // for a message only
    if (!indices[e].is_number_unsigned()) bad_json(name, at(), "expected a bucket number, found " + indices[e].dump());
    const std::uint64_t b = indices[e].get<std::uint64_t>();
    if (b < next || b >= dim) {
      bad_json(name, at(), "bucket " + std::to_string(b) + " is out of order or outside 0.." + std::to_string(dim - 1));
    }
    next = b + 1;
    idf_[b] = finite_positive(values[e], name, [&] { return field + "/values/" + std::to_string(e); });
  }
}

void TextFeaturizer::vocabulary_from_json(const json& j, const std::string& name, const std::string& pointer) {
  const std::string& P = pointer;
  const json& vocab = need_field(j, "vocabulary", name, P);
  if (!vocab.is_array()) bad_json(name, P + "/vocabulary", "expected an array of terms");
  vocabulary_.reserve(vocab.size());
  for (std::size_t i = 0; i < vocab.size(); ++i) {
    const std::string at = P + "/vocabulary/" + std::to_string(i);
    if (!vocab[i].is_string()) bad_json(name, at, "expected a string, found " + vocab[i].dump());
    const std::string& term = vocab[i].get_ref<const std::string&>();
    if (!vocabulary_.empty() && !(vocabulary_.back() < term)) {
      bad_json(name, at, "term " + vocab[i].dump() + " is out of order or repeated (the vocabulary is sorted)");
    }
    vocabulary_.push_back(term);
  }
  if (vocabulary_.size() >= std::numeric_limits<std::uint32_t>::max()) bad_json(name, P + "/vocabulary", "too many terms");
  if (options_.idf) {
    const json& idf = need_field(j, "idf", name, P);
    if (!idf.is_array() || idf.size() != vocabulary_.size()) {
      bad_json(name, P + "/idf", "expected an array of " + std::to_string(vocabulary_.size()) + " numbers (one per term)");
    }
    idf_.reserve(idf.size());
    for (std::size_t i = 0; i < idf.size(); ++i) {
      idf_.push_back(finite_positive(idf[i], name, [&] { return P + "/idf/" + std::to_string(i); }));
    }
  }
  build_lookup();
}

}  // namespace pegasos
