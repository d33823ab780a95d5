// What a model is applied to, read piece by piece: `predict` streams its
// input (a file, standard input, a pipe) in batches of whole lines, so memory
// stays bounded, and reads folders of documents and single documents whole.
// The model's reader settings and fitted featurizer decide how.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/dataset.hpp"

namespace pegasos {

class TextFeaturizer;

// How an input is read. The line formats can be cut into batches of lines.
enum class InputKind { kLibsvm, kCsv, kJsonl, kTsv, kDirectory, kDocument };

constexpr bool is_line_format(InputKind k) { return k != InputKind::kDirectory && k != InputKind::kDocument; }

// "libsvm", "csv", "jsonl", "text_tsv", "text_dir", "document" (and "auto" =
// decide). Throws InputError for another name.
bool parse_input_kind(const std::string& name, InputKind* kind);
// The name parse_input_kind reads.
const char* input_kind_name(InputKind kind);

// Standard input ("-"), a pipe, a device: read once, judged by content.
bool is_stream(const std::string& path);

class ModelReader {
 public:
  // The model's "data" (reader settings) and "features" (null: numeric model).
  // `model_name` (the model file) names the model in messages.
  ModelReader(nlohmann::json data_settings, const nlohmann::json& features, const std::string& model_name = "model");

  bool text_model() const { return featurizer_ != nullptr; }

  // How to read `path` for this model: `format` when given ("" or "auto":
  // the model's format setting, else the name: a folder, .jsonl/.tsv/.txt/.csv
  // /.svm (optionally .gz); for streams (is_stream) with another name, their
  // first bytes `head`; for a regular file with another name, LIBSVM for a
  // numeric model and one document for a text model unless it holds LIBSVM
  // rows).
  // Raw text for a numeric model, or the reverse, is an InputError.
  InputKind kind(const std::string& path, const std::string& format, std::string_view head) const;

  // The rows of `bytes`, whole lines of a line format whose first line is
  // line `first_line` of the input `name`. Labels are optional. `ids`, when
  // not null, receives one id per row: the `id_field` value (JSONL with an id
  // field) or the row's line number.
  Dataset parse(std::string_view bytes, InputKind kind, const std::string& name, std::size_t first_line,
                const std::string& id_field, std::vector<std::string>* ids) const;

  // A folder of documents or one document, whole. `ids` (not null): the file
  // names relative to the folder, or the path.
  Dataset read_documents(const std::string& path, InputKind kind, std::vector<std::string>* ids) const;

 private:
  nlohmann::json data_;
  std::shared_ptr<const TextFeaturizer> featurizer_;  // built once (text models)
};

// Number of lines of `bytes` that hold a row in `kind` (not blank, not a
// LIBSVM comment), and their 1-based line numbers from `first_line` when
// `lines` is not null.
std::size_t count_rows(std::string_view bytes, InputKind kind, std::size_t first_line, std::vector<std::size_t>* lines);

// "row R (line L)" for the 0-based row `row` of the `rows` rows read from the
// file `path` (blank lines, comments and a CSV header are not rows, so R and
// L differ), found by counting the file's row lines again: for error
// messages only. "row R" where the line cannot be told (standard input, a
// folder, a count that does not match).
std::string row_and_line(const std::string& path, std::size_t row, std::size_t rows);

}  // namespace pegasos
