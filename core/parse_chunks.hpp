// Internal to the LIBSVM and CSV readers (core/libsvm_reader.cpp,
// core/csv_reader.cpp): text cut into chunks of lines parsed in parallel, each
// into its own Chunk (rows, chunk-local label ids, first error), then merged
// into one Dataset; and the number and token helpers both readers share.
#pragma once

#include <fast_float/fast_float.h>
#include <sys/mman.h>
#include <unistd.h>
#if defined(__SSE2__) && defined(__x86_64__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <unordered_map>
#include <vector>

#include "core/dataset.hpp"
#include "core/errors.hpp"
#include "core/fresh_memory.hpp"
#include "core/parallel.hpp"

namespace pegasos::reader_detail {

// Chunks are cut at line boundaries; a fixed size (not one per thread) keeps
// parsing deterministic and balanced whatever the thread count.
constexpr std::size_t kChunkBytes = std::size_t{4} << 20;

inline bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

inline std::string quote(std::string_view token) {
  constexpr std::size_t kShown = 40;
  std::string s(token.substr(0, kShown));
  for (char& c : s) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
  }
  return "'" + s + (token.size() > kShown ? "...'" : "'");
}

// One array of a chunk's results: an own vector that grows, or, once
// place()d, a window of the Dataset's array sized from counted bounds, so
// that rows are parsed straight into their final storage (no chunk arrays to
// allocate, fault in, copy and free). Overflowing a window is a bug in the
// bound, reported as such.
template <class T>
class Column {
 public:
  void place(T* data, std::size_t capacity) {
    window_ = data;
    capacity_ = capacity;
  }
  // Count the elements but store none (values known to be all ones).
  void discard() { discard_ = true; }
  [[gnu::always_inline]] void push_back(T v) {
    if (window_ == nullptr) {
      if (discard_) {
        ++size_;
      } else {
        own_.push_back(v);
      }
      return;
    }
    if (size_ == capacity_) [[unlikely]] overflow();
    window_[size_++] = v;
  }
  std::size_t size() const { return window_ != nullptr || discard_ ? size_ : own_.size(); }
  void resize(std::size_t n) {  // shrink only
    if (window_ != nullptr || discard_) {
      size_ = n;
    } else {
      own_.resize(n);
    }
  }
  void reserve(std::size_t n) {  // filled once, in order: as huge pages from 4 MiB
    if (window_ != nullptr || discard_ || n <= own_.capacity()) return;
    own_.reserve(n);
    advise_huge_pages(own_.data(), own_.capacity() * sizeof(T));
  }
  const T* data() const { return window_ != nullptr ? window_ : own_.data(); }
  T operator[](std::size_t i) const { return data()[i]; }
  void release() { std::vector<T>().swap(own_); }

 private:
  [[noreturn]] __attribute__((noinline, cold)) static void overflow() {
    throw std::logic_error("reader: a chunk outgrew its counted bound");
  }
  T* window_ = nullptr;
  bool discard_ = false;
  std::size_t size_ = 0, capacity_ = 0;
  std::vector<T> own_;
};

// Result of parsing one chunk of lines.
struct Chunk {
  Column<std::uint64_t> row_ends;          // per row, chunk-local end in indices/values
  Column<std::uint32_t> indices;
  Column<float> values;
  Column<int> labels;                      // chunk-local label ids, -1 = none
  std::vector<std::string> label_names;    // chunk-local id -> canonical name
  std::unordered_map<std::string, int> label_ids;
  std::uint64_t max_index = 0;             // 1 + largest 0-based index seen
  std::size_t lines = 0;                   // newline-terminated lines seen
  // First error: local line (1-based), column (1-based), message.
  std::size_t error_line = 0, error_column = 0;
  std::string error;

  // Label tokens exactly as written, with their ids: the few spellings a
  // file uses ("+1", "-1") are found by a byte comparison, without
  // canonical_label's number parse, string and hash lookup on every line.
  struct RawLabel {
    std::string text;
    int id;
  };
  static constexpr std::size_t kRawLabels = 8;
  std::vector<RawLabel> raw_labels;

