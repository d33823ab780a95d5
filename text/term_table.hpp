// Internal to text/: the string -> id table of vocabulary mode.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pegasos {

// ---------------------------------------------------------------------------
// Term table: open addressing over 64-bit term hashes, strings kept in one
// arena. Ids are dense (0..size-1) in insertion order.
class TermTable {
 public:
  static constexpr std::uint32_t kAbsent = std::numeric_limits<std::uint32_t>::max();

  std::size_t size() const { return hashes_.size(); }
  std::string_view term(std::uint32_t id) const {
    return {arena_.data() + offsets_[id], static_cast<std::size_t>(offsets_[id + 1] - offsets_[id])};
  }
  std::uint64_t hash(std::uint32_t id) const { return hashes_[id]; }

  std::uint32_t find(std::string_view term, std::uint64_t hash) const {
    if (slots_.empty()) return kAbsent;
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = static_cast<std::size_t>(hash) & mask;; i = (i + 1) & mask) {
      const std::uint32_t slot = slots_[i];
      if (slot == 0) return kAbsent;
      if (hashes_[slot - 1] == hash && this->term(slot - 1) == term) return slot - 1;
    }
  }

  // {id, true} when `term` was new.
  std::pair<std::uint32_t, bool> insert(std::string_view term, std::uint64_t hash) {
    if (2 * (size() + 1) > slots_.size()) grow();  // load factor <= 1/2
    const std::size_t mask = slots_.size() - 1;
    std::size_t i = static_cast<std::size_t>(hash) & mask;
    for (;; i = (i + 1) & mask) {
      const std::uint32_t slot = slots_[i];
      if (slot == 0) break;
      if (hashes_[slot - 1] == hash && this->term(slot - 1) == term) return {slot - 1, false};
    }
    if (size() >= kAbsent - 1) throw std::length_error("more than 2^32 - 2 distinct terms");
    const auto id = static_cast<std::uint32_t>(size());
    hashes_.push_back(hash);
    arena_.append(term);
    offsets_.push_back(arena_.size());
    slots_[i] = id + 1;
    return {id, true};
  }

 private:
  void grow() {
    std::vector<std::uint32_t> slots(std::max<std::size_t>(slots_.size() * 2, 64), 0);
    const std::size_t mask = slots.size() - 1;
    for (std::size_t id = 0; id < size(); ++id) {
      std::size_t i = static_cast<std::size_t>(hashes_[id]) & mask;
      while (slots[i] != 0) i = (i + 1) & mask;
      slots[i] = static_cast<std::uint32_t>(id + 1);
    }
    slots_.swap(slots);
  }

  std::vector<std::uint32_t> slots_;  // id + 1; 0 = empty; size a power of two
  std::vector<std::uint64_t> hashes_;
  std::vector<std::uint64_t> offsets_{0};
  std::string arena_;
};

}  // namespace pegasos
