// Engine: convergence to an independent reference optimum, the paper's bound,
// equality with a naive dense implementation, determinism.
#include <catch2/catch.hpp>

#include <cmath>
#include <numeric>

#include <tbb/global_control.h>

#include "core/engine.hpp"
#include "objectives/hinge.hpp"
#include "tests/fixtures.hpp"

using namespace pegasos;

namespace {

using fixtures::reference_optimum;

EngineSettings settings(double lambda) {
  EngineSettings s;
  s.lambda = lambda;
  s.bias = BiasMode::kNone;
  return s;
}

}  // namespace

TEST_CASE("default settings reach the reference optimum within 1%", "[engine]") {
  const double lambda = GENERATE(1e-1, 1e-2, 1e-3);
  const bool bias_feature = GENERATE(false, true);
  const Dataset ds = fixtures::gaussian(500, 12, 7, 0.7);
  const double p_star = reference_optimum(ds, lambda, bias_feature);
  EngineSettings s = settings(lambda);
  s.bias = bias_feature ? BiasMode::kFeature : BiasMode::kNone;
  const TrainResult r = train(ds, Hinge(1), s);
  INFO("lambda " << lambda << " bias feature " << bias_feature << " P* " << p_star << " P " << r.objective
                 << " epochs " << r.epochs);
  CHECK(r.objective >= p_star * (1 - 1e-9));
  CHECK(r.objective <= p_star * 1.01);
  // The engine alone stops on its progress estimate and claims nothing: a
  // certificate comes from core/solver.hpp (tests/test_certificate.cpp).
  CHECK(r.stopped_by == StopReason::kEstimate);
  CHECK_FALSE(r.converged);
}

TEST_CASE("mini-batches and every sampling mode converge", "[engine]") {
  const Dataset ds = fixtures::gaussian(400, 10, 11, 0.8);
  const double lambda = 1e-2;
  const double p_star = reference_optimum(ds, lambda, false);
  EngineSettings s = settings(lambda);
  s.batch_size = GENERATE(1, 4, 16);
  s.sampling = GENERATE(Sampling::kUniform, Sampling::kPermutation, Sampling::kSequential, Sampling::kBalanced);
  s.epochs = 100;
  const TrainResult r = train(ds, Hinge(1), s);
  INFO("batch " << s.batch_size << " P* " << p_star << " P " << r.objective);
  if (s.sampling == Sampling::kBalanced) {
    // Balanced sampling optimises a re-weighted objective: close, not equal.
    CHECK(r.objective <= p_star * 1.10);
  } else {
    CHECK(r.objective <= p_star * 1.01);
  }
}

TEST_CASE("unregularised bias beats the no-bias optimum on shifted data", "[engine]") {
  // Shift every row so that a bias is needed; the unregularised-bias optimum
  // is at most the regularised-bias-feature optimum.
  Dataset ds = fixtures::gaussian(400, 8, 5, 1.0, 1.0);
  for (std::size_t i = 0; i < ds.size(); ++i) {
    if (ds.labels[i] == 1) continue;
  }
  const double lambda = 1e-2;
  EngineSettings s = settings(lambda);
  s.bias = BiasMode::kUnregularized;
  s.epochs = 200;
  const TrainResult free_bias = train(ds, Hinge(1), s);
  const double p_feature = reference_optimum(ds, lambda, true);
  INFO("unregularised " << free_bias.objective << " feature optimum " << p_feature);
  CHECK(free_bias.objective <= p_feature * 1.01);
}

