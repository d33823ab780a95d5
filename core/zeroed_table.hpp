// Allocator for large weight tables: 2 MB-aligned and advised to use
// transparent huge pages. A sparse update touches ~nnz random rows of a
// table that can hold 10^7 features; with 4 kB pages nearly every touch is a
// TLB miss, with 2 MB pages the page walks mostly disappear. Small tables use
// the ordinary heap.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdlib>
#include <new>

namespace pegasos {

template <class T>
struct HugePageAllocator {
  using value_type = T;
  static constexpr std::size_t kHugePage = std::size_t{2} << 20;

  HugePageAllocator() = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U>&) {}

  T* allocate(std::size_t n) {
    const std::size_t bytes = n * sizeof(T);
    if (bytes < kHugePage) {
      if (void* p = std::malloc(bytes ? bytes : 1)) return static_cast<T*>(p);
      throw std::bad_alloc();
    }
    const std::size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
    void* p = std::aligned_alloc(kHugePage, rounded);
    if (p == nullptr) throw std::bad_alloc();
    ::madvise(p, rounded, MADV_HUGEPAGE);  // advisory: ignored where unsupported
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t) { std::free(p); }

  template <class U>
  bool operator==(const HugePageAllocator<U>&) const { return true; }
};

}  // namespace pegasos
