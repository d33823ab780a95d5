// One-vs-all: K independent binary problems ("class k vs the rest") trained in
// parallel with TBB over one shared dataset. Each problem sees the labels only
// through its objective (label == k ⇒ +1), so nothing is copied per class.
//
// Determinism: class k's random stream is derived from (seed, k) before going
// parallel, and each result goes into its own preallocated slot, so the model
// is bit-identical for any thread count (cf. scikit-learn's _fit_multiclass,
// which draws per-class seeds up front, and LIBLINEAR's train()).
#pragma once

#include <functional>
#include <string_view>
#include <vector>

#include "core/compact_features.hpp"
#include "core/parallel.hpp"
#include "core/solver.hpp"
#include "core/random.hpp"

namespace pegasos {

// make_objective(k) returns the binary objective for class k.
// on_class_done(k, result) is called (from a worker thread) as each finishes
// (where the features are compacted, core/compact_features.hpp, with the
// class's weights in the compact space; the returned result has them back).
// `warm` (empty, or one per class): each class's warm start.
template <class MakeObjective>
TrainResult train_one_vs_all(const Dataset& data, int classes, const EngineSettings& settings,
                             MakeObjective make_objective,
                             const std::function<void(int, const TrainResult&)>& on_class_done = {},
                             const std::vector<WarmStart>& warm = {}) {
  const std::size_t K = static_cast<std::size_t>(classes);
  // Compacted once for all classes (core/compact_features.hpp).
  std::vector<const WarmStart*> warms;
  for (const WarmStart& w : warm) warms.push_back(&w);
  if (std::optional<TrainResult> r = CompactFeatures::train_compacted(
          data, settings, {1, false, use_sdca(settings)}, warms, [&](const Dataset& d, const EngineSettings& inner, const std::vector<WarmStart>& cw) {
            return train_one_vs_all(d, classes, inner, make_objective, on_class_done, cw);
          })) {
    return std::move(*r);
  }
  std::vector<TrainResult> per_class(K);
  std::vector<EngineSettings> per_settings(K, settings);
  for (std::size_t k = 0; k < K; ++k) {
    per_settings[k].seed = derive_seed(settings.seed, k);
    per_settings[k].compact_features = false;  // decided above for every class
  }
  // Tiny problems (a pass over every class reads fewer than kInlineWork
  // non-zeros: a few hundred rows) train the classes one after another, as
  // starting TBB's threads costs more than their whole training.
  constexpr std::uint64_t kInlineWork = 32768;
  parallel_for_index(K, [&](std::size_t k) {
    per_class[k] = train_with_solver(data, make_objective(static_cast<int>(k)), per_settings[k], {},
                                     warm.empty() ? nullptr : &warm[k]);
    if (on_class_done) on_class_done(static_cast<int>(k), per_class[k]);
  }, data.nnz() * K <= kInlineWork ? K : 1);

  TrainResult out;
  out.dimension = data.dimension;
  out.outputs = classes;
  out.weights.assign(static_cast<std::size_t>(data.dimension) * K, 0.0);
  out.bias.assign(K, 0.0);
  out.converged = true;
  out.stopped_by = StopReason::kTolerance;
  out.dual_objective = 0.0;
  // The same choice for every class, except that Pegasos may hand some
  // classes over to SDCA (core/solver.hpp): then the model says so.
  out.solver = per_class.empty() ? "pegasos" : per_class[0].solver;
  for (const TrainResult& r : per_class) {
    if (std::string_view(r.solver) == "pegasos+sdca") out.solver = r.solver;
  }
  for (std::size_t k = 0; k < K; ++k) {
    const TrainResult& r = per_class[k];
    for (std::size_t j = 0; j < data.dimension; ++j) out.weights[j * K + k] = r.weights[j];
    out.bias[k] = r.bias[0];
    out.iterations += r.iterations;
    out.epochs = std::max(out.epochs, r.epochs);
    out.converged = out.converged && r.converged;
    // Why the slowest class stopped: anything but the certificate wins.
    if (r.stopped_by != StopReason::kTolerance && out.stopped_by == StopReason::kTolerance) out.stopped_by = r.stopped_by;
    out.objective += r.objective;  // the OvA objective is the sum of the K binary ones
    out.dual_objective += r.dual_objective;  // and its dual bound the sum of theirs
  }
  // The dual variables' box fractions, n × K (every class by SDCA, else none).
  const std::size_t n = data.size();
  bool all_dual = true;
  for (const TrainResult& r : per_class) all_dual = all_dual && r.alpha_fraction.size() == n;
  if (all_dual) {
    out.alpha_fraction.assign(n * K, 0.0);
    for (std::size_t k = 0; k < K; ++k) {
      for (std::size_t i = 0; i < n; ++i) out.alpha_fraction[i * K + k] = per_class[k].alpha_fraction[i];
    }
  }
  return out;
}

}  // namespace pegasos
