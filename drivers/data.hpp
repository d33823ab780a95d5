// Getting a Dataset for training or for applying a model: numeric files
// (LIBSVM, CSV) or raw text (JSONL, TSV, one folder per class) featurised by
// text/. The model remembers which, and how.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/dataset.hpp"
#include "core/model.hpp"
#include "drivers/config.hpp"
#include "text/corpus.hpp"

namespace pegasos {

// True when `path` read as `format` is a raw-text corpus (kAuto: a folder,
// or .jsonl / .ndjson / .json, optionally .gz).
bool is_text_input(const std::string& path, DataFormat format);

// `corpus` as read, its reader's notes (TextCorpus::notes) printed to
// standard error as "note: ..." lines.
TextCorpus noted(TextCorpus corpus);

// A regular file named .gz whose content is not gzip is read as the plain
// text it is (gzip is detected by content): prints a note saying so.
void note_plain_gz(const std::string& path);

struct TrainingData {
  Dataset data;
  nlohmann::json features;  // the fitted featurizer (TextFeaturizer::to_json), null for numeric data
};

// Read training data. Raw text is featurised with config.features (fitting a
// vocabulary / idf on this data), or, when `fixed_features` is not null, with
// that already-fitted featurizer (transfer from a text source model).
// Throws InputError / ConfigError.
TrainingData load_training_data(const TrainConfig& config, const std::string& path,
                                const nlohmann::json& fixed_features = nullptr);

// A weights file: one number per line (finite, >= 0; surrounding blanks
// allowed; gzip read transparently). Throws InputError naming path:line.
std::vector<double> read_weights_file(const std::string& path);

// config.weights_file (if set) applied to the training rows as read:
// set_sample_weights (rows of weight 0 removed, the rest scaled to mean 1).
// Throws InputError naming the file when the count differs from the rows or
// a class is left without rows; ConfigError when `data` already has weights.
void apply_weights_file(const TrainConfig& config, Dataset& data);

// How a model file's "data" block (its reader settings) reads what the model
// is applied to: numeric rows (format csv / libsvm, else auto; label_column;
// normalize), raw text (text_field, label_field; the format, else auto), and
// whether rows are scaled to unit norm after featurising.
ReadOptions model_read_options(const nlohmann::json& data_settings, bool require_labels);
// The "data" block of a model trained on `train` with `config`: its reader
// settings and, for CSV, the feature columns (feature_names from a header,
// feature_count), which model_read_options turns into the checks a file read
// for the model must pass.
nlohmann::json model_data_settings(const TrainConfig& config, const Dataset& train);
TextReadOptions model_text_read_options(const nlohmann::json& data_settings, bool require_labels);
bool model_normalizes_rows(const nlohmann::json& data_settings);

// Read data to apply `model` to, with the model's reader settings and
// featurizer. Raw text for a numeric model (or the reverse) is an error.
// `model_name` (the model file) names the model in messages.
Dataset load_data_for_model(const Model& model, const std::string& path, bool require_labels,
                            const std::string& model_name = "model");
// The same from a model's "data" (reader settings) and "features" JSON.
Dataset load_data_for_model(const nlohmann::json& data_settings, const nlohmann::json& features,
                            const std::string& path, bool require_labels, const std::string& model_name = "model");

}  // namespace pegasos
