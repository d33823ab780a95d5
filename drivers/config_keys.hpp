// The table of configuration keys behind config_keys() (drivers/config.hpp)
// and the objective predicates its help texts and drivers/config.cpp share.
#pragma once

#include "core/objective_table.hpp"

namespace pegasos::config_keys_detail {

inline bool uses_class_weights(const ObjectiveRow& row) { return row.class_weights != ClassWeights::kUnused; }
inline bool is_kernel(const ObjectiveRow& row) { return row.kernel; }
inline bool needs_source(const ObjectiveRow& row) { return row.needs_source_model; }

// The settings only kernel_hinge uses: an error with another objective
// (drivers/config.cpp), left out of a linear model's inspect text.
inline constexpr const char* kKernelOnlyKeys[] = {"kernel", "max_support_vectors", "budget_maintenance",
                                                  "budget_refit", "kernel_cache_mb", "multiclass"};

}  // namespace pegasos::config_keys_detail
