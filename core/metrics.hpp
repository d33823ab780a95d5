// Classification metrics from true and predicted class ids.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace pegasos {

struct ClassMetrics {
  std::string label;
  std::size_t support = 0;   // true examples of this class
  std::size_t predicted = 0; // examples predicted as this class
  double precision = 0.0, recall = 0.0, f1 = 0.0;
};

struct OperatingPoint {
  double threshold = 0.0;           // predict positive when score > threshold
  double false_positive_rate = 0.0;
  double precision = 0.0, recall = 0.0;
};

struct Metrics {
  std::size_t examples = 0;
  double accuracy = 0.0;
  double balanced_accuracy = 0.0;  // mean recall over classes present in the data
  double macro_f1 = 0.0, weighted_f1 = 0.0;
  std::vector<ClassMetrics> per_class;
  std::vector<std::vector<std::size_t>> confusion;  // [true][predicted]
  std::optional<double> roc_auc;                    // binary only
};

// truth[i] in [0, K) (rows with truth < 0 are skipped), predicted[i] in [0, K).
Metrics classification_metrics(const std::vector<int>& truth, const std::vector<int>& predicted,
                               const std::vector<std::string>& class_names);

// Area under the ROC curve of `scores` for positive[i] (ties count one half).
// Returns nullopt when one of the classes is absent. O(n log n).
std::optional<double> roc_auc(const std::vector<double>& scores, const std::vector<char>& positive);

// The operating point with the highest recall whose false-positive rate is
// at most max_fpr (the threshold is placed between distinct scores).
// nullopt when there are no negatives or no positives.
//
// These three count each example `weights[i]` times (empty: once each; else
// one weight > 0 per example, as Dataset::weights), so rates are weighted.
std::optional<OperatingPoint> threshold_for_fpr(const std::vector<double>& scores,
                                                const std::vector<char>& positive, double max_fpr,
                                                const std::vector<float>& weights = {});

// The operating point with the highest threshold whose recall is at least
// min_recall (the threshold is placed between distinct scores). nullopt when
// there are no negatives or no positives.
std::optional<OperatingPoint> threshold_for_recall(const std::vector<double>& scores,
                                                   const std::vector<char>& positive, double min_recall,
                                                   const std::vector<float>& weights = {});

// Precision, recall and FPR when predicting positive for score > threshold.
OperatingPoint operating_point(const std::vector<double>& scores, const std::vector<char>& positive, double threshold,
                               const std::vector<float>& weights = {});

}  // namespace pegasos
