// Kernel Pegasos: the α-count algorithm (Shalev-Shwartz et al. 2011, Sec. 4,
// Fig. 3, with mini-batches; derivation in objectives/kernel_hinge.hpp).
//
// Schedule: the linear engine's (core/engine.hpp) — λ, iterations / epochs,
// batch_size, seed, and the same Sampler seeded with derive_seed(seed, 1), so
// with the linear kernel the sequence of examples, every violation decision
// and the final decision values equal the linear engine's run with output =
// last, projection = false, bias = none (to rounding, ~1e-12 relative).
// Uniform sampling (with replacement) is the paper's and the recommended
// setting (EngineSettings defaults to permutation for the linear engine, so
// the driver sets uniform for kernel_hinge unless the user chose a sampler);
// the other samplers of the engine work too. Without iterations or
// epochs the trainer runs kDefaultKernelEpochs epochs (no automatic stopping:
// estimating the objective would cost an extra pass of n·|S| kernel values).
// Not used: projection, output (always the last iterate), average_gamma,
// bias (KernelSettings::intercept says whether k + 1 is used), tolerance /
// max_epochs / stop_sample (the config layer refuses non-default values of
// those settings for kernel_hinge; kernel/kernel_sdca.hpp is the solver
// with a certified stop).
//
// Parameter store: the support set S = rows with a non-zero count, kept as a
// list in order of entry (with a contiguous copy of the rows, so the scan
// reads memory sequentially) and one coefficient a_jc = α_jc y_jc per output.
// Step t (batch A_t): for each j ∈ A_t the kernel row k(x_i, x_j), i ∈ S, then
// raw_c = Σ_i a_ic k(x_i, x_j) by combine_expansion (kernel/kernel_model.hpp):
// fixed blocks of support vectors, partial sums added in block order, so the
// result is independent of the thread count and bit-identical to what the
// saved model computes. Kernel values are evaluated in parallel (TBB, blocks
// of support vectors) when there is enough work. All violators of the batch
// are then counted (all judged with the same α). Cost per step
// O(k · |S| · nnz) without the cache.
//
// Kernel cache: the support list only grows (without a budget), so the kernel
// row of an example stays valid as a prefix; a revisit evaluates only the
// support vectors added since. Rows are cached up to cache_megabytes (first
// come, first served, deterministic). On Fashion-MNIST (10k rows, RBF, 5
// epochs) it cuts kernel evaluations from 1.80e8 to 4.61e7 and the training
// time from 39 s to 15 s, for 0.4 GB of cache.
// Memory is otherwise O(|S| · (nnz + K)) beyond the data.
//
// Multiclass (one-vs-all): the K binary problems run in lock-step over ONE
// sampled sequence. One kernel evaluation k(x_i, x_j) per support vector of
// the union of the K support sets then serves every class (K multiply-adds
// per evaluation) instead of K separate runs each evaluating its own support
// set. On Fashion-MNIST (10 classes) the union holds 4961 rows where the 10
// per-class sets hold 10123 together: half the kernel evaluations of
// independent runs. Parallelism comes from the blocks of support vectors, not
// from the classes. Because the classes share the stream, class c's output is the
// binary run "c vs rest" with the base seed (the linear OvA trainer derives
// one seed per class instead; here there is one stream, nothing to derive).
//
// Budget (max_support_vectors = B > 0): when |S| = B and a new example must
// enter, the support vector m with the smallest Σ_c |a_ic| (ties: the oldest
// entry) is merged with a partner of its class into one point
// (merge_budget, the RBF kernel's default: kernel/budget_merge.hpp), or
// removed and its contribution dropped (Wang, Crammer & Vucetic, JMLR 2012,
// "budgeted SGD" by merging / by removal); the common factor 1/(λtk) is kept.
// A budget disables the cache (every eviction would invalidate it) but bounds
// a step to B kernel evaluations and prediction to B per row. Removal costs
// much accuracy, merging little: Fashion-MNIST 10k, γ = 0.03, λ = 1e-5, 5
// epochs (unbudgeted: 4961 support vectors, 86.0%), B = 1000: merging 84.7%,
// removal 53.2% (sampling uniform: 85.1% and 62.7%). The driver then re-solves
// the budget's coefficients exactly on its span (`budget_refit`, RBF's
// default: drivers/budget_refit.hpp; 86.1–86.4% over seeds 1–3), so this
// trainer's coefficients are the refit's starting points only in that they
// choose the support vectors.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/dataset.hpp"
#include "core/engine.hpp"
#include "kernel/kernel_model.hpp"
#include "objectives/kernels.hpp"

