#include "core/model.hpp"

#include <cmath>
#include <stdexcept>

#include "core/atomic_file.hpp"
#include "core/errors.hpp"

namespace pegasos {
namespace {

using nlohmann::json;

// Store an output's weights sparsely when at most this fraction is non-zero
// (text models: a few thousand of 2^20 buckets).
constexpr double kSparseBelow = 0.5;

[[noreturn]] void bad(const std::string& name, const std::string& field, const std::string& what) {
  throw InputError(name + ": " + field + ": " + what);
}

const json& need(const json& j, const std::string& key, const std::string& name) {
  auto it = j.find(key);
  if (it == j.end()) bad(name, "/" + key, "missing field (not a pegasos model file, or a corrupt one)");
  return *it;
}

double finite_number(const json& v, const std::string& name, const std::string& field) {
  if (!v.is_number()) bad(name, field, "expected a number, found " + std::string(v.type_name()));
  const double d = v.get<double>();
  if (!std::isfinite(d)) bad(name, field, "not finite");
  return d;
}

}  // namespace

void Model::scores(const RowView& x, double* out) const {
  const std::size_t K = static_cast<std::size_t>(outputs);
  for (std::size_t k = 0; k < K; ++k) out[k] = bias[k];
  if (K == 1) {
    double s = 0.0;
    for (std::uint32_t j = 0; j < x.nnz; ++j) {
      if (x.indices[j] < dimension) s += static_cast<double>(x.values[j]) * weights[x.indices[j]];
    }
    out[0] += s;
    return;
  }
  for (std::uint32_t j = 0; j < x.nnz; ++j) {
    const std::uint32_t f = x.indices[j];
    if (f >= dimension) continue;
    const double v = x.values[j];
    for (std::size_t k = 0; k < K; ++k) out[k] += v * weights[f * K + k];
  }
}

int Model::predict_class(const double* s) const {
  if (outputs == 1) return s[0] > 0.0 ? 1 : 0;
  int best = 0;
  for (int k = 1; k < outputs; ++k) {
    if (s[k] > s[best]) best = k;
  }
  return best;
}

double Model::weight_squared_norm() const {
  double sq = 0.0;
  for (double w : weights) sq += w * w;
  return sq;
}

std::string model_to_json(const Model& m) {
  const std::size_t K = static_cast<std::size_t>(m.outputs);
  json weights = json::array();
  for (std::size_t k = 0; k < K; ++k) {
    std::size_t nonzero = 0;
    for (std::size_t j = 0; j < m.dimension; ++j) {
      const double w = m.weights[j * K + k];
      if (!std::isfinite(w)) {
        throw std::logic_error("refusing to save a model with a non-finite weight (feature " + std::to_string(j + 1) + ")");
      }
      nonzero += w != 0.0;
    }
    if (static_cast<double>(nonzero) < kSparseBelow * static_cast<double>(m.dimension)) {
      json idx = json::array(), val = json::array();
      for (std::size_t j = 0; j < m.dimension; ++j) {
        const double w = m.weights[j * K + k];
        if (w != 0.0) {
          idx.push_back(j + 1);
          val.push_back(w);
        }
      }
      weights.push_back({{"indices", std::move(idx)}, {"values", std::move(val)}});
    } else {
      json dense = json::array();
      for (std::size_t j = 0; j < m.dimension; ++j) dense.push_back(m.weights[j * K + k]);
      weights.push_back(std::move(dense));
    }
  }
  for (double b : m.bias) {
    if (!std::isfinite(b)) throw std::logic_error("refusing to save a model with a non-finite bias");
  }
  json j = {{"format_version", kModelFormatVersion},
            {"kind", "linear"},
            {"objective", m.objective},
            {"classes", m.classes},
            {"dimension", m.dimension},
            {"outputs", m.outputs},
            {"bias_mode", m.bias_mode},
            {"bias", m.bias},
            {"settings", m.settings},
            {"data", m.data},
            {"training", m.training},
            {"weights", std::move(weights)}};
  return j.dump(1) + "\n";
}

Model model_from_json(const std::string& text, const std::string& name) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw InputError(name + ": not a valid model file (JSON parse error at byte " + std::to_string(e.byte) + ")");
  } catch (const json::exception& e) {  // e.g. a number that overflows a double (1e999)
    throw InputError(name + ": not a valid model file (" + e.what() + ")");
  }
  if (!j.is_object()) bad(name, "/", "a model file is a JSON object");
  const json& version = need(j, "format_version", name);
  if (!version.is_number_integer()) bad(name, "/format_version", "expected an integer");
  if (version.get<long>() > kModelFormatVersion) {
    bad(name, "/format_version", "version " + std::to_string(version.get<long>()) +
                                     " is newer than this pegasos supports (" + std::to_string(kModelFormatVersion) +
                                     "); upgrade pegasos");
  }
  if (version.get<long>() < 1) bad(name, "/format_version", "invalid version");
  const json& kind = need(j, "kind", name);
  if (kind != "linear") bad(name, "/kind", "unsupported model kind " + kind.dump());

  Model m;
  try {
    m.objective = need(j, "objective", name).get<std::string>();
    m.classes = need(j, "classes", name).get<std::vector<std::string>>();
    m.bias_mode = need(j, "bias_mode", name).get<std::string>();
  } catch (const json::type_error& e) {
    throw InputError(name + ": wrong type in model file: " + e.what());
  }
  const json& dim = need(j, "dimension", name);
  if (!dim.is_number_unsigned() || dim.get<std::uint64_t>() > (std::uint64_t{1} << 32) - 1) {
    bad(name, "/dimension", "expected a non-negative 32-bit integer");
  }
  m.dimension = dim.get<std::uint32_t>();
  const json& outputs = need(j, "outputs", name);
  if (!outputs.is_number_unsigned() || outputs.get<std::uint64_t>() < 1 || outputs.get<std::uint64_t>() > 1000000) {
    bad(name, "/outputs", "expected a positive integer");
  }
  m.outputs = outputs.get<int>();
  if (m.classes.size() < 2) bad(name, "/classes", "a model needs at least two classes");
  const std::size_t expected_outputs = m.classes.size() == 2 ? 1 : m.classes.size();
  if (static_cast<std::size_t>(m.outputs) != expected_outputs) {
    bad(name, "/outputs", std::to_string(m.outputs) + " outputs do not match " + std::to_string(m.classes.size()) + " classes");
  }
  const std::size_t K = static_cast<std::size_t>(m.outputs);

  const json& bias = need(j, "bias", name);
  if (!bias.is_array() || bias.size() != K) bad(name, "/bias", "expected an array of " + std::to_string(K) + " numbers");
  for (std::size_t k = 0; k < K; ++k) m.bias.push_back(finite_number(bias[k], name, "/bias/" + std::to_string(k)));

  const json& weights = need(j, "weights", name);
  if (!weights.is_array() || weights.size() != K) bad(name, "/weights", "expected " + std::to_string(K) + " weight vectors");
  if (static_cast<std::uint64_t>(m.dimension) * K > (std::uint64_t{1} << 34)) bad(name, "/dimension", "too large");
  m.weights.assign(static_cast<std::size_t>(m.dimension) * K, 0.0);
  for (std::size_t k = 0; k < K; ++k) {
    const json& wk = weights[k];
    const std::string field = "/weights/" + std::to_string(k);
    if (wk.is_array()) {
      if (wk.size() != m.dimension) {
        bad(name, field, "has " + std::to_string(wk.size()) + " entries, dimension is " + std::to_string(m.dimension));
      }
      for (std::size_t d = 0; d < m.dimension; ++d) m.weights[d * K + k] = finite_number(wk[d], name, field + "/" + std::to_string(d));
    } else if (wk.is_object()) {
      const json& idx = need(wk, "indices", name);
      const json& val = need(wk, "values", name);
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
        m.weights[(i - 1) * K + k] = finite_number(val[e], name, field + "/values/" + std::to_string(e));
      }
    } else {
      bad(name, field, "expected an array or {indices, values}");
    }
  }
  if (auto it = j.find("settings"); it != j.end() && it->is_object()) m.settings = *it;
  if (auto it = j.find("data"); it != j.end() && it->is_object()) m.data = *it;
  if (auto it = j.find("training"); it != j.end() && it->is_object()) m.training = *it;
  return m;
}

void save_model(const Model& model, const std::string& path) { write_file_atomic(path, model_to_json(model)); }

Model load_model(const std::string& path) { return model_from_json(read_file_bytes(path), path); }

}  // namespace pegasos
