// Large fresh arrays, faulted in fast: the pages of new memory cost more to
// fault in than the zero fill itself, and std::vector::resize takes every
// fault on one thread.
#pragma once

#include <sys/mman.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include <tbb/parallel_for.h>

namespace pegasos {

// Ask for transparent huge pages on the 2 MiB-aligned interior of
// [p, p + bytes) (advisory; nothing for less than 4 MiB).
inline void advise_huge_pages(void* p, std::size_t bytes) {
#ifdef MADV_HUGEPAGE
  constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;
  if (bytes < 2 * kHuge) return;
  const std::uintptr_t from = (reinterpret_cast<std::uintptr_t>(p) + kHuge - 1) / kHuge * kHuge;
  const std::uintptr_t to = (reinterpret_cast<std::uintptr_t>(p) + bytes) / kHuge * kHuge;
  if (to > from) ::madvise(reinterpret_cast<void*>(from), to - from, MADV_HUGEPAGE);
#else
  (void)p;
  (void)bytes;
#endif
}

// s.resize(n) where s grows to a large size: its new storage as huge pages.
inline void resize_huge(std::string& s, std::size_t n) {
  if (n > s.capacity()) {
    s.reserve(n);
    advise_huge_pages(s.data(), s.capacity());
  }
  s.resize(n);
}

// v.resize(n) for a new, large v (16 MiB or more), its pages faulted in by all
// threads first (MADV_POPULATE_WRITE, one call per piece): the page faults of fresh memory
// cost more than the zero fill itself, and resize() would take them all on
// one thread. From 4 MiB the 2 MiB-aligned interior of new storage is asked for
// transparent huge pages first (MADV_HUGEPAGE; the system's default is often "madvise"): one fault
// per 2 MiB instead of per 4 KiB. On this (virtual) machine a fresh 4 KiB page
// costs about 10 µs to fault in, so 87 MB of arrays took 220 ms, 110 ms
// populated, 39 ms populated as huge pages; parsing a9a-like LIBSVM text
// (57 MB) 0.19 -> 0.095 s wall, the RCV1-like file (757 MB) 1.3-1.6 -> 0.9-1.0 s,
// and SDCA's passes over the rows 11% faster there (fewer TLB misses).
// Advisory: where a call fails, resize() faults as usual.
template <class T, class A>
void resize_populated(std::vector<T, A>& v, std::size_t n) {
  constexpr std::size_t kPiece = std::size_t{8} << 20;
  const bool fresh = v.capacity() < n;
  v.reserve(n);
  const std::size_t bytes = n * sizeof(T);
  if (fresh) advise_huge_pages(v.data(), bytes);  // from 4 MiB
#ifdef MADV_POPULATE_WRITE  // Linux 5.14 and later
  if (fresh && v.empty() && bytes >= 2 * kPiece) {  // new storage only: pages in use need no faulting
    char* base = reinterpret_cast<char*>(v.data());
    tbb::parallel_for(std::size_t{0}, (bytes + kPiece - 1) / kPiece, [&](std::size_t k) {
      const std::size_t page = 4096;
      const auto from = (reinterpret_cast<std::uintptr_t>(base + k * kPiece) + page - 1) / page * page;
      const auto to = reinterpret_cast<std::uintptr_t>(base + std::min(bytes, (k + 1) * kPiece)) / page * page;
      if (to > from) ::madvise(reinterpret_cast<void*>(from), to - from, MADV_POPULATE_WRITE);
    });
  }
#endif
  v.resize(n);
}

// v.assign(n, value), where storage that must grow is made anew and, from
// 4 MiB, asked for huge pages first (advise_huge_pages): a hashed text
// model's 2^20 weights or idf values (8 MB each) took about 2000 faults of
// 4 KiB each to load, some 20 ms a model on this machine.
template <class T, class A>
void fill_fresh(std::vector<T, A>& v, std::size_t n, const T& value) {
  if (v.capacity() < n) {
    std::vector<T, A>().swap(v);
    v.reserve(n);
    advise_huge_pages(v.data(), n * sizeof(T));
  }
  v.assign(n, value);
}

// A fresh anonymous mapping of `bytes` rounded up to 2 MiB, aligned to
// 2 MiB and asked for transparent huge pages (one fault per 2 MiB; the
// kernel's pages come zeroed); release it with unmap_huge(p, bytes). Over-maps
// by one huge page and unmaps the unaligned head and tail. Throws
// std::bad_alloc when the kernel refuses.
inline constexpr std::size_t kHugePage = std::size_t{2} << 20;
inline std::size_t huge_rounded(std::size_t bytes) { return (bytes + kHugePage - 1) / kHugePage * kHugePage; }
inline void* map_huge(std::size_t bytes) {
  const std::size_t length = huge_rounded(bytes);
  void* p = ::mmap(nullptr, length + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  const auto base = reinterpret_cast<std::uintptr_t>(p);
  const std::uintptr_t aligned = (base + kHugePage - 1) / kHugePage * kHugePage;
  // The head and tail beyond the aligned block (the tail is never empty:
  // aligned < base + kHugePage). A failed unmap only leaves them mapped, unused.
  if (aligned > base) ::munmap(p, aligned - base);
  ::munmap(reinterpret_cast<void*>(aligned + length), base + kHugePage - aligned);
#ifdef MADV_HUGEPAGE
  ::madvise(reinterpret_cast<void*>(aligned), length, MADV_HUGEPAGE);  // advisory
#endif
  return reinterpret_cast<void*>(aligned);
}
inline void unmap_huge(void* p, std::size_t bytes) noexcept { ::munmap(p, huge_rounded(bytes)); }

// An allocator for a solver's own large arrays: a block of 2 MiB or more is
// a map_huge() block, so every 2 MiB of it takes one fault; smaller blocks
// come from std::allocator. malloc's large blocks start
// 16 bytes past a page at any 4 KiB offset, so advise_huge_pages() on them
// leaves up to 2 MiB at each end in 4 KiB pages: on this (virtual) machine,
// where a 4 KiB fault costs about 10 µs, a fresh 6 MB array took 12-14 ms
// to zero and 25 MB 25 ms (SDCA's per-row arrays for 780k rows). A mapped
// block holds at most 2 MiB more than asked for (its rounded-up end).
template <class T>
struct HugePageAllocator {
  using value_type = T;
  static constexpr std::size_t kHuge = kHugePage;
  static constexpr std::size_t kFrom = kHugePage;

  HugePageAllocator() = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U>&) noexcept {}  // NOLINT: converting, as std::allocator's

  T* allocate(std::size_t n) {
    if (n > (std::numeric_limits<std::size_t>::max() - 2 * kHuge) / sizeof(T)) throw std::bad_array_new_length();
    const std::size_t bytes = n * sizeof(T);
    if (bytes < kFrom) return std::allocator<T>().allocate(n);
    return static_cast<T*>(map_huge(bytes));
  }
  void deallocate(T* p, std::size_t n) noexcept {
    const std::size_t bytes = n * sizeof(T);
    if (bytes < kFrom) {
      std::allocator<T>().deallocate(p, n);
    } else {
      unmap_huge(p, bytes);
    }
  }
};

// Stateless: any two are equal, whatever their element types.
template <class T, class U>
bool operator==(const HugePageAllocator<T>&, const HugePageAllocator<U>&) noexcept {
  return true;
}

// A vector of a solver's own (per-row) state: large ones in huge pages.
template <class T>
using HugeVector = std::vector<T, HugePageAllocator<T>>;

}  // namespace pegasos
