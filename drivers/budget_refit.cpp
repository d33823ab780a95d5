#include "drivers/budget_refit.hpp"

#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/errors.hpp"
#include "core/feature_map.hpp"
#include "drivers/registry.hpp"
#include "io/model_sections_json.hpp"
#include "kernel/kernel_trainer.hpp"

namespace pegasos {
namespace {

// The support vectors as the rows of a Dataset in `train`'s feature space.
Dataset support_vector_rows(const KernelModel& model, const Dataset& train) {
  Dataset rows;
  rows.dimension = train.dimension;
  rows.source = train.source + ": budget_refit";
  for (std::size_t s = 0; s < model.num_support_vectors(); ++s) {
    const RowView x = model.support_vector(s);
    rows.append_row(std::span<const std::uint32_t>(x.indices, x.nnz), std::span<const float>(x.values, x.nnz), -1);
  }
  rows.dimension = train.dimension;  // append_row may have set it from the rows
  return rows;
}

// The linear problem on the mapped rows: the kernel run's λ, seed, tolerance
// and intercept, the objective the kernel trainer solves (hinge, or
// one-vs-all), the default solver with automatic stopping.
TrainConfig linear_config(const TrainConfig& config, std::size_t outputs, bool intercept) {
  TrainConfig c;
  c.objective = objective_row(outputs == 1 ? ObjectiveId::kHinge : ObjectiveId::kOva);
  c.engine.lambda = config.engine.lambda;
  c.engine.solver = Solver::kAuto;
  c.engine.seed = config.engine.seed;
  c.engine.tolerance = config.engine.tolerance;
  c.engine.bias = intercept ? BiasMode::kFeature : BiasMode::kNone;
  c.threads = config.threads;
  c.keep_duals = false;
  c.read = config.read;
  c.resolved = config.resolved;  // read by the packaging; the linear model itself is not written
  return c;
}

void record(KernelModel& model, const nlohmann::json& what) {
  nlohmann::json extra = model.training.extra.empty() ? nlohmann::json::object() : json_object_of(model.training.extra);
  extra["budget_refit"] = what;
  model.training.extra = json_object_text(extra);
}

}  // namespace

void refit_budget(const TrainConfig& config, const Dataset& train, KernelModel& model, std::uint64_t max_entries) {
  if (model.kernel.type != KernelType::kRbf) throw ConfigError("budget_refit: needs the rbf kernel");
  const std::size_t m = model.num_support_vectors(), K = model.columns(), n = train.size();
  if (m == 0) return;
  if (std::uint64_t{n} * m > max_entries) {
    record(model, {{"skipped", std::to_string(n) + " rows × " + std::to_string(m) + " support vectors is more than the " +
                                   std::to_string(max_entries) + " mapped values the refit may hold; use fewer rows or " +
                                   "support vectors, or budget_refit false"}});
    return;
  }
  const FeatureMap map = fit_nystroem_on_rows(support_vector_rows(model, train), model.kernel.gamma);
  const Dataset mapped = map.map(train);
  const bool intercept = !model.intercept.empty();
  const Model linear = train_model(linear_config(config, K, intercept), mapped, {});
  // β_c = Pᵀ v_c (P = L^{-1}, m × m, row-major); a_sc = β_sc / scale.
  const double scale = model.decision_scale();
  std::vector<double> coefficients(m * K, 0.0);
  for (std::size_t r = 0; r < m; ++r) {
    const float* p = &map.projection[r * m];
    for (std::size_t c = 0; c < K; ++c) {
      const double v = linear.weights[r * K + c];
      if (v == 0.0) continue;
      for (std::size_t s = 0; s <= r; ++s) coefficients[s * K + c] += static_cast<double>(p[s]) * v;
    }
  }
  for (double& a : coefficients) a /= scale;
  model.coefficients = std::move(coefficients);
  if (intercept) model.intercept = linear.bias;
  model.training.regularizer = model.regularizer();
  model.training.objective = kernel_model_objective(model, train);
  nlohmann::json what = {{"solver", linear.training.solver.value_or("")},
                         {"features", "Nyström features of the " + std::to_string(m) + " support vectors"},
                         {"converged", linear.training.converged.value_or(false)}};
  if (linear.training.epochs) what["passes"] = *linear.training.epochs;
  if (linear.training.relative_gap) what["relative_gap"] = *linear.training.relative_gap;
  if (linear.training.objective) what["objective_on_features"] = *linear.training.objective;
  record(model, what);
}

}  // namespace pegasos
