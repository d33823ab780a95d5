// Kernel Pegasos: kernels vs their definitions, the α-count trainer vs the
// linear engine (linear kernel), an explicit feature map (polynomial) and a
// brute-force α-count loop (RBF, with budget); XOR; determinism across thread
// counts; model files.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>

#include <tbb/global_control.h>

#include "core/engine.hpp"
#include "core/errors.hpp"
#include "kernel/kernel_model.hpp"
#include "kernel/kernel_trainer.hpp"
#include "io/kernel_model_json.hpp"
#include "io/kernel_settings_json.hpp"
#include "objectives/hinge.hpp"
#include "objectives/kernels.hpp"
#include "tests/fixtures.hpp"
#include "tests/kernel_reference.hpp"

using namespace pegasos;

namespace {

// The linear engine configured as the paper's Fig. 2 without projection:
// last iterate, no bias — the iterate the α-expansion represents.
EngineSettings paper_settings(double lambda, double epochs, int batch_size = 1) {
  EngineSettings s;
  s.lambda = lambda;
  s.epochs = epochs;
  s.batch_size = batch_size;
  s.output = OutputIterate::kLast;
  s.projection = false;
  s.bias = BiasMode::kNone;
  s.sampling = Sampling::kUniform;
  s.seed = 7;
  return s;
}

KernelSettings kernel_of(KernelType type, double gamma = 1.0, int degree = 3, double coef0 = 0.0) {
  KernelSettings k;
  k.kernel.type = type;
  k.kernel.gamma = gamma;
  k.kernel.degree = degree;
  k.kernel.coef0 = coef0;
  return k;
}

// |a − b| ≤ tol · max(1, |b|).
bool close(double a, double b, double tol) { return std::abs(a - b) <= tol * std::max(1.0, std::abs(b)); }

// XOR-like: uniform points in [−1, 1]² away from the axes, label = sign(x₁x₂).
Dataset xor_data(std::size_t n, std::uint64_t seed) {
  Rng rng(seed);
  Dataset ds;
  ds.classes = {"-1", "1"};
  ds.source = "xor";
  while (ds.size() < n) {
    const double a = rng.uniform() * 2 - 1, b = rng.uniform() * 2 - 1;
    if (std::abs(a) < 0.1 || std::abs(b) < 0.1) continue;
    const std::uint32_t idx[] = {0, 1};
    const float val[] = {static_cast<float>(a), static_cast<float>(b)};
    ds.append_row(idx, val, a * b > 0 ? 1 : 0);
  }
  ds.dimension = 2;
  return ds;
}

// The explicit feature map of (γ x·x' + c₀)² in 2-D:
// φ(x) = (γx₁², γx₂², √2γ x₁x₂, √(2γc₀) x₁, √(2γc₀) x₂, c₀).
std::vector<double> phi2(const RowView& x, double gamma, double coef0) {
  double v[2] = {0, 0};
  for (std::uint32_t p = 0; p < x.nnz; ++p) v[x.indices[p]] = x.values[p];
  const double r = std::sqrt(2 * gamma * coef0);
  return {gamma * v[0] * v[0], gamma * v[1] * v[1], std::sqrt(2.0) * gamma * v[0] * v[1], r * v[0], r * v[1], coef0};
}

// Brute-force binary α-count Pegasos (Fig. 3 with the linear engine's
// sampler and the budget rule), kernel values from their definition.
struct NaiveRun {
  std::vector<std::size_t> rows;  // support vectors in order of entry
  std::vector<double> coef;       // α y
  std::uint64_t evictions = 0;
};
NaiveRun naive_kernel_pegasos(const Dataset& ds, const KernelParams& kp, const EngineSettings& s, std::size_t budget) {
  NaiveRun r;
  Sampler sampler(ds, s.sampling, derive_seed(s.seed, 1));
  const auto T = static_cast<std::uint64_t>(std::ceil(s.epochs * static_cast<double>(ds.size())));
  for (std::uint64_t t = 1; t <= T; ++t) {
    const std::size_t j = sampler.next();
    double sum = 0.0;
    for (std::size_t i = 0; i < r.rows.size(); ++i) sum += r.coef[i] * kernel_value(kp, ds.row(r.rows[i]), ds.row(j));
    const double y = ds.labels[j] == 1 ? 1.0 : -1.0;
    const double score = t == 1 ? 0.0 : sum / (s.lambda * static_cast<double>(t - 1));
    if (y * score >= 1.0) continue;
    auto it = std::find(r.rows.begin(), r.rows.end(), j);
    if (it == r.rows.end()) {
      if (r.rows.size() == budget) {
        std::size_t weakest = 0;
        for (std::size_t i = 1; i < r.rows.size(); ++i) {
          if (std::abs(r.coef[i]) < std::abs(r.coef[weakest])) weakest = i;
        }
        r.rows.erase(r.rows.begin() + static_cast<std::ptrdiff_t>(weakest));
        r.coef.erase(r.coef.begin() + static_cast<std::ptrdiff_t>(weakest));
        ++r.evictions;
      }
      r.rows.push_back(j);
      r.coef.push_back(0.0);
      it = r.rows.end() - 1;
    }
    r.coef[static_cast<std::size_t>(it - r.rows.begin())] += y;
  }
  return r;
}

// Support vectors of a model as (indices, values) for exact comparisons.
std::vector<std::pair<std::vector<std::uint32_t>, std::vector<float>>> support_rows(const KernelModel& m) {
  std::vector<std::pair<std::vector<std::uint32_t>, std::vector<float>>> out;
  for (std::size_t s = 0; s < m.num_support_vectors(); ++s) {
    const RowView x = m.support_vector(s);
    out.emplace_back(std::vector<std::uint32_t>(x.indices, x.indices + x.nnz), std::vector<float>(x.values, x.values + x.nnz));
  }
  return out;
}

std::vector<double> all_scores(const KernelModel& m, const Dataset& ds) {
  std::vector<double> out(ds.size() * static_cast<std::size_t>(m.outputs));
  for (std::size_t i = 0; i < ds.size(); ++i) m.scores(ds.row(i), &out[i * static_cast<std::size_t>(m.outputs)]);
  return out;
}

}  // namespace

