// A read-mostly array that either owns its elements (a std::vector) or
// borrows someone else's (a pointer and a length, e.g. a numpy array's data
// handed in by the Python door), so a caller's CSR arrays can be trained on
// without a second full-size copy.
//
// Reading is the same either way (data(), size(), [], iteration). There is no
// non-const element access: code that changes the elements asks for the
// vector with own(), which first copies borrowed elements into owned storage
// (copy on write), so the lender's memory is never written. Copying a Buffer
// makes an owning copy; moving keeps the borrow. The lender must outlive every
// Buffer borrowing from it (the Python door keeps the arrays alive).
#pragma once

#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <utility>
#include <vector>

namespace pegasos {

template <typename T>
class Buffer {
 public:
  using value_type = T;
  using const_iterator = const T*;

  Buffer() = default;
  Buffer(std::initializer_list<T> init) : owned_(init) {}
  Buffer(std::vector<T>&& v) : owned_(std::move(v)) {}  // NOLINT: implicit, as a vector
  Buffer(const std::vector<T>& v) : owned_(v) {}        // NOLINT
  Buffer(const Buffer& o) : owned_(o.begin(), o.end()) {}
  Buffer(Buffer&& o) noexcept : owned_(std::move(o.owned_)), lent_(o.lent_), lent_size_(o.lent_size_) {
    o.lent_ = nullptr;
    o.lent_size_ = 0;
  }
  Buffer& operator=(const Buffer& o) {
    if (this != &o) {
      std::vector<T> copy(o.begin(), o.end());
      owned_ = std::move(copy);
      lent_ = nullptr;
      lent_size_ = 0;
    }
    return *this;
  }
  Buffer& operator=(Buffer&& o) noexcept {
    if (this != &o) {
      owned_ = std::move(o.owned_);
      lent_ = o.lent_;
      lent_size_ = o.lent_size_;
      o.lent_ = nullptr;
      o.lent_size_ = 0;
    }
    return *this;
  }
  Buffer& operator=(std::vector<T>&& v) {
    owned_ = std::move(v);
    lent_ = nullptr;
    lent_size_ = 0;
    return *this;
  }

  // Elements [p, p + n) of someone else's memory, not copied.
  static Buffer borrow(const T* p, std::size_t n) {
    Buffer b;
    b.lent_ = p;
    b.lent_size_ = n;
    return b;
  }
  bool borrowed() const { return lent_ != nullptr; }
  std::size_t capacity() const { return lent_ ? lent_size_ : owned_.capacity(); }

  const T* data() const { return lent_ ? lent_ : owned_.data(); }
  std::size_t size() const { return lent_ ? lent_size_ : owned_.size(); }
  bool empty() const { return size() == 0; }
  const T& operator[](std::size_t i) const { return data()[i]; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size(); }
  const T& front() const { return data()[0]; }
  const T& back() const { return data()[size() - 1]; }

  // The owned vector, for any change (borrowed elements are copied in first).
  std::vector<T>& own() {
    if (lent_) {
      owned_.assign(lent_, lent_ + lent_size_);
      lent_ = nullptr;
      lent_size_ = 0;
    }
    return owned_;
  }
  // The common changes, spelled as on a vector.
  void push_back(const T& v) { own().push_back(v); }
  void reserve(std::size_t n) { own().reserve(n); }
  void resize(std::size_t n) { own().resize(n); }
  void resize(std::size_t n, const T& v) { own().resize(n, v); }
  void clear() {
    owned_.clear();
    lent_ = nullptr;
    lent_size_ = 0;
  }
  template <typename It>
  void assign(It first, It last) {
    std::vector<T> v(first, last);
    *this = std::move(v);
  }
  void assign(std::size_t n, const T& v) { *this = std::vector<T>(n, v); }
  template <typename It>
  void append(It first, It last) {
    std::vector<T>& v = own();
    v.insert(v.end(), first, last);
  }
  void shrink_to_fit() {
    if (!lent_) owned_.shrink_to_fit();
  }

  friend bool operator==(const Buffer& a, const Buffer& b) { return std::equal(a.begin(), a.end(), b.begin(), b.end()); }
  friend bool operator==(const Buffer& a, const std::vector<T>& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  std::vector<T> owned_;
  const T* lent_ = nullptr;
  std::size_t lent_size_ = 0;
};

}  // namespace pegasos
