#include "drivers/inspect.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <vector>

#include "core/errors.hpp"
#include "core/output_file.hpp"
#include "drivers/any_model.hpp"
#include "io/kernel_settings_json.hpp"
#include "io/model_json.hpp"
#include "io/model_sections_json.hpp"
#include "io/model_sections_json.hpp"
#include "text/featurizer.hpp"

namespace pegasos {
namespace {

using nlohmann::json;

// A text term as people read it: word terms (and "w1 w2" n-grams) as they
// are, character n-grams ("#" + n-gram, padded with spaces) as char "...".
std::string display_term(const std::string& term) {
  if (!term.empty() && term[0] == '#') return "char \"" + term.substr(1) + "\"";
  return term;
}

// How a linear model names its features: numeric indices (1-based, as in
// LIBSVM files), CSV header names, vocabulary terms or hashing buckets with
// the training terms kept for them.
class FeatureNamer {
 public:
  explicit FeatureNamer(const Model& m, const std::string& path) {
    const json data = json_object_of(m.data);
    format_ = data.value("format", "auto");
    if (!m.features.empty()) {
      text_.emplace(TextFeaturizer::from_json(features_json(m), path, "/features"));
      return;
    }
    if (auto it = data.find("feature_names"); it != data.end() && it->is_array()) {
      for (const json& n : *it) header_.push_back(n.is_string() ? n.get<std::string>() : n.dump());
    }
  }

  bool hashing() const { return text_ && text_->options().mode == TextMode::kHashing; }

  // The "features" section: where the names come from.
  json describe() const {
    if (!text_) {
      json j{{"input", "numeric"}, {"format", format_}};
      j["names"] = header_.empty() ? "1-based feature indices, as in LIBSVM files" : "CSV header";
      if (!header_.empty()) j["header"] = header_;
      return j;
    }
    const TextOptions& o = text_->options();
    json j{{"input", "raw text"}, {"mode", std::string(to_string(o.mode))}, {"options", text_options_to_json(o)}};
    if (o.mode == TextMode::kVocabulary) {
      j["names"] = "vocabulary terms";
      j["vocabulary_size"] = text_->vocabulary().size();
    } else {
      j["buckets"] = text_->dimension();
      j["buckets_with_terms"] = text_->bucket_terms().entries.size();
      j["names"] = text_->bucket_terms().empty() ? "bucket numbers (the model kept no terms: keep_terms was off or the "
                                                   "model is older)"
                                                 : "training terms kept per bucket";
    }
    return j;
  }

  // +1, or for a hashing bucket the sign of its most frequent term: the
  // weight that term carries is sign × the bucket's weight.
  int orientation(std::uint32_t j) const {
    if (!hashing()) return 1;
    const BucketTerms::Entry* e = text_->bucket_terms().find(j);
    return e ? hash_term(e->terms.front(), text_->options().hash_bits).sign : 1;
  }

  // One listed feature: index j (0-based) with model weight w.
  json entry(std::uint32_t j, double w) const {
    json out{{"feature", std::uint64_t{j} + 1}, {"weight", w * orientation(j)}};
    if (!text_) {
      out["name"] = j < header_.size() ? header_[j] : std::to_string(std::uint64_t{j} + 1);
    } else if (!hashing()) {
      if (j >= text_->vocabulary().size()) {  // a model whose weights outnumber its vocabulary
        out["name"] = "feature " + std::to_string(std::uint64_t{j} + 1) + " (not in the vocabulary)";
        out["terms"] = json::array();
        return out;
      }
      const std::string& term = text_->vocabulary()[j];
      out["name"] = display_term(term);
      out["terms"] = json::array({term});
    } else {
      hashed_entry(j, w, out);
    }
    return out;
  }

 private:
  void hashed_entry(std::uint32_t j, double w, json& out) const {
    out["bucket"] = j;
    out["bucket_weight"] = w;
    const BucketTerms::Entry* e = text_->bucket_terms().find(j);
    json terms = json::array(), opposite = json::array();
    std::string name;
    std::uint64_t more = 0;
    if (e == nullptr) {
      name = "bucket " + std::to_string(j) + (text_->bucket_terms().empty() ? "" : " (its terms were not kept)");
    } else {
      const int sign = orientation(j);
      for (const std::string& t : e->terms) {
        terms.push_back(t);
        name += (name.empty() ? "" : " | ") + display_term(t);
        if (hash_term(t, text_->options().hash_bits).sign != sign) {
          opposite.push_back(t);
          name += " (opposite sign)";
        }
      }
      more = e->distinct - e->terms.size();
      if (more > 0) name += " (+" + std::to_string(more) + " more)";
    }
    out["name"] = name;
    out["terms"] = std::move(terms);
    out["opposite_sign"] = std::move(opposite);
    out["more"] = more;
    out["shared"] = e != nullptr && e->distinct > 1;
  }