  // Room for the rows of `bytes` of text, so that the arrays never move while
  // they fill: every stored LIBSVM value takes at least 4 bytes ("1:1 "), which
  // bounds its non-zeros; rows (and CSV values) may still outgrow the guess. Pages that are
  // reserved but never written cost nothing.
  void reserve_for(std::size_t bytes) {
    indices.reserve(bytes / 4 + 1);
    values.reserve(bytes / 4 + 1);
    row_ends.reserve(bytes / 32 + 16);
    labels.reserve(bytes / 32 + 16);
  }

  int label_id(std::string_view token) {
    for (const RawLabel& r : raw_labels) {
      if (r.text.size() != token.size()) continue;
      // Byte by byte: a label is a few bytes, and a call to memcmp per line
      // cost 3% of a LIBSVM parse of short lines.
      std::size_t k = 0;
      while (k < token.size() && r.text[k] == token[k]) ++k;
      if (k == token.size()) return r.id;
    }
    const int id = canonical_label_id(token);
    if (raw_labels.size() < kRawLabels) raw_labels.push_back({std::string(token), id});
    return id;
  }

  int canonical_label_id(std::string_view token) {
    std::string name = canonical_label(token);
    auto it = label_ids.find(name);
    if (it != label_ids.end()) return it->second;
    const int id = static_cast<int>(label_names.size());
    label_ids.emplace(name, id);
    label_names.push_back(std::move(name));
    return id;
  }
};

// Split [0, text.size()) at newlines into pieces of about kChunkBytes.
inline std::vector<std::size_t> chunk_bounds(std::string_view text) {
  std::vector<std::size_t> bounds{0};
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t next = pos + kChunkBytes;
    if (next >= text.size()) {
      next = text.size();
    } else {
      const void* nl = std::memchr(text.data() + next, '\n', text.size() - next);
      next = nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - text.data()) + 1 : text.size();
    }
    bounds.push_back(next);
    pos = next;
  }
  return bounds;
}

// Drops the whole pages inside [begin, end) from the process when `release`
// (ReadOptions::text_is_file_mapping: the text is a read-only file mapping,
// whose pages stay in the page cache and read back from it if touched again).
// Pages shared with a neighbouring chunk are kept.
inline void release_text_pages(const char* begin, const char* end, bool release) {
  if (!release) return;
  static const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const std::uintptr_t b = (reinterpret_cast<std::uintptr_t>(begin) + page - 1) & ~(page - 1);
  const std::uintptr_t e = reinterpret_cast<std::uintptr_t>(end) & ~(page - 1);
  if (e > b) ::madvise(reinterpret_cast<void*>(b), e - b, MADV_DONTNEED);  // advisory: a failure only keeps them
}
// release_text_pages(begin, end, release) when the scope that reads a chunk
// ends, however it ends (a parse error returns early).
struct ReleaseTextPagesAtExit {
  const char *begin, *end;
  bool release;
  ~ReleaseTextPagesAtExit() { release_text_pages(begin, end, release); }
};

struct ParseFailure {
  std::size_t column;
  std::string message;
};

// A value of the form [-]DIGITS[.DIGITS] whose significant digits fit in
// 2^24 and with at most 10 decimals, converted exactly as fast_float does
// (Clinger's fast path: m and 10^k are exact floats, so the one IEEE
// division m / 10^k is correctly rounded). Sets *next past the digits;
// false (nothing consumed) for any other form. *zero (if given) is set to
// whether the value is ±0, known from the digits before the division ends.
inline bool parse_simple_decimal(const char* p, const char* end, float& out, const char** next,
                                 bool* zero = nullptr) {
  static constexpr float kPow10[] = {1e0f, 1e1f, 1e2f, 1e3f, 1e4f, 1e5f, 1e6f, 1e7f, 1e8f, 1e9f, 1e10f};
  const bool negative = p < end && *p == '-';
  if (negative) ++p;
  std::uint32_t m = 0;
  int decimals = 0, digits = 0;
  for (; p < end && *p >= '0' && *p <= '9'; ++p, ++digits) {
    m = m * 10 + static_cast<std::uint32_t>(*p - '0');
    if (m > (1u << 24)) return false;
  }
  if (p < end && *p == '.') {
    ++p;
    for (; p < end && *p >= '0' && *p <= '9'; ++p, ++digits) {
      m = m * 10 + static_cast<std::uint32_t>(*p - '0');
      if (m > (1u << 24) || ++decimals > 10) return false;
    }
  }
  if (digits == 0 || (p < end && (*p == 'e' || *p == 'E'))) return false;
  const float v = static_cast<float>(m) / kPow10[decimals];
  out = negative ? -v : v;
  *next = p;
  if (zero != nullptr) *zero = m == 0;  // m ≥ 1 gives v ≥ 1e-10, never 0
  return true;
}

