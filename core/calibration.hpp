// Probabilities from decision values: Platt scaling (Platt 1999), fitted by
// the numerically safe Newton method of Lin, Lin & Weng (2007, "A note on
// Platt's probabilistic outputs for support vector machines"), and the scores
// that judge probabilities (log-loss, Brier). Used by `train --calibrate`
// (drivers/fit.hpp) on out-of-fold decision values; stored in the model.
#pragma once

#include <cstddef>
#include <vector>

namespace pegasos {

// P(positive | score s) = 1 / (1 + exp(a s + b)). A fit on a classifier's
// scores has a < 0 (higher score, more likely positive).
struct Platt {
  double a = 0.0, b = 0.0;
  double probability(double score) const;
};

// (a, b) minimising the cross-entropy of the sigmoid against Platt's smoothed
// targets, (N+ + 1)/(N+ + 2) for positives and 1/(N- + 2) for negatives:
// Newton steps with σ = 1e-12 added to the Hessian's diagonal and a
// backtracking (Armijo) line search, until the gradient is below 1e-10, no
// step decreases the loss, or 100 iterations. Needs both classes present
// (std::invalid_argument otherwise).
//
// `weights` (empty: all 1; else one s_i > 0 per example, as Dataset::weights)
// weigh each example's term and count it s_i times in N+ and N-, so an
// integer weight k fits as the example repeated k times.
Platt platt_fit(const std::vector<double>& scores, const std::vector<char>& positive,
                const std::vector<float>& weights = {});

// The loss platt_fit minimises (summed over the examples), for tests.
double platt_loss(const Platt& p, const std::vector<double>& scores, const std::vector<char>& positive,
                  const std::vector<float>& weights = {});

// Class probabilities from one row's scores: binary (outputs == 1) fills
// out[0] = P(class 0), out[1] = P(class 1); multiclass: each class's
// one-vs-rest sigmoid, normalised to sum to 1 (out[0..outputs)).
void calibrated_probabilities(const std::vector<Platt>& sigmoids, const double* scores, int outputs, double* out);

// Mean −log p(true class), p clipped to [1e-15, 1]; `probabilities` is rows ×
// classes, row-major. `weights` (empty: all 1) makes it the weighted mean.
double log_loss(const std::vector<double>& probabilities, const std::vector<int>& truth, std::size_t classes,
                const std::vector<float>& weights = {});
// Mean over rows of Σ_k (p_k − [k = true])² (Brier 1950); for two classes
// that is twice the usual binary score, so binary data reports
// mean (p_1 − y)² instead (classes == 2). `weights` as for log_loss.
double brier_score(const std::vector<double>& probabilities, const std::vector<int>& truth, std::size_t classes,
                   const std::vector<float>& weights = {});

}  // namespace pegasos
