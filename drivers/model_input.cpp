#include "drivers/model_input.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <optional>
#include <utility>

#include "core/errors.hpp"
#include "core/input_stream.hpp"
#include "drivers/data.hpp"
#include "text/corpus.hpp"
#include "text/featurizer.hpp"

namespace pegasos {
namespace {

constexpr std::pair<InputKind, const char*> kKindNames[] = {
    {InputKind::kLibsvm, "libsvm"},  {InputKind::kCsv, "csv"},           {InputKind::kJsonl, "jsonl"},
    {InputKind::kTsv, "text_tsv"},   {InputKind::kDirectory, "text_dir"}, {InputKind::kDocument, "document"},
};

}  // namespace

const char* input_kind_name(InputKind kind) {
  for (const auto& [k, name] : kKindNames) {
    if (k == kind) return name;
  }
  return "?";
}

namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool is_text_kind(InputKind k) { return k != InputKind::kLibsvm && k != InputKind::kCsv; }

bool blank(std::string_view line) { return line.find_first_not_of(" \t\r\f\v") == std::string_view::npos; }

// True when the first line that is not blank holds LIBSVM pairs after a
// label ("1 3:0.5 7:1"): numeric data, not a document.
bool looks_like_libsvm(std::string_view head) {
  std::size_t start = head.find_first_not_of(" \t\r\n");
  if (start == std::string_view::npos) return false;
  std::string_view line = head.substr(start, head.find('\n', start) - start);
  std::size_t pairs = 0, pos = line.find_first_of(" \t");  // after the label
  while (pos != std::string_view::npos) {
    pos = line.find_first_not_of(" \t\r", pos);
    if (pos == std::string_view::npos || line[pos] == '#') break;
    const std::size_t end = std::min(line.find_first_of(" \t\r", pos), line.size());
    const std::string_view token = line.substr(pos, end - pos);
    const std::size_t colon = token.find(':');
    if (colon == 0 || colon == std::string_view::npos ||
        token.substr(0, colon).find_first_not_of("0123456789") != std::string_view::npos) {
      if (token.substr(0, colon) != "qid") return false;
    }
    ++pairs;
    pos = end < line.size() ? end : std::string_view::npos;
  }
  return pairs > 0;
}

// The first bytes of a file (for guessing what it holds).
std::string file_head(const std::string& path) {
  std::string head;
  try {
    InputStream in(path);
    in.read(head, 4096, false);
  } catch (const InputError&) {
    // unreadable: the reader says why later
  }
  return head;
}

// The kind of an input in format auto by its name: a folder, a known
// extension, else (kAuto: undecided) nothing.
std::optional<InputKind> kind_by_extension(const std::string& path, bool text_model) {
  struct stat st{};
  if (path != "-" && ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return InputKind::kDirectory;
  std::string_view base = path;
  if (ends_with(base, ".gz")) base.remove_suffix(3);
  if (ends_with(base, ".jsonl") || ends_with(base, ".ndjson") || ends_with(base, ".json")) return InputKind::kJsonl;
  if (ends_with(base, ".csv")) return InputKind::kCsv;
  if (ends_with(base, ".tsv")) return text_model ? InputKind::kTsv : InputKind::kCsv;
  if (ends_with(base, ".txt")) return text_model ? InputKind::kTsv : InputKind::kLibsvm;
  if (ends_with(base, ".svm") || ends_with(base, ".libsvm")) return InputKind::kLibsvm;
  return std::nullopt;
}

// The kind of standard input in format auto, by its first bytes.
InputKind kind_by_content(std::string_view head, bool text_model) {
  if (sniff_text_format(head) == TextFormat::kJsonl) return InputKind::kJsonl;
  // LIBSVM rows are numeric data for a text model too, as in a file (where
  // they were refused and the same rows on a pipe scored as documents).
  if (text_model && !looks_like_libsvm(head)) return InputKind::kTsv;
  if (text_model) return InputKind::kLibsvm;
  return numeric_format_of("-", head) == DataFormat::kCsv ? InputKind::kCsv : InputKind::kLibsvm;
}

// A regular file with a name that says nothing (e.g. /dev/stdin redirected
// from a file): by its first bytes as a stream would be, except that for a
// text model anything but JSONL or LIBSVM rows is one document.
InputKind kind_of_plain_file(const std::string& path, bool text_model) {
  const std::string head = file_head(path);
  if (!text_model || looks_like_libsvm(head)) return kind_by_content(head, false);
  return sniff_text_format(head) == TextFormat::kJsonl ? InputKind::kJsonl : InputKind::kDocument;
}


}  // namespace

bool is_stream(const std::string& path) {
  struct stat st{};
  return path == "-" || (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode));
}

bool parse_input_kind(const std::string& name, InputKind* kind) {
  for (const auto& [k, n] : kKindNames) {
    if (name == n) {
      *kind = k;
      return true;
    }
  }
  return false;
}

