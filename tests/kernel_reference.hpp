// Independent pieces for testing kernel solvers: dense copies of the rows,
// the kernel written out from its definition (not objectives/kernels.hpp),
// and a binary model file's objective computed by hand from them; the check
// that a corrupt model file is refused naming its field.
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include <algorithm>
#include <string>

#include "core/dataset.hpp"
#include "core/engine.hpp"
#include "core/errors.hpp"
#include "io/kernel_model_json.hpp"
#include "kernel/kernel_trainer.hpp"
#include "objectives/kernels.hpp"

namespace pegasos::kernel_reference {

using Dense = std::vector<std::vector<double>>;

inline Dense dense_rows(const Dataset& ds) {
  Dense x(ds.size(), std::vector<double>(ds.dimension, 0.0));
  for (std::size_t i = 0; i < ds.size(); ++i) {
    const RowView r = ds.row(i);
    for (std::uint32_t p = 0; p < r.nnz; ++p) x[i][r.indices[p]] = r.values[p];
  }
  return x;
}

// The kernel written out from its definition (not objectives/kernels.hpp).
inline double kernel_value(const KernelParams& k, const std::vector<double>& a, const std::vector<double>& b) {
  double dot = 0.0, dist = 0.0;
  for (std::size_t j = 0; j < a.size(); ++j) {
    dot += a[j] * b[j];
    dist += (a[j] - b[j]) * (a[j] - b[j]);
  }
  if (k.type == KernelType::kRbf) return std::exp(-k.gamma * dist);
  if (k.type == KernelType::kPolynomial) return std::pow(k.gamma * dot + k.coef0, k.degree);
  return dot;
}

// An RBF kernel, with or without the kernel + 1 intercept; SDCA settings.
inline KernelSettings rbf(double gamma, bool intercept) {
  KernelSettings ks;
  ks.kernel.type = KernelType::kRbf;
  ks.kernel.gamma = gamma;
  ks.intercept = intercept;
  return ks;
}

inline EngineSettings settings(double lambda, double tolerance) {
  EngineSettings s;
  s.lambda = lambda;
  s.solver = Solver::kSdca;
  s.tolerance = tolerance;
  s.seed = 5;
  return s;
}

inline double label_sign(const Dataset& ds, std::size_t i) { return ds.labels[i] == 1 ? 1.0 : -1.0; }

// P(model) computed by hand from a model file: its support vectors,
// coefficients, intercept (in the regulariser unless the file says it is
// not) and scale, with the kernel written out.
inline double objective_from_file(const std::string& json, const Dataset& ds, double lambda) {
  const KernelModel m = kernel_model_from_json(json, "model.json");
  const std::size_t msv = m.num_support_vectors();
  Dense sv(msv, std::vector<double>(ds.dimension, 0.0));
  for (std::size_t s = 0; s < msv; ++s) {
    const RowView r = m.support_vector(s);
    for (std::uint32_t p = 0; p < r.nnz; ++p) sv[s][r.indices[p]] = r.values[p];
  }
  const double scale = m.decision_scale(), b = m.intercept.empty() ? 0.0 : m.intercept[0];
  double wsq = m.intercept_regularized ? b * b : 0.0;  // b outside the regulariser when not
  for (std::size_t s = 0; s < msv; ++s) {
    for (std::size_t t = 0; t < msv; ++t) wsq += scale * scale * m.coefficients[s] * m.coefficients[t] * kernel_value(m.kernel, sv[s], sv[t]);
  }
  const Dense x = dense_rows(ds);
  double loss = 0.0;
  for (std::size_t i = 0; i < ds.size(); ++i) {
    double f = b;
    for (std::size_t s = 0; s < msv; ++s) f += scale * m.coefficients[s] * kernel_value(m.kernel, sv[s], x[i]);
    loss += std::max(0.0, 1.0 - label_sign(ds, i) * f);
  }
  return lambda / 2 * wsq + loss / static_cast<double>(ds.size());
}

// The model file `j` must be refused with an InputError "bad.json: FIELD ...".
inline void expect_model_error(const nlohmann::json& j, const std::string& field) {
  try {
    kernel_model_from_json(j.dump(), "bad.json");
    FAIL("accepted a model with a bad " << field);
  } catch (const InputError& e) {
    INFO(e.what());
    CHECK(std::string(e.what()).find("bad.json: " + field) == 0);
  }
}

}  // namespace pegasos::kernel_reference
