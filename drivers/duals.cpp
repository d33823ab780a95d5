#include "drivers/duals.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <utility>

#include <tbb/global_control.h>
#include <xxhash.h>

#include "core/fresh_memory.hpp"
#include "core/parallel.hpp"

namespace pegasos {
namespace {

constexpr XXH64_hash_t kRowSeed = 0x7065676173'6f73ULL;  // "pegasos"

std::string_view label_of(const Dataset& data, const RowView& x) {
  if (x.label < 0 || static_cast<std::size_t>(x.label) >= data.classes.size()) return {};
  return data.classes[static_cast<std::size_t>(x.label)];
}

// The (hash, row) pairs in increasing order. The hashes are uniform, so a
// counting sort on their top 16 bits leaves buckets of a few pairs, each
// sorted on its own (in parallel unless `serial`): the order std::sort gives, as
// the pairs are distinct, in a third of tbb::parallel_sort's time (780k rows:
// 10 vs 30 ms).
RowHashJob::Sorted sorted_by_hash(const std::vector<std::uint64_t>& hash, bool serial = false) {
  const std::size_t n = hash.size();
  std::vector<std::pair<std::uint64_t, std::size_t>> out(n);
  if (n <= kSerialRows) {
    for (std::size_t i = 0; i < n; ++i) out[i] = {hash[i], i};
    std::sort(out.begin(), out.end());
    return out;
  }
  constexpr int kShift = 48;
  std::vector<std::size_t> start((std::size_t{1} << (64 - kShift)) + 1, 0);
  for (const std::uint64_t h : hash) ++start[(h >> kShift) + 1];
  for (std::size_t b = 1; b < start.size(); ++b) start[b] += start[b - 1];
  std::vector<std::size_t> at(start.begin(), start.end() - 1);
  for (std::size_t i = 0; i < n; ++i) out[at[hash[i] >> kShift]++] = {hash[i], i};
  const auto sort_bucket = [&](std::size_t b) {
    if (start[b + 1] - start[b] > 1) {
      std::sort(out.begin() + static_cast<std::ptrdiff_t>(start[b]),
                out.begin() + static_cast<std::ptrdiff_t>(start[b + 1]));
    }
  };
  if (serial) {
    for (std::size_t b = 0; b + 1 < start.size(); ++b) sort_bucket(b);
  } else {
    parallel_for_index(start.size() - 1, sort_bucket);
  }
  return out;
}

}  // namespace

std::uint64_t row_hash(const RowView& x, std::string_view label) {
  // One call over the bytes the streaming form would feed in turn (XXH3 gives
  // the same hash either way): length, label, nnz, indices, values.
  thread_local std::vector<unsigned char> bytes;
  const std::uint64_t length = label.size();
  const std::size_t n = sizeof length + label.size() + sizeof x.nnz +
                        std::size_t{x.nnz} * (sizeof(std::uint32_t) + sizeof(float));
  if (bytes.size() < n) bytes.resize(n);
  unsigned char* p = bytes.data();
  const auto put = [&p](const void* from, std::size_t size) {
    if (size > 0) std::memcpy(p, from, size);
    p += size;
  };
  put(&length, sizeof length);
  put(label.data(), label.size());
  put(&x.nnz, sizeof x.nnz);
  put(x.indices, std::size_t{x.nnz} * sizeof(std::uint32_t));
  put(x.values, std::size_t{x.nnz} * sizeof(float));
  return XXH3_64bits_withSeed(bytes.data(), n, kRowSeed);
}

std::vector<std::uint64_t> row_hashes(const Dataset& data, bool serial) {
  std::vector<std::uint64_t> hash(data.size());
  parallel_for_index(
      data.size(), [&](std::size_t i) { hash[i] = row_hash(data.row(i), label_of(data, data.row(i))); },
      serial ? data.size() : kSerialRows);
  return hash;
}

bool background_hashing_pays(const Dataset& data) {
  // Below this the parallel hashing after training takes a few milliseconds.
  constexpr std::uint64_t kMinNonZeros = std::uint64_t{1} << 20;
  return data.size() > kSerialRows && data.nnz() >= kMinNonZeros &&
         tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism) >= 2;
}

RowHashJob::RowHashJob(const Dataset& data, bool background) {
  if (!background) return;
  // Serial: the solver's thread keeps its core (no TBB work is queued).
  pending_ = std::async(std::launch::async, [&data] { return sorted_by_hash(row_hashes(data, true), true); });
}

RowHashJob::Sorted RowHashJob::take(const Dataset& data) {
  if (pending_.valid()) return pending_.get();
  if (known_) return sorted_by_hash(*known_);
  return sorted_by_hash(row_hashes(data));
}

