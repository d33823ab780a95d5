// The text form of `pegasos inspect` (drivers/inspect.hpp), rendered from
// the JSON report so both say the same.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <string>

#include "drivers/config_keys.hpp"
#include "drivers/inspect.hpp"

namespace pegasos {
namespace {

using nlohmann::json;

constexpr std::size_t kWidth = 100;   // wrap the settings line here

std::string fmt_d(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string figure(const json& v, const char* format = "%.6g") {
  return v.is_number() ? fmt_d(format, v.get<double>()) : v.dump();
}

std::string line(const std::string& label, const std::string& text) {
  std::string l = label;
  l.resize(11, ' ');
  return l + text + "\n";
}

std::string classes_line(json& r) {
  std::string s;
  for (json& c : r["classes"]) s += (s.empty() ? "" : ", ") + c.get<std::string>();
  std::string out = std::to_string(r["classes"].size()) + " classes: " + s;
  if (r.contains("positive_class")) out += " (positive: " + r["positive_class"].get<std::string>() + ")";
  return out;
}

// "3" or "3..5".
std::string range_text(int lo, int hi) {
  return lo == hi ? std::to_string(lo) : std::to_string(lo) + ".." + std::to_string(hi);
}

std::string features_line(json& r) {
  json& f = r["features"];
  if (f["input"] == "numeric") {
    std::string s = std::to_string(r["dimension"].get<std::uint64_t>()) + " numeric features, named by ";
    return s + (f.contains("header") ? "the CSV header" : "their 1-based index (as in LIBSVM files)");
  }
  json& o = f["options"];
  const int words = o["word_ngrams"].get<int>();
  std::string grams = words == 0   ? ""
                      : words == 1 ? "words"
                                   : "words and word " + range_text(2, words) + "-grams";
  if (o["char_ngrams_max"].get<int>() > 0) {
    grams += (grams.empty() ? "" : ", ") + std::string("character ") +
             range_text(o["char_ngrams_min"].get<int>(), o["char_ngrams_max"].get<int>()) + "-grams";
  }
  if (f["mode"] == "vocabulary") {
    return "raw text, vocabulary of " + std::to_string(f["vocabulary_size"].get<std::uint64_t>()) + " terms (" + grams + ")";
  }
  std::string s = "raw text, hashing into " + std::to_string(f["buckets"].get<std::uint64_t>()) + " buckets (" + grams + "); ";
  const auto kept = f["buckets_with_terms"].get<std::uint64_t>();
  return s + (kept > 0 ? "training terms kept for " + std::to_string(kept) + " buckets"
                       : "no terms kept (keep_terms off or an older model): buckets shown by number");
}

// The stored calibration and threshold (train --calibrate / --max-fpr / --target-recall).
std::string operating_lines(json& r) {
  std::string out;
  if (r.contains("calibration")) {
    json oof = r["calibration"].value("out_of_fold", json::object());
    out += line("proba", "Platt sigmoid" + std::string(r["outputs"] == 1 ? "" : "s, one-vs-rest normalised") +
                                     (oof.contains("brier") ? ", out-of-fold log-loss " + figure(oof["log_loss"], "%.4f") +
                                                                  ", Brier " + figure(oof["brier"], "%.4f")
                                                            : std::string()));
  }
  if (r.contains("threshold")) {
    json& t = r["threshold"];
    std::string s = "score > " + figure(t["score"], "%.6g");
    if (t.contains("max_fpr")) s += " (max_fpr " + figure(t["max_fpr"]) + ")";
    if (t.contains("target_recall")) s += " (target_recall " + figure(t["target_recall"]) + ")";
    json oof = t.value("out_of_fold", json::object());
    if (oof.contains("false_positive_rate")) {
      s += ", out-of-fold FPR " + figure(oof["false_positive_rate"], "%.4f") + ", recall " + figure(oof["recall"], "%.4f");
    }
    out += line("threshold", s);
  }
  return out;
}

std::string training_lines(json& r) {
  json& t = r["training"];
  const std::string solver = t.value("solver", r["kind"] == "kernel" ? "pegasos (kernel)" : "pegasos");
  std::string s = solver;
  if (t.contains("examples")) s += ", " + figure(t["examples"]) + " examples";
  if (t.contains("epochs")) s += ", " + figure(t["epochs"], "%.4g") + (solver == "sdca" ? " passes" : " epochs");
  if (t.contains("iterations")) s += " (" + figure(t["iterations"]) + " iterations)";
  if (t.contains("converged")) {
    const bool ok = t["converged"].get<bool>();
    s += ok ? ": converged" : ": NOT converged";
    if (t.contains("stopped_by") && !ok) s += " (stopped by " + t["stopped_by"].get<std::string>() + ")";
    if (t.contains("relative_gap")) {
      s += t["relative_gap"].is_number() ? ", relative duality gap " + figure(t["relative_gap"], "%.3g") : ", no duality gap";
      if (t.contains("tolerance")) s += std::string(ok ? " <= " : " vs tolerance ") + figure(t["tolerance"]);
    }
  }
  std::string second = "lambda " + figure(r["lambda"]);
  if (t.contains("selection") && t["selection"].contains("auto")) {
    second += " (lambda auto: " + figure(t["selection"]["folds"]) + "-fold cross-validation over " +
              figure(t["selection"]["auto"]["points_run"]) + " values)";
  }
  if (t.contains("objective")) second = "objective " + figure(t["objective"]) + ", " + second;
  std::string refit;
  if (const auto it = t.find("budget_refit"); it != t.end() && it->is_object()) {
    json& b = *it;
    refit = b.contains("skipped") ? "budget refit skipped: " + b.value("skipped", "")
                                  : "budget refit (" + b.value("solver", "") + ", " + figure(b.value("passes", json(0)), "%.4g") +
                                        " passes): " + (b.value("converged", false) ? "converged" : "NOT converged") +
                                        ", relative duality gap " + figure(b.value("relative_gap", json(0)), "%.3g") +
                                        " on the support vectors' span";
  }
  return line("training", s) + line("", second) + (refit.empty() ? "" : line("", refit)) + operating_lines(r);
}

// key=value pairs of the settings, wrapped. A linear model leaves out the
// kernel_hinge settings, which it never used (inspect --json keeps them all).
std::string settings_lines(json& settings, bool kernel_model) {
  std::string out, current;
  for (auto it = settings.begin(); it != settings.end(); ++it) {
    if (!kernel_model && std::any_of(std::begin(config_keys_detail::kKernelOnlyKeys),
                                     std::end(config_keys_detail::kKernelOnlyKeys),
                                     [&](const char* key) { return it.key() == key; })) {
      continue;
    }
    const std::string item = it.key() + "=" + it.value().dump(-1, ' ', false, json::error_handler_t::replace);
    if (!current.empty() && 11 + current.size() + 2 + item.size() > kWidth) {
      out += line(out.empty() ? "settings" : "", current);
      current.clear();
    }
    current += (current.empty() ? "" : "  ") + item;
  }
  if (!current.empty() || out.empty()) out += line(out.empty() ? "settings" : "", current);
  return out;
}

// Weights in fixed point when they all read well so (aligned decimals), else
// in scientific notation.
std::string feature_table(json& features) {
  if (features.empty()) return "  (none)\n";
  bool fixed = true;
  for (json& f : features) {
    const double a = std::fabs(f["weight"].get<double>());
    fixed = fixed && a >= 1e-3 && a < 1e5;
  }
  std::string out = "      weight  feature\n";
  for (json& f : features) {
    out += "  " + fmt_d(fixed ? "%+10.4f" : "%+10.3e", f["weight"].get<double>()) + "  " + f["name"].get<std::string>() + "\n";
  }
  return out;
}

std::string weight_sections(json& r) {
  std::string out;
  if (r["top"] == 0) return out;  // summary only
  const std::string top = std::to_string(r["top"].get<std::uint64_t>());
  for (json& w : r["weights"]) {
    const std::string c = w["class"].get<std::string>();
    if (w.contains("negative_class")) {
      out += "\ntop " + top + " features toward class " + c + " (positive weights):\n" + feature_table(w["positive"]);
      out += "\ntop " + top + " features toward class " + w["negative_class"].get<std::string>() + " (negative weights):\n" +
             feature_table(w["negative"]);
      continue;
    }
    out += "\nclass " + c + " (bias " + figure(w["bias"]) + ")\n";
    out += "top " + top + " features for class " + c + " (positive weights):\n" + feature_table(w["positive"]);
    out += "\ntop " + top + " features against class " + c + " (negative weights):\n" + feature_table(w["negative"]);
  }
  return out;
}

}  // namespace

// Every lookup below is on a copy, non-const: a field an edited model lacks
// reads as null (and a wrong type throws json::type_error, which
// run_inspect reports as bad input) instead of the undefined behaviour of a
// const lookup of a missing key.
std::string inspect_text(const json& report) {
  json r = report;
  std::string out = line("model", r["model"].get<std::string>() + " (" + r["kind"].get<std::string>() + ")");
  out += line("objective", r["objective"].get<std::string>() + ", " + classes_line(r));
  if (r["kind"] == "kernel") {
    json& k = r["kernel"];
    const std::string type = k.value("type", "?");
    std::string params;  // the parameters this kernel uses
    for (const char* p : {"gamma", "degree", "coef0"}) {
      const bool used = type == "polynomial" || (type == "rbf" && std::string(p) == "gamma");
      if (used && k.contains(p)) params += std::string(params.empty() ? " (" : ", ") + p + " " + figure(k[p]);
    }
    const std::string pairs =
        r.contains("one_vs_one_pairs") ? ", one-vs-one (" + figure(r["one_vs_one_pairs"]) + " pairs of classes, voting)" : "";
    out += line("kernel", type + (params.empty() ? "" : params + ")") + ", " + figure(r["support_vectors"]) + " support vectors" + pairs);
    out += training_lines(r) + settings_lines(r["settings"], true);
    out += "\nA kernel model has no per-feature weights: its scores are a weighted sum of kernel values\n"
           "between the input and its support vectors.\n";
    return out;
  }
  out += line("features", features_line(r));
  out += training_lines(r);
  std::string bias;
  for (const json& b : r["bias"]) bias += (bias.empty() ? "" : ", ") + figure(b);
  out += line("bias", bias + " (bias_mode " + r["bias_mode"].get<std::string>() + ")");
  out += settings_lines(r["settings"], false);
  return out + weight_sections(r);
}

}  // namespace pegasos
