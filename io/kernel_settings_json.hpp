// The kernel settings of a configuration (KernelSettings, kernel/kernel_trainer.hpp)
// and the kernel block of a kernel model file, as JSON.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernel/kernel_trainer.hpp"

namespace pegasos {

// Config keys "kernel", "max_support_vectors", "budget_maintenance", "budget_refit" and "kernel_cache_mb" of a
// merged configuration object (other keys are ignored here; absent or null
// keys take their defaults).
//   "kernel": {"type": "linear" | "polynomial" | "rbf", "gamma": number > 0 or
//              "auto", "degree": 1..100, "coef0": number}   (or just "rbf")
//   "max_support_vectors": integer ≥ 0 (0 = no budget)
//   "budget_maintenance": "merge" (the RBF kernel's default) | "remove"; only with a budget
//   "budget_refit": true (the RBF kernel's default with a budget) | false; only with a
//                   budget, true only with the RBF kernel
//   "kernel_cache_mb": number ≥ 0 (a run setting: the model does not depend on it)
// Throws ConfigError "origin: kernel/gamma: must be > 0" etc., and for a
// parameter the chosen kernel does not use given a value other than its
// default (gamma "auto", degree 3, coef0 0: what a model's settings echo).
KernelSettings kernel_settings_from_json(const nlohmann::json& config, const std::string& origin);
// {"kernel": {...}, "max_support_vectors": B, "kernel_cache_mb": M} (with a budget also
// "budget_maintenance", and with the RBF kernel "budget_refit"); gamma 0
// is written as "auto". kernel_settings_from_json reads it back.
nlohmann::json kernel_settings_to_json(const KernelSettings& settings);
// The kernel block of a model file / config: {"type", "gamma", "degree", "coef0"}.
nlohmann::json kernel_params_to_json(const KernelParams& kernel);
// Default value of the "kernel" config key (for the key table / --help).
nlohmann::json default_kernel_json();

}  // namespace pegasos