std::optional<StoredDuals> collect_duals(const Dataset& data, const std::vector<double>& fraction, std::size_t K,
                                         std::string& note, RowHashJob* hashes) {
  const std::size_t n = data.size();
  if (K == 0 || fraction.size() != n * K) return std::nullopt;
  const RowHashJob::Sorted by_hash = hashes != nullptr ? hashes->take(data) : RowHashJob().take(data);
  StoredDuals out;
  out.outputs = static_cast<int>(K);
  out.rows.reserve(n);
  out.alpha.reserve(n * K);
  // Fresh memory faulted in a 4 KiB page at a time costs about 10 µs a page
  // here (core/fresh_memory.hpp): 780k RCV1-like rows, 20-24 -> 17-19 ms.
  advise_huge_pages(out.rows.data(), n * sizeof(std::uint64_t));
  advise_huge_pages(out.alpha.data(), n * K * sizeof(double));
  std::vector<double> mean(K);
  for (std::size_t p = 0; p < n;) {
    std::size_t q = p;
    std::fill(mean.begin(), mean.end(), 0.0);
    for (; q < n && by_hash[q].first == by_hash[p].first; ++q) {
      // The rows come in hash order: fetch a later row's fractions ahead.
      if (q + 16 < n) __builtin_prefetch(fraction.data() + by_hash[q + 16].second * K);
      for (std::size_t m = 0; m < K; ++m) mean[m] += fraction[by_hash[q].second * K + m];
    }
    const double count = static_cast<double>(q - p);
    bool nonzero = false;
    for (double& v : mean) nonzero = (v /= count) != 0.0 || nonzero;
    if (nonzero) {
      out.rows.push_back(by_hash[p].first);
      out.alpha.insert(out.alpha.end(), mean.begin(), mean.end());
      const auto copies = static_cast<std::uint32_t>(std::min<std::size_t>(q - p, UINT32_MAX));
      if (copies > 1 && out.copies.empty()) out.copies.assign(out.rows.size() - 1, 1);
      if (!out.copies.empty()) out.copies.push_back(copies);
    }
    p = q;
  }
  if (out.rows.size() > StoredDuals::kMaxEntries) {
    note = "dual variables not stored: " + std::to_string(out.rows.size()) + " support vectors, more than " +
           std::to_string(StoredDuals::kMaxEntries);
    return std::nullopt;
  }
  return out;
}

std::vector<std::ptrdiff_t> dual_entries(const StoredDuals& duals, const Dataset& data, std::size_t& matched) {
  return dual_entries(duals, row_hashes(data), matched);
}

std::vector<std::ptrdiff_t> dual_entries(const StoredDuals& duals, const std::vector<std::uint64_t>& hash,
                                         std::size_t& matched) {
  const std::size_t n = hash.size();
  std::vector<std::ptrdiff_t> entry(n, -1);
  matched = 0;
  // With the copy counts, an entry goes to as many matching rows as shared it
  // (the first ones in the data's order); a further copy of the row is new.
  const bool counted = duals.copies.size() == duals.rows.size();
  std::vector<std::uint32_t> left = counted ? duals.copies : std::vector<std::uint32_t>{};
  for (std::size_t i = 0; i < n; ++i) {
    const auto it = std::lower_bound(duals.rows.begin(), duals.rows.end(), hash[i]);
    if (it == duals.rows.end() || *it != hash[i]) continue;
    const std::ptrdiff_t e = it - duals.rows.begin();
    if (counted) {
      if (left[static_cast<std::size_t>(e)] == 0) continue;
      --left[static_cast<std::size_t>(e)];
    }
    entry[i] = e;
    ++matched;
  }
  return entry;
}

std::vector<double> match_duals(const StoredDuals& duals, const std::vector<std::ptrdiff_t>& entries, int k) {
  const std::size_t n = entries.size(), K = static_cast<std::size_t>(duals.outputs);
  const std::size_t width = k < 0 ? K : 1;
  std::vector<double> out(n * width, std::numeric_limits<double>::quiet_NaN());
  for (std::size_t i = 0; i < n; ++i) {
    if (entries[i] < 0) continue;
    const auto e = static_cast<std::size_t>(entries[i]);
    for (std::size_t m = 0; m < width; ++m) out[i * width + m] = duals.alpha[e * K + (k < 0 ? m : static_cast<std::size_t>(k))];
  }
  return out;
}

std::vector<double> match_duals(const StoredDuals& duals, const Dataset& data, int k, std::size_t& matched) {
  return match_duals(duals, dual_entries(duals, data, matched), k);
}

}  // namespace pegasos
