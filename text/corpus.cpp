#include "text/corpus.hpp"

#include <algorithm>
#include <cmath>
#include <cassert>
#include <filesystem>
#include <iterator>
#include <stdexcept>
#include <unordered_map>

#include <nlohmann/json.hpp>
#include <tbb/parallel_for.h>

#include "core/errors.hpp"
#include "core/json_fast.hpp"
#include "core/json_nesting.hpp"
#include "core/parse_chunks.hpp"
#include "core/input_stream.hpp"

namespace pegasos {

using nlohmann::json;

namespace {

// Corpus files are cut into pieces of about this size at line ends.
constexpr std::size_t kCorpusChunkBytes = std::size_t{1} << 20;

struct LineFailure {
  std::size_t column;  // 0 = not known
  std::string message;
};

struct CorpusChunk {
  std::vector<std::string> labels, texts, ids;
  std::size_t lines = 0;
  std::size_t error_line = 0, error_column = 0;
  std::string error;
};

bool blank(std::string_view line) {
  return std::all_of(line.begin(), line.end(), [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; });
}

std::string label_or_throw(std::string_view token, std::size_t column) {
  try {
    return canonical_label(token);
  } catch (const InputError& e) {
    throw LineFailure{column, e.what()};
  }
}

// Parse `text` line by line in parallel chunks; `parse(line, chunk)` may throw
// LineFailure. Errors report the first bad line of the file.
template <class ParseLine>
TextCorpus parse_corpus_lines(std::string_view text, const std::string& name, const TextReadOptions& options,
                              ParseLine parse) {
  const std::size_t first_line = options.first_line;
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  std::vector<std::size_t> bounds{0};
  while (bounds.back() < text.size()) {
    std::size_t next = bounds.back() + kCorpusChunkBytes;
    if (next >= text.size()) {
      next = text.size();
    } else {
      const std::size_t nl = text.find('\n', next);
      next = nl == std::string_view::npos ? text.size() : nl + 1;
    }
    bounds.push_back(next);
  }
  const std::size_t n_chunks = bounds.size() - 1;
  std::vector<CorpusChunk> chunks(n_chunks);
  tbb::parallel_for(std::size_t{0}, n_chunks, [&](std::size_t ci) {
    CorpusChunk& c = chunks[ci];
    std::size_t pos = bounds[ci];
    // The documents are copies: the chunk's pages can go once it is read.
    const reader_detail::ReleaseTextPagesAtExit done{text.data() + bounds[ci], text.data() + bounds[ci + 1],
                                                     options.text_is_file_mapping};
    while (pos < bounds[ci + 1]) {
      std::size_t nl = text.find('\n', pos);
      if (nl == std::string_view::npos || nl >= bounds[ci + 1]) nl = bounds[ci + 1];
      std::string_view line = text.substr(pos, nl - pos);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      ++c.lines;
      pos = nl + 1;
      if (blank(line)) continue;
      try {
        parse(line, c);
      } catch (const LineFailure& f) {
        c.error_line = c.lines;
        c.error_column = f.column;
        c.error = f.message;
        return;
      }
    }
  });
  TextCorpus corpus;
  corpus.source = name;
  std::size_t line_offset = first_line - 1, docs = 0;
  for (const CorpusChunk& c : chunks) {
    if (!c.error.empty()) throw InputError(location(name, line_offset + c.error_line, c.error_column) + ": " + c.error);
    line_offset += c.lines;
    docs += c.texts.size();
  }
  corpus.labels.reserve(docs);
  corpus.texts.reserve(docs);
  for (CorpusChunk& c : chunks) {
    std::move(c.labels.begin(), c.labels.end(), std::back_inserter(corpus.labels));
    std::move(c.texts.begin(), c.texts.end(), std::back_inserter(corpus.texts));
    std::move(c.ids.begin(), c.ids.end(), std::back_inserter(corpus.ids));
    c = CorpusChunk{};
  }
  if (corpus.size() == 0) throw InputError(name + ": no documents (the file is empty or has only blank lines)");
  return corpus;
}

// "syntax error while parsing value - invalid literal; last read: 'x'" from
// nlohmann's "[json.exception.parse_error.101] parse error at line 1, column 2: ...".
std::string json_reason(const std::string& what) {
  std::size_t at = what.find("column ");
  at = at == std::string::npos ? what.find("] ") : what.find(": ", at);
  std::string reason = at == std::string::npos ? what : what.substr(at + 2);
  for (char& c : reason) {  // "last read" may quote control or invalid bytes
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
  }
  constexpr std::size_t kShown = 160;
  if (reason.size() > kShown) reason = reason.substr(0, kShown) + "...";
  return reason;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// A JSON integer past 2^64 is read as a double, and so is 1e20: from 2^53 on
// it has lost digits, so it must be written as a string.
void refuse_lost_digits(const nlohmann::json& v, const char* what, const std::string& field) {
  if (v.is_number_float() && std::abs(v.get<double>()) >= 9007199254740992.0) {
    throw LineFailure{0, std::string(what) + " " + v.dump() + " in field \"" + field +
                             "\" is too large for a JSON number to keep its digits; write it as a string"};
  }
}

}  // namespace

TextCorpus parse_jsonl_corpus(std::string_view bytes, const std::string& name, const TextReadOptions& options) {
  return parse_corpus_lines(bytes, name, options, [&](std::string_view line, CorpusChunk& c) {
    json j;
    if (json_nesting::too_deep(line)) throw LineFailure{0, "invalid JSON: " + json_nesting::error()};
    try {
      // The fast reader gives the same value; nlohmann reads what it declines
      // (for the error message). About a fifth of `train`'s time on raw
      // SpamAssassin mail was nlohmann's lexer.
      j = json_fast::parse_or_throw(line);
    } catch (const json::parse_error& e) {
      throw LineFailure{e.byte, "invalid JSON: " + json_reason(e.what())};
    } catch (const json::exception& e) {  // e.g. a number that overflows a double
      throw LineFailure{0, "invalid JSON: " + json_reason(e.what())};
    }
    if (!j.is_object()) throw LineFailure{0, std::string("expected a JSON object, found ") + j.type_name()};
    auto text = j.find(options.text_field);
    if (text == j.end()) throw LineFailure{0, "missing text field \"" + options.text_field + "\""};
    if (!text->is_string()) {
      throw LineFailure{0, "field \"" + options.text_field + "\" must be a string, found " + text->type_name()};
    }
    std::string label;
    auto l = j.find(options.label_field);
    if (l == j.end() || l->is_null()) {
      if (options.require_labels) throw LineFailure{0, "missing label field \"" + options.label_field + "\""};
    } else if (l->is_string()) {
      if (l->get_ref<const std::string&>().empty()) throw LineFailure{0, "empty label in field \"" + options.label_field + "\""};
      label = label_or_throw(l->get_ref<const std::string&>(), 0);
    } else if (l->is_number()) {
      // Two such labels could become one class.
      refuse_lost_digits(*l, "label", options.label_field);
      label = label_or_throw(l->dump(), 0);
    } else {
      throw LineFailure{0, "field \"" + options.label_field + "\" must be a string or a number, found " + l->type_name()};
    }
    if (!options.id_field.empty()) {
      auto id = j.find(options.id_field);
      if (id == j.end() || id->is_null()) throw LineFailure{0, "missing id field \"" + options.id_field + "\""};
      if (id->is_string()) c.ids.push_back(id->get<std::string>());
      else if (id->is_number()) {
        refuse_lost_digits(*id, "id", options.id_field);  // two records would print one id
        c.ids.push_back(id->dump());
      }
      else throw LineFailure{0, "field \"" + options.id_field + "\" must be a string or a number, found " + id->type_name()};
      if (has_control_character(c.ids.back())) {  // predict prints ids as its first tab-separated column
        throw LineFailure{0, "id field \"" + options.id_field +
                                 "\" contains a control character (tab, line break, ...), which would split predict's columns"};
      }
    }
    c.labels.push_back(std::move(label));
    c.texts.push_back(std::move(text->get_ref<std::string&>()));
  });
}

TextCorpus parse_tsv_corpus(std::string_view bytes, const std::string& name, const TextReadOptions& options) {
  return parse_corpus_lines(bytes, name, options, [&](std::string_view line, CorpusChunk& c) {
    const std::size_t tab = line.find('\t');
    if (tab == std::string_view::npos) {
      if (options.require_labels) throw LineFailure{0, "expected LABEL<TAB>TEXT: the line has no tab"};
      c.labels.emplace_back();
      c.texts.emplace_back(line);
      return;
    }
    std::string_view label = line.substr(0, tab);
    std::size_t column = 1;
    while (!label.empty() && label.front() == ' ') {
      label.remove_prefix(1);
      ++column;
    }
    while (!label.empty() && label.back() == ' ') label.remove_suffix(1);
    if (label.empty()) {
      if (options.require_labels) throw LineFailure{1, "empty label before the tab"};
      c.labels.emplace_back();
    } else {
      c.labels.push_back(label_or_throw(label, column));
    }
    c.texts.emplace_back(line.substr(tab + 1));
  });
}

namespace {

// Names starting with '.' (.git, .DS_Store) are not documents or classes.
bool hidden(const std::filesystem::path& p) { return p.filename().string().starts_with("."); }

// A folder's top level, hidden names left out, each list sorted: its
// sub-folders and the names of its regular files.
struct TopLevel {
  std::vector<std::filesystem::path> folders;
  std::vector<std::string> files;
};
TopLevel list_top_level(const std::string& path) {
  namespace fs = std::filesystem;
  TopLevel top;
  std::error_code ec;
  fs::directory_iterator it(path, ec);
  if (ec) throw InputError(path + ": cannot list directory: " + ec.message());
  for (const auto& e : it) {
    if (hidden(e.path())) continue;
    if (e.is_directory(ec)) {
      top.folders.push_back(e.path());
    } else if (e.is_regular_file(ec)) {
      top.files.push_back(e.path().filename().string());
    }
  }
  std::sort(top.folders.begin(), top.folders.end());
  std::sort(top.files.begin(), top.files.end());
  return top;
}

// The documents of one class folder, sorted: its regular files (hidden ones
// left out). A folder inside is an error; entries that are neither (broken
// links, FIFOs, sockets) are skipped with a note.
std::vector<std::filesystem::path> class_folder_documents(const std::filesystem::path& folder,
                                                          std::vector<std::string>& notes) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<fs::path> inside;
  std::vector<std::string> other;  // neither a file nor a folder
  fs::directory_iterator it(folder, ec);
  if (ec) throw InputError(folder.string() + ": cannot list directory: " + ec.message());
  for (const auto& e : it) {
    if (hidden(e.path())) continue;
    if (e.is_regular_file(ec)) {
      inside.push_back(e.path());
    } else if (e.is_directory(ec)) {  // its documents would silently be no class's (a class could vanish)
      throw InputError(e.path().string() + ": a folder inside the class folder " + folder.filename().string() +
                       "; a class's documents are the files directly in its folder (nested folders are not read)");
    } else {
      other.push_back(e.path().filename().string() + (e.is_symlink(ec) ? " (a broken link)" : ""));
    }
  }
  std::sort(inside.begin(), inside.end());
  if (!other.empty()) {
    std::sort(other.begin(), other.end());
    notes.push_back(folder.string() + ": " + std::to_string(other.size()) +
                    (other.size() == 1 ? " entry that is not a regular file" : " entries that are not regular files") +
                    " skipped (" + other.front() + (other.size() > 1 ? ", ..." : "") + ")");
  }
  return inside;
}

}  // namespace

TextCorpus read_directory_corpus(const std::string& path, const TextReadOptions& options) {
  namespace fs = std::filesystem;
  const TopLevel top = list_top_level(path);
  const std::vector<fs::path>& folders = top.folders;
  const std::vector<std::string>& loose = top.files;  // regular files at the top level
  std::error_code ec;
  std::vector<fs::path> files;
  TextCorpus corpus;
  corpus.source = path;
  for (const fs::path& folder : folders) {
    std::string label;
    try {
      label = canonical_label(folder.filename().string());
    } catch (const InputError& e) {
      throw InputError(folder.string() + ": folder name is not a usable label: " + e.what());
    }
    std::vector<fs::path> inside = class_folder_documents(folder, corpus.notes);
    if (inside.empty()) {
      corpus.notes.push_back(folder.string() + ": an empty class folder (no documents): class '" + label +
                             "' is not in the data");
    }
    for (auto& f : inside) {
      corpus.ids.push_back(folder.filename().string() + "/" + f.filename().string());
      files.push_back(std::move(f));
      corpus.labels.push_back(label);
    }
  }
  if (!files.empty() && !loose.empty()) {
    corpus.notes.push_back(path + ": " + std::to_string(loose.size()) + (loose.size() == 1 ? " file" : " files") +
                           " at the top level, outside the class folders, skipped (" + loose.front() +
                           (loose.size() > 1 ? ", ..." : "") + ")");
  }
  if (files.empty() && !options.require_labels) {  // a flat folder of unlabelled documents
    corpus.notes.clear();  // the class folders were empty: this is a flat folder
    for (const auto& e : fs::directory_iterator(path, ec)) {
      if (!hidden(e.path()) && e.is_regular_file(ec)) files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& f : files) corpus.ids.push_back(f.filename().string());
    corpus.labels.assign(files.size(), "");
  }
  if (files.empty()) {
    throw InputError(path + ": no documents (expected one sub-folder per class, each holding one file per document" +
                     (options.require_labels ? ")" : ", or a folder of documents)"));
  }
  corpus.texts.resize(files.size());
  std::vector<std::string> errors(files.size());
  tbb::parallel_for(std::size_t{0}, files.size(), [&](std::size_t i) {
    try {
      corpus.texts[i] = read_file_bytes(files[i].string());
      if (reader_detail::looks_binary(corpus.texts[i])) {
        throw InputError(files[i].string() + ": binary data (NUL bytes), not a text document");
      }
    } catch (const std::exception& e) {
      errors[i] = e.what();
    }
  });
  for (const std::string& e : errors) {
    if (!e.empty()) throw InputError(e);  // the first failure in file order
  }
  return corpus;
}

namespace {

TextFormat format_by_name(const std::string& path, bool directory, bool require_labels) {
  if (directory) return TextFormat::kDirectory;
  if (const TextFormat named = text_format_of_name(path); named != TextFormat::kAuto) return named;
  if (!require_labels) return TextFormat::kDocument;
  throw InputError(path + ": cannot tell the text format from the name (expected a directory, or .jsonl / .tsv / .txt, "
                          "optionally .gz)");
}

}  // namespace

TextFormat text_format_of_name(std::string_view path) {
  if (ends_with(path, ".gz")) path.remove_suffix(3);
  if (ends_with(path, ".jsonl") || ends_with(path, ".ndjson") || ends_with(path, ".json")) return TextFormat::kJsonl;
  if (ends_with(path, ".tsv") || ends_with(path, ".txt")) return TextFormat::kTsv;
  return TextFormat::kAuto;
}

TextCorpus parse_text_corpus(std::string_view bytes, TextFormat format, const std::string& path,
                             const TextReadOptions& options) {
  if (format == TextFormat::kAuto) format = sniff_text_format(bytes);
  if (format == TextFormat::kDirectory) throw InputError(input_name(path) + ": format text_dir needs a folder, not a stream");
  const std::string name = input_name(path);
  // NUL bytes in its first 64 KiB: an executable, an image, an archive, not
  // text (a mail message, JSON Lines and TSV never hold a raw NUL).
  reader_detail::refuse_unsupported_compression(bytes, name);
  if (reader_detail::looks_binary(bytes)) throw InputError(name + ": binary data (NUL bytes), not text");
  if (format == TextFormat::kDocument) {
    TextCorpus corpus;
    corpus.source = name;
    corpus.texts.emplace_back(bytes);
    corpus.labels.emplace_back();
    corpus.ids.push_back(path);
    return corpus;
  }
  return format == TextFormat::kJsonl ? parse_jsonl_corpus(bytes, name, options) : parse_tsv_corpus(bytes, name, options);
}

TextFormat sniff_text_format(std::string_view bytes) {
  const std::size_t start = bytes.find_first_not_of(" \t\r\n\v\f");
  if (start != std::string_view::npos && bytes.substr(start, 3) == "\xEF\xBB\xBF") return sniff_text_format(bytes.substr(start + 3));
  return start != std::string_view::npos && bytes[start] == '{' ? TextFormat::kJsonl : TextFormat::kTsv;
}

TextCorpus read_text_corpus(const std::string& path, const TextReadOptions& options) {
  TextFormat format = options.format;
  if (path == "-") return parse_text_corpus(read_file_bytes(path), format, path, options);
  std::error_code ec;
  const bool directory = std::filesystem::is_directory(path, ec);
  if (!directory && !std::filesystem::exists(path, ec)) throw InputError(path + ": no such file or directory");
  if (format == TextFormat::kAuto) format = format_by_name(path, directory, options.require_labels);
  if (format == TextFormat::kDirectory) {
    if (!directory) throw InputError(path + ": not a directory");
    return read_directory_corpus(path, options);
  }
  if (directory) throw InputError(path + ": is a directory, expected a " + (format == TextFormat::kJsonl ? "JSONL" : "TSV") + " file");
  // Parsed from the file's mapping: the documents are copied out of it as
  // they are decoded, so a copy of the whole file (and its page faults: 27
  // MB of mail, about 0.1 s here) is not needed.
  TextCorpus corpus;
  with_file_bytes(path, [&](std::string_view bytes, bool file_mapping) {
    TextReadOptions read = options;
    read.text_is_file_mapping = file_mapping;
    corpus = parse_text_corpus(bytes, format, path, read);
  });
  return corpus;
}

// ---------------------------------------------------------------------------
// Dataset bridge.

Dataset make_text_dataset(SparseRows rows, std::span<const std::string> labels, std::uint32_t dimension,
                          const std::string& source) {
  if (rows.size() != labels.size()) {
    throw std::logic_error("make_text_dataset: " + std::to_string(rows.size()) + " rows but " +
                           std::to_string(labels.size()) + " labels");
  }
  if (rows.size() == 0) throw InputError(source + ": no documents");
  Dataset ds;
  ds.source = source;
  ds.dimension = dimension;
  std::vector<std::string> canonical(labels.size());
  std::unordered_map<std::string, int> ids;
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (labels[i].empty()) continue;  // unlabeled
    try {
      canonical[i] = canonical_label(labels[i]);
    } catch (const InputError& e) {
      throw InputError(source + ": document " + std::to_string(i + 1) + ": " + e.what());
    }
    if (ids.emplace(canonical[i], 0).second) ds.classes.push_back(canonical[i]);
  }
  sort_classes(ds.classes);
  for (std::size_t k = 0; k < ds.classes.size(); ++k) ids[ds.classes[k]] = static_cast<int>(k);
  ds.labels.resize(labels.size());
  for (std::size_t i = 0; i < labels.size(); ++i) ds.labels[i] = labels[i].empty() ? -1 : ids.at(canonical[i]);
  assert(std::all_of(rows.indices.begin(), rows.indices.end(), [&](std::uint32_t j) { return j < dimension; }));
  ds.row_ptr = std::move(rows.row_ptr);
  ds.indices = std::move(rows.indices);
  ds.values = std::move(rows.values);
  return ds;
}

Dataset featurize_corpus(const TextFeaturizer& featurizer, const TextCorpus& corpus) {
  return make_text_dataset(featurizer.transform(corpus.texts), corpus.labels, featurizer.dimension(), corpus.source);
}


}  // namespace pegasos