// Past one explicit '+' that starts a number ("+2", "+.5", "+1e-3"), as
// strtod, LIBLINEAR and scikit-learn read it; fast_float's from_chars
// rejects it. A lone "+" and a second sign ("++2", "+-2") are left in place,
// so the number that follows fails to parse.
inline const char* skip_plus(const char* p, const char* end) {
  return end - p >= 2 && p[0] == '+' && p[1] != '+' && p[1] != '-' ? p + 1 : p;
}

inline float parse_value(const char* token, const char* end, std::size_t column) {
  const char* begin = skip_plus(token, end);
  float v = 0;
  const char* after = nullptr;
  if (parse_simple_decimal(begin, end, v, &after) && after == end) return v;
  auto r = fast_float::from_chars(begin, end, v);
  std::string_view tok(token, static_cast<std::size_t>(end - token));
  if (r.ptr != end || begin == end) {
    if (r.ec == std::errc::result_out_of_range) throw ParseFailure{column, "value " + quote(tok) + " is out of range for float32"};
    throw ParseFailure{column, "value " + quote(tok) + " is not a number"};
  }
  if (r.ec == std::errc::result_out_of_range || !std::isfinite(v)) {
    if (std::isnan(v)) throw ParseFailure{column, "value " + quote(tok) + " is NaN"};
    throw ParseFailure{column, "value " + quote(tok) + " is infinite or out of range for float32"};
  }
  return v;
}

// Whether the ':' at p (p < end) is followed by the value "1" alone: '1'
// then the end of the text or a byte that is not printable ASCII (as a
// signed char at most ' ': spaces and line ends, or a byte that makes the
// value unreadable, so the parse stops with an error and the verdict does
// not matter).
inline bool colon_then_one(const char* p, const char* end) {
  if (end - p < 2 || p[1] != '1') return false;
  return end - p == 2 || static_cast<signed char>(p[2]) <= ' ';
}

// The number of ':' and of '\n' in [p, end), 16 bytes a step where SSE2 is
// there (x86-64): per-byte counters (a match subtracts -1) summed every
// 255 steps, before they can wrap. With `unit`, also whether every ':' is
// followed by the value "1" alone (colon_then_one), so that the text's
// values are all ones (indicator data) and need not be stored: kept true
// only while it holds, and checked from the same loads moved by 1 and 2
// bytes while it does.
inline std::pair<std::size_t, std::size_t> count_colons_newlines(const char* p, const char* end,
                                                                 bool* unit = nullptr) {
  std::size_t colons = 0, newlines = 0;
  bool ones = unit != nullptr && *unit;
#if defined(__SSE2__) && defined(__x86_64__)
  const __m128i colon = _mm_set1_epi8(':'), newline = _mm_set1_epi8('\n'), zero = _mm_setzero_si128();
  const __m128i one = _mm_set1_epi8('1'), printable = _mm_set1_epi8(' ' + 1);
  auto sum = [&](__m128i counts) {
    const __m128i s = _mm_sad_epu8(counts, zero);
    return static_cast<std::size_t>(_mm_cvtsi128_si64(s)) + static_cast<std::size_t>(_mm_extract_epi16(s, 4));
  };
  while (end - p >= 18) {  // 16 bytes and the two after them (the unit check)
    __m128i c = zero, n = zero, bad = zero;
    for (int step = 0; step < 255 && end - p >= 18; ++step, p += 16) {
      const __m128i block = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      const __m128i colons_here = _mm_cmpeq_epi8(block, colon), newlines_here = _mm_cmpeq_epi8(block, newline);
      c = _mm_sub_epi8(c, colons_here);
      n = _mm_sub_epi8(n, newlines_here);
      if (ones) {
        const __m128i next = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 1));
        const __m128i after = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 2));
        const __m128i ends = _mm_cmplt_epi8(after, printable);  // signed: as colon_then_one
        bad = _mm_or_si128(bad, _mm_andnot_si128(_mm_and_si128(_mm_cmpeq_epi8(next, one), ends), colons_here));
      }
    }
    colons += sum(c);
    newlines += sum(n);
    if (_mm_movemask_epi8(bad) != 0) ones = false;
  }