namespace pegasos {

// Epochs when neither iterations nor epochs is given. Measured on
// Fashion-MNIST (bench/kernel_bench.py, RBF γ = 0.03, λ = 1e-5, 10k rows):
// test accuracy 85.2% after 2 epochs, 86.0% after 5, 86.3% after 10 (LIBSVM
// 86.6%); with the kernel cache the later epochs are cheap, but the support
// set (and prediction cost) keeps growing: 3672, 4961, 5625 rows.
inline constexpr double kDefaultKernelEpochs = 5.0;

struct KernelSettings {
  KernelParams kernel;                     // gamma 0 = 1/dimension (LIBSVM's default)
  std::uint64_t max_support_vectors = 0;   // 0 = no budget
  // A full budget merges two support vectors into one (RBF only,
  // kernel/budget_merge.hpp) instead of removing the weakest.
  bool merge_budget = false;
  // After a budgeted run (RBF only), re-solve the coefficients of the
  // support vectors exactly on their span (drivers/budget_refit.hpp); the
  // trainer itself does not read it.
  bool budget_refit = false;
  // Cache of kernel rows k(x_s, x_j) for revisited examples (not used with a
  // budget). Same model with any cap; a larger cap only saves evaluations.
  double cache_megabytes = 1024.0;
  // The kernel + 1 trick (`bias: feature`): k'(x, x') = k(x, x') + 1, the
  // weight of a regularised constant feature 1 in feature space. The model
  // then stores the intercept b_c = scale · Σ_s a_sc (kernel_model.hpp).
  bool intercept = false;
  // `bias: unregularized` (kernel SDCA only, automatic stopping): LIBSVM's
  // intercept, outside the regulariser; the dual keeps Σ_i α_i y_i = 0.
  bool unregularized_intercept = false;
  // Multiclass by one-vs-one (kernel SDCA with the unregularized intercept:
  // LIBSVM's scheme): a binary problem per pair of classes on their rows, at
  // the same C = 1/(λn) (λ_p = λn/n_p), the model voting (KernelModel).
  bool one_vs_one = false;
  // Compute the training objective Σ_c λ/2‖w_c‖² + mean hinge at the end
  // (n·|S| kernel values, mostly from the cache).
  bool compute_objective = true;
};

// Train a kernel SVM (binary when data has 2 classes, else one-vs-all).
// Requires data.size() > 0, ≥ 2 classes, lambda > 0, batch_size ≥ 1.
// Guarantees: same data + settings + seed ⇒ identical model for any number of
// threads. Throws InputError when the expansion becomes non-finite (a
// polynomial kernel overflowing). `on_epoch` (optional) is called after every
// epoch (no objective); returning false stops.
// Fills model.training with examples, nnz, iterations, epochs,
// support_vectors, evictions, kernel_evaluations and (if computed) objective
// and regularizer; model.settings and model.data are left for the caller
// (the driver stores the resolved config and the reader settings there).
// Cost O(T · k · |S| · nnz) without cache hits; memory O(n + |S|·(nnz + K))
// plus the cache.
KernelModel train_kernel(const Dataset& data, const KernelSettings& kernel, const EngineSettings& engine,
                         const std::function<bool(const EpochInfo&)>& on_epoch = {});

// Σ_c [λ/2 ‖w_c‖² + mean hinge of output c] on `data` (labels expressed in
// the model's classes; rows with label −1 skipped); one-vs-one: Σ over pairs
// of λ/2 ‖w_p‖² plus (1/n) Σ_i the hinge of every pair row i's class is in. The regulariser comes
// from model.training.regularizer when present, else model.regularizer().
double kernel_model_objective(const KernelModel& model, const Dataset& data);

}  // namespace pegasos
