#include "drivers/experiment/results.hpp"

#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>

#include "drivers/experiment/common.hpp"

namespace pegasos {

using nlohmann::json;

std::size_t best_index(const std::vector<double>& values, bool maximize) {
  std::size_t best = 0;
  bool found = false;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (std::isnan(values[i])) continue;
    if (!found || (maximize ? values[i] > values[best] : values[i] < values[best])) {
      best = i;
      found = true;
    }
  }
  return best;
}

json without_timing(const json& j) {
  if (j.is_object()) {
    json out = json::object();
    for (const auto& [key, value] : j.items()) {
      if (key != "timing") out[key] = without_timing(value);
    }
    return out;
  }
  if (j.is_array()) {
    json out = json::array();
    for (const auto& v : j) out.push_back(without_timing(v));
    return out;
  }
  return j;
}

namespace experiment_detail {
namespace {

// The metrics of results.csv and of best_by_metric, in that order ("error" is
// 1 - accuracy: the same ranking).
const std::vector<std::string> kReportedMetrics = {"accuracy", "balanced_accuracy", "macro_f1",  "weighted_f1",
                                                   "roc_auc",  "recall_at_max_fpr", "objective", "eval_objective"};

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

}  // namespace

json summarize(const Experiment& e, const std::vector<json>& runs) {
  json out = json::array();
  for (const char* phase : {"cv", "test", "final"}) {
    for (std::size_t g = 0; g < e.points.size(); ++g) {
      std::map<std::string, std::vector<double>> values;
      std::size_t count = 0;
      for (const json& r : runs) {
        if (r["phase"] != phase || r["point"] != g) continue;
        ++count;
        for (const auto& [name, v] : r["metrics"].items()) {
          if (v.is_number()) values[name].push_back(v.get<double>());
        }
      }
      if (count == 0) continue;
      json mean = json::object(), stddev = json::object();
      for (const auto& [name, v] : values) {
        const double mu = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
        double ss = 0.0;
        for (double x : v) ss += (x - mu) * (x - mu);
        mean[name] = mu;
        stddev[name] = v.size() > 1 ? std::sqrt(ss / static_cast<double>(v.size() - 1)) : 0.0;
      }
      out.push_back({{"phase", phase},
                     {"point", g},
                     {"params", e.points[g].params},
                     {"runs", count},
                     {"mean", mean},
                     {"std", stddev}});
    }
  }
  return out;
}

json best_by_metric(const json& summary) {
  std::string phase = "cv";
  for (const json& s : summary) {
    if (s["phase"] == "test") phase = "test";
  }
  std::vector<const json*> groups;
  for (const json& s : summary) {
    if (s["phase"] == phase) groups.push_back(&s);
  }
  json metrics = json::object();
  for (const std::string& m : kReportedMetrics) {
    std::vector<double> means;
    bool any = false;
    for (const json* g : groups) {
      means.push_back(metric_of((*g)["mean"], m));
      any = any || !std::isnan(means.back());
    }
    if (!any) continue;  // e.g. roc_auc of a multiclass problem
    const bool maximize = metric_is_maximized(m, "best_by_metric");
    const std::size_t b = best_index(means, maximize);
    metrics[m] = {{"maximize", maximize},
                  {"point", (*groups[b])["point"]},
                  {"params", (*groups[b])["params"]},
                  {"mean", means[b]},
                  {"runs", (*groups[b])["runs"]}};
  }
  return {{"phase", phase}, {"metrics", metrics}};
}

void print_best_by_metric(const json& best) {
  if (best["metrics"].empty()) return;
  std::fprintf(stderr, "best setting per metric (mean over the %s runs of each grid point):\n",
               best["phase"].get<std::string>().c_str());
  for (const std::string& m : kReportedMetrics) {
    const auto it = best["metrics"].find(m);
    if (it == best["metrics"].end()) continue;
    const bool maximize = (*it)["maximize"].get<bool>();
    std::fprintf(stderr, maximize ? "  best %s: %s (%.4f)\n" : "  lowest %s: %s (%.6g)\n", m.c_str(),
                 params_text((*it)["params"]).c_str(), (*it)["mean"].get<double>());
  }
}

std::string results_csv(const Experiment& e, const std::vector<json>& runs) {
  const std::vector<std::string>& metrics = kReportedMetrics;
  std::string out = "id,phase,point,repeat,fold,seed";
  // Settings are prefixed ("params.lambda", as in results.json's "params") so
  // that no column name repeats: a swept objective, seed, iterations or epochs
  // would otherwise meet the metric / run column of the same name.
  for (const auto& k : e.swept_keys) out += "," + csv_field("params." + k);
  out += ",train_examples,eval_examples";
  for (const auto& m : metrics) out += "," + m;
  out += ",iterations,epochs,train_seconds\n";
  for (const json& r : runs) {
    out += number_text(r["id"]) + "," + number_text(r["phase"]) + "," + number_text(r["point"]) + "," +
           number_text(r["repeat"]) + "," + number_text(r["fold"]) + "," + number_text(r["seed"]);
    for (const auto& k : e.swept_keys) out += "," + csv_field(number_text(r["params"].value(k, json())));
    out += "," + number_text(r["train_examples"]) + "," + number_text(r["eval_examples"]);
    for (const auto& m : metrics) out += "," + number_text(r["metrics"].value(m, json()));
    out += "," + number_text(r["training"]["iterations"]) + "," + number_text(r["training"]["epochs"]) + "," +
           number_text(r["timing"]["train_seconds"]) + "\n";
  }
  return out;
}

}  // namespace experiment_detail
}  // namespace pegasos