TEST_CASE("kernels match their definitions, every dot product gives the same bits", "[kernel]") {
  Rng rng(GENERATE(1u, 2u, 3u));
  const Dataset ds = fixtures::gaussian(40, 37, rng.next(), 0.4);
  std::vector<double> dense(ds.dimension, 0.0);
  for (std::size_t i = 0; i < ds.size(); ++i) {
    const RowView a = ds.row(i);
    std::fill(dense.begin(), dense.end(), 0.0);
    for (std::uint32_t p = 0; p < a.nnz; ++p) dense[a.indices[p]] = a.values[p];
    for (std::size_t j = 0; j < ds.size(); ++j) {
      const RowView b = ds.row(j);
      std::vector<double> vb(ds.dimension, 0.0);
      for (std::uint32_t p = 0; p < b.nnz; ++p) vb[b.indices[p]] = b.values[p];
      double dot = 0.0, dist = 0.0;
      for (std::uint32_t f = 0; f < ds.dimension; ++f) {
        dot += dense[f] * vb[f];
        dist += (dense[f] - vb[f]) * (dense[f] - vb[f]);
      }
      const double d = sparse_dot(a, b);
      CHECK(d == Approx(dot).margin(1e-12));
      CHECK(d == Approx(sparse_dot(b, a)).margin(1e-15));
      CHECK(sparse_dot(b, a) == sparse_dense_dot(b, dense.data()));  // merge-join == scatter/gather, bit for bit
      const KernelParams rbf{KernelType::kRbf, 0.7, 3, 0.0};
      CHECK(kernel_value(rbf, a, b) == Approx(std::exp(-0.7 * dist)).margin(1e-12));
      const KernelParams poly{KernelType::kPolynomial, 0.5, 3, 1.5};
      CHECK(kernel_value(poly, a, b) == Approx(std::pow(0.5 * dot + 1.5, 3)).epsilon(1e-12));
    }
    CHECK(kernel_value(KernelParams{KernelType::kRbf, 3.0, 3, 0.0}, a, a) == 1.0);  // ‖x − x‖² is exactly 0
  }
  // Query features at or beyond the model's dimension are ignored.
  const float v[] = {1.0f, 2.0f};
  const std::uint32_t idx[] = {0, 5};
  const RowView x{v, idx, 2, 0, 0};
  CHECK(row_squared_norm(x, 2) == 1.0);
  CHECK(row_squared_norm(x) == 5.0);
  KernelModel m;
  m.classes = {"a", "b"};
  m.dimension = 2;
  m.kernel = KernelParams{KernelType::kRbf, 0.5, 3, 0.0};
  m.sv_indices = {0};
  m.sv_values = {1.0f};
  m.sv_ptr = {0, 1};
  m.coefficients = {1.0};
  m.lambda = 1.0;
  m.prepare();
  double score = 0.0;
  m.scores(x, &score);
  CHECK(score == 1.0);  // x truncated to (1, 0) equals the support vector: k = 1
}

