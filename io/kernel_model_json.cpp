#include "io/kernel_model_json.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <stdexcept>

#include "core/output_file.hpp"
#include "core/errors.hpp"
#include "io/json_checks.hpp"
#include "io/kernel_settings_json.hpp"
#include "io/model_sections_json.hpp"

namespace pegasos {
namespace {

using nlohmann::json;

using json_checks::bad;
using json_checks::finite_number;
using json_checks::positive_integer;

const json& member(const json& j, const std::string& key, const std::string& name, const std::string& parent = "") {
  return json_checks::need(j, key, name, parent, "pegasos kernel model");
}

void check_finite(double v, const std::string& what) {
  if (!std::isfinite(v)) throw std::logic_error("refusing to save a kernel model with a non-finite " + what);
}

// "i:v i:v ..." with 1-based indices and float32 values in shortest form.
std::string format_row(const RowView& x) {
  std::string s;
  s.reserve(x.nnz * 12);
  append_libsvm_pairs(s, x);
  return s;
}

void parse_row(const std::string& text, std::uint32_t dimension, const std::string& name, const std::string& field,
               std::vector<std::uint32_t>& indices, std::vector<float>& values) {
  const char* p = text.data();
  const char* end = p + text.size();
  std::uint64_t previous = 0;
  auto where = [&](const char* at) { return field + ": column " + std::to_string(at - text.data() + 1); };
  while (p < end) {
    while (p < end && *p == ' ') ++p;
    if (p == end) break;
    std::uint64_t index = 0;
    auto r = std::from_chars(p, end, index);
    if (r.ec != std::errc() || r.ptr == end || *r.ptr != ':') {
      throw InputError(name + ": " + where(p) + ": expected INDEX:VALUE");
    }
    if (index == 0 || index > dimension || index <= previous) {
      throw InputError(name + ": " + where(p) + ": index " + std::to_string(index) +
                       " is out of order or outside 1.." + std::to_string(dimension));
    }
    const char* value_at = r.ptr + 1;
    float value = 0.0f;
    r = std::from_chars(value_at, end, value);
    if (r.ec != std::errc() || (r.ptr != end && *r.ptr != ' ') || !std::isfinite(value)) {
      throw InputError(name + ": " + where(value_at) + ": expected a finite number");
    }
    previous = index;
    indices.push_back(static_cast<std::uint32_t>(index - 1));
    values.push_back(value);
    p = r.ptr;
  }
}

KernelParams kernel_params_from_model(const json& k, const std::string& name) {
  if (!k.is_object()) bad(name, "/kernel", "expected an object {type, gamma, degree, coef0}");
  KernelParams p;
  const json& type = member(k, "type", name, "/kernel");
  if (!type.is_string() || !parse_kernel_type(type.get<std::string>(), p.type)) {
    bad(name, "/kernel/type", "expected \"linear\", \"polynomial\" or \"rbf\", found " + type.dump());
  }
  p.gamma = finite_number(member(k, "gamma", name, "/kernel"), name, "/kernel/gamma");
  if (p.type != KernelType::kLinear && !(p.gamma > 0)) bad(name, "/kernel/gamma", "must be > 0");
  p.degree = static_cast<int>(positive_integer(member(k, "degree", name, "/kernel"),
      name, "/kernel/degree", kMaxKernelDegree));
  p.coef0 = finite_number(member(k, "coef0", name, "/kernel"), name, "/kernel/coef0");
  return p;
}

// The coefficient arrays, W of n_sv numbers, into `out` (n_sv × W, row-major).
void read_columns(const json& j, const std::string& name, std::size_t n_sv, std::size_t W, const std::string& what,
                  std::vector<double>& out) {
  const json& coefficients = member(j, "coefficients", name);
  if (!coefficients.is_array() || coefficients.size() != W) {
    bad(name, "/coefficients", "expected " + std::to_string(W) + " arrays (" + what + ")");
  }
  out.assign(n_sv * W, 0.0);
  for (std::size_t c = 0; c < W; ++c) {
    const json& column = coefficients[c];
    const std::string field = "/coefficients/" + std::to_string(c);
    if (!column.is_array() || column.size() != n_sv) {
      bad(name, field, "expected " + std::to_string(n_sv) + " numbers (one per support vector)");
    }
    for (std::size_t s = 0; s < n_sv; ++s) out[s * W + c] = finite_number(column[s], name, field + "/" + std::to_string(s));
  }
}

// One-vs-one files of the first version stored a coefficient for every pair
// (P = K(K−1)/2 arrays, zero outside a support vector's own pairs): each
// support vector's class is the one its non-zero pairs share.
void compact_dense_pairs(const std::vector<double>& dense, const std::string& name, KernelModel& m) {
  const auto K = static_cast<std::size_t>(m.outputs);
  const std::size_t P = m.columns(), W = K - 1, n_sv = m.num_support_vectors();
  m.coefficients.assign(n_sv * W, 0.0);
  for (std::size_t s = 0; s < n_sv; ++s) {
    std::vector<int> hits(K, 0);
    int nonzero = 0;
    for (std::size_t a = 0, p = 0; a < K; ++a) {
      for (std::size_t b = a + 1; b < K; ++b, ++p) {
        if (dense[s * P + p] == 0.0) continue;
        ++nonzero;
        ++hits[a];
        ++hits[b];
      }
    }
    const auto c = static_cast<std::size_t>(std::max_element(hits.begin(), hits.end()) - hits.begin());
    if (hits[c] != nonzero) {
      bad(name, "/coefficients", "support vector " + std::to_string(s) + " has coefficients in pairs without a common class");
    }
    m.sv_class.push_back(static_cast<std::uint32_t>(c));
    for (std::size_t j = 0; j < K; ++j) {
      if (j != c) m.coefficients[s * W + ovo_slot(c, j)] = dense[s * P + ovo_pair_of(c, j, K)];
    }
  }
}

void read_coefficients(const json& j, const std::string& name, std::size_t n_sv, KernelModel& m) {
  if (!m.one_vs_one) {
    read_columns(j, name, n_sv, m.columns(), "one per output", m.coefficients);
    return;
  }
  const auto K = static_cast<std::size_t>(m.outputs);
  const auto it = j.find("support_vector_classes");
  if (it == j.end()) {  // the first one-vs-one files: one array per pair
    std::vector<double> dense;
    read_columns(j, name, n_sv, m.columns(), "one per pair of classes", dense);
    compact_dense_pairs(dense, name, m);
    return;
  }
  if (!it->is_array() || it->size() != n_sv) {
    bad(name, "/support_vector_classes", "expected " + std::to_string(n_sv) + " class indices (one per support vector)");
  }
  for (std::size_t s = 0; s < n_sv; ++s) {
    const json& c = (*it)[s];
    if (!c.is_number_unsigned() || c.get<std::uint64_t>() >= K) {
      bad(name, "/support_vector_classes/" + std::to_string(s), "expected a class index below " + std::to_string(K));
    }
    m.sv_class.push_back(static_cast<std::uint32_t>(c.get<std::uint64_t>()));
  }
  read_columns(j, name, n_sv, K - 1, "K - 1 = " + std::to_string(K - 1) + ", one per other class", m.coefficients);
}

}  // namespace

std::string kernel_model_to_json(const KernelModel& m) {
  const std::size_t n_sv = m.num_support_vectors();
  const std::size_t K = m.columns(), W = m.coefficient_width();
  if (m.coefficients.size() != n_sv * W) throw std::logic_error("kernel model: coefficients do not match support vectors");
  if (m.one_vs_one && m.sv_class.size() != n_sv) throw std::logic_error("kernel model: support vector classes do not match");
  check_finite(m.lambda, "lambda");
  check_finite(m.kernel.gamma, "gamma");
  check_finite(m.kernel.coef0, "coef0");
  json coefficients = json::array();
  for (std::size_t c = 0; c < W; ++c) {
    json column = json::array();
    for (std::size_t s = 0; s < n_sv; ++s) {
      const double a = m.coefficients[s * W + c];
      check_finite(a, "coefficient");
      // Counts are integers: write them as such (shorter, and obviously exact).
      if (std::abs(a) < 9.0e15 && a == std::floor(a)) column.push_back(static_cast<std::int64_t>(a));
      else column.push_back(a);
    }
    coefficients.push_back(std::move(column));
  }
  json rows = json::array();
  for (std::size_t s = 0; s < n_sv; ++s) {
    const RowView x = m.support_vector(s);
    for (std::uint32_t p = 0; p < x.nnz; ++p) {
      if (!std::isfinite(x.values[p])) throw std::logic_error("refusing to save a kernel model with a non-finite support vector value");
    }
    rows.push_back(format_row(x));
  }
  // json::dump would write NaN/inf as null; a model must not carry them silently.
  json training;
  try {
    training = training_to_json(m.training);
  } catch (const std::logic_error&) {
    throw std::logic_error("refusing to save a kernel model with a non-finite number in its summary");
  }
  json j = {{"format_version", 1},
            {"kind", "kernel"},
            {"objective", m.objective},
            {"classes", m.classes},
            {"dimension", m.dimension},
            {"outputs", m.outputs},
            {"kernel", kernel_params_to_json(m.kernel)},
            {"lambda", m.lambda},
            {"iterations", m.iterations},
            {"batch_size", m.batch_size},
            {"settings", json_object_of(m.settings)},
            {"data", json_object_of(m.data)},
            {"training", std::move(training)},
            {"support_vectors", std::move(rows)},
            {"coefficients", std::move(coefficients)}};
  if (m.one_vs_one) {  // only then: older files stay as they were
    j["multiclass"] = "ovo";
    j["support_vector_classes"] = m.sv_class;
  }
  if (!m.intercept.empty()) {  // only models trained with one: older files stay as they were
    if (m.intercept.size() != K) throw std::logic_error("kernel model: one intercept per column expected");
    for (const double b : m.intercept) check_finite(b, "intercept");
    j["intercept"] = m.intercept;
    j["intercept_regularized"] = m.intercept_regularized;  // with an intercept only: it marks one as required
  }
  operating_point_to_json(m, j);
  return j.dump(1) + "\n";
}

std::string model_kind(const json& j, const std::string& name) {
  if (!j.is_object()) bad(name, "/", "a model file is a JSON object");
  const json& kind = member(j, "kind", name);
  if (!kind.is_string()) bad(name, "/kind", "expected a string, found " + kind.dump());
  return kind.get<std::string>();
}

KernelModel kernel_model_from_json(const std::string& text, const std::string& name) {
  return kernel_model_from_json(json_checks::parse_model_file(text, name), name);
}

KernelModel kernel_model_from_json(const json& j, const std::string& name) {
  json_checks::check_model_header(j, name, 1, "pegasos kernel model");
  const std::string kind = model_kind(j, name);
  if (kind != "kernel") bad(name, "/kind", "expected a kernel model, found kind \"" + kind + "\"");

  KernelModel m;
  try {
    m.objective = member(j, "objective", name).get<std::string>();
    m.classes = member(j, "classes", name).get<std::vector<std::string>>();
  } catch (const json::type_error& e) {
    throw InputError(name + ": wrong type in model file: " + e.what());
  }
  json_checks::check_model_classes(m.classes, name);
  const json& dim = member(j, "dimension", name);
  if (!dim.is_number_unsigned() || dim.get<std::uint64_t>() > (std::uint64_t{1} << 32) - 1) {
    bad(name, "/dimension", "expected a non-negative 32-bit integer");
  }
  m.dimension = dim.get<std::uint32_t>();
  m.outputs = static_cast<int>(positive_integer(member(j, "outputs", name), name, "/outputs", 1000000));
  const std::size_t expected_outputs = m.classes.size() == 2 ? 1 : m.classes.size();
  if (static_cast<std::size_t>(m.outputs) != expected_outputs) {
    bad(name, "/outputs", std::to_string(m.outputs) + " outputs do not match " + std::to_string(m.classes.size()) + " classes");
  }
  if (auto it = j.find("multiclass"); it != j.end()) {
    if (*it != "ovo" && *it != "ova") bad(name, "/multiclass", "expected \"ovo\" or \"ova\", found " + it->dump());
    m.one_vs_one = *it == "ovo";
    if (m.one_vs_one && m.classes.size() < 3) bad(name, "/multiclass", "one-vs-one needs at least three classes");
  }
  const std::size_t K = m.columns();
  m.kernel = kernel_params_from_model(member(j, "kernel", name), name);
  m.lambda = finite_number(member(j, "lambda", name), name, "/lambda");
  if (!(m.lambda > 0)) bad(name, "/lambda", "must be > 0");
  m.iterations = positive_integer(member(j, "iterations", name), name, "/iterations", std::uint64_t{1} << 62);
  m.batch_size = static_cast<int>(positive_integer(member(j, "batch_size", name), name, "/batch_size", 1000000));
  if (!std::isfinite(m.decision_scale())) bad(name, "/lambda", "lambda · iterations · batch_size underflows");

  const json& rows = member(j, "support_vectors", name);
  if (!rows.is_array()) bad(name, "/support_vectors", "expected an array of \"index:value ...\" strings");
  const std::size_t n_sv = rows.size();
  for (std::size_t s = 0; s < n_sv; ++s) {
    const std::string field = "/support_vectors/" + std::to_string(s);
    if (!rows[s].is_string()) bad(name, field, "expected a string \"index:value ...\"");
    parse_row(rows[s].get_ref<const std::string&>(), m.dimension, name, field, m.sv_indices, m.sv_values);
    m.sv_ptr.push_back(m.sv_indices.size());
  }
  read_coefficients(j, name, n_sv, m);
  if (auto it = j.find("intercept"); it != j.end()) {  // absent in models without one
    if (!it->is_array() || it->size() != K) bad(name, "/intercept", "expected " + std::to_string(K) + " numbers (one per output or pair)");
    for (std::size_t c = 0; c < K; ++c) m.intercept.push_back(finite_number((*it)[c], name, "/intercept/" + std::to_string(c)));
  } else if (j.contains("intercept_regularized")) {  // written beside every intercept: this one was deleted
    bad(name, "/intercept", "missing field (the model was trained with an intercept: intercept_regularized is set)");
  }
  if (auto it = j.find("intercept_regularized"); it != j.end()) {
    if (!it->is_boolean()) bad(name, "/intercept_regularized", "expected true or false");
    m.intercept_regularized = it->get<bool>();
  }
  check_model_sections(j, name, /*kernel=*/true, m.classes.size());
  if (auto it = j.find("settings"); it != j.end() && it->is_object()) m.settings = json_object_text(*it);
  if (auto it = j.find("data"); it != j.end() && it->is_object()) m.data = json_object_text(*it);
  if (auto it = j.find("training"); it != j.end() && it->is_object()) m.training = training_from_json(*it);
  operating_point_from_json(j, name, m);
  m.prepare();
  return m;
}

void save_kernel_model(const KernelModel& model, const std::string& path) {
  write_output(path, kernel_model_to_json(model));
}

KernelModel load_kernel_model(const std::string& path) { return kernel_model_from_json(read_file_bytes(path), path); }

}  // namespace pegasos
