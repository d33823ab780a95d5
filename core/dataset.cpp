// Datasets in memory (CSR rows, classes) and reading a file: its bytes
// (memory-mapped, or gunzipped), then the LIBSVM or CSV reader
// (core/libsvm_reader.cpp, core/csv_reader.cpp, sharing core/parse_chunks.hpp).
#include "core/dataset.hpp"

#include <fast_float/fast_float.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <charconv>
#include <stdexcept>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

#include "core/errors.hpp"
#include "core/fresh_memory.hpp"
#include "core/input_stream.hpp"
#include "core/mapped_input.hpp"
#include "core/parallel.hpp"
#include "core/parse_chunks.hpp"

namespace pegasos {
namespace {

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

// A file's bytes: memory-mapped when plain, decompressed when gzip.
class FileBytes {
 public:
  // "-" is standard input. Anything but a regular file (a pipe, /dev/stdin,
  // a device) is read as a stream to its end.
  explicit FileBytes(const std::string& path) {
    struct stat st{};
    if (path != "-" && ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) throw InputError(path + ": cannot open: " + std::strerror(errno));
      map_regular_file(fd, path);
      ::close(fd);
    } else {
      if (path != "-" && ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
        throw InputError(path + ": not a readable file (a directory)");
      }
      InputStream in(path);  // decompresses gzip itself
      try {
        // NUL bytes never occur in text: /dev/zero or a binary stream is
        // refused as it arrives, not once memory runs out.
        for (std::size_t before = 0; in.read(owned_, std::size_t{1} << 26, false) > 0; before = owned_.size()) {
          if (std::memchr(owned_.data() + before, '\0', owned_.size() - before) != nullptr) {
            throw InputError(in.name() + ": binary data (NUL bytes), not text");
          }
        }
      } catch (const std::bad_alloc&) {  // a gzip bomb on a pipe, or more text than this process may hold
        throw InputError(in.name() + ": its text does not fit in memory (more than " +
                         std::to_string((owned_.size() >> 20) + 1) + " MB read); save it to a file and read that");
      }
      return;
    }
    std::string_view raw = view();
    if (starts_with_gzip_magic(raw)) {
      try {
        owned_ = gunzip(raw, path);
      } catch (...) {
        unmap();  // the destructor does not run when the constructor throws
        throw;
      }
      unmap();
    }
  }
  ~FileBytes() { unmap(); }
  FileBytes(const FileBytes&) = delete;
  FileBytes& operator=(const FileBytes&) = delete;

  // Whether view() is a read-only mapping of the file (not gunzipped or read
  // into memory): ReadOptions::text_is_file_mapping.
  bool is_file_mapping() const { return map_ != nullptr; }
  std::string_view view() const {
    if (map_ != nullptr) return {static_cast<const char*>(map_), map_size_};
    return owned_;
  }
  std::string take() {
    if (map_ != nullptr) return std::string(view());
    return std::move(owned_);
  }

