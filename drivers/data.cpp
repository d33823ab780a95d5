#include "drivers/data.hpp"
#include "drivers/status_line.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <cmath>
#include <optional>
#include <string_view>
#include <tuple>

#include "core/errors.hpp"
#include "core/input_stream.hpp"
#include "core/memory_limit.hpp"
#include "core/parse_chunks.hpp"
#include "io/model_json.hpp"
#include "io/model_sections_json.hpp"
#include "text/corpus.hpp"

namespace pegasos {
namespace {

// Dense weights for `data` (one row of `outputs` per feature, and at least
// a second copy while training) that cannot fit this machine's memory: an
// InputError saying why, before an allocation that would exhaust it (a
// LIBSVM file with hashed or otherwise huge indices, e.g. 2000000000:1,
// asked for 16 GB and ended in "out of memory" or swapping).
// One weight vector a class, but one in all for two classes, except for
// Crammer–Singer, which keeps one a class even then.
void check_weights_fit(const Dataset& data, const std::string& path, const TrainConfig& config,
                       const char* advice = "renumber the features densely (are the indices hashes?)") {
  const MemoryLimit limit = memory_limit();
  if (data.dimension == 0) return;
  const std::size_t k = data.classes.size();
  const bool per_class = config.objective.id == ObjectiveId::kMulticlassHinge;
  const double outputs = k <= 2 && !per_class ? 1.0 : static_cast<double>(std::max<std::size_t>(k, 1));
  // Crammer–Singer's dual also keeps a smoothed point in the full space (it is
  // not compacted, README § Raw text): a third copy (3.5 GB peak for 1.2 GB of
  // weights, 3 classes and a feature index of 5·10⁷).
  const double copies = per_class ? 3.0 : 2.0;
  const double need = copies * 8.0 * static_cast<double>(data.dimension) * outputs;
  if (need <= limit.bytes) return;
  char text[400];
  std::snprintf(text, sizeof text,
                ": the largest feature index is %u, so training needs at least %.1f GB for the weights (%u features x "
                "%.0f output%s x 8 bytes, %s), more than the %.1f GB this process may use (%s); %s",
                data.dimension, need / 1e9, data.dimension, outputs, outputs == 1.0 ? "" : "s",
                copies == 3.0 ? "three times" : "twice", limit.bytes / 1e9,
                limit.what, advice);
  throw InputError(input_name(path) + text);
}

bool is_directory(const std::string& path) {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

TextReadOptions text_read_options(DataFormat format, const std::string& text_field, const std::string& label_field,
                                  bool require_labels) {
  TextReadOptions r;
  r.format = format == DataFormat::kJsonl     ? TextFormat::kJsonl
             : format == DataFormat::kTextTsv ? TextFormat::kTsv
             : format == DataFormat::kTextDir ? TextFormat::kDirectory
                                              : TextFormat::kAuto;
  r.text_field = text_field;
  r.label_field = label_field;
  r.require_labels = require_labels;
  return r;
}

// An input to read once: standard input ("-") is read whole here so its
// format can be judged by its content (it cannot be read twice); files are
// read by the readers themselves.
struct Input {
  std::string path;
  std::optional<std::string> bytes;  // standard input
  explicit Input(const std::string& p) : path(p) {
    if (p == "-") bytes = read_file_bytes(p);
    else note_plain_gz(p);
  }
  // Raw text by the format, the name, or (standard input) a first '{'.
  bool text(DataFormat format) const {
    if (!bytes) return is_text_input(path, format);
    return is_text_format(format) || (format == DataFormat::kAuto && sniff_text_format(*bytes) == TextFormat::kJsonl);
  }
  Dataset numeric(const ReadOptions& r) const { return bytes ? parse_dataset(*bytes, path, r) : read_dataset(path, r); }
  TextCorpus corpus(const TextReadOptions& o) const {
    return noted(bytes ? parse_text_corpus(*bytes, o.format, path, o) : read_text_corpus(path, o));
  }
};

// Numeric labels with a few words among them ("1", "-1" and "l", or "+")
// are more likely a typo than classes (LIBLINEAR rejects such a line): the
// run goes on, with a warning naming the other labels and the example where
// the first of them occurs.
void warn_mixed_labels(const Dataset& data, const std::string& path) {
  auto numeric = [](const std::string& s) {
    double v = 0;
    const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    return !s.empty() && r.ec == std::errc() && r.ptr == s.data() + s.size();
  };
  std::vector<int> is_word(data.classes.size(), 0);
  std::size_t numbers = 0, words = 0;
  for (std::size_t k = 0; k < data.classes.size(); ++k) {
    is_word[k] = numeric(data.classes[k]) ? 0 : 1;
    (is_word[k] ? words : numbers) += 1;
  }
  if (numbers == 0 || words == 0) return;
  std::size_t first = 0;
  while (first < data.labels.size() && !(data.labels[first] >= 0 && is_word[static_cast<std::size_t>(data.labels[first])])) {
    ++first;
  }
  // Up to five of each kind, then "...".
  auto listed = [&](int word) {
    std::string list;
    std::size_t shown = 0;
    for (std::size_t k = 0; k < data.classes.size() && shown < 5; ++k) {
      if (is_word[k] != word) continue;
      list += (shown++ ? ", " : "") + (word ? "\"" + data.classes[k] + "\"" : data.classes[k]);
    }
    if ((word ? words : numbers) > shown) list += ", ...";
    return list;
  };
  std::fprintf(stderr,
               "warning: %s: labels mix numbers (%s) and other text (%s, the first at example %zu): "
               "a typo? every distinct label is a class\n",
               input_name(path).c_str(), listed(0).c_str(), listed(1).c_str(), first + 1);
}

// Rows without a single non-zero value train a model of the bias alone,
// which predicts one class everywhere: said, not an error (LIBLINEAR trains
// it too), since a file of labels only is more likely a mistake.
void warn_no_features(const Dataset& data, const std::string& path, bool text = false) {
  if (data.size() == 0 || data.nnz() > 0) return;
  if (text) {
    std::fprintf(stderr,
                 "warning: %s: no document has a token the featurizer keeps (empty texts, or every token filtered "
                 "out); the model can learn only a bias and predicts one class for every document\n",
                 input_name(path).c_str());
    return;
  }
  // Labels with commas: CSV read as LIBSVM, an error once the labels are
  // prepared (drivers/registry.cpp prepare_labels), which says so.
  const auto comma = [](const std::string& c) { return c.find(',') != std::string::npos; };
  if (std::any_of(data.classes.begin(), data.classes.end(), comma)) return;
  std::fprintf(stderr,
               "warning: %s: no row has a non-zero feature value; the model can learn only a bias and "
               "predicts one class for every row\n",
               input_name(path).c_str());
}

}  // namespace

TextCorpus noted(TextCorpus corpus) {
  for (const std::string& note : corpus.notes) std::fprintf(stderr, "note: %s\n", note.c_str());
  return corpus;
}

bool is_text_input(const std::string& path, DataFormat format) {
  if (is_text_format(format)) return true;
  if (format != DataFormat::kAuto) return false;
  if (is_directory(path)) return true;
  return text_format_of_name(path) == TextFormat::kJsonl;
}

// The name says gzip and the content does not: a note, so that a copy saved
// without decompressing, or a wrong name, is seen.
void note_plain_gz(const std::string& path) {
  if (path.size() < 3 || path.compare(path.size() - 3, 3, ".gz") != 0) return;
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 2) return;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return;  // the reader reports it
  char magic[2] = {0, 0};
  const std::size_t got = std::fread(magic, 1, 2, f);
  std::fclose(f);
  if (got == 2 && !starts_with_gzip_magic(std::string_view(magic, 2))) {
    clear_status_line();
    std::fprintf(stderr, "note: %s: the name ends in .gz but the content is not gzip-compressed; read as plain text\n",
                 input_name(path).c_str());
  }
}

TrainingData load_training_data(const TrainConfig& config, const std::string& path,
                                const nlohmann::json& fixed_features) {
  const DataFormat format = config.read.format;
  TrainingData out;
  status_line("reading " + input_name(path) + " ...");
  const Input input(path);
  struct Clear {
    ~Clear() { clear_status_line(); }
  } clear_when_done;
  if (!input.text(format)) {
    if (config.features) {
      throw ConfigError("features: text featurisation settings given, but " + input_name(path) +
                        " is numeric data (LIBSVM/CSV); raw text comes as .jsonl, a folder per class, or format text_tsv");
    }
    if (!fixed_features.is_null()) {
      throw InputError(config.source_model + ": the source model was trained on raw text, but " + input_name(path) +
                       " is numeric data (featurizations differ)");
    }
    // The fields of JSONL documents name nothing in numeric data: an error, not ignored.
    for (const auto& [key, value, fallback] : {std::tuple<const char*, const std::string*, const char*>{
                                                   "text_field", &config.text_field, "text"},
                                               {"label_field", &config.label_field, "label"}}) {
      if (*value != fallback) {
        throw ConfigError(std::string(key) + ": names a field of JSONL documents, but " + input_name(path) +
                          " is numeric data (LIBSVM/CSV); for CSV, label_column picks the label");
      }
    }
    const DataFormat numeric =
        format != DataFormat::kAuto ? format : numeric_format_of(path, input.bytes ? *input.bytes : std::string_view());
    if (numeric == DataFormat::kLibsvm && (config.read.label_column != 0 || !config.read.label_column_name.empty())) {
      throw ConfigError("label_column: picks a CSV column, but " + input_name(path) +
                        " is LIBSVM data (each line's first field is its label)");
    }
    out.data = input.numeric(config.read);
    warn_mixed_labels(out.data, path);
    warn_no_features(out.data, path);
    check_weights_fit(out.data, path, config);
    return out;
  }
  if (config.read.label_column != 0 || !config.read.label_column_name.empty()) {
    throw ConfigError("label_column: picks a CSV column, but " + input_name(path) +
                      " is raw text; for JSONL, label_field names the label's field");
  }
  const TextCorpus corpus = input.corpus(text_read_options(format, config.text_field, config.label_field, true));
  TextFeaturizer featurizer;
  if (!fixed_features.is_null()) {
    featurizer = TextFeaturizer::from_json(fixed_features, config.init_model.empty() ? config.source_model : config.init_model,
                                           "/features");
  } else {
    featurizer = TextFeaturizer(config.features.value_or(TextOptions{}));
    if (featurizer.learns_from_fit()) featurizer.fit(corpus.texts);
  }
  status_line("featurizing " + std::to_string(corpus.texts.size()) + " documents ...");
  out.data = featurize_corpus(featurizer, corpus);
  warn_no_features(out.data, path, /*text=*/true);
  check_weights_fit(out.data, path, config, "lower features.hash_bits (each bit doubles the buckets)");
  if (config.read.normalize_rows) out.data.normalize_rows();
  out.features = featurizer.to_json();
  return out;
}

std::vector<double> read_weights_file(const std::string& path) {
  const std::string bytes = read_file_bytes(path);
  if (reader_detail::looks_binary(bytes)) throw InputError(path + ": binary data, not a weights file (one number >= 0 a line)");
  std::vector<double> weights;
  std::size_t line = 0;
  // A UTF-8 byte-order mark (editors on Windows write one) is skipped, as in data and config files.
  const std::size_t start = bytes.rfind("\xEF\xBB\xBF", 0) == 0 ? 3 : 0;
  for (std::size_t begin = start; begin < bytes.size();) {
    std::size_t end = bytes.find('\n', begin);
    if (end == std::string::npos) end = bytes.size();
    ++line;
    std::string_view field(bytes.data() + begin, end - begin);
    begin = end + 1;
    while (!field.empty() && std::isspace(static_cast<unsigned char>(field.front()))) field.remove_prefix(1);
    while (!field.empty() && std::isspace(static_cast<unsigned char>(field.back()))) field.remove_suffix(1);
    const std::string where = path + ":" + std::to_string(line) + ": ";
    if (field.empty()) throw InputError(where + "empty line; expected a weight (one number >= 0 per training row)");
    double w = 0.0;
    const char* first = field.data() + (field.size() > 1 && field.front() == '+' ? 1 : 0);  // "+2" as printf writes it
    const auto [ptr, ec] = std::from_chars(first, field.data() + field.size(), w);
    if (ec != std::errc() || ptr != field.data() + field.size()) {
      throw InputError(where + "weight " + reader_detail::quote(field) + " is not a number");
    }
    if (!std::isfinite(w) || w < 0.0 || w > 1e15) {  // past 1e15 the objective's sums can overflow
      throw InputError(where + "weight " + reader_detail::quote(field) + " must be a number from 0 to 1e15");
    }
    weights.push_back(w);
  }
  return weights;
}

void apply_weights_file(const TrainConfig& config, Dataset& data) {
  if (config.weights_file.empty()) return;
  if (!data.weights.empty()) {
    throw ConfigError("weights_file: the data already carries sample weights; give them one way");
  }
  const std::vector<double> weights = read_weights_file(config.weights_file);
  if (weights.size() != data.size()) {
    throw InputError(config.weights_file + ": " + std::to_string(weights.size()) + " weights (lines) but " +
                     input_name(data.source) + " has " + std::to_string(data.size()) +
                     " training rows; give one weight per row");
  }
  set_sample_weights(data, weights, config.weights_file);
  const std::vector<std::size_t> counts = data.class_counts();
  for (std::size_t k = 0; k < counts.size(); ++k) {
    if (counts[k] == 0) {
      throw InputError(config.weights_file + ": every row of class '" + data.classes[k] + "' has weight 0");
    }
  }
}

Dataset load_data_for_model(const Model& model, const std::string& path, bool require_labels,
                            const std::string& model_name) {
  return load_data_for_model(json_object_of(model.data), features_json(model), path, require_labels, model_name);
}

Dataset load_data_for_model(const nlohmann::json& data_settings, const nlohmann::json& features,
                            const std::string& path, bool require_labels, const std::string& model_name) {
  // A model file's format name; a name this pegasos does not know reads as
  // neither text nor a fixed numeric format (as auto for numeric files).
  bool known = false;
  const DataFormat format = parse_data_format(data_settings.value("format", "auto"), &known);
  const bool text_model = !features.is_null();
  const Input input(path);
  // A text model reads any stream as text (JSONL or TSV by its first byte),
  // and .tsv / .txt files as TSV, as predict does (eval called them numeric).
  const bool tsv_name = text_format_of_name(path) == TextFormat::kTsv;
  const bool text_data =
      (known && input.text(format)) || (text_model && (input.bytes || input.text(DataFormat::kAuto) || tsv_name));
  if (text_model != text_data) {
    throw InputError(input_name(path) + (text_model ? ": the model was trained on raw text (it featurises .jsonl, text_tsv or a folder "
                                          "per class), but this is numeric data"
                                        : ": the model was trained on numeric features (LIBSVM/CSV), but this is raw text"));
  }
  if (!text_model) {
    return input.numeric(model_read_options(data_settings, require_labels));
  }
  const TextFeaturizer featurizer = TextFeaturizer::from_json(features, model_name, "/features");
  const TextCorpus corpus = input.corpus(model_text_read_options(data_settings, require_labels));
  Dataset ds = featurize_corpus(featurizer, corpus);
  if (model_normalizes_rows(data_settings)) ds.normalize_rows();
  return ds;
}

bool model_normalizes_rows(const nlohmann::json& data_settings) {
  return data_settings.value("normalize", "none") == "l2";
}

ReadOptions model_read_options(const nlohmann::json& data_settings, bool require_labels) {
  const DataFormat format = parse_data_format(data_settings.value("format", "auto"));
  ReadOptions r;
  r.require_labels = require_labels;
  r.format = format == DataFormat::kCsv ? DataFormat::kCsv : format == DataFormat::kLibsvm ? DataFormat::kLibsvm : DataFormat::kAuto;
  r.normalize_rows = model_normalizes_rows(data_settings);
  if (auto it = data_settings.find("label_column"); it != data_settings.end()) {
    if (it->is_string()) r.label_column_name = it->get<std::string>();
    else if (it->is_number_integer()) r.label_column = it->get<long>();
  }
  // A model trained on CSV: the feature columns it expects.
  if (auto it = data_settings.find("feature_names"); it != data_settings.end() && it->is_array()) {
    for (const nlohmann::json& n : *it) {
      if (n.is_string()) r.model_feature_names.push_back(n.get<std::string>());
    }
    if (r.model_feature_names.size() != it->size()) r.model_feature_names.clear();
  }
  if (auto it = data_settings.find("feature_count"); it != data_settings.end() && it->is_number_unsigned()) {
    r.model_features = it->get<std::uint32_t>();
  }
  return r;
}

nlohmann::json model_data_settings(const TrainConfig& config, const Dataset& train) {
  nlohmann::json data = reader_settings(config);
  if (!train.feature_names.empty()) data["feature_names"] = train.feature_names;
  if (train.csv_features != 0) data["feature_count"] = train.csv_features;
  return data;
}

TextReadOptions model_text_read_options(const nlohmann::json& data_settings, bool require_labels) {
  // A format name this pegasos does not know reads as auto.
  const DataFormat format = parse_data_format(data_settings.value("format", "auto"));
  return text_read_options(format, data_settings.value("text_field", "text"), data_settings.value("label_field", "label"),
                           require_labels);
}

}  // namespace pegasos
