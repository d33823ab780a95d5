#include "drivers/data.hpp"

#include <sys/stat.h>

#include "core/errors.hpp"
#include "text/corpus.hpp"

namespace pegasos {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool is_directory(const std::string& path) {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

TextReadOptions text_read_options(const std::string& format, const std::string& text_field,
                                  const std::string& label_field, bool require_labels) {
  TextReadOptions r;
  r.format = format == "jsonl" ? TextFormat::kJsonl
             : format == "text_tsv" ? TextFormat::kTsv
             : format == "text_dir" ? TextFormat::kDirectory
                                    : TextFormat::kAuto;
  r.text_field = text_field;
  r.label_field = label_field;
  r.require_labels = require_labels;
  return r;
}

}  // namespace

bool is_text_input(const std::string& path, const std::string& format) {
  if (format == "jsonl" || format == "text_tsv" || format == "text_dir") return true;
  if (format != "auto") return false;
  if (is_directory(path)) return true;
  std::string base = path;
  if (ends_with(base, ".gz")) base.resize(base.size() - 3);
  return ends_with(base, ".jsonl") || ends_with(base, ".ndjson") || ends_with(base, ".json");
}

TrainingData load_training_data(const TrainConfig& config, const std::string& path,
                                const nlohmann::json& fixed_features) {
  const std::string format = config.resolved.value("format", "auto");
  TrainingData out;
  if (!is_text_input(path, format)) {
    if (!config.features.is_null()) {
      throw ConfigError("features: text featurisation settings given, but " + path +
                        " is numeric data (LIBSVM/CSV); raw text comes as .jsonl, a folder per class, or format text_tsv");
    }
    if (!fixed_features.is_null()) {
      throw InputError(config.source_model + ": the source model was trained on raw text, but " + path +
                       " is numeric data (featurizations differ)");
    }
    out.data = read_dataset(path, config.read);
    return out;
  }
  const TextCorpus corpus = read_text_corpus(
      path, text_read_options(format, config.resolved.value("text_field", "text"),
                              config.resolved.value("label_field", "label"), true));
  TextFeaturizer featurizer;
  if (!fixed_features.is_null()) {
    featurizer = TextFeaturizer::from_json(fixed_features, config.source_model, "/features");
  } else {
    featurizer = TextFeaturizer(config.features.is_null()
                                    ? TextOptions{}
                                    : text_options_from_json(config.features, "config", "/features"));
    if (featurizer.needs_fit()) featurizer.fit(corpus.texts);
  }
  out.data = featurize_corpus(featurizer, corpus);
  if (config.read.normalize_rows) out.data.normalize_rows();
  out.features = featurizer.to_json();
  return out;
}

Dataset load_data_for_model(const Model& model, const std::string& path, bool require_labels) {
  return load_data_for_model(model.data, model.features, path, require_labels);
}

Dataset load_data_for_model(const nlohmann::json& data_settings, const nlohmann::json& features,
                            const std::string& path, bool require_labels) {
  const std::string format = data_settings.value("format", "auto");
  const bool text_model = !features.is_null();
  const bool text_data = is_text_input(path, text_model && format == "auto" ? "auto" : format) ||
                         (text_model && is_text_input(path, "auto"));
  if (text_model != text_data) {
    throw InputError(path + (text_model ? ": the model was trained on raw text (it featurises .jsonl, text_tsv or a folder "
                                          "per class), but this is numeric data"
                                        : ": the model was trained on numeric features (LIBSVM/CSV), but this is raw text"));
  }
  if (!text_model) {
    ReadOptions r;
    r.require_labels = require_labels;
    r.format = format == "csv" ? DataFormat::kCsv : format == "libsvm" ? DataFormat::kLibsvm : DataFormat::kAuto;
    r.normalize_rows = data_settings.value("normalize", "none") == "l2";
    if (auto it = data_settings.find("label_column"); it != data_settings.end()) {
      if (it->is_string()) r.label_column_name = it->get<std::string>();
      else if (it->is_number_integer()) r.label_column = it->get<long>();
    }
    return read_dataset(path, r);
  }
  const TextFeaturizer featurizer = TextFeaturizer::from_json(features, "model", "/features");
  const TextCorpus corpus = read_text_corpus(
      path, text_read_options(format, data_settings.value("text_field", "text"), data_settings.value("label_field", "label"),
                              require_labels));
  Dataset ds = featurize_corpus(featurizer, corpus);
  if (data_settings.value("normalize", "none") == "l2") ds.normalize_rows();
  return ds;
}

}  // namespace pegasos