#endif
  for (; p < end; ++p) {
    colons += *p == ':';
    newlines += *p == '\n';
    if (ones && *p == ':' && !colon_then_one(p, end)) ones = false;
  }
  if (unit != nullptr) *unit = ones;
  return {colons, newlines};
}

// Room for each chunk's rows in the Dataset's arrays, from counts: a row per
// line (a last line may lack its newline) and a stored value per ':' (true of
// LIBSVM text, where every value follows its own colon). `*_cap` get the
// offsets of the windows, which the chunks are placed on.
// Returns whether every value in the text is "1" (count_colons_newlines'
// unit check): then no value is stored (Column::discard) and the Dataset
// gets unit values after the merge (set_unit_values). `release`: drop each
// chunk's pages once counted (release_text_pages), so that the file's pages
// and the arrays are not all held at once.
inline bool place_chunks(std::string_view text, const std::vector<std::size_t>& bounds, std::vector<Chunk>& chunks,
                         Dataset& ds, std::vector<std::uint64_t>& row_cap, std::vector<std::uint64_t>& nnz_cap,
                         bool release) {
  std::vector<std::uint64_t>& row_ptr = ds.row_ptr.own();  // the reader fills owned arrays
  std::vector<std::uint32_t>& indices = ds.indices.own();
  std::vector<float>& values = ds.values.own();
  const std::size_t n_chunks = chunks.size();
  row_cap.assign(n_chunks + 1, 0);
  nnz_cap.assign(n_chunks + 1, 0);
  std::vector<char> unit(n_chunks, 1);
  parallel_for_index(n_chunks, [&](std::size_t ci) {
    bool ones = true;
    const auto [colons, newlines] =
        count_colons_newlines(text.data() + bounds[ci], text.data() + bounds[ci + 1], &ones);
    release_text_pages(text.data() + bounds[ci], text.data() + bounds[ci + 1], release);
    row_cap[ci + 1] = newlines + 1;
    nnz_cap[ci + 1] = colons;
    unit[ci] = ones ? 1 : 0;
  });
  for (std::size_t ci = 0; ci < n_chunks; ++ci) {
    row_cap[ci + 1] += row_cap[ci];
    nnz_cap[ci + 1] += nnz_cap[ci];
  }
  const bool unit_values = std::find(unit.begin(), unit.end(), 0) == unit.end();
  resize_populated(ds.labels, row_cap[n_chunks]);
  resize_populated(row_ptr, row_cap[n_chunks] + 1);
  resize_populated(indices, nnz_cap[n_chunks]);
  if (!unit_values) resize_populated(values, nnz_cap[n_chunks]);
  for (std::size_t ci = 0; ci < n_chunks; ++ci) {
    const std::size_t rows = row_cap[ci + 1] - row_cap[ci], nnz = nnz_cap[ci + 1] - nnz_cap[ci];
    chunks[ci].labels.place(ds.labels.data() + row_cap[ci], rows);
    chunks[ci].row_ends.place(row_ptr.data() + row_cap[ci] + 1, rows);
    chunks[ci].indices.place(indices.data() + nnz_cap[ci], nnz);
    if (unit_values) {
      chunks[ci].values.discard();
    } else {
      chunks[ci].values.place(values.data() + nnz_cap[ci], nnz);
    }
  }
  return unit_values;
}