TEST_CASE("polynomial kernel equals the inner product of its explicit feature map", "[kernel]") {
  const Dataset ds = xor_data(30, 5);
  const double gamma = 0.8, coef0 = 0.6;
  const KernelParams poly{KernelType::kPolynomial, gamma, 2, coef0};
  for (std::size_t i = 0; i < ds.size(); ++i) {
    for (std::size_t j = 0; j < ds.size(); ++j) {
      const auto a = phi2(ds.row(i), gamma, coef0), b = phi2(ds.row(j), gamma, coef0);
      double ip = 0.0;
      for (std::size_t f = 0; f < a.size(); ++f) ip += a[f] * b[f];
      CHECK(kernel_value(poly, ds.row(i), ds.row(j)) == Approx(ip).epsilon(1e-12).margin(1e-15));
    }
  }
}

TEST_CASE("linear kernel reproduces the linear engine step for step", "[kernel]") {
  const int batch = GENERATE(1, 4);
  const Sampling sampling = GENERATE(Sampling::kUniform, Sampling::kPermutation);
  const Dataset ds = fixtures::gaussian(300, 10, 21, 0.7);
  EngineSettings s = paper_settings(1e-2, 3, batch);
  s.sampling = sampling;
  const TrainResult linear = train(ds, Hinge(1), s);
  const KernelModel km = train_kernel(ds, kernel_of(KernelType::kLinear), s);
  CHECK(km.iterations == linear.iterations);
  CHECK(km.outputs == 1);
  int mismatches = 0;
  for (std::size_t i = 0; i < ds.size(); ++i) {
    const RowView x = ds.row(i);
    double expected = 0.0, got = 0.0;
    for (std::uint32_t p = 0; p < x.nnz; ++p) expected += x.values[p] * linear.weights[x.indices[p]];
    km.scores(x, &got);
    mismatches += !close(got, expected, 1e-9);
  }
  INFO("batch " << batch << ", " << km.num_support_vectors() << " support vectors");
  CHECK(mismatches == 0);
  // Same objective: the linear engine's P(w) and the kernel model's Σ λ/2‖w‖² + hinge.
  CHECK(km.training.objective.value() == Approx(linear.objective).epsilon(1e-9));
  CHECK(kernel_model_objective(km, ds) == Approx(linear.objective).epsilon(1e-9));
}

