// In-memory training data: compressed sparse rows (float32 values, uint32
// 0-based feature indices) plus one class id per row. Dense data (CSV) is the
// same structure with every non-zero column present, so the engine has one
// code path.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <span>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

#include "core/buffer.hpp"

namespace pegasos {

// One example. indices[j] < dimension of the dataset it came from.
struct RowView {
  const float* values = nullptr;
  const std::uint32_t* indices = nullptr;
  std::uint32_t nnz = 0;
  int label = -1;          // class id (0..K-1); -1 = unlabeled / unknown label
  std::size_t index = 0;   // row number in the dataset (for per-example state)
  // The example's weight s_i > 0 (Dataset::weights; 1 without sample weights):
  // it multiplies the example's loss term, so its dual box bound too.
  double weight = 1.0;
};

// Rows of kSplitSum or more non-zeros have their sums over the row (‖x‖²
// here, x·w in core/training.hpp row_dot) taken in four partial sums: one
// running sum waits on each add's latency, about 4 cycles an element.
// Shorter rows keep the one running sum in index order.
inline constexpr std::uint32_t kSplitSum = 16;

// start + ‖x‖², in double. From kSplitSum non-zeros on, element j goes to
// partial sum j mod 4 (the last nnz mod 4 to the first), combined as
// (s0 + s1) + (s2 + s3), the same grouping as row_dot. Binary SDCA's first
// pass sums every row's norm as it reads the row: on 780k RCV1-like rows of
// 70 non-zeros the one running sum was a third of that pass (180 → 135 ms).
inline double squared_norm(const RowView& x, double start = 0.0) {
  const float* val = x.values;
  if (x.nnz < kSplitSum) {
    for (std::uint32_t j = 0; j < x.nnz; ++j) start += static_cast<double>(val[j]) * val[j];
    return start;
  }
  using Pair = double __attribute__((vector_size(16)));  // lanes (s0, s1) and (s2, s3)
  Pair low = {0.0, 0.0}, high = {0.0, 0.0};
  std::uint32_t j = 0;
  for (; j + 4 <= x.nnz; j += 4) {
    const Pair xl = {static_cast<double>(val[j]), static_cast<double>(val[j + 1])};
    const Pair xh = {static_cast<double>(val[j + 2]), static_cast<double>(val[j + 3])};
    low += xl * xl;
    high += xh * xh;
  }
  double s0 = low[0];
  const double s1 = low[1], s2 = high[0], s3 = high[1];
  for (; j < x.nnz; ++j) s0 += static_cast<double>(val[j]) * val[j];
  return start + ((s0 + s1) + (s2 + s3));
}

// Every input format, numeric (read here) and raw text (read and featurised
// by text/). kAuto: by the file name (.csv/.tsv, .jsonl/.ndjson/.json,
// optionally .gz) or a folder per class.
enum class DataFormat { kAuto, kLibsvm, kCsv, kJsonl, kTextTsv, kTextDir };

// The `format` setting's names, in the order messages list them.
inline constexpr std::pair<DataFormat, std::string_view> kDataFormatNames[] = {
    {DataFormat::kAuto, "auto"},   {DataFormat::kLibsvm, "libsvm"},     {DataFormat::kCsv, "csv"},
    {DataFormat::kJsonl, "jsonl"}, {DataFormat::kTextTsv, "text_tsv"}, {DataFormat::kTextDir, "text_dir"},
};
constexpr std::string_view to_string(DataFormat f) {
  for (const auto& [format, name] : kDataFormatNames) {
    if (format == f) return name;
  }
  return "?";
}
// The format of a name, or kAuto with ok = false for an unknown name.
constexpr DataFormat parse_data_format(std::string_view name, bool* ok = nullptr) {
  for (const auto& [format, n] : kDataFormatNames) {
    if (n == name) {
      if (ok) *ok = true;
      return format;
    }
  }
  if (ok) *ok = false;
  return DataFormat::kAuto;
}
constexpr bool is_text_format(DataFormat f) {
  return f == DataFormat::kJsonl || f == DataFormat::kTextTsv || f == DataFormat::kTextDir;
}

struct ReadOptions {
  DataFormat format = DataFormat::kAuto;  // read_dataset: auto, libsvm or csv
  // CSV: which field holds the label. 0-based; negative counts from the end
  // (-1 = last). label_column_name, when set, selects it by header name.
  long label_column = 0;
  std::string label_column_name;
  // Guard against absurd feature indices (a typo such as 1e12:1 would
  // otherwise allocate terabytes of weights).
  std::uint64_t max_feature_index = std::uint64_t{1} << 31;
  // false for `predict`: LIBSVM rows may then omit the label.
  bool require_labels = true;
  // Scale every row to unit L2 norm after reading (all-zero rows stay zero).
  // SGD converges at a rate governed by R²/λ (R = largest row norm), so
  // unnormalised data such as raw pixels needs far more epochs.
  bool normalize_rows = false;
  // LIBSVM lines are read by a one-pass fast path that hands every line it
  // does not fully accept (comments, qid:, any error) to the general parser;
  // false sends every line to the general parser (the tests compare the two).
  bool libsvm_fast_path = true;
  // The 1-based line number of the text's first line, for messages (a piece
  // of a stream read in batches starts later than line 1).
  std::size_t first_line = 1;
  // Set by read_dataset when the text is a read-only mapping of a regular
  // file: the readers then drop each chunk's whole pages from the process
  // once read (madvise MADV_DONTNEED; they stay in the page cache and a later
  // touch reads them again from it), so the peak memory of a read is the
  // Dataset's, not the file's plus the Dataset's. Never set it for text in
  // ordinary memory: dropped pages of that read back as zeros.
  bool text_is_file_mapping = false;
  // CSV read for a model trained on CSV (its "data" block): the feature
  // columns it was trained on, by header name (empty: no header) and by
  // count (0: no check). A file whose header names other columns, in
  // another order, or whose feature columns are not as many is an
  // InputError; with require_labels false, a file holding exactly the
  // model's feature columns (no label) reads as unlabelled rows.
  std::vector<std::string> model_feature_names;
  std::uint32_t model_features = 0;
};

// Example i's weight in weights held as Dataset::weights holds them (empty:
// every example weighs 1), and the check that there is one per example
// (std::invalid_argument naming `what` otherwise), for code that takes such
// weights beside its own arrays (calibration, operating points).
inline double sample_weight_at(const std::vector<float>& weights, std::size_t i) {
  return weights.empty() ? 1.0 : static_cast<double>(weights[i]);
}
inline void check_sample_weight_count(const std::vector<float>& weights, std::size_t n, const char* what) {
  if (!weights.empty() && weights.size() != n)
    throw std::invalid_argument(std::string(what) + ": " + std::to_string(weights.size()) + " weights for " +
                                std::to_string(n) + " examples");
}

class Dataset {
 public:
  // CSR arrays: owned, or borrowed from a caller (the Python door) without a
  // copy (core/buffer.hpp: changing them copies them first).
  Buffer<std::uint64_t> row_ptr{0};
  Buffer<std::uint32_t> indices;
  Buffer<float> values;
  std::vector<int> labels;            // class id per row, -1 if absent
  std::vector<std::string> classes;   // class names in canonical order
  std::uint32_t dimension = 0;        // 1 + largest feature index (0-based)
  std::string source;                 // file name, for messages
  std::size_t first_row = 1;          // how messages number rows: 1 for files, 0 for arrays (Python's X[i])
  // Each row's 1-based line in `source`, where the reader of a part of it
  // knows them (predict's streamed batches); empty: not known here.
  std::vector<std::size_t> row_lines;
  // CSV with a header row: the names of the feature columns (feature j is
  // feature_names[j]); empty otherwise.
  std::vector<std::string> feature_names;
  // CSV: the number of feature columns (with or without a header); 0 for
  // other formats.
  std::uint32_t csv_features = 0;
  // Per-example weights, one per row, positive, mean 1 (set_sample_weights);
  // empty = every row weighs 1 (the unweighted problem, byte for byte).
  // sample_weight_at() reads them.
  std::vector<float> weights;
  // Whatever keeps borrowed row arrays alive (the Python door's numpy arrays);
  // empty when the rows are owned.
  std::shared_ptr<const void> lender;
  // Indicator data (LIBSVM text whose every value is "1", such as a9a): no
  // value is stored. `values` borrows this read-only array of nnz() ones,
  // a few pages mapped over and over (set_unit_values), and row() hands
  // every row its start, which stays in cache. Any change to the values
  // (values.own()) copies them out first, and row() then reads the copy.
  std::shared_ptr<const float> unit_values;