// Parse every chunk's lines with `parse_line(line, end, chunk)`; the first
// error of a chunk stops that chunk.
// `fast_line(p, stop, chunk, &line_end)`, where given, first tries the
// common form of a line starting at p and ending at the first newline (or
// stop), finding that end itself, which spares a search for it before
// every line (6% of a LIBSVM parse of short lines); it returns false, having
// added no row, for anything it does not take. `release`: drop each chunk's
// pages once parsed (release_text_pages).
struct NoFastLine {
  bool operator()(const char*, const char*, Chunk&, const char**) const { return false; }
};

template <class LineParser, class FastLine>
void parse_all(std::string_view text, const std::vector<std::size_t>& bounds, std::vector<Chunk>& chunks,
               LineParser& parse_line, const FastLine& fast_line, bool release) {
  parallel_for_index(chunks.size(), [&](std::size_t ci) {
    Chunk& c = chunks[ci];
    const char* p = text.data() + bounds[ci];
    const char* stop = text.data() + bounds[ci + 1];
    const ReleaseTextPagesAtExit done{p, stop, release};
    c.reserve_for(static_cast<std::size_t>(stop - p));
    while (p < stop) {
      if (const char* line_end = nullptr; fast_line(p, stop, c, &line_end)) {
        ++c.lines;
        p = line_end < stop ? line_end + 1 : stop;  // past the newline
        continue;
      }
      const void* nl = std::memchr(p, '\n', static_cast<std::size_t>(stop - p));
      const char* line_end = nl ? static_cast<const char*>(nl) : stop;
      const char* content_end = line_end;
      if (content_end > p && content_end[-1] == '\r') --content_end;  // CRLF accepted
      ++c.lines;
      try {
        parse_line(p, content_end, c);
      } catch (const ParseFailure& f) {
        c.error_line = c.lines;
        c.error_column = f.column;
        c.error = f.message;
        return;
      }
      p = line_end + 1;
    }
  });
}

// Chunk-local label ids -> ids in ds.classes.
// Each class name's place in `classes` (looked up by hash: a file of 10⁵
// distinct labels, regression targets read as classes, took minutes by a
// linear search per name).
inline std::unordered_map<std::string_view, int> class_positions(const std::vector<std::string>& classes) {
  std::unordered_map<std::string_view, int> at;
  at.reserve(classes.size());
  for (std::size_t k = 0; k < classes.size(); ++k) at.emplace(classes[k], static_cast<int>(k));
  return at;
}
inline std::vector<int> global_label_ids(const Chunk& c, const std::unordered_map<std::string_view, int>& classes) {
  std::vector<int> to_global(c.label_names.size());
  for (std::size_t k = 0; k < c.label_names.size(); ++k) to_global[k] = classes.at(c.label_names[k]);
  return to_global;
}