TEST_CASE("multiclass kernel training is K binary runs in lock-step on one sampled sequence", "[kernel]") {
  // One-vs-all with the linear kernel: output c equals the linear engine's
  // class-c binary run with the same seed (hence the same sampled sequence).
  const Dataset ds = fixtures::blobs(240, 6, 3, 9, 0.8);
  const EngineSettings s = paper_settings(1e-2, 4);
  const KernelModel km = train_kernel(ds, kernel_of(KernelType::kLinear), s);
  REQUIRE(km.outputs == 3);
  for (int c = 0; c < 3; ++c) {
    const TrainResult linear = train(ds, Hinge(c), s);
    int mismatches = 0;
    for (std::size_t i = 0; i < ds.size(); ++i) {
      const RowView x = ds.row(i);
      double expected = 0.0, got[3];
      for (std::uint32_t p = 0; p < x.nnz; ++p) expected += x.values[p] * linear.weights[x.indices[p]];
      km.scores(x, got);
      mismatches += !close(got[c], expected, 1e-9);
    }
    INFO("class " << c);
    CHECK(mismatches == 0);
  }
}

TEST_CASE("polynomial kernel Pegasos equals linear Pegasos on the explicit feature map", "[kernel]") {
  const Dataset ds = xor_data(60, 17);
  const double gamma = 0.8, coef0 = 0.6, lambda = 0.05;
  EngineSettings s = paper_settings(lambda, 5);
  const KernelModel km = train_kernel(ds, kernel_of(KernelType::kPolynomial, gamma, 2, coef0), s);
  // Fig. 2 without projection in double precision on φ(x).
  std::vector<double> w(6, 0.0);
  Sampler sampler(ds, Sampling::kUniform, derive_seed(s.seed, 1));
  for (std::uint64_t t = 1; t <= km.iterations; ++t) {
    const std::size_t j = sampler.next();
    const auto x = phi2(ds.row(j), gamma, coef0);
    double score = 0.0;
    for (int f = 0; f < 6; ++f) score += w[f] * x[f];
    const double y = ds.labels[j] == 1 ? 1.0 : -1.0;
    const double eta = 1.0 / (lambda * static_cast<double>(t));
    for (double& v : w) v *= 1.0 - 1.0 / static_cast<double>(t);
    if (y * score < 1.0) {
      for (int f = 0; f < 6; ++f) w[f] += eta * y * x[f];
    }
  }
  for (std::size_t i = 0; i < ds.size(); ++i) {
    const auto x = phi2(ds.row(i), gamma, coef0);
    double expected = 0.0, got = 0.0;
    for (int f = 0; f < 6; ++f) expected += w[f] * x[f];
    km.scores(ds.row(i), &got);
    CHECK(close(got, expected, 1e-9));
  }
}

TEST_CASE("RBF α-counts equal a brute-force α-count loop, with and without a budget", "[kernel]") {
  const Dataset ds = fixtures::gaussian(150, 6, 33, 0.8);
  const std::size_t budget = GENERATE(std::size_t{0}, std::size_t{12}, std::size_t{40});
  EngineSettings s = paper_settings(1e-3, 4);
  KernelSettings k = kernel_of(KernelType::kRbf, 2.0);
  k.max_support_vectors = budget;
  const KernelModel km = train_kernel(ds, k, s);
  const NaiveRun ref = naive_kernel_pegasos(ds, k.kernel, s, budget == 0 ? ds.size() + 1 : budget);
  INFO("budget " << budget << ": " << ref.rows.size() << " support vectors, " << ref.evictions << " evictions");
  REQUIRE(km.num_support_vectors() == ref.rows.size());
  CHECK(km.training.evictions.value() == ref.evictions);
  if (budget > 0) {
    CHECK(km.num_support_vectors() <= budget);
    CHECK(ref.evictions > 0);
  }
  for (std::size_t s_i = 0; s_i < ref.rows.size(); ++s_i) {
    const RowView expected = ds.row(ref.rows[s_i]);
    const RowView got = km.support_vector(s_i);
    REQUIRE(got.nnz == expected.nnz);
    CHECK(std::equal(got.indices, got.indices + got.nnz, expected.indices));
    CHECK(std::equal(got.values, got.values + got.nnz, expected.values));
    CHECK(km.coefficients[s_i] == ref.coef[s_i]);
  }
}

