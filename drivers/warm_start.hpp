// Warm starts (`init_model`, `train --init-model OLD`): reading the old model,
// checking it against the configuration and the data, and the solver state
// it hands over (core/training.hpp WarmStart; core/warm_start.hpp and
// core/engine.hpp for what each solver does with it; README § Warm start).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/dataset.hpp"
#include "core/model.hpp"
#include "core/training.hpp"
#include "drivers/config.hpp"

namespace pegasos {

// Read config.init_model into config.init (a kernel model is refused) and
// check it fits the data's kind before the data is read: raw text needs a
// text model, numeric data a numeric one, and `features` (if given) must be
// the model's. Returns the model's fitted featurizer (null for numeric), which
// the new data is featurised with. Throws InputError / ConfigError.
nlohmann::json load_init_model(TrainConfig& config, bool raw_text);

// The old model against the data (labels prepared): objective, bias mode,
// normalize, classes (the data's labels are put in the model's order) and
// outputs; numeric data may not use a feature beyond the model's dimension
// and is given the model's dimension otherwise. InputError naming the model
// file and the field on a mismatch.
void check_init_model(const TrainConfig& config, const Model& old, Dataset& train);

// The step of Pegasos' schedule a model's weights stand at: training.schedule_steps,
// else its iterations (per class for one-vs-all); at least 1.
std::uint64_t schedule_steps_of(const Model& model);

// Per class of `train`, the factor that carries the old model's stored dual
// fractions (α over the row's box bound, core/warm_start.hpp box_fractions)
// to this run's box bounds so that each row keeps its coefficient in w:
// binary w = (1/(λn)) Σ α_i y_i x̃_i with α_i ∈ [0, c_i], Crammer–Singer
// α_i ∈ [−c_i/(λn), c_i/(λn)] with W = Σ α_i x̃_i; both give the factor
// (c_old/c_new)·(λ_new n_new)/(λ_old n_old) for a row of the class (its
// sample weight cancels). Empty (keep the fractions) when the old model does
// not record its λ, examples or class costs. `cost`: this run's class costs.
std::vector<double> dual_carry_factors(const Model& old, double lambda, const Dataset& train,
                                       const std::vector<double>& cost);

// The solver state of output `k` of the old model (k < 0: every output, as
// stored), in the data's dimension (check_init_model made them equal).
// `entries` (optional): dual_entries(*old.duals, train), computed once for
// the warm starts of all outputs (else the rows are hashed again).
// `carry` (optional): dual_carry_factors; each stored fraction f of a row of
// class l becomes f·carry[l]: the row's coefficient is kept. It may leave
// [−1, 1]; core/warm_start.hpp alpha_from_stored clips it into this run's
// box (binary: clip_stored_alpha, which keeps the intercept; README § Warm
// start).
WarmStart warm_start_of(const Model& old, const Dataset& train, int k = -1,
                        const std::vector<std::ptrdiff_t>* entries = nullptr,
                        const std::vector<double>* carry = nullptr);

// Record the warm start in a trained model's summary: where from, and the
// schedule step its weights now stand at (the old one plus this run's steps
// per output problem, `problems` = K for one-vs-all, else 1).
void mark_warm_started(Model& model, const TrainConfig& config, const Model& old, std::size_t problems);

}  // namespace pegasos