ModelReader::ModelReader(nlohmann::json data_settings, const nlohmann::json& features, const std::string& model_name)
    : data_(std::move(data_settings)) {
  if (!features.is_null()) {
    featurizer_ = std::make_shared<const TextFeaturizer>(TextFeaturizer::from_json(features, model_name, "/features"));
  }
}

InputKind ModelReader::kind(const std::string& path, const std::string& format, std::string_view head) const {
  InputKind k = InputKind::kLibsvm;
  if (!format.empty() && format != "auto") {
    if (!parse_input_kind(format, &k)) {
      throw InputError("--format: unknown format '" + format +
                       "' (expected auto, libsvm, csv, jsonl, text_tsv, text_dir or document)");
    }
  } else if (const std::string model_format = data_.value("format", "auto");
             model_format != "auto" && parse_input_kind(model_format, &k)) {
    // the model's reader setting
  } else {
    const std::optional<InputKind> by_name = kind_by_extension(path, text_model());
    if (by_name) k = *by_name;
    else if (is_stream(path)) k = kind_by_content(head, text_model());
    else k = kind_of_plain_file(path, text_model());
  }
  if (text_model() != is_text_kind(k)) {
    throw InputError(input_name(path) +
                     (text_model() ? ": the model was trained on raw text (it featurises .jsonl, text_tsv or a folder "
                                     "per class), but this is numeric data"
                                   : ": the model was trained on numeric features (LIBSVM/CSV), but this is raw text"));
  }
  if (path == "-" && k == InputKind::kDirectory) throw InputError("standard input: format text_dir needs a folder, not a stream");
  return k;
}

std::size_t count_rows(std::string_view bytes, InputKind kind, std::size_t first_line, std::vector<std::size_t>* lines) {
  std::size_t rows = 0, line = first_line;
  while (!bytes.empty()) {
    const std::size_t nl = bytes.find('\n');
    std::string_view text = bytes.substr(0, nl);
    if (kind == InputKind::kLibsvm) text = text.substr(0, text.find('#'));
    if (!blank(text)) {
      ++rows;
      if (lines) lines->push_back(line);
    }
    if (nl == std::string_view::npos) break;
    bytes.remove_prefix(nl + 1);
    ++line;
  }
  return rows;
}

std::string row_and_line(const std::string& path, std::size_t row, std::size_t rows) {
  const std::string plain = "row " + std::to_string(row + 1);
  if (is_stream(path)) return plain;
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return plain;
  const InputKind kind = kind_by_extension(path, false).value_or(InputKind::kLibsvm);
  std::vector<std::size_t> lines;
  try {
    count_rows(read_file_bytes(path), kind, 1, &lines);
  } catch (const std::exception&) {
    return plain;
  }
  if (lines.size() == rows + 1) lines.erase(lines.begin());  // a header
  if (lines.size() != rows || row >= rows || lines[row] == row + 1) return plain;
  return plain + " (line " + std::to_string(lines[row]) + ")";
}

Dataset ModelReader::parse(std::string_view bytes, InputKind kind, const std::string& name, std::size_t first_line,
                           const std::string& id_field, std::vector<std::string>* ids) const {
  Dataset ds;
  std::vector<std::string> field_ids;
  if (!text_model()) {
    ReadOptions r = model_read_options(data_, false);
    r.first_line = first_line;
    ds = kind == InputKind::kCsv ? parse_csv(bytes, name, r) : parse_libsvm(bytes, name, r);
  } else {
    TextReadOptions o = model_text_read_options(data_, false);
    o.first_line = first_line;
    if (kind == InputKind::kJsonl && ids) o.id_field = id_field;
    const TextCorpus corpus = kind == InputKind::kJsonl ? parse_jsonl_corpus(bytes, name, o) : parse_tsv_corpus(bytes, name, o);
    ds = featurize_corpus(*featurizer_, corpus);
    field_ids = corpus.ids;
  }
  if (model_normalizes_rows(data_)) ds.normalize_rows();
  if (ids == nullptr) return ds;
  if (!field_ids.empty()) {
    *ids = std::move(field_ids);
    return ds;
  }
  std::vector<std::size_t> lines;
  count_rows(bytes, kind, first_line, &lines);
  if (lines.size() == ds.size() + 1) lines.erase(lines.begin());  // a CSV header
  if (lines.size() != ds.size()) {
    throw std::logic_error("predict ids: " + std::to_string(lines.size()) + " row lines for " + std::to_string(ds.size()) + " rows");
  }
  ids->clear();
  for (std::size_t l : lines) ids->push_back(std::to_string(l));
  return ds;
}

Dataset ModelReader::read_documents(const std::string& path, InputKind kind, std::vector<std::string>* ids) const {
  TextReadOptions o = model_text_read_options(data_, false);
  o.format = kind == InputKind::kDirectory ? TextFormat::kDirectory : TextFormat::kDocument;
  const TextCorpus corpus = noted(read_text_corpus(path, o));
  Dataset ds = featurize_corpus(*featurizer_, corpus);
  if (model_normalizes_rows(data_)) ds.normalize_rows();
  if (ids) *ids = corpus.ids;
  return ds;
}

}  // namespace pegasos
