#include "core/calibration.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/dataset.hpp"

namespace pegasos {
namespace {

// −(t log p + (1 − t) log(1 − p)) with p = 1/(1 + e^z), without overflow.
double loss_term(double z, double t) {
  return z >= 0 ? t * z + std::log1p(std::exp(-z)) : (t - 1.0) * z + std::log1p(std::exp(z));
}

// p = 1/(1 + e^z) and q = 1 − p, without overflow.
void sigmoid_pair(double z, double& p, double& q) {
  const double e = std::exp(-std::abs(z));
  const double small = e / (1.0 + e), big = 1.0 / (1.0 + e);
  p = z >= 0 ? small : big;
  q = z >= 0 ? big : small;
}

struct Targets {
  double positive = 0, negative = 0;
};

// The (weighted) counts of positives and negatives.
void class_totals(const std::vector<char>& positive, const std::vector<float>& weights, double& np, double& nn) {
  np = nn = 0;
  for (std::size_t i = 0; i < positive.size(); ++i) (positive[i] ? np : nn) += sample_weight_at(weights, i);
}

Targets smoothed_targets(const std::vector<char>& positive, const std::vector<float>& weights) {
  double np = 0, nn = 0;
  class_totals(positive, weights, np, nn);
  return {(np + 1.0) / (np + 2.0), 1.0 / (nn + 2.0)};
}

double loss(double a, double b, const std::vector<double>& s, const std::vector<char>& positive,
            const std::vector<float>& weights, Targets t) {
  double sum = 0;
  for (std::size_t i = 0; i < s.size(); ++i)
    sum += sample_weight_at(weights, i) * loss_term(a * s[i] + b, positive[i] ? t.positive : t.negative);
  return sum;
}

}  // namespace

double Platt::probability(double score) const {
  double p = 0, q = 0;
  sigmoid_pair(a * score + b, p, q);
  return p;
}

double platt_loss(const Platt& p, const std::vector<double>& scores, const std::vector<char>& positive,
                  const std::vector<float>& weights) {
  check_sample_weight_count(weights, scores.size(), "platt_loss");
  return loss(p.a, p.b, scores, positive, weights, smoothed_targets(positive, weights));
}

Platt platt_fit(const std::vector<double>& scores, const std::vector<char>& positive,
                const std::vector<float>& weights) {
  if (scores.size() != positive.size()) throw std::invalid_argument("platt_fit: scores and labels differ in length");
  check_sample_weight_count(weights, scores.size(), "platt_fit");
  double np = 0, nn = 0;
  class_totals(positive, weights, np, nn);
  if (!(np > 0) || !(nn > 0)) throw std::invalid_argument("platt_fit: needs examples of both classes");
  const Targets t = smoothed_targets(positive, weights);
  double a = 0.0, b = std::log((nn + 1.0) / (np + 1.0));
  double value = loss(a, b, scores, positive, weights, t);
  constexpr double kSigma = 1e-12, kEps = 1e-10, kMinStep = 1e-10;
  for (int iter = 0; iter < 100; ++iter) {
    double g1 = 0, g2 = 0, h11 = kSigma, h22 = kSigma, h21 = 0;
    for (std::size_t i = 0; i < scores.size(); ++i) {
      double p = 0, q = 0;
      sigmoid_pair(a * scores[i] + b, p, q);
      const double w = sample_weight_at(weights, i);
      const double d2 = w * p * q, d1 = w * ((positive[i] ? t.positive : t.negative) - p), f = scores[i];
      g1 += f * d1;
      g2 += d1;
      h11 += f * f * d2;
      h22 += d2;
      h21 += f * d2;
    }
    if (std::abs(g1) < kEps && std::abs(g2) < kEps) break;
    const double det = h11 * h22 - h21 * h21;
    const double da = -(h22 * g1 - h21 * g2) / det, db = -(-h21 * g1 + h11 * g2) / det;
    const double gd = g1 * da + g2 * db;
    double step = 1.0;
    bool moved = false;
    for (; step >= kMinStep; step /= 2.0) {
      const double na = a + step * da, nb = b + step * db, nv = loss(na, nb, scores, positive, weights, t);
      if (nv < value + 1e-4 * step * gd) {
        a = na;
        b = nb;
        value = nv;
        moved = true;
        break;
      }
    }
    if (!moved) break;  // no step decreases the loss: at the optimum within rounding
  }
  return {a, b};
}

void calibrated_probabilities(const std::vector<Platt>& sigmoids, const double* scores, int outputs, double* out) {
  if (outputs == 1) {
    out[1] = sigmoids[0].probability(scores[0]);
    out[0] = 1.0 - out[1];
    return;
  }
  double sum = 0;
  for (int k = 0; k < outputs; ++k) sum += out[k] = sigmoids[static_cast<std::size_t>(k)].probability(scores[k]);
  if (!(sum > 0)) {  // every sigmoid underflowed: the largest score takes it all
    int best = 0;
    for (int k = 1; k < outputs; ++k) best = scores[k] > scores[best] ? k : best;
    for (int k = 0; k < outputs; ++k) out[k] = k == best ? 1.0 : 0.0;
    return;
  }
  for (int k = 0; k < outputs; ++k) out[k] /= sum;
}

double log_loss(const std::vector<double>& probabilities, const std::vector<int>& truth, std::size_t classes,
                const std::vector<float>& weights) {
  check_sample_weight_count(weights, truth.size(), "log_loss");
  if (truth.empty()) return 0.0;
  double sum = 0, total = 0;
  for (std::size_t i = 0; i < truth.size(); ++i) {
    const double p = probabilities[i * classes + static_cast<std::size_t>(truth[i])];
    const double w = sample_weight_at(weights, i);
    sum -= w * std::log(std::clamp(p, 1e-15, 1.0));
    total += w;
  }
  return sum / (weights.empty() ? static_cast<double>(truth.size()) : total);
}

double brier_score(const std::vector<double>& probabilities, const std::vector<int>& truth, std::size_t classes,
                   const std::vector<float>& weights) {
  check_sample_weight_count(weights, truth.size(), "brier_score");
  if (truth.empty()) return 0.0;
  double sum = 0, total = 0;
  for (std::size_t i = 0; i < truth.size(); ++i) {
    const double w = sample_weight_at(weights, i);
    total += w;
    if (classes == 2) {
      const double d = probabilities[i * 2 + 1] - (truth[i] == 1 ? 1.0 : 0.0);
      sum += w * d * d;
      continue;
    }
    for (std::size_t k = 0; k < classes; ++k) {
      const double d = probabilities[i * classes + k] - (static_cast<std::size_t>(truth[i]) == k ? 1.0 : 0.0);
      sum += w * d * d;
    }
  }
  return sum / (weights.empty() ? static_cast<double>(truth.size()) : total);
}

}  // namespace pegasos
