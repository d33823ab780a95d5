#include "core/metrics.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/dataset.hpp"

namespace pegasos {

Metrics classification_metrics(const std::vector<int>& truth, const std::vector<int>& predicted,
                               const std::vector<std::string>& class_names) {
  const std::size_t K = class_names.size();
  Metrics m;
  m.confusion.assign(K, std::vector<std::size_t>(K, 0));
  std::size_t correct = 0;
  for (std::size_t i = 0; i < truth.size(); ++i) {
    if (truth[i] < 0) continue;
    ++m.examples;
    ++m.confusion[static_cast<std::size_t>(truth[i])][static_cast<std::size_t>(predicted[i])];
    correct += truth[i] == predicted[i];
  }
  m.accuracy = m.examples ? static_cast<double>(correct) / static_cast<double>(m.examples) : 0.0;
  std::size_t present = 0;
  double recall_sum = 0.0;
  for (std::size_t k = 0; k < K; ++k) {
    ClassMetrics c;
    c.label = class_names[k];
    for (std::size_t j = 0; j < K; ++j) {
      c.support += m.confusion[k][j];
      c.predicted += m.confusion[j][k];
    }
    const double tp = static_cast<double>(m.confusion[k][k]);
    c.precision = c.predicted ? tp / static_cast<double>(c.predicted) : 0.0;
    c.recall = c.support ? tp / static_cast<double>(c.support) : 0.0;
    c.f1 = c.precision + c.recall > 0 ? 2 * c.precision * c.recall / (c.precision + c.recall) : 0.0;
    if (c.support > 0) {
      ++present;
      recall_sum += c.recall;
    }
    m.macro_f1 += c.f1;
    m.weighted_f1 += c.f1 * static_cast<double>(c.support);
    m.per_class.push_back(c);
  }
  m.balanced_accuracy = present ? recall_sum / static_cast<double>(present) : 0.0;
  m.macro_f1 = K ? m.macro_f1 / static_cast<double>(K) : 0.0;
  m.weighted_f1 = m.examples ? m.weighted_f1 / static_cast<double>(m.examples) : 0.0;
  return m;
}

namespace {
std::vector<std::size_t> order_by_score_desc(const std::vector<double>& scores) {
  std::vector<std::size_t> order(scores.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  // NaN scores last (a strict weak order: `>` alone is none with NaNs).
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return !std::isnan(scores[a]) && (std::isnan(scores[b]) || scores[a] > scores[b]);
  });
  return order;
}
}  // namespace

std::optional<double> roc_auc(const std::vector<double>& scores, const std::vector<char>& positive) {
  const std::vector<std::size_t> order = order_by_score_desc(scores);
  double pos = 0, neg = 0, area = 0;
  // Walk groups of tied scores: each negative in a group is beaten by every
  // positive above the group and ties with half of the group's positives.
  std::size_t i = 0;
  while (i < order.size()) {
    std::size_t j = i;
    double group_pos = 0, group_neg = 0;
    do {  // at least the row itself: a NaN score equals nothing, not even itself
      (positive[order[j]] ? group_pos : group_neg) += 1;
      ++j;
    } while (j < order.size() && scores[order[j]] == scores[order[i]]);
    area += group_neg * (pos + 0.5 * group_pos);
    pos += group_pos;
    neg += group_neg;
    i = j;
  }
  if (pos == 0 || neg == 0) return std::nullopt;
  return area / (pos * neg);
}

OperatingPoint operating_point(const std::vector<double>& scores, const std::vector<char>& positive, double threshold,
                               const std::vector<float>& weights) {
  check_sample_weight_count(weights, scores.size(), "operating point");
  double tp = 0, fp = 0, pos = 0, neg = 0;
  for (std::size_t i = 0; i < scores.size(); ++i) {
    const double c = sample_weight_at(weights, i);
    (positive[i] ? pos : neg) += c;
    if (scores[i] > threshold) (positive[i] ? tp : fp) += c;
  }
  OperatingPoint p;
  p.threshold = threshold;
  p.false_positive_rate = neg ? fp / neg : 0.0;
  p.recall = pos ? tp / pos : 0.0;
  p.precision = tp + fp > 0 ? tp / (tp + fp) : 0.0;
  return p;
}

namespace {

// A threshold that takes the group of equal scores order[i..j) as positive
// and the scores below it as negative: halfway to the next lower score, or
// just below the group's score when it is the lowest.
double threshold_below(const std::vector<double>& scores, const std::vector<std::size_t>& order, std::size_t i,
                       std::size_t j) {
  const double here = scores[order[i]];
  if (j >= order.size()) return std::nextafter(here, -INFINITY);
  const double next = scores[order[j]];
  const double t = 0.5 * here + 0.5 * next;  // (not 0.5 * (here + next): no overflow for huge scores)
  // Between adjacent doubles the midpoint rounds onto one of them; `next` still separates the groups.
  return t >= next && t < here ? t : next;
}

// One step of a walk down the distinct scores: the group order[i..j) of equal
// scores has joined the predicted positives; tp / fp count the positives and
// negatives scored at or above it, of pos / neg in all; `threshold` takes
// exactly these rows as positive (threshold_below).
struct GroupCut {
  double tp, fp, pos, neg, threshold;
};

// Walks the groups of equal scores from the highest down, calling
// visit(cut) after each until it returns false. Returns false (and visits
// nothing) when one of the classes is absent.
template <class Visit>
bool walk_score_groups(const std::vector<double>& scores, const std::vector<char>& positive,
                       const std::vector<float>& weights, Visit visit) {
  check_sample_weight_count(weights, scores.size(), "operating point");
  double pos = 0, neg = 0;
  for (std::size_t i = 0; i < positive.size(); ++i) (positive[i] ? pos : neg) += sample_weight_at(weights, i);
  if (!(pos > 0) || !(neg > 0)) return false;
  const std::vector<std::size_t> order = order_by_score_desc(scores);
  double tp = 0, fp = 0;
  for (std::size_t i = 0, j = 0; i < order.size(); i = j) {
    do {  // at least the row itself (a NaN score equals nothing)
      const std::size_t r = order[j++];
      (positive[r] ? tp : fp) += sample_weight_at(weights, r);
    } while (j < order.size() && scores[order[j]] == scores[order[i]]);
    if (!visit(GroupCut{tp, fp, pos, neg, threshold_below(scores, order, i, j)})) break;
  }
  return true;
}

}  // namespace

std::optional<OperatingPoint> threshold_for_fpr(const std::vector<double>& scores,
                                                const std::vector<char>& positive, double max_fpr,
                                                const std::vector<float>& weights) {
  std::optional<double> best;  // nothing within budget: the highest score (predicts nothing positive)
  const bool both = walk_score_groups(scores, positive, weights, [&](const GroupCut& cut) {
    if (cut.fp / cut.neg > max_fpr) return false;  // this group would exceed the budget
    best = cut.threshold;
    return true;
  });
  if (!both) return std::nullopt;
  return operating_point(scores, positive, best ? *best : *std::max_element(scores.begin(), scores.end()), weights);
}

std::optional<OperatingPoint> threshold_for_recall(const std::vector<double>& scores,
                                                   const std::vector<char>& positive, double min_recall,
                                                   const std::vector<float>& weights) {
  std::optional<double> found;
  const bool both = walk_score_groups(scores, positive, weights, [&](const GroupCut& cut) {
    found = cut.threshold;  // the lowest cut so far; kept when the recall is never reached
    return cut.tp / cut.pos < min_recall;
  });
  if (!both) return std::nullopt;
  return operating_point(scores, positive, *found, weights);
}

}  // namespace pegasos
