#include "drivers/budget_refit.hpp"

#include <algorithm>
#include <cmath>
#include <span>
#include <string>
#include <vector>

#include <Eigen/Core>
#include <nlohmann/json.hpp>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "core/errors.hpp"
#include "core/jittered_cholesky.hpp"
#include "drivers/registry.hpp"
#include "io/model_sections_json.hpp"
#include "kernel/kernel_trainer.hpp"

namespace pegasos {
namespace {

// The support vectors as the rows of a Dataset in `train`'s feature space.
Dataset support_vector_rows(const KernelModel& model, const Dataset& train) {
  Dataset rows;
  rows.source = train.source + ": budget_refit";
  for (std::size_t s = 0; s < model.num_support_vectors(); ++s) {
    const RowView x = model.support_vector(s);
    rows.append_row(std::span<const std::uint32_t>(x.indices, x.nnz), std::span<const float>(x.values, x.nnz), -1);
  }
  rows.dimension = train.dimension;  // train's feature space, not the rows' largest index + 1
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

using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// The Cholesky factor L of K_SS + εI, in double from the model's own kernel
// values (float values would lose the small eigenvalues an ill-conditioned
// support set has: UCI Glass, 40 support vectors, cond 1.7e7, refitted 8%
// above the span's optimum in float); ε = 1e-10 of a bound on λ_max.
Eigen::MatrixXd support_factor(const KernelModel& model, const Dataset& train) {
  const Dataset rows = support_vector_rows(model, train);
  const auto m = static_cast<Eigen::Index>(model.num_support_vectors());
  RowMatrix k(m, m);
  model.kernel_rows(rows, 0, rows.size(), k.data());
  return jittered_cholesky(0.5 * (k + k.transpose()), 1e-10, 8, "budget_refit: K_SS");
}

// The training rows mapped to z(x) = L^{-1} k_S(x) (computed in double,
// stored as the Dataset's floats), in fixed blocks of rows in parallel: the
// same bits for any thread count.
Dataset map_onto_span(const KernelModel& model, const Dataset& train, const Eigen::MatrixXd& L) {
  constexpr std::size_t kBlock = 256;
  const std::size_t n = train.size(), m = model.num_support_vectors();
  Dataset out = dense_rows_like(train, static_cast<std::uint32_t>(m));
  std::vector<float>& values = out.values.own();
  const std::size_t blocks = (n + kBlock - 1) / kBlock;
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, blocks, 1), [&](const tbb::blocked_range<std::size_t>& range) {
    for (std::size_t b = range.begin(); b != range.end(); ++b) {
      const std::size_t begin = b * kBlock, count = std::min(kBlock, n - begin);
      RowMatrix kb(static_cast<Eigen::Index>(count), static_cast<Eigen::Index>(m));
      model.kernel_rows(train, begin, begin + count, kb.data());
      Eigen::MatrixXd z = kb.transpose();  // m × count
      L.triangularView<Eigen::Lower>().solveInPlace(z);
      for (std::size_t r = 0; r < count; ++r) {
        for (std::size_t j = 0; j < m; ++j) {
          values[(begin + r) * m + j] = static_cast<float>(z(static_cast<Eigen::Index>(j), static_cast<Eigen::Index>(r)));
        }
      }
    }
  });
  if (!std::all_of(values.begin(), values.end(), [](float v) { return std::isfinite(v); })) {
    throw InputError(train.source + ": budget_refit: the support vectors' features are not finite (scale the data)");
  }
  return out;
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
  if (m == 0 || std::uint64_t{n} * m > max_entries) {  // the iterate stays, with its objective
    model.training.regularizer = model.regularizer();
    model.training.objective = kernel_model_objective(model, train);
    if (m == 0) return;
    record(model, {{"skipped", std::to_string(n) + " rows × " + std::to_string(m) + " support vectors is more than the " +
                                   std::to_string(max_entries) + " mapped values the refit may hold; use fewer rows or " +
                                   "support vectors, or budget_refit false"}});
    return;
  }
  // The same blocking on every machine, so the factor and the solves give the same bits.
  Eigen::setCpuCacheSizes(32 * 1024, 1024 * 1024, 8 * 1024 * 1024);
  const Eigen::MatrixXd L = support_factor(model, train);
  const Dataset mapped = map_onto_span(model, train, L);
  const bool intercept = !model.intercept.empty();
  const Model linear = train_model(linear_config(config, K, intercept), mapped, {});
  // β_c = L^{-T} v_c; a_sc = β_sc / scale.
  const double scale = model.decision_scale();
  std::vector<double> coefficients(m * K, 0.0);
  double features_regularizer = 0.0;  // λ/2 Σ_c (‖v_c‖² + b_c²)
  for (std::size_t c = 0; c < K; ++c) {
    Eigen::VectorXd v(static_cast<Eigen::Index>(m));
    for (std::size_t r = 0; r < m; ++r) v(static_cast<Eigen::Index>(r)) = linear.weights[r * K + c];
    features_regularizer += v.squaredNorm() + (intercept ? linear.bias[c] * linear.bias[c] : 0.0);
    L.transpose().triangularView<Eigen::Upper>().solveInPlace(v);
    for (std::size_t s = 0; s < m; ++s) coefficients[s * K + c] = v(static_cast<Eigen::Index>(s)) / scale;
  }
  features_regularizer *= config.engine.lambda / 2;
  model.coefficients = std::move(coefficients);
  if (intercept) model.intercept = linear.bias;
  model.training.regularizer = model.regularizer();
  model.training.objective = kernel_model_objective(model, train);
  // The certificate is the linear problem's; it holds for the kernel
  // coefficients only while the two problems agree: the regularisers (ε,
  // rounding) and the objectives within half the tolerance each.
  const double on_features = linear.training.objective.value_or(0.0), exact = *model.training.objective;
  const double tolerance = config.engine.tolerance;
  const bool agree = std::abs(*model.training.regularizer - features_regularizer) <= tolerance / 2 * exact &&
                     std::abs(exact - on_features) <= tolerance / 2 * exact;
  nlohmann::json what = {{"solver", linear.training.solver.value_or("")},
                         {"features", "Nyström features of the " + std::to_string(m) + " support vectors"},
                         {"converged", linear.training.converged.value_or(false) && agree},
                         {"objective_on_features", on_features}};
  if (linear.training.epochs) what["passes"] = *linear.training.epochs;
  if (linear.training.relative_gap) what["relative_gap"] = std::max(0.0, *linear.training.relative_gap);
  if (!agree) what["disagreement"] = "the features' objective and the kernel objective differ by more than the tolerance";
  record(model, what);
}

}  // namespace pegasos
