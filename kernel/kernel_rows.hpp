// Kernel rows for kernel SDCA (kernel/kernel_sdca.hpp): whole rows
// K'_i· = (k(x_j, x_i) + shift)_j of the training set, an LRU cache of them,
// and how a missing row is computed.
//
// Two ways to compute a row, chosen once per data set:
//  - sparse: x_i scattered into a dense array, then the canonical gather dot
//    (objectives/kernels.hpp) against every row x_j — the cost is the
//    training set's nnz per row, and each row re-reads the whole set;
//  - dense (rows at least 1/kDenseShare dense on average, dimension at most
//    kDenseMaxDimension): a zero-padded float copy of the rows, and the dot
//    products taken kDenseLanes features at a time in double (each product
//    of two float32 values is exact in double; lane l sums the features
//    f ≡ l mod kDenseLanes in increasing f, the lanes are then added
//    pairwise). Rows are computed kQueryBlock at a time — the rows about to
//    be needed in the visiting order (`upcoming`) join the missing one while
//    the cache can hold every row — so that one read of x_j from memory
//    serves up to kQueryBlock dot products: a single row is bound by memory
//    bandwidth (the 10k Fashion-MNIST rows are 31 MB), a block is not.
// Both give k(x_j, x_i) to rounding (the summation order differs); each
// value is computed by one thread in a fixed order, and which rows a block
// holds depends only on the sequence of requests, so the values, and the
// model, are the same for any number of threads. The dense dot is symmetric
// to the bit (x_i·x_j = x_j·x_i), so K' is too.
#pragma once

#include <algorithm>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#include <cstdint>
#include <cstring>
#include <limits>
#include <list>
#include <span>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "core/dataset.hpp"
#include "kernel/kernel_model.hpp"
#include "objectives/kernels.hpp"