 private:
  void map_regular_file(int fd, const std::string& path) {
    struct stat st{};
    if (::fstat(fd, &st) != 0) throw InputError(path + ": cannot read: " + std::strerror(errno));
    const auto size = static_cast<std::size_t>(st.st_size);
    if (size == 0) return;
    void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p != MAP_FAILED) {
      ::madvise(p, size, MADV_SEQUENTIAL);
      map_ = p;
      map_size_ = size;
      mapping_ = register_mapping(p, size, path);  // truncated under us: exit 2 naming it
      return;
    }
    owned_.resize(size);
    std::size_t got = 0;
    while (got < size) {
      const ssize_t r = ::read(fd, owned_.data() + got, size - got);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) throw InputError(path + ": read failed: " + std::strerror(errno));
      if (r == 0) break;
      got += static_cast<std::size_t>(r);
    }
    owned_.resize(got);
  }
  void unmap() {
    if (map_ != nullptr) {
      unregister_mapping(mapping_);
      ::munmap(map_, map_size_);
    }
    map_ = nullptr;
    mapping_ = -1;
  }
  static std::string gunzip(std::string_view in, const std::string& path) {
    z_stream zs{};
    if (inflateInit2(&zs, 15 + 32) != Z_OK) throw std::runtime_error("zlib init failed");
    // Room for all of it at once where the trailer tells: a single-member
    // stream's last 4 bytes are its size mod 2^32 (a wrong guess, as for
    // concatenated members or over 4 GB, only means growing below), as huge
    // pages (core/fresh_memory.hpp). The 57 MB a9a-like file from 15 MB of
    // gzip: 0.45-0.66 -> 0.24 s wall.
    std::size_t guess = in.size() * 4;
    if (in.size() >= 18) {
      const auto* t = reinterpret_cast<const unsigned char*>(in.data() + in.size() - 4);
      const std::size_t isize = std::size_t{t[0]} | std::size_t{t[1]} << 8 | std::size_t{t[2]} << 16 | std::size_t{t[3]} << 24;
      // Believed within deflate's largest ratio (1032:1), so that a corrupt
      // trailer cannot ask for more than the data could hold; + 1: room to
      // read the end of the stream.
      if (isize >= in.size() / 2 && isize / 1032 <= in.size()) guess = isize + 1;
    }
    std::string out;
    try {
      inflate_all(zs, in, path, out, guess);
    } catch (const std::bad_alloc&) {  // a gzip bomb, or a file too large for this process's memory
      inflateEnd(&zs);
      throw InputError(path + ": its decompressed text does not fit in memory (more than " +
                       std::to_string((std::max<std::size_t>(out.size(), guess) >> 20) + 1) + " MB from " +
                       std::to_string((in.size() >> 20) + 1) + " MB of gzip); decompress it to a file and read that");
    }
    inflateEnd(&zs);
    return out;
  }
  // gunzip's loop: `out` grows (by doubling, from `guess`) to the whole text.
  static void inflate_all(z_stream& zs, std::string_view in, const std::string& path, std::string& out,
                          std::size_t guess) {
    resize_huge(out, std::max<std::size_t>(guess, 1 << 16));
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    zs.avail_in = static_cast<uInt>(std::min<std::size_t>(in.size(), UINT32_MAX));
    std::size_t consumed_before = 0;
    int rc = Z_OK;
    while (true) {
      if (zs.total_out >= out.size()) resize_huge(out, out.size() * 2);
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
  }

  void* map_ = nullptr;
  std::size_t map_size_ = 0;
  int mapping_ = -1;  // register_mapping handle
  std::string owned_;
};

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

using reader_detail::quote;

bool has_control_character(std::string_view text) {
  return std::any_of(text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}

std::string canonical_label(std::string_view token) {
  if (token.empty()) throw InputError("empty label");
  if (token.size() > kMaxLabelBytes) {
    throw InputError("label " + quote(token) + " is longer than " + std::to_string(kMaxLabelBytes) + " bytes");
  }
  const char* b = token.data();
  const char* e = b + token.size();
  // fast_float rejects a leading '+'; "+-1" and "++1" are not numbers.
  if (e - b >= 2 && b[0] == '+' && b[1] != '+' && b[1] != '-') ++b;
  // An integer of more than 15 digits (an id) keeps its digits: through a
  // double, 123456789012345678 became 123456789012345680 and 2^53 + 1 met
  // 2^53. Shorter integers come out of the double exactly as written.
  {
    const char* d = b + (b != e && *b == '-' ? 1 : 0);
    const char* first = d;
    while (first != e && *first == '0') ++first;
    if (d != e && e - first > 15 && std::all_of(d, e, [](char c) { return c >= '0' && c <= '9'; })) {
      return (d != b ? "-" : "") + std::string(first, e);
    }
  }
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
  if (has_control_character(token)) {
    throw InputError("label " + quote(token) + " contains a control character (tab, line break, ...)");
  }
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
    // Integers of more than 15 digits keep their digits (canonical_label) and
    // can round to the same double (2^53 and 2^53 + 1): those compare as
    // integers, by sign, length and digits, so the order never depends on
    // which row came first.
    auto integer = [](const std::string& s) {
      const std::size_t d = !s.empty() && s[0] == '-' ? 1 : 0;
      return s.size() > d && std::all_of(s.begin() + static_cast<std::ptrdiff_t>(d), s.end(),
                                         [](char c) { return c >= '0' && c <= '9'; });
    };
    auto integer_less = [](const std::string& a, const std::string& b) {
      const bool na = a[0] == '-', nb = b[0] == '-';
      if (na != nb) return na;
      const bool shorter = a.size() != b.size() ? a.size() < b.size() : a < b;  // |a| < |b| (no leading zeros)
      return na ? (a.size() != b.size() ? a.size() > b.size() : a > b) : shorter;
    };
    std::sort(classes.begin(), classes.end(), [&](const std::string& a, const std::string& b) {
      double x = 0, y = 0;
      numeric(a, x);
      numeric(b, y);
      if (x != y) return x < y;
      if (integer(a) && integer(b)) return integer_less(a, b);
      return a < b;
    });
  } else {
    std::sort(classes.begin(), classes.end());
  }
}