  std::string format_;
  std::optional<TextFeaturizer> text_;
  std::vector<std::string> header_;
};

// The `top` largest positive (sign +1) or most negative (sign -1) oriented
// weights of output k, as entries, largest magnitude first (ties: lower index).
json top_features(const Model& m, const FeatureNamer& namer, std::size_t k, int sign, std::size_t top) {
  const std::size_t K = static_cast<std::size_t>(m.outputs);
  struct Pick {
    double v;         // sign × oriented weight
    std::uint32_t j;  // the feature
    double w;         // its weight
  };
  std::vector<Pick> picked;
  // Row r of the weights is feature j (dense: r = j; compact: weight_rows[r]).
  const bool compact = !m.weight_rows.empty();
  const std::size_t rows = compact ? m.weight_rows.size() : m.dimension;
  for (std::size_t r = 0; r < rows; ++r) {
    const std::uint32_t j = compact ? m.weight_rows[r] : static_cast<std::uint32_t>(r);
    const double w = m.weights[r * K + k];
    if (w == 0.0) continue;
    const double v = sign * namer.orientation(j) * w;
    if (v > 0.0) picked.push_back({v, j, w});
  }
  auto larger = [](const Pick& a, const Pick& b) { return a.v != b.v ? a.v > b.v : a.j < b.j; };
  const std::size_t n = std::min(top, picked.size());
  std::partial_sort(picked.begin(), picked.begin() + static_cast<std::ptrdiff_t>(n), picked.end(), larger);
  json list = json::array();
  for (std::size_t i = 0; i < n; ++i) list.push_back(namer.entry(picked[i].j, picked[i].w));
  return list;
}

// The index of `name` in the classes, or InputError naming the valid ones.
std::size_t class_index(const std::vector<std::string>& classes, const std::string& name, const std::string& path) {
  for (std::size_t c = 0; c < classes.size(); ++c) {
    if (classes[c] == name) return c;
  }
  std::string valid;
  for (const std::string& c : classes) valid += (valid.empty() ? "'" : ", '") + c + "'";
  throw InputError("inspect: " + path + " has no class '" + name + "'; its classes are " + valid);
}

// One entry per output: its class, bias and the `top` positive and negative
// weights. Binary (one output): positive weights push toward classes[1]
// (`class`), negative ones toward classes[0] (`negative_class`). Multiclass:
// evidence for and against each class. `only` keeps one output (binary: the
// single output whichever class is named).
json weight_lists(const Model& m, const FeatureNamer& namer, const InspectOptions& o, std::optional<std::size_t> only) {
  json lists = json::array();
  for (std::size_t k = 0; k < static_cast<std::size_t>(m.outputs); ++k) {
    if (only && !m.binary() && *only != k) continue;
    json entry{{"output", k},
               {"class", m.classes[m.binary() ? 1 : k]},
               {"bias", m.bias[k]},
               {"positive", top_features(m, namer, k, 1, o.top)},
               {"negative", top_features(m, namer, k, -1, o.top)}};
    if (m.binary()) entry["negative_class"] = m.classes[0];
    lists.push_back(std::move(entry));
  }
  return lists;
}

json header_section(const ModelHeader& h, const std::string& path, const std::string& kind, double lambda,
                    const std::string& settings, const TrainingSummary& training) {
  json j{{"model", path},
         {"kind", kind},
         {"objective", h.objective},
         {"classes", h.classes},
         {"outputs", h.outputs},
         {"dimension", h.dimension},
         {"lambda", lambda},
         {"settings", json_object_of(settings)},
         {"training", training_to_json(training)}};
  if (h.classes.size() == 2 && h.outputs == 1) j["positive_class"] = h.classes[1];
  operating_point_to_json(h, j);  // calibration, threshold (when the model has them)
  return j;
}

}  // namespace

json inspect_report(const AnyModel& model, const std::string& path, const InspectOptions& o) {
  std::optional<std::size_t> only;
  if (!o.class_name.empty()) only = class_index(model.classes(), o.class_name, path);
  if (model.kernel) {
    const KernelModel& km = *model.kernel;
    json j = header_section(km, path, "kernel", km.lambda, km.settings, km.training);
    j["kernel"] = kernel_params_to_json(km.kernel);
    j["support_vectors"] = km.num_support_vectors();
    if (km.one_vs_one) j["one_vs_one_pairs"] = km.columns();  // only then: other reports stay as they were
    j["top"] = o.top;
    return j;
  }
  const Model& m = *model.linear;
  const FeatureNamer namer(m, path);
  json j = header_section(m, path, "linear", m.lambda, m.settings, m.training);
  j["features"] = namer.describe();
  j["bias_mode"] = m.bias_mode;
  j["bias"] = m.bias;
  j["top"] = o.top;
  j["weights"] = weight_lists(m, namer, o, only);
  return j;
}

int run_inspect(const std::string& path, const InspectOptions& options, bool as_json) {
  const AnyModel model = AnyModel::load(path, json_checks::ModelUse::kInspect);
  const json report = inspect_report(model, path, options);
  // Paths and CSV headers may be invalid UTF-8, which JSON cannot hold: replaced.
  std::string out;
  try {
    out = as_json ? report.dump(2, ' ', false, json::error_handler_t::replace) + "\n" : inspect_text(report);
  } catch (const json::exception& e) {  // an edited model: a section inspect shows is malformed
    throw InputError(path + ": a field inspect shows is missing or of the wrong type: " + e.what());
  }
  // Through OutputFile (written in place, every write checked): a failed
  // fwrite left only stdio's error flag, and the final check could not say
  // why ("standard output: write failed" for /dev/full).
  write_output("-", out);
  return 0;
}

}  // namespace pegasos