namespace pegasos {
namespace kernel_sdca_detail {

// Elements per parallel block of a kernel row or a g update; below two
// blocks' worth of work everything runs on the calling thread.
inline constexpr std::size_t kRowBlock = 1024;
// Dense rows: average nnz per row ≥ dimension / kDenseShare, dimension ≤
// kDenseMaxDimension (the float copy is n · dimension · 4 bytes).
inline constexpr std::uint64_t kDenseShare = 4;
inline constexpr std::uint32_t kDenseMaxDimension = 1u << 14;
inline constexpr std::size_t kDenseLanes = 4;  // fixed: it defines the summation order
// Rows computed together (dense), and queries per register group.
inline constexpr std::size_t kQueryBlock = 16;
inline constexpr std::size_t kQueryGroup = 4;
// How far ahead in the visiting order a block looks for rows to join.
inline constexpr std::size_t kLookahead = 64;

using DenseLanes = double __attribute__((vector_size(kDenseLanes * sizeof(double))));
using FloatLanes = float __attribute__((vector_size(kDenseLanes * sizeof(float))));

// out[b] = x · q_b for G queries (padded length `width`, a multiple of
// kDenseLanes), in the lane order above.
template <std::size_t G>
[[gnu::always_inline]] inline void dense_dots(const float* x, const double* const* q, std::size_t width, double* out) {
  DenseLanes acc[G] = {};
  for (std::size_t f = 0; f < width; f += kDenseLanes) {
    FloatLanes xf;
    std::memcpy(&xf, x + f, sizeof xf);
    const DenseLanes xv = __builtin_convertvector(xf, DenseLanes);
    for (std::size_t b = 0; b < G; ++b) {
      DenseLanes qv;
      std::memcpy(&qv, q[b] + f, sizeof qv);
      acc[b] += xv * qv;
    }
  }
  for (std::size_t b = 0; b < G; ++b) out[b] = (acc[b][0] + acc[b][1]) + (acc[b][2] + acc[b][3]);
}
static_assert(kDenseLanes == 4, "dense_dots combines four lanes");

// dot[(j − begin)·m + b] = x_j · q_b for rows j in [begin, end) of the dense
// copy (row stride `width`) and m ≤ kQueryBlock queries.
[[gnu::always_inline]] inline void dense_block_body(const float* rows, std::size_t width, std::size_t begin,
                                                    std::size_t end, const double* const* q, std::size_t m, double* dot) {
  for (std::size_t j = begin; j < end; ++j) {
    const float* x = rows + j * width;
    double* d = dot + (j - begin) * m;
    std::size_t b = 0;
    for (; b + kQueryGroup <= m; b += kQueryGroup) dense_dots<kQueryGroup>(x, q + b, width, d + b);
    for (; b < m; ++b) dense_dots<1>(x, q + b, width, d + b);
  }
}
// The same code compiled for AVX2 (4 doubles per instruction instead of 2;
// no FMA, so the same roundings and the same bits as the baseline build),
// picked at run time when the processor has it.
[[gnu::target("avx2")]] inline void dense_block_avx2(const float* rows, std::size_t width, std::size_t begin,
                                                     std::size_t end, const double* const* q, std::size_t m,
                                                     double* dot) {
  dense_block_body(rows, width, begin, end, q, m, dot);
}
inline void dense_block_generic(const float* rows, std::size_t width, std::size_t begin, std::size_t end,
                                const double* const* q, std::size_t m, double* dot) {
  dense_block_body(rows, width, begin, end, q, m, dot);
}
// Whether this CPU and the OS run AVX2 code, asked once, when first needed.
// Not __builtin_cpu_supports: linking it runs libgcc's CPU probe (a dozen
// CPUID instructions, each a trap to the hypervisor on a virtual machine) at
// the start of every process, also those that never score a kernel.
inline bool cpu_has_avx2() {
#if defined(__x86_64__) || defined(__i386__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid(1, &a, &b, &c, &d) == 0) return false;
  const bool osxsave = (c & bit_OSXSAVE) != 0, avx = (c & bit_AVX) != 0;
  if (!osxsave || !avx) return false;
  unsigned xcr0_lo = 0, xcr0_hi = 0;
  __asm__ volatile("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
  if ((xcr0_lo & 0x6u) != 0x6u) return false;  // the OS saves the XMM and YMM state
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d) == 0) return false;
  return (b & bit_AVX2) != 0;
#else
  return false;
#endif
}

inline void dense_block(const float* rows, std::size_t width, std::size_t begin, std::size_t end,
                        const double* const* q, std::size_t m, double* dot) {
  static const bool avx2 = cpu_has_avx2();
  if (avx2) {
    dense_block_avx2(rows, width, begin, end, q, m, dot);
  } else {
    dense_block_generic(rows, width, begin, end, q, m, dot);
  }
}

// Whole kernel rows K'_i· (n values), least recently used evicted first.
// What is cached depends only on the sequence of requests, and a cached row
// holds the very values a fresh evaluation gives: the cache changes the cost,
// never a result.
class RowCache {
 public:
  RowCache(const Dataset& data, const KernelParams& kernel, double shift, const std::vector<double>& sq,
           std::uint64_t cap_bytes)
      : data_(data), kernel_(kernel), shift_(shift), sq_(sq), slot_of_(data.size(), kNone) {
    const std::uint64_t row_bytes = std::max<std::uint64_t>(1, data.size() * sizeof(double));
    const std::uint64_t n = data.size();  // ≥ 1
    capacity_ = static_cast<std::size_t>(std::clamp<std::uint64_t>(cap_bytes / row_bytes, std::min<std::uint64_t>(2, n), n));
    const std::uint64_t dim = data.dimension;
    if (dim > 0 && dim <= kDenseMaxDimension && kDenseShare * data.nnz() >= n * dim) {
      width_ = (dim + kDenseLanes - 1) / kDenseLanes * kDenseLanes;
      rows_.assign(n * width_, 0.0f);
      for (std::size_t j = 0; j < n; ++j) {
        const RowView x = data.row(j);
        for (std::uint32_t p = 0; p < x.nnz; ++p) rows_[j * width_ + x.indices[p]] = x.values[p];
      }
      queries_.assign(kQueryBlock * width_, 0.0);
    } else {
      queries_.assign(data.dimension, 0.0);
    }
  }

  // K'_i·. `upcoming`: the rows to be visited next (they may join i's block).
  const double* row(std::size_t i, std::span<const std::size_t> upcoming = {}) {
    if (slot_of_[i] != kNone) {
      Entry& e = entries_[slot_of_[i]];
      lru_.splice(lru_.begin(), lru_, e.position);
      return e.values.data();
    }
    std::vector<std::size_t> block{i};
    if (width_ > 0 && capacity_ == data_.size()) {  // nothing will be evicted: prefetch
      for (std::size_t p = 0; p < std::min(upcoming.size(), kLookahead) && block.size() < kQueryBlock; ++p) {
        const std::size_t j = upcoming[p];
        if (slot_of_[j] == kNone && std::find(block.begin(), block.end(), j) == block.end()) block.push_back(j);
      }
    }
    std::vector<double*> out;
    for (const std::size_t r : block) out.push_back(place(r));
    if (width_ > 0) {
      compute_dense(block, out);
    } else {
      compute_sparse(i, out[0]);
    }
    return out[0];
  }

