// The order of the visits of one pass under `sampling: permutation` (SDCA's
// passes, the Pegasos engine's epochs).
//
// A fresh uniform permutation of the rows each pass reads memory at random:
// once the rows no longer fit in the cache every visit waits on a miss, and
// the pass costs 2-3x one in file order (a9a x 24, 87 MB of rows: 0.09 s vs
// 0.035 s a pass). File order is no answer: a file sorted by label, visited
// in order, trains 5 passes to twice the optimum's objective.
//
// So on data larger than kBlockedBytes whose file order looks random with
// respect to the classes (classes_look_shuffled), a pass visits blocks of
// kVisitBlock consecutive rows (of those still active) in a fresh random
// order, each block's rows in file order: every row once a pass, and reads
// that stream through memory. The block size trades the two: SDCA on a9a x 24
// needs the same passes as with a uniform permutation with blocks of 8 to 32
// rows (4.8-4.9) but more with 64 (5-6.4) and 256 (6.5-7.9), while blocks of
// 16 rows already take most of the speed (a pass 2x cheaper). Small
// data (in cache either way) and files ordered by class keep the uniform
// permutation. `sampling: shuffle` asks for the uniform permutation always.
//
// Long rows (kLongRowBytes and more on average) keep the uniform permutation
// too: each row is already a stream of many cache lines, so blocks save
// little, and their fixed groups, visited in file order, are a cycle SDCA
// repeats every pass. Random Fourier features of Fashion-MNIST (10k rows x
// 2000 dense values, 16 KB a row), one-vs-all at C = 10 certified at 1e-2:
// blocks 7.32M visits, 32.6 s; the uniform permutation 2.33M visits, 6.5 s
// (one class against the rest: 76 passes against 25). a9a x 24 (112 bytes a
// row) and the RCV1-like file (560) stay in blocks.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <span>
#include <vector>

#include "core/dataset.hpp"
#include "core/fresh_memory.hpp"
#include "core/random.hpp"
#include "core/training.hpp"