TEST_CASE("the paper's bound holds on average over seeds (Theorem 1)", "[engine]") {
  // E[P(w̄_T)] ≤ P* + c(1 + ln T)/(2λT), c = (√λ + R)², for the plain average
  // of the iterates with uniform sampling, k = 1 and projection.
  const Dataset ds = fixtures::gaussian(300, 10, 3, 1.0);
  double R = 0;
  for (std::size_t i = 0; i < ds.size(); ++i) {
    const RowView x = ds.row(i);
    double sq = 0;
    for (std::uint32_t j = 0; j < x.nnz; ++j) sq += double(x.values[j]) * x.values[j];
    R = std::max(R, std::sqrt(sq));
  }
  const double lambda = GENERATE(1e-1, 1e-2);
  const std::uint64_t T = GENERATE(100, 1000, 10000);
  const double p_star = reference_optimum(ds, lambda, false);
  EngineSettings s = settings(lambda);
  s.iterations = T;
  s.sampling = Sampling::kUniform;
  s.average_gamma = 0.0;
  double mean = 0;
  const int seeds = 20;
  for (int seed = 1; seed <= seeds; ++seed) {
    s.seed = static_cast<std::uint64_t>(seed);
    mean += train(ds, Hinge(1), s).objective / seeds;
  }
  const double c = (std::sqrt(lambda) + R) * (std::sqrt(lambda) + R);
  const double bound = p_star + c * (1 + std::log(double(T))) / (2 * lambda * double(T));
  INFO("lambda " << lambda << " T " << T << " mean P " << mean << " P* " << p_star << " bound " << bound);
  CHECK(mean <= bound);
  CHECK(mean >= p_star - 1e-9);
}

namespace {

// Naive Pegasos with dense vectors: the same schedule as the engine, written
// from the paper (no scale trick, no lazy averaging).
struct Naive {
  std::vector<double> w, avg;
  double b = 0, b_avg = 0;
};

Naive naive_pegasos(const Dataset& ds, const EngineSettings& s, std::uint64_t T) {
  const std::size_t d = ds.dimension + (s.bias == BiasMode::kFeature ? 1 : 0);
  Naive out;
  out.w.assign(d, 0.0);
  out.avg.assign(d, 0.0);
  const std::size_t k = static_cast<std::size_t>(s.batch_size);
  std::size_t next = 0;
  double bound = std::numeric_limits<double>::infinity();
  if (s.bias == BiasMode::kUnregularized) {
    double max_sq = 0;
    for (std::size_t i = 0; i < ds.size(); ++i) {
      const RowView x = ds.row(i);
      double sq = 0;
      for (std::uint32_t j = 0; j < x.nnz; ++j) sq += double(x.values[j]) * x.values[j];
      max_sq = std::max(max_sq, sq);
    }
    bound = 1 + std::sqrt(max_sq) / std::sqrt(s.lambda);
  }
  auto dense = [&](std::size_t i) {
    std::vector<double> x(d, 0.0);
    const RowView r = ds.row(i);
    for (std::uint32_t j = 0; j < r.nnz; ++j) x[r.indices[j]] = r.values[j];
    if (s.bias == BiasMode::kFeature) x.back() = 1.0;
    return x;
  };
  for (std::uint64_t t = 1; t <= T; ++t) {
    std::vector<std::size_t> batch;
    for (std::size_t a = 0; a < k; ++a) {
      batch.push_back(next);
      next = (next + 1) % ds.size();
    }
    std::vector<double> grad(d, 0.0);
    double grad_b = 0;
    for (std::size_t i : batch) {
      const std::vector<double> x = dense(i);
      const double y = ds.labels[i] == 1 ? 1.0 : -1.0;
      const double score = std::inner_product(x.begin(), x.end(), out.w.begin(), 0.0) + out.b;
      if (y * score < 1) {
        for (std::size_t j = 0; j < d; ++j) grad[j] += y * x[j];
        grad_b += y;
      }
    }
    const double eta = 1.0 / (s.lambda * double(t));
    for (std::size_t j = 0; j < d; ++j) out.w[j] = (1 - eta * s.lambda) * out.w[j] + eta / double(k) * grad[j];
    if (s.bias == BiasMode::kUnregularized) out.b = std::clamp(out.b + eta / double(k) * grad_b, -bound, bound);
    if (s.projection) {
      const double norm = std::sqrt(std::inner_product(out.w.begin(), out.w.end(), out.w.begin(), 0.0));
      const double r = 1 / std::sqrt(s.lambda);
      if (norm > r) {
        for (double& v : out.w) v *= r / norm;
      }
    }
    const double mu = t == 1 ? 1.0 : (1 + s.average_gamma) / (double(t) + s.average_gamma);
    for (std::size_t j = 0; j < d; ++j) out.avg[j] = (1 - mu) * out.avg[j] + mu * out.w[j];
    out.b_avg = (1 - mu) * out.b_avg + mu * out.b;
  }
  return out;
}

}  // namespace

