// Which solver trains a problem: Pegasos (core/engine.hpp) or dual coordinate
// ascent (core/sdca.hpp), by EngineSettings::solver.
#pragma once

#include <functional>

#include "core/engine.hpp"
#include "core/sdca.hpp"

namespace pegasos {

// "auto" picks SDCA below this λn. SGD needs on the order of 1/(λn·ε)
// epochs for a relative gap ε, dual coordinate ascent (with shrinking) few
// passes when λn is small. Measured on Fashion-MNIST class 0 vs rest (unit
// rows; bench/README.md): λn = 5.4 and 6, SDCA 1.4-1.5× faster with a smaller
// gap; λn = 54, Pegasos 3.5× faster.
inline constexpr double kAutoSdcaBelowLambdaN = 10.0;

// True when `s` selects SDCA for n examples of an objective that has a dual
// (HingeDual); the unregularised bias has no SDCA form here.
inline bool use_sdca(const EngineSettings& s, std::size_t n) {
  switch (s.solver) {
    case Solver::kSdca:
      return true;
    case Solver::kPegasos:
      return false;
    case Solver::kAuto:
      return s.bias != BiasMode::kUnregularized && s.lambda * static_cast<double>(n) < kAutoSdcaBelowLambdaN;
  }
  return false;
}

template <Objective O>
TrainResult train_with_solver(const Dataset& data, const O& objective, const EngineSettings& s,
                              const std::function<bool(const EpochInfo&)>& on_epoch = {}) {
  if constexpr (HingeDual<O>) {
    if (use_sdca(s, data.size())) return train_sdca(data, objective, s, on_epoch);
  } else if constexpr (MulticlassDual<O>) {
    if (use_sdca(s, data.size())) return train_sdca_multiclass(data, objective, s, on_epoch);
  } else {
    if (s.solver == Solver::kSdca) throw ConfigError("solver: sdca trains the hinge objectives only");
  }
  return train(data, objective, s, on_epoch);
}

}  // namespace pegasos
