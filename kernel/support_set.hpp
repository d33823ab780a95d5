// Kernel Pegasos's support set (kernel/kernel_trainer.cpp): the support
// vectors in order of entry, their coefficients and a contiguous copy of
// their rows; with budget merging also points that are no training row.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/dataset.hpp"
#include "objectives/kernels.hpp"

namespace pegasos::kernel_pegasos_detail {

inline constexpr std::size_t kNoSlot = std::numeric_limits<std::size_t>::max();

// The support set: rows in order of entry, coefficients a_jc row-major, and
// a contiguous copy of the rows (CSR in slot order), so that the scan over
// the support vectors at every step reads memory sequentially (hardware
// prefetch) instead of jumping around the training set.
class SupportSet {
 public:
  SupportSet(const Dataset& data, std::size_t K) : data_(data), K_(K), slot_(data.size(), kNoSlot) {}

  std::size_t size() const { return rows_.size(); }
  // The training row of slot s, or kNoSlot for a merged point (budget merging).
  std::size_t row(std::size_t s) const { return rows_[s]; }
  bool has_merged() const { return merged_ > 0; }
  int label(std::size_t s) const { return labels_[s]; }
  RowView sv(std::size_t s) const {
    const std::uint64_t begin = ptr_[s];
    return RowView{values_.data() + begin, indices_.data() + begin, static_cast<std::uint32_t>(ptr_[s + 1] - begin), -1, s};
  }
  const double* coefficients() const { return coef_.data(); }
  const double* squared_norms() const { return sq_.data(); }
  std::uint64_t nnz() const { return ptr_.back(); }
  std::uint64_t removals() const { return removals_; }
  std::size_t slot(std::size_t row) const { return slot_[row]; }

  // Add `delta` (K values) to row's coefficients, entering it if needed
  // (sq_norm: its ‖x‖², kept per slot for the RBF).
  void add(std::size_t row, const double* delta, double sq_norm) {
    std::size_t s = slot_[row];
    if (s == kNoSlot) {
      s = rows_.size();
      const RowView x = data_.row(row);
      append(row, data_.labels[row], x.indices, x.values, x.nnz, sq_norm);
      coef_.resize(coef_.size() + K_, 0.0);
      slot_[row] = s;
    }
    double* a = &coef_[s * K_];
    bool nonzero = false;
    for (std::size_t c = 0; c < K_; ++c) {
      a[c] += delta[c];
      nonzero = nonzero || a[c] != 0.0;
    }
    if (!nonzero) remove(s);  // S holds exactly the rows with a non-zero count
  }

  // The support vector with the smallest Σ_c |a_sc|; ties go to the oldest
  // (the list is in order of entry, so the first minimum).
  std::size_t weakest() const {
    std::size_t best = 0;
    double best_mass = std::numeric_limits<double>::infinity();
    for (std::size_t s = 0; s < rows_.size(); ++s) {
      double mass = 0.0;
      for (std::size_t c = 0; c < K_; ++c) mass += std::abs(coef_[s * K_ + c]);
      if (mass < best_mass) {
        best_mass = mass;
        best = s;
      }
    }
    return best;
  }

  // Replace slots m and n by z = h x_m + (1 − h) x_n (sparse union, stored as
  // float) with coefficients az (K values) and m's class, appended last.
  void merge(std::size_t m, std::size_t n, double h, const double* az) {
    const RowView a = sv(m), b = sv(n);
    std::vector<std::uint32_t> idx;
    std::vector<float> val;
    for (std::uint32_t i = 0, j = 0; i < a.nnz || j < b.nnz;) {
      const bool take_a = j == b.nnz || (i < a.nnz && a.indices[i] <= b.indices[j]);
      const bool take_b = i == a.nnz || (j < b.nnz && b.indices[j] <= a.indices[i]);
      const std::uint32_t f = take_a ? a.indices[i] : b.indices[j];
      const double v = (take_a ? h * a.values[i] : 0.0) + (take_b ? (1.0 - h) * b.values[j] : 0.0);
      i += take_a;
      j += take_b;
      if (v == 0.0) continue;
      idx.push_back(f);
      val.push_back(static_cast<float>(v));
    }
    const int label = labels_[m];
    remove(std::max(m, n));
    remove(std::min(m, n));
    const RowView z{val.data(), idx.data(), static_cast<std::uint32_t>(idx.size()), -1, 0};
    append(kNoSlot, label, idx.data(), val.data(), z.nnz, row_squared_norm(z));
    coef_.insert(coef_.end(), az, az + K_);
    ++merged_;
  }

  // Remove slot s, keeping the order of the others. O(|S| · K + nnz of S).
  void remove(std::size_t s) {
    ++removals_;
    if (rows_[s] != kNoSlot) slot_[rows_[s]] = kNoSlot;
    auto at = [](auto& v, std::size_t i) { return v.begin() + static_cast<std::ptrdiff_t>(i); };
    const std::uint64_t begin = ptr_[s], end = ptr_[s + 1];
    indices_.erase(at(indices_, begin), at(indices_, end));
    values_.erase(at(values_, begin), at(values_, end));
    ptr_.erase(at(ptr_, s + 1));
    for (std::size_t i = s + 1; i < ptr_.size(); ++i) ptr_[i] -= end - begin;
    rows_.erase(at(rows_, s));
    labels_.erase(at(labels_, s));
    sq_.erase(at(sq_, s));
    coef_.erase(at(coef_, s * K_), at(coef_, (s + 1) * K_));
    for (std::size_t i = s; i < rows_.size(); ++i) {
      if (rows_[i] != kNoSlot) slot_[rows_[i]] = i;
    }
  }

 private:
  void append(std::size_t row, int label, const std::uint32_t* idx, const float* val, std::uint32_t nnz, double sq_norm) {
    rows_.push_back(row);
    labels_.push_back(label);
    sq_.push_back(sq_norm);
    indices_.insert(indices_.end(), idx, idx + nnz);
    values_.insert(values_.end(), val, val + nnz);
    ptr_.push_back(indices_.size());
  }

  const Dataset& data_;
  std::size_t K_;
  std::vector<std::size_t> rows_;
  std::vector<int> labels_;
  std::uint64_t merged_ = 0;
  std::vector<double> coef_;
  std::vector<double> sq_;
  std::vector<std::uint64_t> ptr_{0};
  std::vector<std::uint32_t> indices_;
  std::vector<float> values_;
  std::uint64_t removals_ = 0;
  std::vector<std::size_t> slot_;  // per training row: its index in rows_, or kNoSlot
};

}  // namespace pegasos::kernel_pegasos_detail