TEST_CASE("a budget at least the number of examples changes nothing", "[kernel]") {
  const Dataset ds = fixtures::blobs(200, 5, 3, 4, 0.7);
  const EngineSettings s = paper_settings(1e-3, 3, 2);
  KernelSettings k = kernel_of(KernelType::kRbf, 1.5);
  const KernelModel free_model = train_kernel(ds, k, s);
  k.max_support_vectors = ds.size();
  const KernelModel budget_model = train_kernel(ds, k, s);
  CHECK(budget_model.coefficients == free_model.coefficients);
  CHECK(support_rows(budget_model) == support_rows(free_model));
  k.max_support_vectors = 20;  // multiclass budget: Σ_c |α_ic| decides
  const KernelModel small = train_kernel(ds, k, s);
  CHECK(small.num_support_vectors() <= 20);
  CHECK(small.training.evictions.value() > 0);
}

TEST_CASE("the kernel cache changes the cost, never the model", "[kernel]") {
  const Dataset ds = fixtures::blobs(300, 6, 3, 5, 0.9);
  const EngineSettings s = paper_settings(1e-3, 6, GENERATE(1, 2));
  KernelSettings k = kernel_of(KernelType::kRbf, 1.2);
  k.cache_megabytes = 0.0;
  const KernelModel uncached = train_kernel(ds, k, s);
  k.cache_megabytes = 0.05;  // fills up part-way through training
  const KernelModel partial = train_kernel(ds, k, s);
  k.cache_megabytes = 64.0;
  const KernelModel cached = train_kernel(ds, k, s);
  for (const KernelModel* m : {&partial, &cached}) {
    CHECK(m->coefficients == uncached.coefficients);
    CHECK(support_rows(*m) == support_rows(uncached));
    CHECK(m->training.objective.value() == uncached.training.objective.value());
  }
  const auto evaluations = [](const KernelModel& m) { return m.training.kernel_evaluations.value(); };
  INFO("kernel evaluations: " << evaluations(uncached) << " uncached, " << evaluations(partial) << " partial, "
                              << evaluations(cached) << " cached");
  CHECK(evaluations(partial) < evaluations(uncached));
  CHECK(evaluations(cached) < evaluations(partial));
  // The training objective is the model's objective on its training data, bit for bit.
  CHECK(kernel_model_objective(cached, ds) == cached.training.objective.value());
  KernelModel no_summary = cached;
  no_summary.training.regularizer.reset();  // forces the O(m²) Gram sum
  CHECK(kernel_model_objective(no_summary, ds) == Approx(cached.training.objective.value()).epsilon(1e-12));
}

TEST_CASE("RBF kernel Pegasos fits XOR-like data", "[kernel]") {
  const Dataset ds = xor_data(200, 3);
  const KernelModel km = train_kernel(ds, kernel_of(KernelType::kRbf, 4.0), paper_settings(1e-3, 20));
  int errors = 0;
  for (std::size_t i = 0; i < ds.size(); ++i) {
    double score = 0.0;
    km.scores(ds.row(i), &score);
    errors += km.predict_class(&score) != ds.labels[i];
  }
  CHECK(errors == 0);
  // The linear kernel cannot: XOR has no linear separator through the origin.
  const KernelModel linear = train_kernel(ds, kernel_of(KernelType::kLinear), paper_settings(1e-3, 20));
  int linear_errors = 0;
  for (std::size_t i = 0; i < ds.size(); ++i) {
    double score = 0.0;
    linear.scores(ds.row(i), &score);
    linear_errors += linear.predict_class(&score) != ds.labels[i];
  }
  CHECK(linear_errors > 40);
}

