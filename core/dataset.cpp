#include "core/dataset.hpp"

#include <fast_float/fast_float.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <memory>
#include <numeric>
#include <optional>
#include <unordered_map>

#include <tbb/parallel_for.h>

#include "core/errors.hpp"

namespace pegasos {
namespace {

// Chunks are cut at line boundaries; a fixed size (not one per thread) keeps
// parsing deterministic and balanced whatever the thread count.
constexpr std::size_t kChunkBytes = std::size_t{4} << 20;
// Largest feature index ever accepted, whatever max_feature_index says: the
// dimension and the engine's extra bias feature (index = dimension) must both
// fit in a uint32.
constexpr std::uint64_t kMaxFeatureIndexLimit = (std::uint64_t{1} << 32) - 2;
// Labels longer than this are rejected: such a "label" is a corrupt line
// (e.g. a whole document without spaces), and every class name is copied
// into the model file and messages.
constexpr std::size_t kMaxLabelBytes = 1024;

// Well-formed UTF-8 (no overlong forms, surrogates or code points > U+10FFFF):
// class names go into JSON model files, which hold UTF-8 only.
bool valid_utf8(std::string_view s) {
  std::size_t i = 0;
  const std::size_t n = s.size();
  while (i < n) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t len = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
    if (c >= 0xC2 && c <= 0xDF) len = 2;
    else if (c == 0xE0) len = 3, lo = 0xA0;
    else if (c >= 0xE1 && c <= 0xEC) len = 3;
    else if (c == 0xED) len = 3, hi = 0x9F;
    else if (c >= 0xEE && c <= 0xEF) len = 3;
    else if (c == 0xF0) len = 4, lo = 0x90;
    else if (c >= 0xF1 && c <= 0xF3) len = 4;
    else if (c == 0xF4) len = 4, hi = 0x8F;
    else return false;
    if (i + len > n) return false;
    const auto c1 = static_cast<unsigned char>(s[i + 1]);
    if (c1 < lo || c1 > hi) return false;
    for (std::size_t k = 2; k < len; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    }
    i += len;
  }
  return true;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

std::string quote(std::string_view token) {
  constexpr std::size_t kShown = 40;
  std::string s(token.substr(0, kShown));
  for (char& c : s) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
  }
  return "'" + s + (token.size() > kShown ? "...'" : "'");
}

// A file's bytes: memory-mapped when plain, decompressed when gzip.
class FileBytes {
 public:
  explicit FileBytes(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY);
    if (fd < 0) throw InputError(path + ": cannot open: " + std::strerror(errno));
    struct stat st{};
    if (::fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
      ::close(fd);
      throw InputError(path + ": not a readable file");
    }
    const auto size = static_cast<std::size_t>(st.st_size);
    if (size > 0) {
      void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
      if (p != MAP_FAILED) {
        ::madvise(p, size, MADV_SEQUENTIAL);
        map_ = p;
        map_size_ = size;
      }
    }
    if (map_ == nullptr && size > 0) {  // e.g. a pipe or special file
      owned_.resize(size);
      std::size_t got = 0;
      while (got < size) {
        ssize_t r = ::read(fd, owned_.data() + got, size - got);
        if (r <= 0) break;
        got += static_cast<std::size_t>(r);
      }
      owned_.resize(got);
    }
    ::close(fd);
    std::string_view raw = view();
    if (raw.size() >= 2 && static_cast<unsigned char>(raw[0]) == 0x1f &&
        static_cast<unsigned char>(raw[1]) == 0x8b) {
      owned_ = gunzip(raw, path);
      unmap();
    }
  }
  ~FileBytes() { unmap(); }
  FileBytes(const FileBytes&) = delete;
  FileBytes& operator=(const FileBytes&) = delete;

  std::string_view view() const {
    if (map_ != nullptr) return {static_cast<const char*>(map_), map_size_};
    return owned_;
  }
  std::string take() {
    if (map_ != nullptr) return std::string(view());
    return std::move(owned_);
  }

