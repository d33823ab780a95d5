#include "text/bucket_terms.hpp"

#include <algorithm>
#include <tuple>
#include <utility>

#include <nlohmann/json.hpp>

#include "text/json_error.hpp"
#include "text/term_counts.hpp"

namespace pegasos {

using nlohmann::json;
using text_detail::bad_json;

const BucketTerms::Entry* BucketTerms::find(std::uint32_t bucket) const {
  auto it = std::lower_bound(entries.begin(), entries.end(), bucket,
                             [](const Entry& e, std::uint32_t b) { return e.bucket < b; });
  return it != entries.end() && it->bucket == bucket ? &*it : nullptr;
}

BucketTerms collect_bucket_terms(std::span<const std::string> docs, const TextOptions& options) {
  const text_detail::TermCounts all = text_detail::count_terms(docs, options);
  const std::uint64_t mask = (std::uint64_t{1} << options.hash_bits) - 1;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> order;  // (bucket, term id)
  order.reserve(all.table.size());
  for (std::uint32_t id = 0; id < all.table.size(); ++id) {
    order.emplace_back(static_cast<std::uint32_t>(all.table.hash(id) & mask), id);
  }
  std::sort(order.begin(), order.end(), [&](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first < b.first;
    return std::make_tuple(all.df[b.second], all.cf[b.second], all.table.term(a.second)) <
           std::make_tuple(all.df[a.second], all.cf[a.second], all.table.term(b.second));
  });
  // Each bucket's first term (the most frequent): (df, position in order).
  std::vector<std::pair<std::uint64_t, std::size_t>> starts;
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (i == 0 || order[i].first != order[i - 1].first) starts.emplace_back(all.df[order[i].second], i);
  }
  if (starts.size() > kMaxBucketsWithTerms) {  // keep the buckets of the most frequent terms
    const auto more_frequent = [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; };
    std::nth_element(starts.begin(), starts.begin() + kMaxBucketsWithTerms, starts.end(), more_frequent);
    starts.resize(kMaxBucketsWithTerms);
    std::sort(starts.begin(), starts.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  }
  BucketTerms out;
  out.entries.reserve(starts.size());
  for (const auto& start : starts) {
    BucketTerms::Entry e;
    e.bucket = order[start.second].first;
    std::size_t j = start.second;
    for (; j < order.size() && order[j].first == e.bucket; ++j) {
      if (e.terms.size() < kBucketTermsKept) e.terms.emplace_back(all.table.term(order[j].second));
    }
    e.distinct = j - start.second;
    out.entries.push_back(std::move(e));
  }
  return out;
}

json bucket_terms_to_json(const BucketTerms& t) {
  json buckets = json::array(), terms = json::array(), distinct = json::array();
  for (const BucketTerms::Entry& e : t.entries) {
    buckets.push_back(e.bucket);
    terms.push_back(e.terms);
    distinct.push_back(e.distinct);
  }
  return json{{"kept_per_bucket", kBucketTermsKept},
              {"buckets", std::move(buckets)},
              {"terms", std::move(terms)},
              {"distinct", std::move(distinct)}};
}

namespace {

// Entry e's terms (1..kBucketTermsKept strings, each hashing to its bucket).
std::vector<std::string> entry_terms(const json& v, std::uint32_t bucket, int hash_bits, const std::string& name,
                                     const std::string& field) {
  if (!v.is_array() || v.empty() || v.size() > kBucketTermsKept) {
    bad_json(name, field, "expected an array of 1.." + std::to_string(kBucketTermsKept) + " terms");
  }
  const std::uint64_t mask = (std::uint64_t{1} << hash_bits) - 1;
  std::vector<std::string> terms;
  for (std::size_t t = 0; t < v.size(); ++t) {
    if (!v[t].is_string()) bad_json(name, field + "/" + std::to_string(t), "expected a string, found " + v[t].dump());
    const std::string& term = v[t].get_ref<const std::string&>();
    if ((text_detail::term_hash(term) & mask) != bucket) {
      bad_json(name, field + "/" + std::to_string(t),
               "term " + v[t].dump() + " does not hash to bucket " + std::to_string(bucket));
    }
    terms.push_back(term);
  }
  return terms;
}

}  // namespace

BucketTerms bucket_terms_from_json(const json& j, int hash_bits, const std::string& name, const std::string& pointer) {
  if (!j.is_object()) bad_json(name, pointer, "expected {buckets, terms, distinct}");
  auto member = [&](const char* key) -> const json& {
    auto it = j.find(key);
    if (it == j.end()) bad_json(name, pointer + "/" + key, "missing field");
    if (!it->is_array()) bad_json(name, pointer + "/" + key, "expected an array");
    return *it;
  };
  const json& buckets = member("buckets");
  const json& terms = member("terms");
  const json& distinct = member("distinct");
  if (terms.size() != buckets.size() || distinct.size() != buckets.size()) {
    bad_json(name, pointer, "buckets, terms and distinct must have equal lengths");
  }
  const std::uint64_t dim = std::uint64_t{1} << hash_bits;
  BucketTerms out;
  out.entries.reserve(buckets.size());
  for (std::size_t e = 0; e < buckets.size(); ++e) {
    const std::string at = "/" + std::to_string(e);
    const json& b = buckets[e];
    if (!b.is_number_unsigned() || b.get<std::uint64_t>() >= dim ||
        (e > 0 && b.get<std::uint64_t>() <= out.entries.back().bucket)) {
      bad_json(name, pointer + "/buckets" + at, "expected increasing bucket numbers in 0.." + std::to_string(dim - 1));
    }
    BucketTerms::Entry entry;
    entry.bucket = b.get<std::uint32_t>();
    entry.terms = entry_terms(terms[e], entry.bucket, hash_bits, name, pointer + "/terms" + at);
    if (!distinct[e].is_number_unsigned() || distinct[e].get<std::uint64_t>() < entry.terms.size()) {
      bad_json(name, pointer + "/distinct" + at, "expected a count of at least the listed terms");
    }
    entry.distinct = distinct[e].get<std::uint64_t>();
    out.entries.push_back(std::move(entry));
  }
  return out;
}

}  // namespace pegasos