TEST_CASE("same seed, same kernel model for any number of threads", "[kernel]") {
  // Enough violators that the support set passes the parallel threshold.
  const Dataset ds = fixtures::blobs(3000, 4, 3, 12, 3.0);
  EngineSettings s = paper_settings(1e-4, 1, GENERATE(1, 3));
  s.sampling = Sampling::kPermutation;  // every row once: the support set grows past the threshold quickly
  KernelSettings k = kernel_of(KernelType::kRbf, 3.0);
  k.compute_objective = false;  // (tested elsewhere; it would double the run time)
  std::vector<KernelModel> models;
  for (int threads : {1, 2, 4}) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(threads));
    models.push_back(train_kernel(ds, k, s));
  }
  REQUIRE(models[0].num_support_vectors() * static_cast<std::size_t>(s.batch_size) > kParallelKernelEvaluations);
  const std::string reference = kernel_model_to_json(models[0]);
  const Dataset probe = fixtures::blobs(100, 4, 3, 13, 2.0);
  std::vector<double> reference_scores;
  {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, 1);
    reference_scores = all_scores(models[0], probe);
  }
  for (std::size_t m = 1; m < models.size(); ++m) {
    CHECK(kernel_model_to_json(models[m]) == reference);
    CHECK(all_scores(models[m], probe) == reference_scores);
    CHECK(models[m].scores(probe) == reference_scores);
  }
}

TEST_CASE("kernel model files round-trip exactly", "[kernel][io]") {
  const bool multiclass = GENERATE(false, true);
  const Dataset ds = multiclass ? fixtures::blobs(150, 7, 4, 2, 0.6) : fixtures::gaussian(150, 9, 5, 0.5);
  KernelSettings k = multiclass ? kernel_of(KernelType::kRbf, 0.9) : kernel_of(KernelType::kPolynomial, 0.3, 3, 0.7);
  KernelModel m = train_kernel(ds, k, paper_settings(3e-3, 2, 3));
  m.settings = R"({"lambda":0.003,"objective":"kernel_hinge"})";
  m.data = R"({"format":"auto"})";
  const std::string text = kernel_model_to_json(m);
  const KernelModel back = kernel_model_from_json(text, "m.json");
  CHECK(kernel_model_to_json(back) == text);
  CHECK(back.coefficients == m.coefficients);
  CHECK(support_rows(back) == support_rows(m));
  CHECK(back.lambda == m.lambda);
  CHECK(back.iterations == m.iterations);
  CHECK(back.batch_size == 3);
  CHECK(back.kernel.gamma == m.kernel.gamma);
  CHECK(back.classes == m.classes);
  CHECK(all_scores(back, ds) == all_scores(m, ds));
  CHECK(back.scores(ds) == all_scores(m, ds));  // batch scoring: the same bits as row by row
  CHECK(model_kind(nlohmann::json::parse(text), "m.json") == "kernel");

  const char* path = "/tmp/pegasos_test_kernel_model.json";
  save_kernel_model(m, path);
  CHECK(kernel_model_to_json(load_kernel_model(path)) == text);
  std::remove(path);
}

TEST_CASE("a kernel model's training block round-trips with unknown members and integers for numbers", "[kernel][io]") {
  const Dataset ds = fixtures::gaussian(60, 5, 8, 0.9);
  const KernelModel m = train_kernel(ds, kernel_of(KernelType::kRbf, 1.0), paper_settings(1e-2, 1));
  nlohmann::json j = nlohmann::json::parse(kernel_model_to_json(m));
  j["training"]["from_a_newer_writer"] = {{"a", 1}, {"b", "x"}};
  j["training"]["epochs"] = 1;                   // an integer where the writer puts a double
  j["training"]["dual_objective"] = nullptr;     // null: no bound
  j["training"]["class_cost"] = {1.0, 2};        // one integer: the array is kept as written
  const std::string text = j.dump(1) + "\n";
  const KernelModel back = kernel_model_from_json(text, "m.json");
  CHECK(kernel_model_to_json(back) == text);
  CHECK(back.training.examples == m.training.examples);
  CHECK_FALSE(back.training.epochs);
  CHECK(back.training.objective == m.training.objective);
  CHECK(std::isnan(back.training.dual_objective.value()));
  CHECK_FALSE(back.training.class_cost);
}

