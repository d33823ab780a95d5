#include "drivers/operating_point.hpp"

#include <cmath>
#include <cstdio>

#include "core/calibration.hpp"
#include "core/metrics.hpp"

namespace pegasos {
namespace {

std::string format(const char* fmt, double a, double b = 0, double c = 0, double d = 0) {
  char buf[256];
  std::snprintf(buf, sizeof buf, fmt, a, b, c, d);
  return buf;
}

// Where lambda "auto" chose an end of everything it may try (the largest λ,
// after the range was extended past C = 0.01, or the smallest, C = 1000),
// and the curve falls away from it: a note that a value past it may be better.
std::string auto_edge_note(const nlohmann::json& selection) {
  const auto& curve = selection["curve"];
  const auto& a = selection["auto"];
  if (curve.size() < 2) return "";
  const bool first = curve.front().value("value", nlohmann::json()) == selection["value"];
  const bool last = curve.back().value("value", nlohmann::json()) == selection["value"] &&
                    a.value("points_run", 0) == a.value("points_max", -1);
  if (first && curve[1].value("mean", 0.0) < curve[0].value("mean", 0.0)) {
    return format(" (the largest lambda tried, C = %g: more regularisation was not tried)", a.value("C_min", 0.0));
  }
  if (last && curve[curve.size() - 2].value("mean", 0.0) < curve.back().value("mean", 0.0)) {
    return " (the smallest lambda tried, C = 1000)";
  }
  return "";
}

}  // namespace

std::string fit_summary(const AnyModel& model) {
  const nlohmann::json training = model.training();
  const ModelHeader& h = model.header();
  std::string text;
  if (auto s = training.find("selection"); s != training.end() && s->contains("auto")) {
    const auto& curve = (*s)["curve"];
    double best = 0, sd = 0;
    for (const auto& p : curve) {
      if (p.value("value", nlohmann::json()) == (*s)["value"]) {
        best = p.value("mean", 0.0);
        sd = p.value("std", 0.0);
      }
    }
    const double lambda = (*s)["value"].get<double>();
    const double n = (*s)["auto"].value("examples", 1.0);
    text += "lambda auto: chose lambda " + format("%.6g (C = %.3g)", lambda, 1.0 / (lambda * n)) + " by " +
            std::to_string((*s).value("folds", 0)) + "-fold cross-validation, " + (*s).value("metric", "") + " " +
            format("%.4f ± %.4f", best, sd) + "; " + std::to_string(curve.size()) + " lambda values tried" +
            auto_edge_note(*s) + "\n";
  }
  if (h.calibrated()) {
    const auto record = nlohmann::json::parse(h.calibration_record.empty() ? "{}" : h.calibration_record);
    const auto oof = record.value("out_of_fold", nlohmann::json::object());
    text += "calibrated: Platt sigmoid" + std::string(h.outputs > 1 ? "s (one-vs-rest, normalised)" : "") +
            " on out-of-fold decision values; out-of-fold log-loss " +
            format("%.4f, Brier %.4f\n", oof.value("log_loss", 0.0), oof.value("brier", 0.0));
  }
  if (h.threshold) {
    const auto record = nlohmann::json::parse(h.threshold_record.empty() ? "{}" : h.threshold_record);
    const auto oof = record.value("out_of_fold", nlohmann::json::object());
    const std::string goal = record.contains("max_fpr") ? format("false-positive rate <= %g", record["max_fpr"].get<double>())
                                                        : format("recall >= %g", record.value("target_recall", 0.0));
    text += "threshold: score > " + format("%.6g", *h.threshold) + " for class '" + h.classes[1] + "' (" + goal +
            " on out-of-fold values: FPR " +
            format("%.4f, recall %.4f, precision %.4f)\n", oof.value("false_positive_rate", 0.0),
                   oof.value("recall", 0.0), oof.value("precision", 0.0));
  }
  return text;
}

void report_operating_point(const AnyModel& model, const Dataset& data, const std::vector<double>& scores,
                            std::string& text, nlohmann::json& report) {
  const ModelHeader& h = model.header();
  const std::size_t n = data.size(), K = static_cast<std::size_t>(h.outputs), C = h.classes.size();
  if (h.calibrated()) {
    std::vector<double> p(n * C), raw(n * C);
    const std::vector<Platt> plain(K, Platt{-1.0, 0.0});  // 1 / (1 + e^-s)
    for (std::size_t i = 0; i < n; ++i) {
      h.probabilities(&scores[i * K], &p[i * C]);
      calibrated_probabilities(plain, &scores[i * K], h.outputs, &raw[i * C]);
    }
    const double ll = log_loss(p, data.labels, C), brier = brier_score(p, data.labels, C);
    const double raw_ll = log_loss(raw, data.labels, C), raw_brier = brier_score(raw, data.labels, C);
    report["probabilities"] = {{"log_loss", ll},
                               {"brier", brier},
                               {"plain_sigmoid", {{"log_loss", raw_ll}, {"brier", raw_brier}}}};
    text += "\nprobabilities (calibrated): log-loss " + format("%.4f, Brier %.4f", ll, brier) +
            "  (plain sigmoid of the score: log-loss " + format("%.4f, Brier %.4f)\n", raw_ll, raw_brier);
  }
  if (h.threshold && K == 1) {
    std::vector<char> positive(n);
    for (std::size_t i = 0; i < n; ++i) positive[i] = data.labels[i] == 1;
    const OperatingPoint op = operating_point(scores, positive, *h.threshold);
    report["at_threshold"] = {{"threshold", *h.threshold},
                              {"false_positive_rate", op.false_positive_rate},
                              {"recall", op.recall},
                              {"precision", op.precision}};
    text += "at the model's threshold " + format("%.6g: FPR %.4f, recall %.4f, precision %.4f", *h.threshold,
                                                  op.false_positive_rate, op.recall, op.precision) +
            " (class '" + h.classes[1] + "')\n";
  }
}

}  // namespace pegasos
