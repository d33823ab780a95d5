// Which solver trains a problem, and how a run is certified.
//
// Pegasos (core/engine.hpp) and dual coordinate ascent (SDCA, core/sdca.hpp)
// both train the hinge objectives. A claim of convergence is a certificate:
// a dual-feasible point α whose dual value D(α) ≤ P* bounds the gap of the
// returned weights, P(w) − P* ≤ P(w) − D(α) ≤ tolerance·P(w).
//   - SDCA carries its dual point along and stops on that gap.
//   - Pegasos keeps the dual coefficients of its iterates (the weights are
//     Σ_i A_i x̃_i, PegasosHooks::track_dual). When its progress estimate
//     fires, the dual point they define is improved by a few exact dual
//     coordinate passes, and the run stops only if the gap is within the
//     tolerance; otherwise it goes on (the estimate was fooled by a plateau).
// A run that ends uncertified (a cap, a fixed budget) still reports its gap
// when a dual point exists: TrainResult::dual_objective.
#pragma once

#include <functional>
#include <optional>
#include <utility>

#include "core/compact_features.hpp"
#include "core/engine.hpp"
#include "core/sdca.hpp"
#include "core/warm_start.hpp"

namespace pegasos {

// `auto` takes SDCA for every objective that has a dual (the hinge family,
// bias none or feature): measured (bench/README.md, "Solver choice") it
// certifies a 5e-4 gap as fast as or faster than Pegasos everywhere we
// looked, from κ = mean ‖x̃‖²/(λn) = 0.0037 (540k rows, λn = 540: SDCA 3.4 s,
// Pegasos then SDCA 4.0 s) to κ = 3400 (C = 100 on unscaled UCI data), and
// only it certifies small λn at all. The config layer turns `auto` into
// Pegasos when a Pegasos-only setting has a non-default value.
inline bool use_sdca(const EngineSettings& s) {
  switch (s.solver) {
    case Solver::kSdca:
      return true;
    case Solver::kPegasos:
      return false;
    case Solver::kAuto:
      return s.bias != BiasMode::kUnregularized;  // no dual form here
  }
  return false;
}

// Exact dual passes that improve the dual point at each Pegasos check.
inline constexpr double kCertifyPasses = 2.0;

namespace detail {

template <class O>
TrainResult train_dual(const Dataset& data, const O& objective, const EngineSettings& s,
                       const std::function<bool(const EpochInfo&)>& on_epoch, const std::vector<double>* warm,
                       const WarmStart* start = nullptr) {
  if constexpr (HingeDual<O>) {
    return train_sdca(data, objective, s, on_epoch, warm, start);
  } else {
    return train_sdca_multiclass(data, objective, s, on_epoch, warm, start);
  }
}

// A dual run of kCertifyPasses passes from `alpha`: its dual_objective
// bounds P*, and each exact coordinate step only raises it.
template <class O>
TrainResult improve_dual_point(const Dataset& data, const O& objective, const EngineSettings& s,
                               const std::vector<double>& alpha) {
  EngineSettings few = s;
  few.iterations = 0;
  few.epochs = kCertifyPasses;
  few.trace_objective = false;
  return train_dual(data, objective, few, {}, &alpha);
}

// Pegasos, certified by a dual point started from its iterates' dual
// coefficients: the run stops when the progress estimate fires and the gap
// to that point is within the tolerance, and goes on otherwise.
template <class O>
TrainResult train_pegasos_certified(const Dataset& data, const O& objective, const EngineSettings& s,
                                    const std::function<bool(const EpochInfo&)>& on_epoch, const WarmStart* warm) {
  // Any dual-feasible point bounds P*, whatever the primal iterate: the
  // dual point is started once from Pegasos' coefficients and then improved
  // further at each check, so its passes add up instead of starting over.
  std::vector<double> alpha;
  double dual = -std::numeric_limits<double>::infinity();
  auto improve = [&](const std::vector<double>& A) {
    if (alpha.empty()) alpha = alpha_from_coefficients(data, objective, s, A);
    TrainResult d = improve_dual_point(data, objective, s, alpha);
    dual = d.dual_objective;
    alpha = std::move(d.alpha);
  };
  PegasosHooks hooks;
  hooks.track_dual = true;
  // A warm start's dual mirror starts at the dual point of its margins
  // (core/warm_start.hpp), not at 0: W = w_old is no combination of rows.
  WarmStart started;
  if (warm != nullptr) {
    started = *warm;
    started.dual_coefficients = coefficients_from_alpha(data, objective, s.lambda, warm_alpha(data, objective, s, *warm));
    hooks.warm = &started;
  }
  hooks.at_estimate = [&](const std::vector<double>& w, const std::vector<double>& bias, const std::vector<double>& A) {
    const double primal = primal_objective(data, objective, s, w, bias);
    improve(A);
    return primal - dual <= s.tolerance * std::abs(primal) ? EstimateVerdict::kConverged : EstimateVerdict::kContinue;
  };
  TrainResult r = train(data, objective, s, on_epoch, hooks);
  if (r.converged) {
    r.dual_objective = dual;
  } else if (r.stopped_by != StopReason::kCallback) {
    // A fixed budget or the cap: not claimed, but the gap is still reported
    // (and a budget that happens to reach the tolerance is certified).
    improve(r.dual_coefficients);
    r.dual_objective = dual;
    r.converged = r.relative_gap() <= s.tolerance;
  }
  r.dual_coefficients.clear();
  r.dual_coefficients.shrink_to_fit();
  return r;
}

}  // namespace detail

// Train `objective` with the solver `s` selects. Objectives with a dual
// (HingeDual, MulticlassDual) get a certificate; the others (and the
// unregularised bias, which has no dual form here) train with Pegasos and
// never claim convergence.
//
// `warm` (optional): continue from an earlier model's state
// (core/warm_start.hpp): SDCA from the dual point of its margins, Pegasos
// from its weights at its step count.
template <Objective O>
TrainResult train_with_solver(const Dataset& data, const O& objective, const EngineSettings& s,
                              const std::function<bool(const EpochInfo&)>& on_epoch = {},
                              const WarmStart* warm = nullptr) {
  if constexpr (!(HingeDual<O> || MulticlassDual<O>)) {
    if (s.solver == Solver::kSdca) throw ConfigError("solver: sdca trains the hinge objectives only");
  }
  // Every solver in the feature space the data uses (core/compact_features.hpp;
  // Pegasos with its checks scheduled by the data's dimension).
  std::vector<const WarmStart*> warms;
  if (warm != nullptr) warms.push_back(warm);
  const CompactFeatures::Shape shape{static_cast<std::size_t>(objective.num_outputs()), MulticlassDual<O>, use_sdca(s)};
  if (std::optional<TrainResult> r = CompactFeatures::train_compacted(
          data, s, shape, warms, [&](const Dataset& d, const EngineSettings& inner, const std::vector<WarmStart>& cw) {
            return train_with_solver(d, objective, inner, CompactFeatures::without_weights(on_epoch),
                                     cw.empty() ? nullptr : &cw[0]);
          })) {
    return std::move(*r);
  }
  if constexpr (HingeDual<O> || MulticlassDual<O>) {
    if (use_sdca(s)) {
      std::vector<double> alpha;
      if (warm != nullptr) alpha = warm_alpha(data, objective, s, *warm);
      TrainResult r = detail::train_dual(data, objective, s, on_epoch, warm != nullptr ? &alpha : nullptr, warm);
      r.converged = r.relative_gap() <= s.tolerance;
      r.alpha_fraction = box_fractions(data, objective, s.lambda, r.alpha);
      return r;
    }
    if (s.bias != BiasMode::kUnregularized) return detail::train_pegasos_certified(data, objective, s, on_epoch, warm);
  }
  PegasosHooks hooks;
  hooks.warm = warm;
  return train(data, objective, s, on_epoch, hooks);
}

}  // namespace pegasos