TEST_CASE("malformed kernel model files are rejected naming the field", "[kernel][io]") {
  const Dataset ds = fixtures::gaussian(60, 5, 8, 0.9);
  const KernelModel m = train_kernel(ds, kernel_of(KernelType::kRbf, 1.0), paper_settings(1e-2, 1));
  const nlohmann::json good = nlohmann::json::parse(kernel_model_to_json(m));
  const auto expect_error = kernel_reference::expect_model_error;
  nlohmann::json j = good;
  j["kind"] = "linear";
  expect_error(j, "/kind");
  // Known fields of the sections with another type or an invalid value.
  for (const auto& [section, key, value] : std::vector<std::tuple<std::string, std::string, nlohmann::json>>{
           {"training", "objective", "not a number"},
           {"training", "converged", "yes"},
           {"training", "stopped_by", 3},
           {"training", "examples", -1},
           {"training", "class_cost", {1.0, 2.0, 3.0}},  // three costs for two classes
           {"training", "class_cost", {1.0, 0.0}},
           {"data", "normalize", "L2"},
           {"data", "format", "xml"},
           {"settings", "seed", nlohmann::json::object()},
           {"settings", "tolerance", "x"}}) {
    j = good;
    j[section][key] = value;
    expect_error(j, "/" + section + "/" + key);
  }
  j = good;
  j["training"] = "done";
  expect_error(j, "/training");
  j = good;
  j["objective"] = "hinge";
  expect_error(j, "/objective");
  j = good;
  j["format_version"] = 2;
  expect_error(j, "/format_version");
  j = good;
  j["kernel"]["type"] = "sigmoid";
  expect_error(j, "/kernel/type");
  j = good;
  j["kernel"]["gamma"] = -1;
  expect_error(j, "/kernel/gamma");
  j = good;
  j["kernel"].erase("degree");
  expect_error(j, "/kernel/degree");
  j = good;
  j["lambda"] = 0;
  expect_error(j, "/lambda");
  j = good;
  j["iterations"] = 0;
  expect_error(j, "/iterations");
  j = good;
  j["coefficients"][0].erase(0);
  expect_error(j, "/coefficients/0");
  j = good;
  j["coefficients"][0][1] = "x";
  expect_error(j, "/coefficients/0/1");
  j = good;
  j["support_vectors"][2] = "3:0.5 2:1";
  expect_error(j, "/support_vectors/2: column 7");
  j = good;
  j["support_vectors"][0] = "1:abc";
  expect_error(j, "/support_vectors/0: column 3");
  j = good;
  j["support_vectors"][1] = "6:1";
  expect_error(j, "/support_vectors/1: column 1");
  j = good;
  j.erase("support_vectors");
  expect_error(j, "/support_vectors");
  j = good;
  j["outputs"] = 3;
  expect_error(j, "/outputs");
  CHECK_THROWS_AS(kernel_model_from_json(std::string("{\"lambda\": 1e999}"), "bad.json"), InputError);
  CHECK_THROWS_AS(kernel_model_from_json(std::string("not json"), "bad.json"), InputError);

  KernelModel nan_model = m;
  nan_model.coefficients[0] = std::nan("");
  CHECK_THROWS_AS(kernel_model_to_json(nan_model), std::logic_error);
  nan_model = m;
  nan_model.training.objective = std::numeric_limits<double>::infinity();
  CHECK_THROWS_AS(kernel_model_to_json(nan_model), std::logic_error);
}

