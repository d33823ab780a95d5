// A fixed-size array of doubles that starts at zero, for large weight tables.
//
// Large tables are mapped straight from the kernel: its pages come zeroed, so
// there is no memset pass over (at d = 10⁷) 160 MB, and a page is only
// cleared when first touched. They are 2 MB-aligned and advised to use
// transparent huge pages: a sparse update touches ~nnz random rows, and with
// 4 kB pages nearly every touch is a TLB miss; with 2 MB pages the page walks
// mostly disappear. Small tables come from calloc.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <new>
#include <utility>

#include "core/fresh_memory.hpp"

namespace pegasos {

class ZeroedTable {
 public:
  ZeroedTable() = default;
  explicit ZeroedTable(std::size_t n) : size_(n) {
    const std::size_t bytes = n * sizeof(double);
    if (n != 0 && bytes / sizeof(double) != n) throw std::bad_alloc();
    if (bytes < kHugePage) {
      data_ = static_cast<double*>(std::calloc(n ? n : 1, sizeof(double)));
      if (data_ == nullptr) throw std::bad_alloc();
      return;
    }
    data_ = static_cast<double*>(map_huge(bytes));  // zeroed by the kernel
    mapped_ = bytes;
  }
  ZeroedTable(const ZeroedTable&) = delete;
  ZeroedTable& operator=(const ZeroedTable&) = delete;
  ZeroedTable(ZeroedTable&& o) noexcept { swap(o); }
  ZeroedTable& operator=(ZeroedTable&& o) noexcept {
    ZeroedTable(std::move(o)).swap(*this);
    return *this;
  }
  ~ZeroedTable() {
    if (mapped_ != 0) {
      unmap_huge(data_, mapped_);
    } else {
      std::free(data_);
    }
  }

  std::size_t size() const { return size_; }
  double* data() { return data_; }
  const double* data() const { return data_; }
  double& operator[](std::size_t i) { return data_[i]; }
  const double& operator[](std::size_t i) const { return data_[i]; }

 private:
  void swap(ZeroedTable& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    std::swap(mapped_, o.mapped_);
  }
  double* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t mapped_ = 0;  // bytes asked of map_huge (0: the table came from calloc)
};

}  // namespace pegasos
