// The refit of a budget (`budget_refit`, the RBF kernel's default with
// `max_support_vectors`): kernel Pegasos with a budget of B support vectors
// chooses B points (training rows and merged points) and coefficients that
// are a noisy stochastic iterate; the refit keeps the points and re-solves
// their coefficients exactly, on the span of their features φ(s):
//   min_{β, b} Σ_c [λ/2 (β_cᵀ K_SS β_c + b_c²) + (1/n) Σ_i max(0, 1 − y_ic (Σ_s β_sc k(s, x_i) + b_c))]
// (one-vs-all: a binary problem per class; b_c only with `bias: feature`,
// regularised as the kernel + 1 trick's weight is). This is a linear SVM on
// the Nyström features of the support vectors, z(x) = L^{-1} k_S(x) with
// K_SS + εI = L Lᵀ: ‖v‖² = βᵀ(K_SS + εI)β and v·z(x) = Σ_s β_s k(s, x) for
// β = L^{-T} v. The map is computed in double from the model's own kernel
// values (KernelModel::kernel_rows; ε = 1e-10 of λ_max's bound) and stored
// as floats; the float map of `kernel_approximation` loses the small
// eigenvalues of an ill-conditioned support set. The linear solver (SDCA
// under `auto`) certifies its duality gap to the tolerance (1e-3); the
// record says converged only when that holds and the features' objective
// and the kernel objective of the coefficients agree within it. The model
// keeps its B support vectors with the coefficients β (and intercepts b).
// Class-balanced sampling keeps the iterate (the refit is unweighted).
//
// What it buys (Fashion-MNIST 10k / 10k, RBF γ = 0.03, λ = 1e-5, B = 1000,
// README § Kernels): the budgeted iterate scores 0.84–0.85, the same points
// refitted about 0.86, beside LIBSVM's 0.867 with every support vector.
// Cost: the n × B kernel values (twice: the map and the objective), a
// triangular solve per block of rows, and the linear solve; memory: the mapped rows, n·B floats (and as many
// indices). Above kMaxRefitEntries mapped values the refit is skipped, and
// the model and the command say so.
#pragma once

#include <cstdint>

#include "core/dataset.hpp"
#include "drivers/config.hpp"
#include "kernel/kernel_model.hpp"

namespace pegasos {

// The largest n·B the refit maps (2^26 floats: 256 MiB of values, as much
// again in indices; Fashion-MNIST's 60k rows × 1000 support vectors fit).
inline constexpr std::uint64_t kMaxRefitEntries = std::uint64_t{1} << 26;

// Replace the coefficients (and intercepts) of `model`, a budgeted kernel
// Pegasos model trained on `train` with `config`, by the exact solution on
// its support vectors' span (above); recompute training.regularizer and
// training.objective; record what was done in training.extra ("budget_refit":
// solver, passes, relative_gap, converged, or why it was skipped). The RBF
// kernel only (a ConfigError otherwise). Same bits for any thread count.
// Above `max_entries` mapped values the model is left as it is and the
// record says why.
void refit_budget(const TrainConfig& config, const Dataset& train, KernelModel& model,
                  std::uint64_t max_entries = kMaxRefitEntries);

}  // namespace pegasos