std::string Dataset::row_name(std::size_t row) const {
  const std::size_t r = row + first_row;
  std::string name = "row " + std::to_string(r);
  if (row < row_lines.size() && row_lines[row] != r) name += " (line " + std::to_string(row_lines[row]) + ")";
  return name;
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
  const auto place = reader_detail::class_positions(target);  // the first of equal names
  for (std::size_t k = 0; k < classes.size(); ++k) {
    const auto it = place.find(classes[k]);
    if (it == place.end()) {
      unknown.push_back(classes[k]);
    } else {
      map[k] = it->second;
    }
  }
  for (int& y : labels) {
    if (y >= 0) y = map[static_cast<std::size_t>(y)];
  }
  classes = target;
  return unknown;
}

void Dataset::append_row(std::span<const std::uint32_t> idx, std::span<const float> val, int label) {
  indices.append(idx.begin(), idx.end());
  values.append(val.begin(), val.end());
  for (std::uint32_t j : idx) dimension = std::max(dimension, j + 1);
  labels.push_back(label);
  row_ptr.push_back(indices.size());
}

void Dataset::normalize_rows() {
  std::vector<float>& values = this->values.own();  // never the lender's memory
  parallel_for_index(size(), [&](std::size_t i) {
    double sq = 0.0;
    for (std::uint64_t e = row_ptr[i]; e < row_ptr[i + 1]; ++e) sq += static_cast<double>(values[e]) * values[e];
    if (sq == 0.0) return;
    const double inv = 1.0 / std::sqrt(sq);
    for (std::uint64_t e = row_ptr[i]; e < row_ptr[i + 1]; ++e) values[e] = static_cast<float>(values[e] * inv);
  }, kSerialRows);
}

void normalize_sample_weights(Dataset& data) {
  if (data.weights.empty()) return;
  double sum = 0.0;
  for (float s : data.weights) sum += s;
  const bool equal = std::all_of(data.weights.begin(), data.weights.end(), [&](float s) { return s == data.weights[0]; });
  if (equal) {  // equal weights are no weights: the unweighted problem exactly
    data.weights.clear();
    return;
  }
  const double mean = sum / static_cast<double>(data.weights.size());
  for (float& s : data.weights) s = static_cast<float>(s / mean);
}