 private:
  void unmap() {
    if (map_ != nullptr) ::munmap(map_, map_size_);
    map_ = nullptr;
  }
  static std::string gunzip(std::string_view in, const std::string& path) {
    z_stream zs{};
    if (inflateInit2(&zs, 15 + 32) != Z_OK) throw std::runtime_error("zlib init failed");
    std::string out;
    out.resize(std::max<std::size_t>(in.size() * 4, 1 << 16));
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    zs.avail_in = static_cast<uInt>(std::min<std::size_t>(in.size(), UINT32_MAX));
    std::size_t consumed_before = 0;
    int rc = Z_OK;
    while (true) {
      if (zs.total_out >= out.size()) out.resize(out.size() * 2);
      zs.next_out = reinterpret_cast<Bytef*>(out.data() + zs.total_out);
      zs.avail_out = static_cast<uInt>(std::min<std::size_t>(out.size() - zs.total_out, UINT32_MAX));
      rc = inflate(&zs, Z_NO_FLUSH);
      if (zs.avail_in == 0) {  // feed the rest of a > 4 GB input
        consumed_before += std::min<std::size_t>(in.size() - consumed_before, UINT32_MAX);
        if (consumed_before < in.size()) {
          zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data() + consumed_before));
          zs.avail_in = static_cast<uInt>(std::min<std::size_t>(in.size() - consumed_before, UINT32_MAX));
        }
      }
      if (rc == Z_STREAM_END) {
        // Concatenated gzip members (as `cat a.gz b.gz` makes) continue.
        if (zs.avail_in > 0) {
          const auto total = zs.total_out;
          inflateReset(&zs);
          zs.total_out = total;
          continue;
        }
        break;
      }
      if (rc == Z_BUF_ERROR && zs.avail_in == 0) {
        inflateEnd(&zs);
        throw InputError(path + ": truncated gzip stream");
      }
      if (rc != Z_OK && rc != Z_BUF_ERROR) {
        std::string msg = zs.msg ? zs.msg : "corrupt data";
        inflateEnd(&zs);
        throw InputError(path + ": corrupt gzip data (" + msg + ")");
      }
    }
    out.resize(zs.total_out);
    inflateEnd(&zs);
    return out;
  }

  void* map_ = nullptr;
  std::size_t map_size_ = 0;
  std::string owned_;
};

// Result of parsing one chunk of lines.
struct Chunk {
  std::vector<std::uint64_t> row_ptr{0};
  std::vector<std::uint32_t> indices;
  std::vector<float> values;
  std::vector<int> labels;                 // chunk-local label ids, -1 = none
  std::vector<std::string> label_names;    // chunk-local id -> canonical name
  std::unordered_map<std::string, int> label_ids;
  std::uint64_t max_index = 0;             // 1 + largest 0-based index seen
  std::size_t lines = 0;                   // newline-terminated lines seen
  // First error: local line (1-based), column (1-based), message.
  std::size_t error_line = 0, error_column = 0;
  std::string error;