namespace pegasos {

inline constexpr std::size_t kVisitBlock = 32;
inline constexpr std::uint64_t kBlockedBytes = std::uint64_t{16} << 20;
// Rows of this many bytes (index and value, 8 bytes a non-zero) on average
// or more keep the uniform permutation: see the top of the file.
inline constexpr std::uint64_t kLongRowBytes = 1024;

// Whether the class ids of consecutive rows look like a random order: the
// file cut into blocks of kVisitBlock rows, Pearson's χ² of the class counts
// per block against the overall class shares stays within six standard
// deviations of its mean under a random order: mean (blocks − 1)(classes − 1),
// variance at most blocks·Σ_c (2 + 1/e_c) (a Poisson count of mean e_c per
// block and class: rare classes widen it). A file sorted or grouped by class,
// or two files of different class mixes concatenated, fails by far; a false
// alarm only costs speed (the uniform permutation).
inline bool classes_look_shuffled(std::span<const int> labels, std::size_t classes) {
  const std::size_t blocks = labels.size() / kVisitBlock;
  if (blocks < 2 || classes < 2) return true;
  const std::size_t counted = blocks * kVisitBlock;
  std::vector<double> expected(classes, 0.0);  // per block: share · kVisitBlock
  for (std::size_t i = 0; i < counted; ++i) {
    if (labels[i] >= 0 && static_cast<std::size_t>(labels[i]) < classes) {
      expected[static_cast<std::size_t>(labels[i])] += 1.0;
    }
  }
  std::size_t present = 0;
  for (double& e : expected) {
    present += e > 0.0 ? 1 : 0;
    e *= static_cast<double>(kVisitBlock) / static_cast<double>(counted);
  }
  if (present < 2) return true;
  // Σ_c (k − e)²/e = Σ_c k²/e − 2·Σ_c k + Σ_c e, the first sum over the
  // classes present in the block only: O(rows), whatever the class count.
  double chi2 = 0.0;
  std::vector<std::uint32_t> count(classes, 0), seen;
  for (std::size_t b = 0; b < blocks; ++b) {
    double labelled = 0.0;
    for (std::size_t i = b * kVisitBlock; i < (b + 1) * kVisitBlock; ++i) {
      if (labels[i] < 0 || static_cast<std::size_t>(labels[i]) >= classes) continue;
      const auto c = static_cast<std::size_t>(labels[i]);
      if (count[c]++ == 0) seen.push_back(static_cast<std::uint32_t>(c));
      labelled += 1.0;
    }
    for (const std::uint32_t c : seen) {
      chi2 += static_cast<double>(count[c]) * count[c] / expected[c];
      count[c] = 0;
    }
    seen.clear();
    chi2 += static_cast<double>(kVisitBlock) - 2.0 * labelled;
  }
  double variance = 0.0;
  for (const double e : expected) variance += e > 0.0 ? 2.0 + 1.0 / e : 0.0;
  variance *= static_cast<double>(blocks);
  const double mean = static_cast<double>(blocks - 1) * static_cast<double>(present - 1);
  return chi2 <= mean + 6.0 * std::sqrt(variance);
}

// Whether `sampling: permutation` visits `data` in blocks (see above): large
// data of short rows whose file order looks shuffled.
inline bool block_order_pays(const Dataset& data) {
  const std::uint64_t row_bytes = data.nnz() * (sizeof(float) + sizeof(std::uint32_t));
  const std::uint64_t bytes = row_bytes + data.size() * sizeof(std::uint64_t);
  return bytes >= kBlockedBytes && row_bytes < kLongRowBytes * data.size() &&
         classes_look_shuffled(data.labels, data.classes.size());
}

// Arranges a pass's row indices (distinct, < n) into its visit order.
class PassOrder {
 public:
  PassOrder(bool blocked, std::size_t n) : blocked_(blocked) {
    if (blocked_) bits_.assign(n / 64 + 1, 0);
  }
  // The order `sampling` asks for on `data`: blocks where permutation sampling
  // pays for them (block_order_pays), else the uniform permutation.
  PassOrder(const Dataset& data, Sampling sampling)
      : PassOrder(sampling == Sampling::kPermutation && block_order_pays(data), data.size()) {}
  bool blocked() const { return blocked_; }

  template <class T>
  void arrange(std::span<T> rows, Rng& rng) {
    if (!blocked_) {
      rng.shuffle(rows);
      return;
    }
    // Into increasing order (a bitmap: the rows are distinct), then the
    // blocks of consecutive entries in a random order.
    for (const T i : rows) bits_[static_cast<std::size_t>(i) / 64] |= std::uint64_t{1} << (i % 64);
    std::size_t at = 0;
    for (std::size_t word = 0; word < bits_.size(); ++word) {
      for (std::uint64_t b = bits_[word]; b != 0; b &= b - 1) {
        rows[at++] = static_cast<T>(word * 64 + static_cast<std::size_t>(__builtin_ctzll(b)));
      }
      bits_[word] = 0;
    }
    blocks_.resize((rows.size() + kVisitBlock - 1) / kVisitBlock);
    std::iota(blocks_.begin(), blocks_.end(), std::uint32_t{0});
    rng.shuffle(std::span<std::uint32_t>(blocks_));
    sorted_.assign(rows.begin(), rows.end());
    at = 0;
    for (const std::uint32_t b : blocks_) {
      const std::size_t begin = b * kVisitBlock, end = std::min(rows.size(), begin + kVisitBlock);
      for (std::size_t k = begin; k < end; ++k) rows[at++] = static_cast<T>(sorted_[k]);
    }
  }

 private:
  bool blocked_;
  std::vector<std::uint64_t> bits_;
  std::vector<std::uint32_t> blocks_;
  HugeVector<std::uint64_t> sorted_;  // 6 MB for 780k rows: in huge pages
};

}  // namespace pegasos
