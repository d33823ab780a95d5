#include "io/model_sections_json.hpp"

#include <cmath>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <vector>

#include "core/dataset.hpp"
#include "core/objective_table.hpp"
#include "io/json_checks.hpp"
#include "core/json_fast.hpp"

namespace pegasos {
namespace {

using nlohmann::json;

// Each typed field: how to read it from a member of the "training" object
// (false: wrong type, kept in `extra`) and how to write it.
template <class Field>
void put(json& out, const char* key, const std::optional<Field>& v) {
  if (v) out[key] = *v;
}

void put_number(json& out, const char* key, const std::optional<double>& v, bool nan_is_null) {
  if (!v) return;
  if (nan_is_null && std::isnan(*v)) {
    out[key] = nullptr;
    return;
  }
  if (!std::isfinite(*v)) throw std::logic_error(std::string("refusing to save a model with a non-finite training/") + key);
  out[key] = *v;
}

bool take(const json& v, std::optional<std::uint64_t>& f) {
  if (!v.is_number_unsigned()) return false;
  f = v.get<std::uint64_t>();
  return true;
}

bool take(const json& v, std::optional<double>& f, bool null_allowed = false) {
  if (null_allowed && v.is_null()) {
    f = std::nan("");
    return true;
  }
  if (!v.is_number_float() || !std::isfinite(v.get<double>())) return false;
  f = v.get<double>();
  return true;
}

bool take(const json& v, std::optional<bool>& f) {
  if (!v.is_boolean()) return false;
  f = v.get<bool>();
  return true;
}

bool take(const json& v, std::optional<std::string>& f) {
  if (!v.is_string()) return false;
  f = v.get<std::string>();
  return true;
}

bool take(const json& v, std::optional<std::vector<double>>& f) {
  if (!v.is_array()) return false;
  std::vector<double> values;
  for (const json& e : v) {
    if (!e.is_number_float() || !std::isfinite(e.get<double>())) return false;
    values.push_back(e.get<double>());
  }
  f = std::move(values);
  return true;
}

// Reads member `key` of `o` into the field named `key` of s; false when it is
// not a known field of the type its writer uses.
bool take_field(const std::string& key, const json& v, TrainingSummary& s) {
  if (key == "examples") return take(v, s.examples);
  if (key == "nnz") return take(v, s.nnz);
  if (key == "iterations") return take(v, s.iterations);
  if (key == "epochs") return take(v, s.epochs);
  if (key == "converged") return take(v, s.converged);
  if (key == "stopped_by") return take(v, s.stopped_by);
  if (key == "solver") return take(v, s.solver);
  if (key == "certificate") return take(v, s.certificate);
  if (key == "objective") return take(v, s.objective);
  if (key == "tolerance") return take(v, s.tolerance);
  if (key == "dual_objective") return take(v, s.dual_objective, true);
  if (key == "relative_gap") return take(v, s.relative_gap, true);
  if (key == "regularizer") return take(v, s.regularizer);
  if (key == "class_cost") return take(v, s.class_cost);
  if (key == "support_vectors") return take(v, s.support_vectors);
  if (key == "evictions") return take(v, s.evictions);
  if (key == "kernel_evaluations") return take(v, s.kernel_evaluations);
  if (key == "warm_start") return take(v, s.warm_start);
  if (key == "schedule_steps") return take(v, s.schedule_steps);
  return false;
}

// Whether `v` is a valid value of training field `key`, and what that
// field holds (for the error); nullptr for a field this pegasos does not
// know. Numbers written as integers by another writer are numbers.
const char* training_field_check(const std::string& key, const json& v, bool& ok) {
  auto finite = [](const json& e) { return e.is_number() && std::isfinite(e.get<double>()); };
  if (key == "examples" || key == "nnz" || key == "iterations" || key == "support_vectors" || key == "evictions" ||
      key == "kernel_evaluations" || key == "schedule_steps") {
    ok = v.is_number_unsigned();
    return "a non-negative integer";
  }
  if (key == "converged") {
    ok = v.is_boolean();
    return "true or false";
  }
  if (key == "stopped_by" || key == "solver" || key == "certificate" || key == "warm_start") {
    ok = v.is_string();
    return "a string";
  }
  if (key == "dual_objective" || key == "relative_gap" || key == "regularizer") {
    ok = v.is_null() || finite(v);
    return "a finite number or null";
  }
  if (key == "class_cost") {  // its length and elements: check_model_sections
    ok = v.is_array();
    return "an array of numbers";
  }
  if (key == "epochs" || key == "objective" || key == "tolerance") {
    ok = finite(v);
    return "a finite number";
  }
  ok = true;
  return nullptr;
}

std::string found(const json& v) {
  if (v.is_null()) return "null";  // not "null null"
  const std::string text = v.dump();
  return std::string(v.type_name()) + (text.size() <= 40 ? " " + text : "");
}

// An optional member that must be an object when present.
const json* section(const json& model, const char* key, const std::string& name) {
  auto it = model.find(key);
  if (it == model.end()) return nullptr;
  if (!it->is_object()) json_checks::bad(name, std::string("/") + key, "expected an object, found " + found(*it));
  return &*it;
}

// The members of settings / data that describe how rows are read.
void check_reader_fields(const json& o, const std::string& name, const std::string& path) {
  for (const char* key : {"text_field", "label_field", "positive_label", "source_model", "objective", "solver",
                          "bias", "sampling", "output"}) {
    if (auto it = o.find(key); it != o.end() && !it->is_string()) {
      json_checks::bad(name, path + "/" + key, "expected a string, found " + found(*it));
    }
  }
  if (auto it = o.find("normalize"); it != o.end() && !(it->is_string() && (*it == "none" || *it == "l2"))) {
    json_checks::bad(name, path + "/normalize", "expected \"none\" or \"l2\", found " + found(*it));
  }
  if (auto it = o.find("format"); it != o.end()) {
    if (!it->is_string()) json_checks::bad(name, path + "/format", "expected a string, found " + found(*it));
    bool ok = false;
    parse_data_format(it->get_ref<const std::string&>(), &ok);
    if (!ok) json_checks::bad(name, path + "/format", "not a data format: " + found(*it));
  }
  if (auto it = o.find("label_column"); it != o.end() && !it->is_string() && !it->is_number_integer()) {
    json_checks::bad(name, path + "/label_column", "expected an integer or a column name, found " + found(*it));
  }
  if (auto it = o.find("feature_names"); it != o.end()) {
    if (!it->is_array()) json_checks::bad(name, path + "/feature_names", "expected an array of names, found " + found(*it));
    for (std::size_t j = 0; j < it->size(); ++j) {
      if (!(*it)[j].is_string()) {
        json_checks::bad(name, path + "/feature_names/" + std::to_string(j), "expected a name, found " + found((*it)[j]));
      }
    }
    if (auto c = o.find("feature_count"); c != o.end() && c->is_number_unsigned() && c->get<std::uint64_t>() != it->size()) {
      json_checks::bad(name, path + "/feature_count",
                       std::to_string(c->get<std::uint64_t>()) + ", but feature_names has " + std::to_string(it->size()));
    }
  }
  if (auto it = o.find("feature_count"); it != o.end() && !(it->is_number_unsigned() && it->get<std::uint64_t>() > 0 &&
                                                            it->get<std::uint64_t>() <= 0xffffffffu)) {
    json_checks::bad(name, path + "/feature_count", "expected a positive integer, found " + found(*it));
  }
  for (const char* key : {"seed", "batch_size", "iterations", "max_epochs", "max_support_vectors", "kernel_cache_mb"}) {
    if (auto it = o.find(key); it != o.end() && !it->is_number_unsigned()) {
      json_checks::bad(name, path + "/" + key, "expected a non-negative integer, found " + found(*it));
    }
  }
  for (const char* key : {"tolerance", "epochs", "average_gamma", "max_feature_index"}) {
    if (auto it = o.find(key); it != o.end()) json_checks::finite_number(*it, name, path + "/" + key);
  }
  for (const char* key : {"projection", "keep_duals"}) {
    if (auto it = o.find(key); it != o.end() && !it->is_boolean()) {
      json_checks::bad(name, path + "/" + key, "expected true or false, found " + found(*it));
    }
  }
}

}  // namespace

void check_model_sections(const json& model, const std::string& name, bool kernel, std::size_t classes) {
  const json& objective = json_checks::need(model, "objective", name, "", "pegasos model");
  const ObjectiveRow* row = objective.is_string() ? find_objective(objective.get_ref<const std::string&>()) : nullptr;
  if (row == nullptr || row->kernel != kernel) {
    json_checks::bad(name, "/objective",
                     std::string(kernel ? "not a kernel objective: " : "not a linear objective: ") + found(objective));
  }
  if (const json* settings = section(model, "settings", name)) {
    check_reader_fields(*settings, name, "/settings");
    if (auto it = settings->find("lambda"); it != settings->end()) {
      if (!(json_checks::finite_number(*it, name, "/settings/lambda") >= 0)) {
        json_checks::bad(name, "/settings/lambda", "must be >= 0");
      }
    }
  }
  if (const json* data = section(model, "data", name)) check_reader_fields(*data, name, "/data");
  if (const json* training = section(model, "training", name)) {
    for (auto it = training->begin(); it != training->end(); ++it) {
      bool ok = true;
      const char* holds = training_field_check(it.key(), it.value(), ok);
      if (!ok) json_checks::bad(name, "/training/" + it.key(), std::string("expected ") + holds + ", found " + found(it.value()));
    }
    if (auto it = training->find("class_cost"); it != training->end()) {
      if (it->size() != classes) {
        json_checks::bad(name, "/training/class_cost", "expected an array of " + std::to_string(classes) + " numbers");
      }
      for (std::size_t c = 0; c < it->size(); ++c) {
        const std::string field = "/training/class_cost/" + std::to_string(c);
        if (!(json_checks::finite_number((*it)[c], name, field) > 0)) json_checks::bad(name, field, "must be > 0");
      }
    }
  }
}

json training_to_json(const TrainingSummary& s) {
  json out = s.extra.empty() ? json::object() : json::parse(s.extra);
  put(out, "examples", s.examples);
  put(out, "nnz", s.nnz);
  put(out, "iterations", s.iterations);
  put_number(out, "epochs", s.epochs, false);
  put(out, "converged", s.converged);
  put(out, "stopped_by", s.stopped_by);
  put(out, "solver", s.solver);
  put(out, "certificate", s.certificate);
  put_number(out, "objective", s.objective, false);
  put_number(out, "tolerance", s.tolerance, false);
  put_number(out, "dual_objective", s.dual_objective, true);
  put_number(out, "relative_gap", s.relative_gap, true);
  put_number(out, "regularizer", s.regularizer, false);
  if (s.class_cost) {
    for (double c : *s.class_cost) {
      if (!std::isfinite(c)) throw std::logic_error("refusing to save a model with a non-finite training/class_cost");
    }
  }
  put(out, "class_cost", s.class_cost);
  put(out, "support_vectors", s.support_vectors);
  put(out, "evictions", s.evictions);
  put(out, "kernel_evaluations", s.kernel_evaluations);
  put(out, "warm_start", s.warm_start);
  put(out, "schedule_steps", s.schedule_steps);
  return out;
}

TrainingSummary training_from_json(const json& o) {
  TrainingSummary s;
  if (!o.is_object()) return s;
  json extra = json::object();
  for (auto it = o.begin(); it != o.end(); ++it) {
    if (!take_field(it.key(), it.value(), s)) extra[it.key()] = it.value();
  }
  if (!extra.empty()) s.extra = extra.dump();
  return s;
}

// Invalid UTF-8 can only come from a --set string (labels are checked when
// read); it is replaced rather than fail after training.
std::string json_object_text(const json& object) { return object.dump(-1, ' ', false, json::error_handler_t::replace); }

std::optional<double> training_regularizer(const TrainingSummary& s) {
  if (s.regularizer || s.extra.empty()) return s.regularizer;
  const json extra = json::parse(s.extra);
  if (auto it = extra.find("regularizer"); it != extra.end() && it->is_number()) return it->get<double>();
  return std::nullopt;
}

std::optional<std::vector<double>> training_class_cost(const TrainingSummary& s) {
  if (s.class_cost || s.extra.empty()) return s.class_cost;
  const json extra = json::parse(s.extra);
  auto it = extra.find("class_cost");
  if (it == extra.end() || !it->is_array()) return std::nullopt;
  for (const json& c : *it) {
    if (!c.is_number()) return std::nullopt;
  }
  return it->get<std::vector<double>>();
}

// Sections kept as text (e.g. a hashing featurizer's 2 MB of bucket terms)
// are read back with the fast reader (core/json_fast.hpp): the same value.
json json_object_of(const std::string& text) { return json_fast::parse_or_throw(text); }

void operating_point_to_json(const ModelHeader& h, nlohmann::json& model) {
  if (h.calibrated()) {
    json block = h.calibration_record.empty() ? json::object() : json_object_of(h.calibration_record);
    json a = json::array(), b = json::array();
    for (const Platt& p : h.calibration) {
      if (!std::isfinite(p.a) || !std::isfinite(p.b)) throw std::logic_error("refusing to save a non-finite calibration");
      a.push_back(p.a);
      b.push_back(p.b);
    }
    block["method"] = "platt";
    block["a"] = std::move(a);
    block["b"] = std::move(b);
    model["calibration"] = std::move(block);
  }
  if (h.threshold) {
    if (!std::isfinite(*h.threshold)) throw std::logic_error("refusing to save a non-finite threshold");
    json block = h.threshold_record.empty() ? json::object() : json_object_of(h.threshold_record);
    block["score"] = *h.threshold;
    model["threshold"] = std::move(block);
  }
}

void operating_point_from_json(const nlohmann::json& model, const std::string& name, ModelHeader& h) {
  using json_checks::bad;
  if (auto it = model.find("calibration"); it != model.end() && !it->is_null()) {
    if (!it->is_object()) bad(name, "/calibration", "expected an object");
    if (it->value("method", json()) != "platt") bad(name, "/calibration/method", "expected \"platt\"");
    json rest = *it;
    const std::size_t K = static_cast<std::size_t>(h.outputs);
    for (const char* key : {"a", "b"}) {
      const json& v = json_checks::need(*it, key, name, "/calibration", "pegasos model");
      if (!v.is_array() || v.size() != K) {
        bad(name, std::string("/calibration/") + key, "expected an array of " + std::to_string(K) + " numbers (one per output)");
      }
      rest.erase(key);
    }
    h.calibration.assign(K, Platt{});
    for (std::size_t k = 0; k < K; ++k) {
      h.calibration[k].a = json_checks::finite_number((*it)["a"][k], name, "/calibration/a/" + std::to_string(k));
      h.calibration[k].b = json_checks::finite_number((*it)["b"][k], name, "/calibration/b/" + std::to_string(k));
    }
    rest.erase("method");
    h.calibration_record = json_object_text(rest);
  }
  if (auto it = model.find("threshold"); it != model.end() && !it->is_null()) {
    if (!it->is_object()) bad(name, "/threshold", "expected an object");
    if (h.outputs != 1) bad(name, "/threshold", "a decision threshold is for binary models");
    const json& score = json_checks::need(*it, "score", name, "/threshold", "pegasos model");
    h.threshold = json_checks::finite_number(score, name, "/threshold/score");
    // The record names the class a score above the threshold predicts: the
    // second class of a binary model, always (a file that says otherwise
    // would be applied the other way round from what it claims).
    if (auto pc = it->find("positive_class"); pc != it->end()) {
      if (!pc->is_string() || h.classes.size() != 2 || pc->get<std::string>() != h.classes[1]) {
        bad(name, "/threshold/positive_class",
            "expected \"" + (h.classes.size() == 2 ? h.classes[1] : std::string()) +
                "\", the class a score above the threshold predicts (the model's second class)");
      }
    }
    json rest = *it;
    rest.erase("score");
    h.threshold_record = json_object_text(rest);
  }
}

}  // namespace pegasos