// Chunks parsed into windows of ds's arrays (place_chunks): slide each
// chunk's rows down to their final offsets where the bounds left gaps (in
// order, so no chunk overwrites one not yet moved; nothing moves when every
// value was stored), then translate labels and row ends in place.
inline void merge_placed(std::vector<Chunk>& chunks, Dataset& ds, const std::vector<std::uint64_t>& row_cap,
                         const std::vector<std::uint64_t>& nnz_cap, const std::vector<std::uint64_t>& row_offset,
                         const std::vector<std::uint64_t>& nnz_offset, bool unit_values) {
  std::vector<std::uint64_t>& row_ptr = ds.row_ptr.own();  // the reader fills owned arrays
  std::vector<std::uint32_t>& indices = ds.indices.own();
  std::vector<float>& values = ds.values.own();
  const std::size_t n_chunks = chunks.size();
  for (std::size_t ci = 0; ci < n_chunks; ++ci) {
    const std::size_t rows = chunks[ci].labels.size(), nnz = chunks[ci].indices.size();
    if (nnz_cap[ci] != nnz_offset[ci] && nnz > 0) {
      std::memmove(indices.data() + nnz_offset[ci], indices.data() + nnz_cap[ci], nnz * sizeof(std::uint32_t));
      if (!unit_values) std::memmove(values.data() + nnz_offset[ci], values.data() + nnz_cap[ci], nnz * sizeof(float));
    }
    if (row_cap[ci] != row_offset[ci] && rows > 0) {
      std::memmove(ds.labels.data() + row_offset[ci], ds.labels.data() + row_cap[ci], rows * sizeof(int));
      std::memmove(row_ptr.data() + row_offset[ci] + 1, row_ptr.data() + row_cap[ci] + 1,
                   rows * sizeof(std::uint64_t));
    }
  }
  const auto positions = class_positions(ds.classes);
  parallel_for_index(n_chunks, [&](std::size_t ci) {
    const std::vector<int> to_global = global_label_ids(chunks[ci], positions);
    for (std::size_t r = row_offset[ci]; r < row_offset[ci + 1]; ++r) {
      if (ds.labels[r] >= 0) ds.labels[r] = to_global[static_cast<std::size_t>(ds.labels[r])];
      row_ptr[r + 1] += nnz_offset[ci];
    }
  });
  ds.labels.resize(row_offset[n_chunks]);
  row_ptr.resize(row_offset[n_chunks] + 1);
  indices.resize(nnz_offset[n_chunks]);
  if (!unit_values) values.resize(nnz_offset[n_chunks]);
  // Text full of explicit zeros (or blank lines) leaves much of the room
  // unused: give it back rather than keep it for the Dataset's lifetime.
  auto trim_room = [](auto& v) {
    if (v.capacity() > v.size() + v.size() / 4 + 4096) v.shrink_to_fit();
  };
  trim_room(ds.labels);
  trim_room(row_ptr);
  trim_room(indices);
  if (unit_values) {
    set_unit_values(ds);
  } else {
    trim_room(values);
  }
}

// Chunks parsed into their own arrays: copy them into ds.
inline void merge_owned(std::vector<Chunk>& chunks, Dataset& ds, const std::vector<std::uint64_t>& row_offset,
                        const std::vector<std::uint64_t>& nnz_offset) {
  std::vector<std::uint64_t>& row_ptr = ds.row_ptr.own();  // the reader fills owned arrays
  std::vector<std::uint32_t>& indices = ds.indices.own();
  std::vector<float>& values = ds.values.own();
  const std::size_t n_chunks = chunks.size();
  resize_populated(ds.labels, row_offset[n_chunks]);
  resize_populated(row_ptr, row_offset[n_chunks] + 1);
  resize_populated(indices, nnz_offset[n_chunks]);
  resize_populated(values, nnz_offset[n_chunks]);
  const auto positions = class_positions(ds.classes);
  parallel_for_index(n_chunks, [&](std::size_t ci) {
    Chunk& c = chunks[ci];
    const std::vector<int> to_global = global_label_ids(c, positions);
    for (std::size_t r = 0; r < c.labels.size(); ++r) {
      ds.labels[row_offset[ci] + r] = c.labels[r] < 0 ? -1 : to_global[static_cast<std::size_t>(c.labels[r])];
      row_ptr[row_offset[ci] + r + 1] = nnz_offset[ci] + c.row_ends[r];
    }
    std::copy(c.indices.data(), c.indices.data() + c.indices.size(), indices.begin() + static_cast<std::ptrdiff_t>(nnz_offset[ci]));
    std::copy(c.values.data(), c.values.data() + c.values.size(), values.begin() + static_cast<std::ptrdiff_t>(nnz_offset[ci]));
    c.row_ends.release();  // release memory early
    c.indices.release();
    c.values.release();
  });
}

