// Text corpora, (label, text) pairs read from JSONL, TSV or one folder per
// class, and the bridge from featurized rows to a pegasos::Dataset.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/dataset.hpp"
#include "text/featurizer.hpp"

namespace pegasos {

// kDocument: the whole file is one unlabelled document (e.g. one mail message).
enum class TextFormat { kAuto, kJsonl, kTsv, kDirectory, kDocument };

struct TextReadOptions {
  TextFormat format = TextFormat::kAuto;
  std::string text_field = "text";    // JSONL
  std::string label_field = "label";  // JSONL; a string or a number
  // false (predict): a missing/null label (JSONL), a line without a tab (TSV)
  // gives an unlabeled document (label "").
  bool require_labels = true;
  // JSONL: the field whose value (a string or a number) identifies each
  // document in TextCorpus::ids; "" = no ids from the records.
  std::string id_field;
  // The 1-based line number of the text's first line, for messages.
  std::size_t first_line = 1;
  // JSONL / TSV: the text is a read-only mapping of a regular file, whose
  // pages may be dropped as they are read (ReadOptions::text_is_file_mapping;
  // set by read_text_corpus, never for text in ordinary memory).
  bool text_is_file_mapping = false;
};

struct TextCorpus {
  std::vector<std::string> labels;  // canonical_label() spelling; "" = unlabeled
  std::vector<std::string> texts;
  std::string source;               // path, for messages
  // One per document when known: the file name relative to the folder (folders),
  // the path (one document), the id field's value (JSONL with id_field);
  // else empty.
  std::vector<std::string> ids;
  // What the reader skipped that a user may not expect, one line each (a
  // folder of class folders: files at its top level, empty class folders);
  // the callers print them to standard error.
  std::vector<std::string> notes;
  std::size_t size() const { return texts.size(); }
};

// Format by name: a directory -> one sub-folder per class (each regular file
// directly inside a sub-folder is one document, label = folder name; files
// and folders are taken in sorted order; names starting with '.' and files at
// the top level are skipped (top-level files and empty class folders with a
// line in TextCorpus::notes); without labels required, a flat folder of files
// is one unlabelled document per file); otherwise, after removing ".gz",
// ".jsonl", ".ndjson" or ".json" -> JSONL, ".tsv" or ".txt" -> TSV, and any
// other file name, when labels are not required, one document. "-" is
// standard input: JSONL when its first non-blank byte is '{', else TSV. gzip
// is detected by content. Throws InputError naming file:line for malformed
// input and for a corpus without documents.
TextCorpus read_text_corpus(const std::string& path, const TextReadOptions& options);
// `bytes` of the input `path` ("-": standard input) parsed as `format`
// (kAuto: sniff_text_format; kDocument: all of it one document).
TextCorpus parse_text_corpus(std::string_view bytes, TextFormat format, const std::string& path,
                             const TextReadOptions& options);
// The text format a file's name says (.jsonl / .ndjson / .json: JSONL; .tsv /
// .txt: TSV; each optionally .gz), or kAuto when it says none.
TextFormat text_format_of_name(std::string_view path);
// The format of text read from a stream: JSONL when the first non-blank byte
// (after a UTF-8 BOM) is '{', else TSV.
TextFormat sniff_text_format(std::string_view bytes);
// One JSON object per line (blank lines skipped, UTF-8 BOM and CRLF accepted).
TextCorpus parse_jsonl_corpus(std::string_view bytes, const std::string& name, const TextReadOptions& options);
// LABEL<TAB>TEXT per line; TEXT is the rest of the line (further tabs included).
TextCorpus parse_tsv_corpus(std::string_view bytes, const std::string& name, const TextReadOptions& options);
TextCorpus read_directory_corpus(const std::string& path, const TextReadOptions& options);

// A Dataset over `rows` whose classes come from `labels` exactly as the LIBSVM
// reader makes them (canonical_label, then sort_classes; "" = unlabeled, -1).
// dimension is the featurizer's, so training and test sets agree.
Dataset make_text_dataset(SparseRows rows, std::span<const std::string> labels, std::uint32_t dimension,
                          const std::string& source);
// transform + make_text_dataset.
Dataset featurize_corpus(const TextFeaturizer& featurizer, const TextCorpus& corpus);

}  // namespace pegasos