namespace {

// A read-only array of n floats equal to 1 that holds a few pages of memory:
// one memory file of `segment` bytes of ones, mapped again and again over
// the range (at most 257 mappings, whatever n). Every row's values then come
// from the same cached lines, where stored ones took 4 bytes a non-zero to
// write, fault in and read (a9a-like text: 43 MB of the 95 MB a parse
// produces). nullptr where the system has no memory files or refuses.
std::shared_ptr<const float> map_ones(std::size_t n) {
#ifdef __linux__
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const std::size_t bytes = std::max<std::size_t>(n, 1) * sizeof(float);
  const std::size_t segment = std::max<std::size_t>({std::size_t{64} << 10, page, (bytes / 256 + page - 1) / page * page});
  const std::size_t count = (bytes + segment - 1) / segment, length = count * segment;
  const int fd = ::memfd_create("pegasos-unit-values", MFD_CLOEXEC);
  if (fd < 0) return nullptr;
  void* base = MAP_FAILED;
  bool ok = ::ftruncate(fd, static_cast<off_t>(segment)) == 0;
  if (ok) {
    void* fill = ::mmap(nullptr, segment, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ok = fill != MAP_FAILED;
    if (ok) {
      std::fill_n(static_cast<float*>(fill), segment / sizeof(float), 1.0f);
      ::munmap(fill, segment);
    }
  }
  if (ok) base = ::mmap(nullptr, length, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  ok = ok && base != MAP_FAILED;
  for (std::size_t k = 0; ok && k < count; ++k) {
    void* at = static_cast<char*>(base) + k * segment;
    ok = ::mmap(at, segment, PROT_READ, MAP_SHARED | MAP_FIXED, fd, 0) == at;
  }
  ::close(fd);  // the mappings keep the memory file
  if (!ok) {
    if (base != MAP_FAILED) ::munmap(base, length);
    return nullptr;
  }
  return std::shared_ptr<const float>(static_cast<const float*>(base),
                                      [length](const float* p) { ::munmap(const_cast<float*>(p), length); });
#else
  (void)n;
  return nullptr;
#endif
}

}  // namespace

void set_unit_values(Dataset& data) {
  const std::size_t n = data.nnz();
  // From a memory file's smallest segment on, the mapping; below it (its
  // setup, about 65 µs, would cost more than the ones it spares, and
  // `predict --line-buffered` reads a line at a time), or where the system
  // refuses one, an ordinary shared array of ones.
  constexpr std::size_t kMapFrom = (std::size_t{64} << 10) / sizeof(float);
  if (n >= kMapFrom) data.unit_values = map_ones(n);
  if (!data.unit_values) {
    std::shared_ptr<float[]> ones(new float[std::max<std::size_t>(n, 1)]);
    std::fill_n(ones.get(), std::max<std::size_t>(n, 1), 1.0f);
    data.unit_values = std::shared_ptr<const float>(ones, ones.get());
  }
  data.values = Buffer<float>::borrow(data.unit_values.get(), n);
}

void set_sample_weights(Dataset& data, std::span<const double> weights, const std::string& what) {
  if (weights.size() != data.size()) {
    throw InputError(what + ": " + std::to_string(weights.size()) + " weights for " + std::to_string(data.size()) +
                     " training rows (" + data.source + "); give one weight per row");
  }
  for (std::size_t i = 0; i < weights.size(); ++i) {
    if (!std::isfinite(weights[i]) || weights[i] < 0.0) {
      throw InputError(what + ": the weight of row " + std::to_string(i + 1) + " (" + std::to_string(weights[i]) +
                       ") is not a finite number ≥ 0");
    }
  }
  // Weights are relative and stored as float32: extreme ones (a weight of 1e39
  // overflowed float to infinity) are divided by the largest first, and a
  // positive one that is then below float's range relative to it is raised
  // to float's smallest positive number (still a row of the problem, of
  // negligible weight, not a row left out).
  std::vector<double> scaled;
  const double top = weights.empty() ? 0.0 : *std::max_element(weights.begin(), weights.end());
  if (top > 1e30 || (top > 0.0 && top < 1e-30)) {
    scaled.assign(weights.begin(), weights.end());
    for (double& w : scaled) {
      w /= top;
      if (w > 0.0 && static_cast<float>(w) == 0.0f) w = static_cast<double>(std::numeric_limits<float>::denorm_min());
    }
    weights = scaled;
  }
  // Drop the rows of weight 0 in place (they contribute nothing to the objective).
  Dataset& d = data;
  if (std::find(weights.begin(), weights.end(), 0.0) == weights.end()) {  // none: the rows stay as they are
    d.weights.assign(weights.begin(), weights.end());
    normalize_sample_weights(d);
    return;
  }
  std::vector<std::uint64_t>& row_ptr = d.row_ptr.own();
  std::vector<std::uint32_t>& indices = d.indices.own();
  std::vector<float>& values = d.values.own();
  std::size_t kept = 0;
  std::uint64_t nnz = 0;
  std::vector<float> kept_weights;
  kept_weights.reserve(weights.size());
  for (std::size_t i = 0; i < weights.size(); ++i) {
    if (weights[i] == 0.0) continue;
    const std::uint64_t b = row_ptr[i], e = row_ptr[i + 1];
    std::copy(indices.begin() + static_cast<std::ptrdiff_t>(b), indices.begin() + static_cast<std::ptrdiff_t>(e),
              indices.begin() + static_cast<std::ptrdiff_t>(nnz));
    std::copy(values.begin() + static_cast<std::ptrdiff_t>(b), values.begin() + static_cast<std::ptrdiff_t>(e),
              values.begin() + static_cast<std::ptrdiff_t>(nnz));
    nnz += e - b;
    d.labels[kept] = d.labels[i];
    row_ptr[++kept] = nnz;
    kept_weights.push_back(static_cast<float>(weights[i]));
  }
  if (kept == 0) throw InputError(what + ": every weight is 0; nothing to train on");
  indices.resize(nnz);
  values.resize(nnz);
  d.labels.resize(kept);
  row_ptr.resize(kept + 1);
  d.weights = std::move(kept_weights);
  normalize_sample_weights(d);
}

std::string read_file_bytes(const std::string& path) {
  FileBytes bytes(path);
  return bytes.take();
}

void with_file_bytes(const std::string& path, const std::function<void(std::string_view)>& use) {
  const FileBytes bytes(path);
  use(bytes.view());
}

void with_file_bytes(const std::string& path, const std::function<void(std::string_view, bool)>& use) {
  const FileBytes bytes(path);
  use(bytes.view(), bytes.is_file_mapping());
}

DataFormat numeric_format_of(const std::string& path, std::string_view head) {
  if (path != "-") {
    std::string base = path;
    if (ends_with(base, ".gz")) base.resize(base.size() - 3);
    return (ends_with(base, ".csv") || ends_with(base, ".tsv")) ? DataFormat::kCsv : DataFormat::kLibsvm;
  }
  // Standard input has no name: the first line that is neither blank nor a
  // comment decides (CSV rows have commas, LIBSVM rows have none).
  while (!head.empty()) {
    const std::size_t nl = head.find('\n');
    std::string_view line = head.substr(0, nl);
    const std::size_t start = line.find_first_not_of(" \t\r\v\f");
    if (start != std::string_view::npos && line[start] != '#') {
      return line.find(',') != std::string_view::npos ? DataFormat::kCsv : DataFormat::kLibsvm;
    }
    if (nl == std::string_view::npos) break;
    head.remove_prefix(nl + 1);
  }
  return DataFormat::kLibsvm;
}

Dataset read_dataset(const std::string& path, const ReadOptions& options) {
  if (is_text_format(options.format)) {
    throw std::logic_error("read_dataset: " + std::string(to_string(options.format)) + " is raw text (text/corpus.hpp)");
  }
  FileBytes bytes(path);
  ReadOptions read = options;
  read.text_is_file_mapping = bytes.is_file_mapping();
  return parse_dataset(bytes.view(), path, read);
}

Dataset parse_dataset(std::string_view bytes, const std::string& path, const ReadOptions& options) {
  DataFormat format = options.format;
  if (format == DataFormat::kAuto) format = numeric_format_of(path, bytes);
  const std::string name = input_name(path);
  Dataset ds = format == DataFormat::kCsv ? parse_csv(bytes, name, options) : parse_libsvm(bytes, name, options);
  if (options.normalize_rows) ds.normalize_rows();
  return ds;
}

}  // namespace pegasos