  std::size_t size() const { return labels.size(); }
  std::uint64_t nnz() const { return row_ptr.back(); }
  // Whether every row holds all `dimension` features (so row i's indices are
  // 0, 1, ..., dimension − 1): solvers may then skip reading the indices.
  bool rows_hold_every_feature() const {
    if (dimension == 0 || size() == 0 || nnz() != std::uint64_t{dimension} * size()) return false;
    for (std::size_t i = 0; i < size(); ++i) {
      if (row_ptr[i + 1] - row_ptr[i] != dimension) return false;
    }
    return true;
  }
  // Whether `values` is the unit_values array (every value 1, none stored).
  bool has_unit_values() const { return unit_values != nullptr && values.data() == unit_values.get(); }
  RowView row(std::size_t i) const {
    const std::uint64_t begin = row_ptr[i];
    const float* v = values.data();
    if (v != unit_values.get()) v += begin;  // unit values: every row's are the array's first ones
    return RowView{v, indices.data() + begin,
                   static_cast<std::uint32_t>(row_ptr[i + 1] - begin), labels[i], i,
                   sample_weight_at(weights, i)};
  }
  // "row R" for the 0-based row `row` (R counted from first_row), with
  // " (line L)" where row_lines knows a line L other than R: for messages.
  std::string row_name(std::size_t row) const;
  // Number of rows per class id.
  std::vector<std::size_t> class_counts() const;
  // Re-express labels in another class list (e.g. a model's). Labels not in
  // `target` become -1 and are returned (deduplicated) so callers can decide.
  std::vector<std::string> remap_classes(const std::vector<std::string>& target);
  void append_row(std::span<const std::uint32_t> idx, std::span<const float> val, int label);
  // Scale each row to unit L2 norm (rows of norm 0 are left alone).
  void normalize_rows();
};

// Make `data`'s values nnz() ones without storing them (Dataset::unit_values):
// a read-only mapping of a few pages, or, for small data or where the
// system refuses one, an ordinary shared array of ones.
void set_unit_values(Dataset& data);

// Copy of `rows` of `data` (same classes, dimension and source; sample
// weights again of mean 1). O(nnz of rows).
Dataset subset(const Dataset& data, const std::vector<std::size_t>& rows);

// A Dataset of `like`'s rows (labels, sample weights, classes, source, row
// numbering) with `width` features each, every one present: values all zero
// for the caller to fill (row i at values[i·width]), indices 0..width−1. The
// form of mapped rows (kernel_approximation's maps, the budget refit).
Dataset dense_rows_like(const Dataset& like, std::uint32_t width);

// Per-example sample weights s_i (one per row, finite, ≥ 0), so that training
// minimises λ/2‖w‖² + (1/Σs) Σ_i s_i c_{y_i} ℓ_i(w). Rows of weight 0 are
// removed (they contribute nothing); the others are stored scaled to mean 1
// (s_i·n/Σs, n the rows kept), so the engine keeps its 1/n with n = rows.
// Hence integer weights k are the row repeated k times, a weight-0 row is the
// row left out, and equal weights (any value) are no weights: `weights` stays
// empty. `what` names the weights in messages. Throws InputError when the
// count differs from the rows, a weight is negative or not finite, or all
// weights are 0. O(nnz).
void set_sample_weights(Dataset& data, std::span<const double> weights, const std::string& what);

// Scale `data.weights` to mean 1 (empty when all are equal), e.g. after
// taking a subset of the rows. Requires every weight > 0.
void normalize_sample_weights(Dataset& data);

// Whether `text` holds a tab, a line break or another control character:
// labels, class names and ids are printed as tab-separated columns, which
// such a character would split.
bool has_control_character(std::string_view text);

// Canonical spelling of a label: numbers are normalised ("+1", "1.0" -> "1"),
// anything else is kept verbatim. Throws InputError for NaN/inf labels.
std::string canonical_label(std::string_view token);

// The rows as LIBSVM text: `label_text[class id]` (rows without a label get
// `unlabelled`), then 1-based index:value pairs, values written as the
// shortest text that reads back to the same float.
// Appends "i:v i:v ..." (1-based indices, values as the shortest text that
// reads back to the same float), the feature part of a LIBSVM line.
void append_libsvm_pairs(std::string& out, const RowView& x);

std::string to_libsvm_text(const Dataset& data, const std::vector<std::string>& label_text,
                           const std::string& unlabelled = "0");

// Sort class names: numerically if every name is a number, else bytewise.
// For two classes the second one is the positive class (+1): -1/+1, 0/1,
// 1/2 and ham/spam all come out the way users expect.
void sort_classes(std::vector<std::string>& classes);

// The numeric format of an input in format auto: by the name (.csv / .tsv,
// optionally .gz, are CSV, anything else LIBSVM), or for standard input ("-")
// by its first data line in `head` (commas: CSV).
DataFormat numeric_format_of(const std::string& path, std::string_view head);

// Read a LIBSVM/SVMlight or CSV file ("-": standard input; pipes and devices
// are read to their end) (optionally gzip-compressed; detected by
// content). Parses in parallel chunks. Throws InputError naming file:line:column
// for malformed input, empty files and non-finite values.
Dataset read_dataset(const std::string& path, const ReadOptions& options);

// The same from the bytes of input `path` already in memory ("-": standard
// input; format auto as numeric_format_of says).
Dataset parse_dataset(std::string_view bytes, const std::string& path, const ReadOptions& options);
// The same from text already in memory; `name` is used in messages.
Dataset parse_libsvm(std::string_view text, const std::string& name, const ReadOptions& options);
Dataset parse_csv(std::string_view text, const std::string& name, const ReadOptions& options);

// Whole file contents (gzip is decompressed). Throws InputError if unreadable.
std::string read_file_bytes(const std::string& path);
// `use` called with the whole contents of the file, without a copy where it
// can be mapped (a regular file that is not gzip): a 4 MB model read into a
// string faulted in its pages twice, for the mapping and for the copy.
void with_file_bytes(const std::string& path, const std::function<void(std::string_view)>& use);
// The same, telling `use` whether the bytes are a read-only mapping of the
// file (ReadOptions::text_is_file_mapping) rather than memory of their own.
void with_file_bytes(const std::string& path, const std::function<void(std::string_view, bool)>& use);

}  // namespace pegasos