  int label_id(std::string_view token) {
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
std::vector<std::size_t> chunk_bounds(std::string_view text) {
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

struct ParseFailure {
  std::size_t column;
  std::string message;
};

// A value of the form [-]DIGITS[.DIGITS] whose significant digits fit in
// 2^24 and with at most 10 decimals, converted exactly as fast_float does
// (Clinger's fast path: m and 10^k are exact floats, so the one IEEE
// division m / 10^k is correctly rounded). Sets *next past the digits;
// false (nothing consumed) for any other form.
bool parse_simple_decimal(const char* p, const char* end, float& out, const char** next) {
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
  return true;
}

float parse_value(const char* begin, const char* end, std::size_t column) {
  float v = 0;
  const char* after = nullptr;
  if (parse_simple_decimal(begin, end, v, &after) && after == end) return v;
  auto r = fast_float::from_chars(begin, end, v);
  std::string_view tok(begin, static_cast<std::size_t>(end - begin));
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

// The common case of a LIBSVM line in one pass: "LABEL IDX:VALUE ..." with
// decimal indices strictly increasing within 1..max, finite values, nothing
// else. Returns false, having added nothing but possibly the label's id,
// for any other line (comments, qid:, anything malformed); the general
// parser below then reads it and reports errors. Both give the same rows.
bool parse_libsvm_line_fast(const char* line, const char* end, Chunk& c, const ReadOptions& opt) {
  const char* p = line;
  while (p < end && is_space(*p)) ++p;
  const char* tok = p;
  while (p < end && !is_space(*p)) {
    if (*p == ':' || *p == '#') return false;
    ++p;
  }
  if (p == tok) return false;
  int label = 0;
  try {
    label = c.label_id(std::string_view(tok, static_cast<std::size_t>(p - tok)));
  } catch (const InputError&) {
    return false;
  }
  const std::size_t row_start = c.indices.size();
  const std::uint64_t max_index = std::min(opt.max_feature_index, kMaxFeatureIndexLimit);
  std::uint64_t previous = 0;
  auto fail = [&] {
    c.indices.resize(row_start);
    c.values.resize(row_start);
    return false;
  };
  while (true) {
    while (p < end && is_space(*p)) ++p;
    if (p == end) break;
    std::uint64_t index = 0;
    const char* digits = p;
    while (p < end && *p >= '0' && *p <= '9') {
      index = index * 10 + static_cast<std::uint64_t>(*p - '0');
      ++p;
    }
    // At most 10 digits cannot overflow and covers every index ≤ max_index.
    if (p == digits || p - digits > 10 || p == end || *p != ':') return fail();
    if (index == 0 || index <= previous || index > max_index) return fail();
    ++p;
    float v = 0;
    const char* after = nullptr;
    if (!parse_simple_decimal(p, end, v, &after)) {
      const auto r = fast_float::from_chars(p, end, v);
      if (r.ec != std::errc() || r.ptr == p || !std::isfinite(v)) return fail();
      after = r.ptr;
    }
    if (after != end && !is_space(*after)) return fail();
    p = after;
    previous = index;
    if (v != 0.0f) {
      c.indices.push_back(static_cast<std::uint32_t>(index - 1));
      c.values.push_back(v);
    }
  }
  if (previous > c.max_index) c.max_index = previous;
  c.labels.push_back(label);
  c.row_ptr.push_back(c.indices.size());
  return true;
}

// Parse one LIBSVM line [p, end) (no newline) into `c`.
void parse_libsvm_line(const char* line, const char* end, Chunk& c, const ReadOptions& opt) {
  if (opt.libsvm_fast_path && parse_libsvm_line_fast(line, end, c, opt)) return;
  if (const void* hash = std::memchr(line, '#', static_cast<std::size_t>(end - line))) {
    end = static_cast<const char*>(hash);
  }
  const char* p = line;
  auto col = [&](const char* q) { return static_cast<std::size_t>(q - line) + 1; };
  while (p < end && is_space(*p)) ++p;
  if (p == end) return;  // blank or comment-only line: skipped
  const char* tok = p;
  while (p < end && !is_space(*p)) ++p;
  std::string_view first(tok, static_cast<std::size_t>(p - tok));
  int label = -1;
  if (first.find(':') != std::string_view::npos) {  // a feature (or qid:) where the label belongs
    if (opt.require_labels) {
      throw ParseFailure{col(tok), "missing label: the line starts with feature " + quote(first)};
    }
    p = tok;  // unlabeled row (allowed for predict): parse it as a feature
  } else {
    try {
      label = c.label_id(first);
    } catch (const InputError& e) {
      throw ParseFailure{col(tok), e.what()};
    }
  }
  const std::size_t row_start = c.indices.size();
  std::uint64_t previous = 0;
  while (true) {
    while (p < end && is_space(*p)) ++p;
    if (p == end) break;
    tok = p;
    while (p < end && !is_space(*p)) ++p;
    std::string_view token(tok, static_cast<std::size_t>(p - tok));
    const std::size_t colon = token.find(':');
    if (colon == std::string_view::npos) {
      throw ParseFailure{col(tok), "expected INDEX:VALUE, got " + quote(token)};
    }
    if (token.substr(0, colon) == "qid") continue;  // SVMlight query id: ignored
    std::uint64_t index = 0;
    auto r = std::from_chars(tok, tok + colon, index);
    const std::uint64_t max_index = std::min(opt.max_feature_index, kMaxFeatureIndexLimit);
    if (r.ec == std::errc::result_out_of_range || (r.ptr == tok + colon && index > max_index)) {
      throw ParseFailure{col(tok), "feature index " + quote(token.substr(0, colon)) +
                                       " exceeds the maximum " + std::to_string(max_index) +
                                       (max_index < kMaxFeatureIndexLimit ? " (raise max_feature_index if this is intended)"
                                                                          : "")};
    }
    if (r.ec != std::errc() || r.ptr != tok + colon || colon == 0) {
      throw ParseFailure{col(tok), "feature index " + quote(token.substr(0, colon)) +
                                       " is not a positive integer"};
    }
    if (index == 0) {
      throw ParseFailure{col(tok), "feature index 0 is not positive (indices are 1-based)"};
    }
    if (index <= previous) {
      throw ParseFailure{col(tok), "feature index " + std::to_string(index) +
                                       (index == previous ? " is repeated" : " is smaller than the previous index " + std::to_string(previous)) +
                                       " (indices must be strictly increasing)"};
    }
    previous = index;
    const float v = parse_value(tok + colon + 1, p, col(tok + colon + 1));
    if (v != 0.0f) {
      c.indices.push_back(static_cast<std::uint32_t>(index - 1));
      c.values.push_back(v);
    }
  }
  if (previous > c.max_index) c.max_index = previous;
  (void)row_start;
  c.labels.push_back(label);
  c.row_ptr.push_back(c.indices.size());
}

struct CsvLayout {
  char delimiter = ',';
  std::size_t fields = 0;        // fields per row
  std::size_t label_field = 0;   // which field is the label
  bool has_label = true;
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  if (s.size() >= 2 && s.front() == '"' && s.back() == '"') s = s.substr(1, s.size() - 2);
  return s;
}

void parse_csv_line(const char* line, const char* end, Chunk& c, const CsvLayout& layout) {
  const char* p = line;
  while (p < end && is_space(*p)) ++p;
  if (p == end) return;  // blank line: skipped
  p = line;
  std::size_t field = 0;
  std::uint32_t feature = 0;
  int label = -1;
  while (true) {
    const char* start = p;
    const void* d = std::memchr(p, layout.delimiter, static_cast<std::size_t>(end - p));
    const char* stop = d ? static_cast<const char*>(d) : end;
    const std::size_t column = static_cast<std::size_t>(start - line) + 1;
    if (field >= layout.fields) {
      throw ParseFailure{column, "too many fields: expected " + std::to_string(layout.fields)};
    }
    std::string_view raw(start, static_cast<std::size_t>(stop - start));
    std::string_view tok = trim(raw);
    if (layout.has_label && field == layout.label_field) {
      if (tok.empty()) throw ParseFailure{column, "missing label (empty field " + std::to_string(field + 1) + ")"};
      try {
        label = c.label_id(tok);
      } catch (const InputError& e) {
        throw ParseFailure{column, e.what()};
      }
    } else {
      if (tok.empty()) {
        throw ParseFailure{column, "empty field " + std::to_string(field + 1) + " (missing value)"};
      }
      const float v = parse_value(tok.data(), tok.data() + tok.size(), column);
      if (v != 0.0f) {
        c.indices.push_back(feature);
        c.values.push_back(v);
      }
      ++feature;
    }
    ++field;
    if (d == nullptr) break;
    p = stop + 1;
  }
  if (field != layout.fields) {
    throw ParseFailure{static_cast<std::size_t>(end - line) + 1,
                       "expected " + std::to_string(layout.fields) + " fields, found " + std::to_string(field)};
  }
  c.max_index = std::max<std::uint64_t>(c.max_index, feature);
  c.labels.push_back(label);
  c.row_ptr.push_back(c.indices.size());
}

// Parse [text) in parallel chunks with `parse_line(line, end, chunk)`, then
// merge. `first_line` is the 1-based number of text's first line in the file.
template <class LineParser>
Dataset parse_chunks(std::string_view text, const std::string& name, std::size_t first_line,
                     LineParser parse_line) {
  const std::vector<std::size_t> bounds = chunk_bounds(text);
  const std::size_t n_chunks = bounds.size() - 1;
  std::vector<Chunk> chunks(n_chunks);
  tbb::parallel_for(std::size_t{0}, n_chunks, [&](std::size_t ci) {
    Chunk& c = chunks[ci];
    const char* p = text.data() + bounds[ci];
    const char* stop = text.data() + bounds[ci + 1];
    while (p < stop) {
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

  std::size_t line_offset = first_line - 1;
  for (const Chunk& c : chunks) {
    if (!c.error.empty()) {
      throw InputError(location(name, line_offset + c.error_line, c.error_column) + ": " + c.error);
    }
    line_offset += c.lines;
  }

  Dataset ds;
  ds.source = name;
  // Global class list, then per-chunk translation tables.
  for (const Chunk& c : chunks) {
    for (const auto& l : c.label_names) {
      if (std::find(ds.classes.begin(), ds.classes.end(), l) == ds.classes.end()) ds.classes.push_back(l);
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
  ds.labels.resize(row_offset[n_chunks]);
  ds.row_ptr.resize(row_offset[n_chunks] + 1);
  ds.indices.resize(nnz_offset[n_chunks]);
  ds.values.resize(nnz_offset[n_chunks]);
  tbb::parallel_for(std::size_t{0}, n_chunks, [&](std::size_t ci) {
    Chunk& c = chunks[ci];
    std::vector<int> to_global(c.label_names.size());
    for (std::size_t k = 0; k < c.label_names.size(); ++k) {
      to_global[k] = static_cast<int>(std::find(ds.classes.begin(), ds.classes.end(), c.label_names[k]) -
                                      ds.classes.begin());
    }
    for (std::size_t r = 0; r < c.labels.size(); ++r) {
      ds.labels[row_offset[ci] + r] = c.labels[r] < 0 ? -1 : to_global[c.labels[r]];
      ds.row_ptr[row_offset[ci] + r + 1] = nnz_offset[ci] + c.row_ptr[r + 1];
    }
    std::copy(c.indices.begin(), c.indices.end(), ds.indices.begin() + static_cast<std::ptrdiff_t>(nnz_offset[ci]));
    std::copy(c.values.begin(), c.values.end(), ds.values.begin() + static_cast<std::ptrdiff_t>(nnz_offset[ci]));
    Chunk().row_ptr.swap(c.row_ptr);  // release memory early
    std::vector<std::uint32_t>().swap(c.indices);
    std::vector<float>().swap(c.values);
  });
  if (ds.size() == 0) throw InputError(name + ": no examples (the file is empty or has only blank/comment lines)");
  return ds;
}

std::string_view strip_bom(std::string_view text) {
  if (text.size() >= 3 && text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // UTF-8 BOM accepted
  return text;
}

bool looks_binary(std::string_view text) {
  // NUL bytes never occur in LIBSVM or CSV text.
  return std::memchr(text.data(), '\0', std::min<std::size_t>(text.size(), 1 << 16)) != nullptr;
}

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

std::string canonical_label(std::string_view token) {
  if (token.empty()) throw InputError("empty label");
  if (token.size() > kMaxLabelBytes) {
    throw InputError("label " + quote(token) + " is longer than " + std::to_string(kMaxLabelBytes) + " bytes");
  }
  const char* b = token.data();
  const char* e = b + token.size();
  if (*b == '+') ++b;  // fast_float rejects a leading '+'
  double v = 0;
  auto r = fast_float::from_chars(b, e, v);
  if (b != e && r.ptr == e && (r.ec == std::errc() || r.ec == std::errc::result_out_of_range)) {
    if (r.ec != std::errc() || !std::isfinite(v)) throw InputError("label " + quote(token) + " is not finite");
    if (v == 0) v = 0;  // -0 -> 0
    char buf[32];
    auto out = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, out.ptr);
  }
  if (!valid_utf8(token)) throw InputError("label " + quote(token) + " is not valid UTF-8");
  return std::string(token);
}

void append_libsvm_pairs(std::string& out, const RowView& x) {
  char buf[64];
  for (std::uint32_t j = 0; j < x.nnz; ++j) {
    char* p = buf;
    if (j > 0) *p++ = ' ';
    p = std::to_chars(p, buf + sizeof buf, std::uint64_t{x.indices[j]} + 1).ptr;
    *p++ = ':';
    p = std::to_chars(p, buf + sizeof buf, x.values[j]).ptr;
    out.append(buf, p);
  }
}

std::string to_libsvm_text(const Dataset& data, const std::vector<std::string>& label_text,
                           const std::string& unlabelled) {
  std::string out;
  out.reserve(static_cast<std::size_t>(data.nnz()) * 12 + data.size() * 4);
  for (std::size_t i = 0; i < data.size(); ++i) {
    const int c = data.labels[i];
    out += c >= 0 ? label_text.at(static_cast<std::size_t>(c)) : unlabelled;
    const RowView x = data.row(i);
    if (x.nnz > 0) out += ' ';
    append_libsvm_pairs(out, x);
    out += '\n';
  }
  return out;
}

void sort_classes(std::vector<std::string>& classes) {
  auto numeric = [](const std::string& s, double& v) {
    auto r = fast_float::from_chars(s.data(), s.data() + s.size(), v);
    return !s.empty() && r.ptr == s.data() + s.size() && r.ec == std::errc();
  };
  bool all_numeric = true;
  double tmp = 0;
  for (const auto& c : classes) all_numeric = all_numeric && numeric(c, tmp);
  if (all_numeric) {
    std::sort(classes.begin(), classes.end(), [&](const std::string& a, const std::string& b) {
      double x = 0, y = 0;
      numeric(a, x);
      numeric(b, y);
      return x < y;
    });
  } else {
    std::sort(classes.begin(), classes.end());
  }
}

std::vector<std::size_t> Dataset::class_counts() const {
  std::vector<std::size_t> counts(classes.size(), 0);
  for (int y : labels) {
    if (y >= 0) ++counts[static_cast<std::size_t>(y)];
  }
  return counts;
}

std::vector<std::string> Dataset::remap_classes(const std::vector<std::string>& target) {
  std::vector<int> map(classes.size(), -1);
  std::vector<std::string> unknown;
  for (std::size_t k = 0; k < classes.size(); ++k) {
    auto it = std::find(target.begin(), target.end(), classes[k]);
    if (it == target.end()) {
      unknown.push_back(classes[k]);
    } else {
      map[k] = static_cast<int>(it - target.begin());
    }
  }
  for (int& y : labels) {
    if (y >= 0) y = map[static_cast<std::size_t>(y)];
  }
  classes = target;
  return unknown;
}

void Dataset::append_row(std::span<const std::uint32_t> idx, std::span<const float> val, int label) {
  indices.insert(indices.end(), idx.begin(), idx.end());
  values.insert(values.end(), val.begin(), val.end());
  for (std::uint32_t j : idx) dimension = std::max(dimension, j + 1);
  labels.push_back(label);
  row_ptr.push_back(indices.size());
}

void Dataset::normalize_rows() {
  tbb::parallel_for(std::size_t{0}, size(), [&](std::size_t i) {
    double sq = 0.0;
    for (std::uint64_t e = row_ptr[i]; e < row_ptr[i + 1]; ++e) sq += static_cast<double>(values[e]) * values[e];
    if (sq == 0.0) return;
    const double inv = 1.0 / std::sqrt(sq);
    for (std::uint64_t e = row_ptr[i]; e < row_ptr[i + 1]; ++e) values[e] = static_cast<float>(values[e] * inv);
  });
}

Dataset parse_libsvm(std::string_view text, const std::string& name, const ReadOptions& options) {
  text = strip_bom(text);
  if (looks_binary(text)) throw InputError(name + ": binary data (NUL bytes), not a LIBSVM text file");
  return parse_chunks(text, name, 1, [&](const char* b, const char* e, Chunk& c) {
    parse_libsvm_line(b, e, c, options);
  });
}

Dataset parse_csv(std::string_view text, const std::string& name, const ReadOptions& options) {
  text = strip_bom(text);
  if (looks_binary(text)) throw InputError(name + ": binary data (NUL bytes), not a CSV text file");
  // Skip leading blank lines; the first non-blank line fixes the layout.
  std::size_t line_no = 1;
  while (!text.empty()) {
    std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    if (!trim(line).empty()) break;
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    ++line_no;
  }
  if (text.empty()) throw InputError(name + ": no examples (the file is empty)");
  std::string_view first = text.substr(0, text.find('\n'));
  if (!first.empty() && first.back() == '\r') first.remove_suffix(1);

  CsvLayout layout;
  if (first.find(',') == std::string_view::npos) {
    if (first.find('\t') != std::string_view::npos) layout.delimiter = '\t';
    else if (first.find(';') != std::string_view::npos) layout.delimiter = ';';
  }
  std::vector<std::string_view> header;
  for (std::size_t pos = 0;;) {
    std::size_t d = first.find(layout.delimiter, pos);
    header.push_back(trim(first.substr(pos, d == std::string_view::npos ? std::string_view::npos : d - pos)));
    if (d == std::string_view::npos) break;
    pos = d + 1;
  }
  layout.fields = header.size();
  if (layout.fields < 2) {
    throw InputError(location(name, line_no) + ": a CSV row needs a label and at least one feature, found " +
                     std::to_string(layout.fields) + " field");
  }
  bool is_header = false;
  if (!options.label_column_name.empty()) {
    auto it = std::find(header.begin(), header.end(), options.label_column_name);
    if (it == header.end()) {
      throw InputError(location(name, line_no) + ": no column named '" + options.label_column_name + "' in the header");
    }
    layout.label_field = static_cast<std::size_t>(it - header.begin());
    is_header = true;
  } else {
    long lc = options.label_column;
    if (lc < 0) lc += static_cast<long>(layout.fields);
    if (lc < 0 || lc >= static_cast<long>(layout.fields)) {
      throw InputError(location(name, line_no) + ": label_column " + std::to_string(options.label_column) +
                       " is outside the " + std::to_string(layout.fields) + " fields of the first row");
    }
    layout.label_field = static_cast<std::size_t>(lc);
    // A first row whose feature fields are not all numbers is a header.
    for (std::size_t f = 0; f < header.size(); ++f) {
      if (f == layout.label_field) continue;
      float v;
      auto r = fast_float::from_chars(header[f].data(), header[f].data() + header[f].size(), v);
      if (header[f].empty() || r.ptr != header[f].data() + header[f].size()) is_header = true;
    }
  }
  if (is_header) {
    std::size_t nl = text.find('\n');
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    ++line_no;
  }
  return parse_chunks(text, name, line_no, [&](const char* b, const char* e, Chunk& c) {
    parse_csv_line(b, e, c, layout);
  });
}

std::string read_file_bytes(const std::string& path) {
  FileBytes bytes(path);
  return bytes.take();
}

Dataset read_dataset(const std::string& path, const ReadOptions& options) {
  FileBytes bytes(path);
  DataFormat format = options.format;
  if (format == DataFormat::kAuto) {
    std::string base = path;
    if (ends_with(base, ".gz")) base.resize(base.size() - 3);
    format = (ends_with(base, ".csv") || ends_with(base, ".tsv")) ? DataFormat::kCsv : DataFormat::kLibsvm;
  }
  Dataset ds = format == DataFormat::kCsv ? parse_csv(bytes.view(), path, options)
                                          : parse_libsvm(bytes.view(), path, options);
  if (options.normalize_rows) ds.normalize_rows();
  return ds;
}

}  // namespace pegasos