TEST_CASE("scale-trick engine equals naive dense Pegasos to 1e-9", "[engine]") {
  const Dataset ds = fixtures::gaussian(60, 9, 21, 0.5);
  EngineSettings s = settings(GENERATE(1e-1, 1e-3));
  s.sampling = Sampling::kSequential;
  s.batch_size = GENERATE(1, 3);
  s.bias = GENERATE(BiasMode::kNone, BiasMode::kFeature, BiasMode::kUnregularized);
  s.projection = GENERATE(true, false);
  s.output = GENERATE(OutputIterate::kLast, OutputIterate::kAverage);
  s.iterations = 700;
  const TrainResult r = train(ds, Hinge(1), s);
  const Naive ref = naive_pegasos(ds, s, s.iterations);
  INFO("lambda " << s.lambda << " k " << s.batch_size << " bias " << int(s.bias) << " projection " << s.projection
                 << " output " << int(s.output));
  const std::vector<double>& w = s.output == OutputIterate::kAverage ? ref.avg : ref.w;
  double scale = 1;
  for (double v : w) scale = std::max(scale, std::abs(v));
  for (std::uint32_t j = 0; j < ds.dimension; ++j) REQUIRE(r.weights[j] == Approx(w[j]).margin(1e-9 * scale));
  double bias = 0;
  if (s.bias == BiasMode::kFeature) bias = w.back();
  if (s.bias == BiasMode::kUnregularized) bias = s.output == OutputIterate::kAverage ? ref.b_avg : ref.b;
  REQUIRE(r.bias[0] == Approx(bias).margin(1e-9 * scale));
}

TEST_CASE("same seed gives a bit-identical model, thread count does not matter", "[engine]") {
  const Dataset ds = fixtures::gaussian(300, 15, 9, 0.6);
  EngineSettings s = settings(1e-3);
  s.sampling = GENERATE(Sampling::kUniform, Sampling::kPermutation);
  s.output = GENERATE(OutputIterate::kAverage, OutputIterate::kRandom);
  s.epochs = 3;
  const TrainResult a = train(ds, Hinge(1), s);
  TrainResult b;
  {
    tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
    b = train(ds, Hinge(1), s);
  }
  CHECK(a.weights == b.weights);
  CHECK(a.bias == b.bias);
  CHECK(a.objective == b.objective);
  s.seed += 1;
  const TrainResult c = train(ds, Hinge(1), s);
  CHECK(a.weights != c.weights);
}

TEST_CASE("iterations and epochs set the number of steps", "[engine]") {
  const Dataset ds = fixtures::gaussian(100, 5, 2);
  EngineSettings s = settings(1e-2);
  s.iterations = 123;
  CHECK(train(ds, Hinge(1), s).iterations == 123);
  s.iterations = 0;
  s.epochs = 2.5;
  s.batch_size = 4;
  const TrainResult r = train(ds, Hinge(1), s);
  CHECK(r.iterations == 63);  // ceil(2.5 · 100 / 4)
  CHECK(r.epochs == Approx(2.52));
  // A batch larger than the data is the whole data (A_t ⊆ S): epochs = 1 is one
  // step of 100 examples, where a batch of 400 ran 4 epochs' worth in one step.
  s.epochs = 1;
  s.batch_size = 400;
  const TrainResult big = train(ds, Hinge(1), s);
  CHECK(big.iterations == 1);
  CHECK(big.epochs == Approx(1.0));
  s.batch_size = 100;
  CHECK(train(ds, Hinge(1), s).weights == big.weights);
}