// Parse [text) in parallel chunks with `parse_line(line, end, chunk)`, then
// merge. `first_line` is the 1-based number of text's first line in the file.
// `colon_per_value`: every stored value follows its own ':' in the text
// (LIBSVM), so rows can be parsed straight into the Dataset (place_chunks).
// `release_pages`: ReadOptions::text_is_file_mapping.
template <class LineParser, class FastLine = NoFastLine>
Dataset parse_chunks(std::string_view text, const std::string& name, std::size_t first_line,
                     LineParser parse_line, bool colon_per_value = false, const FastLine& fast_line = FastLine(),
                     bool release_pages = false) {
  const std::vector<std::size_t> bounds = chunk_bounds(text);
  const std::size_t n_chunks = bounds.size() - 1;
  std::vector<Chunk> chunks(n_chunks);
  Dataset ds;
  ds.source = name;
  std::vector<std::uint64_t> row_cap, nnz_cap;
  const bool unit_values = colon_per_value && place_chunks(text, bounds, chunks, ds, row_cap, nnz_cap, release_pages);
  parse_all(text, bounds, chunks, parse_line, fast_line, release_pages);

  std::size_t line_offset = first_line - 1;
  for (const Chunk& c : chunks) {
    if (!c.error.empty()) {
      throw InputError(location(name, line_offset + c.error_line, c.error_column) + ": " + c.error);
    }
    line_offset += c.lines;
  }
  {  // the global class list
    std::unordered_map<std::string_view, int> seen;
    for (const Chunk& c : chunks) {
      for (const auto& l : c.label_names) {
        if (seen.emplace(l, 0).second) ds.classes.push_back(l);
      }
    }
  }
  sort_classes(ds.classes);
  std::vector<std::uint64_t> row_offset(n_chunks + 1, 0), nnz_offset(n_chunks + 1, 0);
  std::uint64_t max_index = 0;
  for (std::size_t ci = 0; ci < n_chunks; ++ci) {
    row_offset[ci + 1] = row_offset[ci] + chunks[ci].labels.size();
    nnz_offset[ci + 1] = nnz_offset[ci] + chunks[ci].indices.size();
    max_index = std::max(max_index, chunks[ci].max_index);
  }
  ds.dimension = static_cast<std::uint32_t>(max_index);
  if (colon_per_value) {
    merge_placed(chunks, ds, row_cap, nnz_cap, row_offset, nnz_offset, unit_values);
  } else {
    merge_owned(chunks, ds, row_offset, nnz_offset);
  }
  if (ds.size() == 0) throw InputError(name + ": no examples (the file is empty or has only blank/comment lines)");
  return ds;
}

inline std::string_view strip_bom(std::string_view text) {
  if (text.size() >= 3 && text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // UTF-8 BOM accepted
  return text;
}

// The name of a compression or archive format other than gzip (read
// transparently) that `text` starts with, else nullptr: such a file is named
// as what it is, not as "binary data" or a malformed first line.
inline const char* unsupported_compression(std::string_view text) {
  auto starts = [&](std::string_view magic) { return text.substr(0, magic.size()) == magic; };
  if (starts("BZh") && text.size() >= 10 && text.substr(4, 6) == std::string_view("1AY&SY", 6)) return "bzip2";
  if (starts(std::string_view("\xFD" "7zXZ\0", 6))) return "xz";
  if (starts("\x28\xB5\x2F\xFD")) return "zstd";
  if (starts("PK\x03\x04")) return "zip";
  if (starts(std::string_view("7z\xBC\xAF\x27\x1C", 6))) return "7z";
  if (starts(std::string_view("\x04\x22\x4D\x18", 4))) return "lz4";
  return nullptr;
}

// Throws the InputError for a file of an unsupported compression format.
inline void refuse_unsupported_compression(std::string_view text, const std::string& name) {
  if (const char* format = unsupported_compression(text)) {
    throw InputError(name + ": " + format + "-compressed data, which is not read (gzip is); decompress it first");
  }
}

inline bool looks_binary(std::string_view text) {
  // NUL bytes never occur in LIBSVM or CSV text.
  return std::memchr(text.data(), '\0', std::min<std::size_t>(text.size(), 1 << 16)) != nullptr;
}

}  // namespace pegasos::reader_detail