TEST_CASE("kernel settings are validated naming the key", "[kernel][config]") {
  using nlohmann::json;
  const KernelSettings d = kernel_settings_from_json(json::object(), "c.json");
  CHECK(d.kernel.type == KernelType::kRbf);
  CHECK(d.kernel.gamma == 0.0);  // auto: 1/dimension at training time
  CHECK(d.kernel.degree == 3);
  CHECK(d.max_support_vectors == 0);
  CHECK(kernel_settings_from_json(json{{"kernel", "linear"}}, "c.json").kernel.type == KernelType::kLinear);
  const KernelSettings p = kernel_settings_from_json(
      json{{"kernel", {{"type", "polynomial"}, {"gamma", 0.5}, {"degree", 2}, {"coef0", 1}}}, {"max_support_vectors", 100}},
      "c.json");
  CHECK(p.kernel.type == KernelType::kPolynomial);
  CHECK(p.kernel.gamma == 0.5);
  CHECK(p.kernel.degree == 2);
  CHECK(p.kernel.coef0 == 1.0);
  CHECK(p.max_support_vectors == 100);
  CHECK(kernel_settings_from_json(kernel_settings_to_json(p), "x").kernel.degree == 2);
  CHECK(kernel_settings_to_json(d)["kernel"]["gamma"] == "auto");

  auto expect_error = [](const json& config, const std::string& key) {
    try {
      kernel_settings_from_json(config, "c.json");
      FAIL("accepted a bad " << key);
    } catch (const ConfigError& e) {
      INFO(e.what());
      CHECK(std::string(e.what()).find("c.json: " + key + ":") == 0);
    }
  };
  expect_error(json{{"kernel", {{"type", "sigmoid"}}}}, "kernel/type");
  expect_error(json{{"kernel", {{"gama", 1}}}}, "kernel/gama");
  expect_error(json{{"kernel", {{"gamma", 0}}}}, "kernel/gamma");
  expect_error(json{{"kernel", {{"gamma", "big"}}}}, "kernel/gamma");
  expect_error(json{{"kernel", {{"degree", 0}}}}, "kernel/degree");
  expect_error(json{{"kernel", {{"degree", 2.5}}}}, "kernel/degree");
  expect_error(json{{"kernel", 3}}, "kernel");
  expect_error(json{{"max_support_vectors", -1}}, "max_support_vectors");
  expect_error(json{{"max_support_vectors", 1.5}}, "max_support_vectors");
  expect_error(json{{"kernel_cache_mb", -1}}, "kernel_cache_mb");
  CHECK(kernel_settings_from_json(json{{"kernel_cache_mb", 0}}, "c.json").cache_megabytes == 0.0);
  CHECK(kernel_settings_from_json(json{{"kernel", nullptr}, {"max_support_vectors", nullptr}}, "c.json").kernel.type ==
        KernelType::kRbf);

  // A parameter the kernel does not use is an error unless it has its default
  // value (a model's settings echo all four).
  expect_error(json{{"kernel", {{"type", "rbf"}, {"degree", 2}}}}, "kernel/degree");
  expect_error(json{{"kernel", {{"type", "rbf"}, {"coef0", 1}}}}, "kernel/coef0");
  expect_error(json{{"kernel", {{"type", "linear"}, {"gamma", 0.5}}}}, "kernel/gamma");
  expect_error(json{{"kernel", {{"type", "linear"}, {"degree", 4}}}}, "kernel/degree");
  for (const char* type : {"linear", "rbf"}) {
    const json echoed = {{"kernel", {{"type", type}, {"gamma", "auto"}, {"degree", 3}, {"coef0", 0.0}}}};
    CHECK(kernel_settings_from_json(echoed, "c.json").kernel.degree == 3);
  }
  CHECK(kernel_settings_from_json(json{{"kernel", {{"type", "polynomial"}, {"degree", 2}, {"coef0", 1}}}}, "c.json")
            .kernel.coef0 == 1.0);
}

TEST_CASE("gamma auto is 1/dimension, default epochs, polynomial overflow is reported", "[kernel]") {
  const Dataset ds = fixtures::gaussian(50, 8, 3, 1.0);
  EngineSettings s = paper_settings(1e-2, 0);
  const KernelModel m = train_kernel(ds, KernelSettings{}, s);
  CHECK(m.kernel.gamma == 1.0 / 8);
  CHECK(m.iterations == static_cast<std::uint64_t>(kDefaultKernelEpochs * 50));
  // Degree 100 with large values overflows double: a clear error, not NaN.
  Dataset big = ds;
  for (float& v : big.values.own()) v *= 1000.0f;
  CHECK_THROWS_AS(train_kernel(big, kernel_of(KernelType::kPolynomial, 1.0, 100, 1.0), paper_settings(1e-2, 2)),
                  InputError);
}
