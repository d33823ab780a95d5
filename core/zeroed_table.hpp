// A fixed-size array of doubles that starts at zero, for large weight tables.
//
// Large tables are mapped straight from the kernel: its pages come zeroed, so
// there is no memset pass over (at d = 10⁷) 160 MB, and a page is only
// cleared when first touched. They are 2 MB-aligned and advised to use
// transparent huge pages: a sparse update touches ~nnz random rows, and with
// 4 kB pages nearly every touch is a TLB miss; with 2 MB pages the page walks
// mostly disappear. Small tables come from calloc.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <utility>

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
    // Over-map by one huge page, then unmap the unaligned head and tail.
    mapped_ = (bytes + kHugePage - 1) / kHugePage * kHugePage;
    const std::size_t span = mapped_ + kHugePage;
    void* p = ::mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    const auto base = reinterpret_cast<std::uintptr_t>(p);
    const std::uintptr_t aligned = (base + kHugePage - 1) / kHugePage * kHugePage;
    if (aligned > base) ::munmap(p, aligned - base);
    if (const std::size_t tail = base + span - (aligned + mapped_); tail > 0) {
      ::munmap(reinterpret_cast<void*>(aligned + mapped_), tail);
    }
    data_ = reinterpret_cast<double*>(aligned);
    ::madvise(data_, mapped_, MADV_HUGEPAGE);  // advisory: ignored where unsupported
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
      ::munmap(data_, mapped_);
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
  static constexpr std::size_t kHugePage = std::size_t{2} << 20;
  void swap(ZeroedTable& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    std::swap(mapped_, o.mapped_);
  }
  double* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t mapped_ = 0;  // bytes mapped (0: the table came from calloc)
};

}  // namespace pegasos