  std::uint64_t evaluations() const { return evaluations_; }
  // Whether row i is in the cache (row(i) would not compute it).
  bool cached(std::size_t i) const { return slot_of_[i] != kNone; }

 private:
  static constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
  struct Entry {
    std::vector<double> values;
    std::list<std::size_t>::iterator position;
    std::size_t row;
  };

  // A slot for row i (evicting the least recently used when full).
  double* place(std::size_t i) {
    std::size_t slot;
    if (entries_.size() < capacity_) {
      slot = entries_.size();
      entries_.push_back(Entry{std::vector<double>(data_.size()), {}, i});
    } else {
      slot = lru_.back();
      lru_.pop_back();
      slot_of_[entries_[slot].row] = kNone;
      entries_[slot].row = i;
    }
    lru_.push_front(slot);
    entries_[slot].position = lru_.begin();
    slot_of_[i] = slot;
    return entries_[slot].values.data();
  }

  template <class Run>
  void over_rows(std::uint64_t work, const Run& run) const {
    const std::size_t n = data_.size();
    if (n > 2 * kRowBlock && work > kParallelMultiplyAdds) {
      tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, kRowBlock),
                        [&](const tbb::blocked_range<std::size_t>& r) { run(r.begin(), r.end()); });
    } else {
      run(0, n);
    }
  }

  // out[j] = k(x_j, x_i) + shift: x_j first, as for a support vector against
  // a query (objectives/kernels.hpp), x_i scattered into a dense array.
  void compute_sparse(std::size_t i, double* out) {
    const RowView x = data_.row(i);
    for (std::uint32_t p = 0; p < x.nnz; ++p) queries_[x.indices[p]] = x.values[p];
    const KernelQuery query{x, queries_.data(), sq_[i]};
    over_rows(data_.nnz() + data_.size(), [&](std::size_t begin, std::size_t end) {
      for (std::size_t j = begin; j < end; ++j) out[j] = query_kernel(kernel_, data_.row(j), sq_[j], query) + shift_;
    });
    for (std::uint32_t p = 0; p < x.nnz; ++p) queries_[x.indices[p]] = 0.0;
    evaluations_ += data_.size();
  }

  // out[b][j] = k(x_j, x_block[b]) + shift by dense dot products.
  void compute_dense(const std::vector<std::size_t>& block, const std::vector<double*>& out) {
    const std::size_t m = block.size(), w = width_;
    const double* q[kQueryBlock];
    for (std::size_t b = 0; b < m; ++b) {
      const float* x = &rows_[block[b] * w];
      double* qb = &queries_[b * w];
      for (std::size_t f = 0; f < w; ++f) qb[f] = x[f];
      q[b] = qb;
    }
    over_rows(data_.size() * w * m, [&](std::size_t begin, std::size_t end) {
      constexpr std::size_t kStrip = 64;  // rows per call: the dots stay in L1
      double dot[kStrip * kQueryBlock];
      for (std::size_t first = begin; first < end; first += kStrip) {
        const std::size_t last = std::min(end, first + kStrip);
        dense_block(rows_.data(), w, first, last, q, m, dot);
        for (std::size_t j = first; j < last; ++j) {
          for (std::size_t b = 0; b < m; ++b) {
            out[b][j] = kernel_from_dot(kernel_, dot[(j - first) * m + b], sq_[j], sq_[block[b]]) + shift_;
          }
        }
      }
    });
    evaluations_ += data_.size() * m;
  }

  const Dataset& data_;
  KernelParams kernel_;
  double shift_;
  const std::vector<double>& sq_;
  std::size_t capacity_ = 2;
  std::vector<std::size_t> slot_of_;
  std::vector<Entry> entries_;
  std::list<std::size_t> lru_;  // slots, most recently used first
  std::size_t width_ = 0;       // > 0: dense rows, padded to this width
  std::vector<float> rows_;     // dense rows (n × width_)
  std::vector<double> queries_; // the block's rows in double (dense), or one scattered query (sparse)
  std::uint64_t evaluations_ = 0;
};

}  // namespace kernel_sdca_detail
}  // namespace pegasos
