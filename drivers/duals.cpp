#include "drivers/duals.hpp"

#include <algorithm>
#include <limits>
#include <numeric>

#include <xxhash.h>

namespace pegasos {
namespace {

constexpr XXH64_hash_t kRowSeed = 0x7065676173'6f73ULL;  // "pegasos"

std::string_view label_of(const Dataset& data, const RowView& x) {
  if (x.label < 0 || static_cast<std::size_t>(x.label) >= data.classes.size()) return {};
  return data.classes[static_cast<std::size_t>(x.label)];
}

}  // namespace

std::uint64_t row_hash(const RowView& x, std::string_view label) {
  XXH3_state_t* state = XXH3_createState();
  if (state == nullptr) throw std::bad_alloc();
  XXH3_64bits_reset_withSeed(state, kRowSeed);
  const std::uint64_t length = label.size();
  XXH3_64bits_update(state, &length, sizeof length);
  XXH3_64bits_update(state, label.data(), label.size());
  XXH3_64bits_update(state, &x.nnz, sizeof x.nnz);
  if (x.nnz > 0) {
    XXH3_64bits_update(state, x.indices, std::size_t{x.nnz} * sizeof(std::uint32_t));
    XXH3_64bits_update(state, x.values, std::size_t{x.nnz} * sizeof(float));
  }
  const std::uint64_t h = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  return h;
}

std::optional<StoredDuals> collect_duals(const Dataset& data, const std::vector<double>& fraction, std::size_t K,
                                         std::string& note) {
  const std::size_t n = data.size();
  if (K == 0 || fraction.size() != n * K) return std::nullopt;
  std::vector<std::uint64_t> hash(n);
  for (std::size_t i = 0; i < n; ++i) hash[i] = row_hash(data.row(i), label_of(data, data.row(i)));
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return hash[a] < hash[b]; });
  StoredDuals out;
  out.outputs = static_cast<int>(K);
  std::vector<double> mean(K);
  for (std::size_t p = 0; p < n;) {
    std::size_t q = p;
    std::fill(mean.begin(), mean.end(), 0.0);
    for (; q < n && hash[order[q]] == hash[order[p]]; ++q) {
      for (std::size_t m = 0; m < K; ++m) mean[m] += fraction[order[q] * K + m];
    }
    const double count = static_cast<double>(q - p);
    bool nonzero = false;
    for (double& v : mean) nonzero = (v /= count) != 0.0 || nonzero;
    if (nonzero) {
      out.rows.push_back(hash[order[p]]);
      out.alpha.insert(out.alpha.end(), mean.begin(), mean.end());
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

std::vector<double> match_duals(const StoredDuals& duals, const Dataset& data, int k, std::size_t& matched) {
  const std::size_t n = data.size(), K = static_cast<std::size_t>(duals.outputs);
  const std::size_t width = k < 0 ? K : 1;
  std::vector<double> out(n * width, std::numeric_limits<double>::quiet_NaN());
  matched = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t h = row_hash(data.row(i), label_of(data, data.row(i)));
    const auto it = std::lower_bound(duals.rows.begin(), duals.rows.end(), h);
    if (it == duals.rows.end() || *it != h) continue;
    const std::size_t e = static_cast<std::size_t>(it - duals.rows.begin());
    ++matched;
    for (std::size_t m = 0; m < width; ++m) out[i * width + m] = duals.alpha[e * K + (k < 0 ? m : static_cast<std::size_t>(k))];
  }
  return out;
}

}  // namespace pegasos
