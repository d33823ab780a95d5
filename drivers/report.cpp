#include "drivers/report.hpp"

#include <algorithm>
#include <cstdio>

namespace pegasos {

nlohmann::json metrics_to_json(const Metrics& m) {
  nlohmann::json per_class = nlohmann::json::array();
  for (const auto& c : m.per_class) {
    per_class.push_back({{"label", c.label},
                         {"support", c.support},
                         {"predicted", c.predicted},
                         {"precision", c.precision},
                         {"recall", c.recall},
                         {"f1", c.f1}});
  }
  nlohmann::json j = {{"examples", m.examples},
                      {"accuracy", m.accuracy},
                      {"balanced_accuracy", m.balanced_accuracy},
                      {"macro_f1", m.macro_f1},
                      {"weighted_f1", m.weighted_f1},
                      {"per_class", per_class},
                      {"confusion_matrix", m.confusion}};
  if (m.roc_auc) j["roc_auc"] = *m.roc_auc;
  return j;
}

std::string metrics_to_text(const Metrics& m) {
  std::string out;
  char buf[512];
  auto add = [&](const char* fmt, auto... args) {
    std::snprintf(buf, sizeof buf, fmt, args...);
    out += buf;
  };
  add("examples           %zu\n", m.examples);
  add("accuracy           %.4f\n", m.accuracy);
  add("balanced accuracy  %.4f\n", m.balanced_accuracy);
  add("macro F1           %.4f\n", m.macro_f1);
  if (m.roc_auc) add("ROC-AUC            %.4f\n", *m.roc_auc);
  std::size_t width = 5;
  for (const auto& c : m.per_class) width = std::max(width, std::min<std::size_t>(c.label.size(), 24));
  add("\n%-*s  %9s  %9s  %9s  %8s\n", static_cast<int>(width), "class", "precision", "recall", "F1", "support");
  for (const auto& c : m.per_class) {
    add("%-*.*s  %9.4f  %9.4f  %9.4f  %8zu\n", static_cast<int>(width), 24, c.label.c_str(), c.precision, c.recall,
        c.f1, c.support);
  }
  if (m.per_class.size() <= 20) {
    add("\nconfusion matrix (rows: true class, columns: predicted)\n%-*s", static_cast<int>(width), "");
    for (const auto& c : m.per_class) add(" %8.8s", c.label.c_str());
    out += "\n";
    for (std::size_t i = 0; i < m.confusion.size(); ++i) {
      add("%-*.*s", static_cast<int>(width), 24, m.per_class[i].label.c_str());
      for (std::size_t v : m.confusion[i]) add(" %8zu", v);
      out += "\n";
    }
  }
  return out;
}

}  // namespace pegasos
