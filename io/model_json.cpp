#include "io/model_json.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <cstdint>
#include <initializer_list>
#include <new>
#include <stdexcept>

#include "core/output_file.hpp"
#include "core/errors.hpp"
#include "core/memory_limit.hpp"
#include "core/fresh_memory.hpp"
#include "core/objective_table.hpp"
#include "io/duals_json.hpp"
#include "io/feature_map_json.hpp"
#include "io/json_checks.hpp"
#include "io/json_numbers.hpp"
#include "io/model_sections_json.hpp"

namespace pegasos {
namespace {

using nlohmann::json;
using json_numbers::append_array;

// Store an output's weights sparsely when at most this fraction is non-zero
// (text models: a few thousand of 2^20 buckets).
constexpr double kSparseBelow = 0.5;

using json_checks::bad;
using json_checks::finite_number;

const json& model_need(const json& j, const std::string& key, const std::string& name) {
  return json_checks::need(j, key, name, "", "pegasos model");
}

// The optional objects settings / data / training: absent, or an object whose
// fields that predict, eval and transfer read have the right type (a wrong
// type would otherwise surface later as an internal JSON error). Unknown
// fields are kept: newer writers may add some (forward compatible).
json optional_object(const json& j, const std::string& key, const std::string& name) {
  auto it = j.find(key);
  if (it == j.end()) return json::object();
  if (!it->is_object()) bad(name, "/" + key, "expected an object, found " + std::string(it->type_name()));
  return *it;
}

// The "weights" member: K arrays, each dense or sparse (kSparseBelow).
void append_weights_json(std::string& out, const Model& m) {
  const std::size_t K = static_cast<std::size_t>(m.outputs);
  // The weights are feature-major (W[j·K + k]): every class's count of
  // non-zeros, the finiteness check and the sparse classes' indices come from
  // one sequential read of W, where a strided read per class read all of it K
  // times (28 classes × 2^20 hashed features: 224 MB read 56 times, 0.65 s).
  std::vector<std::size_t> nonzero(K, 0);
  for (std::size_t j = 0; j < m.dimension; ++j) {
    for (std::size_t k = 0; k < K; ++k) {
      const double w = m.weights[j * K + k];
      if (!std::isfinite(w)) {
        throw std::logic_error("refusing to save a model with a non-finite weight (feature " + std::to_string(j + 1) + ")");
      }
      nonzero[k] += w != 0.0;
    }
  }
  // Sparse when at most kSparseBelow of the weights are non-zero.
  std::vector<char> sparse(K);
  std::vector<std::vector<std::uint32_t>> idx(K);
  bool any_sparse = false;
  for (std::size_t k = 0; k < K; ++k) {
    sparse[k] = static_cast<double>(nonzero[k]) < kSparseBelow * static_cast<double>(m.dimension);
    if (sparse[k]) idx[k].reserve(nonzero[k]);
    any_sparse = any_sparse || sparse[k];
  }
  for (std::size_t j = 0; any_sparse && j < m.dimension; ++j) {
    for (std::size_t k = 0; k < K; ++k) {
      if (sparse[k] && m.weights[j * K + k] != 0.0) idx[k].push_back(static_cast<std::uint32_t>(j));
    }
  }
  out += ",\n \"weights\": [";
  for (std::size_t k = 0; k < K; ++k) {
    out += k == 0 ? "\n  " : ",\n  ";
    if (sparse[k]) {
      const std::vector<std::uint32_t>& at = idx[k];
      out += "{\"indices\": ";
      append_array(out, at.size(), [&](std::size_t e) { return std::uint64_t{at[e]} + 1; });
      out += ",\n   \"values\": ";
      append_array(out, at.size(), [&](std::size_t e) { return m.weights[at[e] * K + k]; });
      out += '}';
    } else {
      append_array(out, m.dimension, [&](std::size_t e) { return m.weights[e * K + k]; });
    }
  }
}

}  // namespace

std::string model_to_json(const Model& m) {
  const std::size_t K = static_cast<std::size_t>(m.outputs);
  for (double b : m.bias) {
    if (!std::isfinite(b)) throw std::logic_error("refusing to save a model with a non-finite bias");
  }
  json j = {{"format_version", m.feature_map ? kModelFormatVersionFeatureMap : kModelFormatVersion},
            {"kind", "linear"},
            {"objective", m.objective},
            {"classes", m.classes},
            {"dimension", m.dimension},
            {"outputs", m.outputs},
            {"bias_mode", m.bias_mode},
            {"bias", m.bias},
            {"settings", json_object_of(m.settings)},
            {"data", json_object_of(m.data)},
            {"training", training_to_json(m.training)},
            {"features", features_json(m)}};
  operating_point_to_json(m, j);
  // Invalid UTF-8 can only come from a --set string (labels are checked when
  // read); replace it rather than fail after training.
  std::string out = j.dump(1, ' ', false, json::error_handler_t::replace);
  // The weights (millions of numbers for hashed or huge feature spaces) are
  // written directly rather than through a JSON tree: an object per number
  // made saving a 10^7-feature model take seconds. They go last, which is
  // also where the sorted keys would put them.
  if (out.size() < 2 || out.compare(out.size() - 2, 2, "\n}") != 0) {
    throw std::logic_error("model_to_json: unexpected JSON layout");
  }
  out.resize(out.size() - 2);
  if (m.feature_map) {  // the kernel approximation: m·d numbers, written directly
    out += ",\n \"feature_map\": ";
    append_feature_map_json(out, *m.feature_map);
  }
  if (m.duals) {  // SDCA's dual variables: before the weights, also written directly
    out += ",\n \"duals\": ";
    append_duals_json(out, *m.duals);
  }
  append_weights_json(out, m);
  out += K > 0 ? "\n ]\n}\n" : "]\n}\n";
  return out;
}

Model model_from_json(const std::string& text, const std::string& name) {
  return model_from_json_value(json_checks::parse_model_file(text, name), name);
}

namespace {

// objective, classes, bias_mode, dimension and outputs, checked against each other.
void read_model_header(const json& j, const std::string& name, Model& m) {
  try {
    m.objective = model_need(j, "objective", name).get<std::string>();
    m.classes = model_need(j, "classes", name).get<std::vector<std::string>>();
    m.bias_mode = model_need(j, "bias_mode", name).get<std::string>();
  } catch (const json::type_error& e) {
    throw InputError(name + ": wrong type in model file: " + e.what());
  }
  const json& dim = model_need(j, "dimension", name);
  if (!dim.is_number_unsigned() || dim.get<std::uint64_t>() > (std::uint64_t{1} << 32) - 1) {
    bad(name, "/dimension", "expected a non-negative 32-bit integer");
  }
  m.dimension = dim.get<std::uint32_t>();
  const json& outputs = model_need(j, "outputs", name);
  if (!outputs.is_number_unsigned() || outputs.get<std::uint64_t>() < 1 || outputs.get<std::uint64_t>() > 1000000) {
    bad(name, "/outputs", "expected a positive integer");
  }
  m.outputs = outputs.get<int>();
  json_checks::check_model_classes(m.classes, name);
  if (m.bias_mode != "none" && m.bias_mode != "feature" && m.bias_mode != "unregularized") {
    bad(name, "/bias_mode", "expected none, feature or unregularized, found '" + m.bias_mode + "'");
  }
  // A linear model's objective is a linear row of the table, and a
  // two-class one has two classes (a hinge model with 6 outputs and 6
  // classes was scored as one-vs-all).
  const ObjectiveRow* row = find_objective(m.objective);
  if (row == nullptr || row->kernel) {
    bad(name, "/objective", "'" + m.objective + "' is not the objective of a linear model (expected " +
                                objective_names([](const ObjectiveRow& r) { return !r.kernel; }) + ")");
  }
  if (!row->multiclass && m.classes.size() != 2) {
    bad(name, "/classes", "objective " + m.objective + " has two classes, found " + std::to_string(m.classes.size()));
  }
  // Two classes: one output (the binary objectives, ova), two for
  // multiclass_hinge (a score per class, predicted by argmax); K classes: K.
  // (An objective name edited into another's model no longer passes.)
  const bool per_class = m.objective == "multiclass_hinge";
  const std::size_t expected_outputs = m.classes.size() == 2 && !per_class ? 1 : m.classes.size();
  if (static_cast<std::size_t>(m.outputs) != expected_outputs) {
    bad(name, "/outputs", std::to_string(m.outputs) + " outputs do not match " + std::to_string(m.classes.size()) +
                              " classes for objective " + m.objective + " (" + std::to_string(expected_outputs) + " expected)");
  }
}

// Weight vector k stored sparse, {"indices": [1-based, increasing], "values": [...]}.
// One output's {indices, values}, checked; set(j, value) for each entry,
// j = index − 1 (0-based, ascending).
template <class Set>
void read_sparse_weights(const json& wk, const std::string& name, const std::string& field, const Model& m, Set&& set) {
  const json& idx = model_need(wk, "indices", name);
  const json& val = model_need(wk, "values", name);
  if (!idx.is_array() || !val.is_array() || idx.size() != val.size()) {
    bad(name, field, "indices and values must be arrays of equal length");
  }
  std::uint64_t previous = 0;
  for (std::size_t e = 0; e < idx.size(); ++e) {
    if (!idx[e].is_number_unsigned()) bad(name, field + "/indices/" + std::to_string(e), "expected a positive integer");
    const std::uint64_t i = idx[e].get<std::uint64_t>();
    if (i == 0 || i > m.dimension || i <= previous) {
      bad(name, field + "/indices/" + std::to_string(e), "index " + std::to_string(i) + " is out of order or outside 1.." + std::to_string(m.dimension));
    }
    previous = i;
    set(static_cast<std::uint32_t>(i - 1), finite_number(val[e], name, [&] { return field + "/values/" + std::to_string(e); }));
  }
}

// The compact scoring form (Model::weight_rows): where every output is sparse,
// the dense form would be large (Model::kCompactMinWeights) and at most half
// of the features have a weight (core/compact_features.hpp's rule), the
// features with a weight in any output, in order, and their weights. A
// 28-class model over 2^20 buckets holds about 100k such rows: 22 MB instead
// of the dense 235 MB. False: the dense form applies.
bool read_compact_weights(const json& weights, const std::string& name, Model& m) {
  const std::size_t K = static_cast<std::size_t>(m.outputs);
  if (static_cast<std::uint64_t>(m.dimension) * K < Model::kCompactMinWeights) return false;
  for (std::size_t k = 0; k < K; ++k) {
    if (!weights[k].is_object()) return false;
  }
  std::vector<std::uint32_t> rows;
  for (std::size_t k = 0; k < K; ++k) {
    std::vector<std::uint32_t> these, merged;
    read_sparse_weights(weights[k], name, "/weights/" + std::to_string(k), m,
                        [&](std::uint32_t j, double) { these.push_back(j); });
    std::set_union(rows.begin(), rows.end(), these.begin(), these.end(), std::back_inserter(merged));
    rows.swap(merged);
    if (rows.size() > m.dimension / 2) return false;
  }
  if (rows.empty()) return false;  // no weight at all: the dense form (scores() tells the forms apart by rows)
  m.weights.assign(rows.size() * K, 0.0);
  for (std::size_t k = 0; k < K; ++k) {
    auto at = rows.begin();
    read_sparse_weights(weights[k], name, "/weights/" + std::to_string(k), m, [&](std::uint32_t j, double w) {
      at = std::lower_bound(at, rows.end(), j);  // ascending within an output
      m.weights[static_cast<std::size_t>(at - rows.begin()) * K + k] = w;
    });
  }
  m.weight_rows = std::move(rows);
  return true;
}

// bias (K numbers) and weights (K vectors, dense arrays or sparse objects),
// into the feature-major m.weights.
void read_model_weights(const json& j, const std::string& name, Model& m, bool compact) {
  const std::size_t K = static_cast<std::size_t>(m.outputs);
  const json& bias = model_need(j, "bias", name);
  if (!bias.is_array() || bias.size() != K) bad(name, "/bias", "expected an array of " + std::to_string(K) + " numbers");
  for (std::size_t k = 0; k < K; ++k) m.bias.push_back(finite_number(bias[k], name, "/bias/" + std::to_string(k)));
  // A model trained with bias none has every bias 0 (an edited file would
  // have its bias applied all the same).
  for (std::size_t k = 0; k < K && m.bias_mode == "none"; ++k) {
    if (m.bias[k] != 0.0) {
      bad(name, "/bias/" + std::to_string(k), "is " + json(m.bias[k]).dump() + " but bias_mode is none (every bias 0)");
    }
  }

  const json& weights = model_need(j, "weights", name);
  if (!weights.is_array() || weights.size() != K) bad(name, "/weights", "expected " + std::to_string(K) + " weight vectors");
  if (static_cast<std::uint64_t>(m.dimension) * K > (std::uint64_t{1} << 34)) bad(name, "/dimension", "too large");
  // Shapes first, so a small corrupt file cannot make us allocate dimension × K.
  for (std::size_t k = 0; k < K; ++k) {
    const json& wk = weights[k];
    if (wk.is_array() && wk.size() != m.dimension) {
      bad(name, "/weights/" + std::to_string(k),
          "has " + std::to_string(wk.size()) + " entries, dimension is " + std::to_string(m.dimension));
    }
  }
  if (compact && read_compact_weights(weights, name, m)) return;
  // Dense: refused where it cannot fit (a 2 KB file saying dimension 2^31
  // had this allocate 17 GB), with the limit named.
  if (const MemoryLimit limit = memory_limit();
      8.0 * static_cast<double>(m.dimension) * static_cast<double>(K) > limit.bytes) {
    char text[256];
    std::snprintf(text, sizeof text, "%u features x %zu output%s need %.1f GB as dense weights, more than the %.1f GB "
                  "this process may use (%s)", m.dimension, K, K == 1 ? "" : "s",
                  8.0 * static_cast<double>(m.dimension) * static_cast<double>(K) / 1e9, limit.bytes / 1e9, limit.what);
    bad(name, "/dimension", text);
  }
  try {
    fill_fresh(m.weights, static_cast<std::size_t>(m.dimension) * K, 0.0);  // hashed text: 2^20 × K
  } catch (const std::bad_alloc&) {
    bad(name, "/dimension", std::to_string(m.dimension) + " features × " + std::to_string(K) +
                                " outputs do not fit in memory");
  }
  for (std::size_t k = 0; k < K; ++k) {
    const json& wk = weights[k];
    const std::string field = "/weights/" + std::to_string(k);
    if (wk.is_array()) {
      for (std::size_t d = 0; d < m.dimension; ++d) {
        m.weights[d * K + k] = finite_number(wk[d], name, [&] { return field + "/" + std::to_string(d); });
      }
    } else if (wk.is_object()) {
      read_sparse_weights(wk, name, field, m, [&](std::uint32_t d, double w) { m.weights[d * K + k] = w; });
    } else {
      bad(name, field, "expected an array or {indices, values}");
    }
  }
}

// The optional sections: settings, data (reader settings), training, features.
void read_model_sections(const json& j, const std::string& name, Model& m) {
  check_model_sections(j, name, /*kernel=*/false, m.classes.size());
  const json settings = optional_object(j, "settings", name);
  const json data = optional_object(j, "data", name);
  const json training = optional_object(j, "training", name);
  if (auto it = j.find("features"); it != j.end() && !it->is_null()) {
    if (!it->is_object()) bad(name, "/features", "expected an object (the text featurizer) or null");
    m.features = json_object_text(*it);
  }
  m.lambda = settings.value("lambda", 0.0);
  m.normalize = settings.value("normalize", "none");
  m.settings = json_object_text(settings);
  m.data = json_object_text(data);
  m.training = training_from_json(training);
}

}  // namespace

Model model_from_json_value(const json& j, const std::string& name, bool compact_weights) {
  json_checks::check_model_header(j, name, kModelFormatVersionMax, "pegasos model");
  const json& kind = model_need(j, "kind", name);
  if (kind != "linear") bad(name, "/kind", "unsupported model kind " + kind.dump());

  Model m;
  read_model_header(j, name, m);
  read_model_weights(j, name, m, compact_weights);
  read_model_sections(j, name, m);
  operating_point_from_json(j, name, m);
  if (auto it = j.find("duals"); it != j.end() && !it->is_null()) m.duals = duals_from_json(*it, name, m.outputs);
  if (auto it = j.find("feature_map"); it != j.end() && !it->is_null()) {
    m.feature_map = std::make_shared<const FeatureMap>(feature_map_from_json(*it, name));
    if (m.feature_map->output_dimension() != m.dimension) {
      bad(name, "/feature_map/output_dimension", "the map has " + std::to_string(m.feature_map->output_dimension()) +
                                                     " outputs but the weights' dimension is " + std::to_string(m.dimension));
    }
  } else if (const auto v = j.find("format_version"); v != j.end() && *v == kModelFormatVersionFeatureMap) {
    // Version 2 is the format of a model with a map: its weights are for mapped rows, never raw ones.
    bad(name, "/feature_map", "missing field (format_version 2 is a model trained on a kernel approximation's features)");
  }
  return m;
}

json features_json(const Model& model) { return model.features.empty() ? json(nullptr) : json_object_of(model.features); }

std::string features_text(const json& features) { return features.is_null() ? std::string() : json_object_text(features); }

void save_model(const Model& model, const std::string& path) { write_output(path, model_to_json(model)); }

Model load_model(const std::string& path) { return model_from_json(read_file_bytes(path), path); }

}  // namespace pegasos