TEST_CASE("weights that overflow are reported, not saved", "[engine]") {
  Dataset ds;
  ds.classes = {"-1", "1"};
  ds.source = "huge.svm";
  const std::uint32_t idx[] = {0};
  const float big[] = {3e38f};
  ds.append_row(idx, big, 1);
  ds.append_row(idx, big, 0);
  EngineSettings s = settings(1e-300);
  s.projection = false;
  s.output = OutputIterate::kLast;
  s.iterations = 10;
  CHECK_THROWS_WITH(train(ds, Hinge(1), s), Catch::Contains("huge.svm") && Catch::Contains("lambda"));
}

TEST_CASE("traced objective: whole set with trace_sample 1, a fixed sample otherwise", "[engine]") {
  const Dataset ds = fixtures::gaussian(3000, 10, 17, 0.7);
  EngineSettings s = settings(1e-3);
  s.epochs = 4;
  s.trace_objective = true;
  s.trace_sample = 1.0;
  const TrainResult full = train(ds, Hinge(1), s);
  REQUIRE(full.trace.size() == 4);
  for (const EpochInfo& e : full.trace) CHECK(e.has_objective);
  // The last trace point is the returned model on the whole training set.
  CHECK(full.trace.back().sample_objective == Approx(full.objective).epsilon(1e-12));

  s.trace_sample = 0.1;  // 300 rows
  const TrainResult sampled = train(ds, Hinge(1), s);
  CHECK(sampled.weights == full.weights);  // tracing never changes the model
  CHECK(sampled.objective == full.objective);
  const double estimate = sampled.trace.back().sample_objective;
  CHECK(estimate != full.objective);                               // not the whole set...
  CHECK(estimate == Approx(full.objective).epsilon(0.15));         // ...but a sample of it
  CHECK(train(ds, Hinge(1), s).trace.back().sample_objective == estimate);  // fixed by the seed
  s.seed += 1;
  CHECK(train(ds, Hinge(1), s).trace.back().sample_objective != estimate);
}

TEST_CASE("trace points every N iterations, inside epochs, tracing never changes the model", "[engine]") {
  const Dataset ds = fixtures::gaussian(40, 6, 23, 0.7);
  EngineSettings s = settings(1e-2);
  s.iterations = 50;
  const TrainResult plain = train(ds, Hinge(1), s);
  s.trace_objective = true;
  s.trace_iterations = 7;
  const TrainResult traced = train(ds, Hinge(1), s);
  std::vector<std::uint64_t> at;
  for (const EpochInfo& e : traced.trace) {
    if (e.traced) {
      CHECK(e.has_objective);
      at.push_back(e.iterations);
    }
  }
  CHECK(at == std::vector<std::uint64_t>{7, 14, 21, 28, 35, 42, 49, 50});
  CHECK(traced.weights == plain.weights);

  // Automatic stopping: the same model with or without a trace at every epoch.
  const Dataset big = fixtures::gaussian(2000, 10, 29, 0.7);
  EngineSettings a = settings(1e-4);
  const TrainResult auto_plain = train(big, Hinge(1), a);
  a.trace_objective = true;
  a.trace_every = 1;
  const TrainResult auto_traced = train(big, Hinge(1), a);
  CHECK(auto_traced.iterations == auto_plain.iterations);
  CHECK(auto_traced.weights == auto_plain.weights);
  a.trace_every = 0;
  a.trace_iterations = 333;
  CHECK(train(big, Hinge(1), a).weights == auto_plain.weights);
}
