#include "kernel/kernel_trainer.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <tbb/parallel_for.h>

#include "core/errors.hpp"
#include "core/random.hpp"
#include "kernel/budget_merge.hpp"
#include "kernel/support_set.hpp"
#include "objectives/kernel_hinge.hpp"

namespace pegasos {
namespace {

using kernel_pegasos_detail::kNoSlot;
using kernel_pegasos_detail::SupportSet;

// Kernel rows of training examples against the support set: row j holds
// k(x_s, x_j) for the first length(j) support vectors. The support list only
// grows (new entries are appended) until something is removed, so a cached
// row stays a valid prefix and a revisit of j evaluates only the support
// vectors added since. Rows grow while the total stays within the byte cap
// (first come, first served; never evicted), so what is cached depends only
// on the sampled sequence; and cached values are the very values a fresh
// evaluation gives, so the cache changes the cost, never a result.
class KernelCache {
 public:
  KernelCache(std::size_t n, std::uint64_t cap_bytes) : rows_(cap_bytes > 0 ? n : 0), reserved_(rows_.size(), 0), cap_(cap_bytes) {}

  std::size_t length(std::size_t j) const { return rows_.empty() ? 0 : rows_[j].size(); }
  const double* data(std::size_t j) const { return rows_[j].data(); }
  std::uint64_t generation() const { return generation_; }

  // Append `count` values to row j; false (nothing stored) beyond the cap.
  bool extend(std::size_t j, const double* values, std::size_t count) {
    if (rows_.empty()) return false;
    std::vector<double>& r = rows_[j];
    const std::size_t need = r.size() + count;
    if (need > reserved_[j]) {
      // Grow by half again (amortised O(1) copies), or just enough near the cap.
      std::size_t grow = std::max(need, reserved_[j] + reserved_[j] / 2);
      if (used_ + (grow - reserved_[j]) * sizeof(double) > cap_) grow = need;
      if (used_ + (grow - reserved_[j]) * sizeof(double) > cap_) return false;
      used_ += (grow - reserved_[j]) * sizeof(double);
      reserved_[j] = grow;
      r.reserve(grow);
    }
    r.insert(r.end(), values, values + count);
    return true;
  }

  void clear(std::uint64_t generation) {
    for (auto& r : rows_) std::vector<double>().swap(r);
    std::fill(reserved_.begin(), reserved_.end(), 0);
    used_ = 0;
    generation_ = generation;
  }

 private:
  std::vector<std::vector<double>> rows_;
  std::vector<std::size_t> reserved_;  // our own accounting (capacity() may round up)
  std::uint64_t cap_;
  std::uint64_t used_ = 0;
  std::uint64_t generation_ = 0;
};

}  // namespace

namespace {

// What the training loop and the final objective share: the data, the kernel
// (gamma resolved), ‖x_i‖² of every training row (RBF only; else zeros) and
// how a query row is laid out (scattered into a dense array unless the
// dimension is huge, then merge-join).
struct KernelProblem {
  const Dataset& data;
  KernelParams kernel;
  std::size_t K;  // outputs: 1 (binary) or the number of classes
  std::vector<double> sq;
  bool scatter;
  bool intercept = false;  // k + 1: raw_c gains Σ_s a_sc
  bool merge = false;      // a full budget merges (RBF), else removes
};

// Σ_s a_sc per output (the constant part of k + 1), in support-set order.
void add_intercept_raw(const KernelProblem& p, const SupportSet& S, double* raw) {
  if (!p.intercept) return;
  for (std::size_t s_i = 0; s_i < S.size(); ++s_i) {
    for (std::size_t c = 0; c < p.K; ++c) raw[c] += S.coefficients()[s_i * p.K + c];
  }
}

// Kernel values of row j against the whole support set: the cached prefix
// plus fresh evaluations for the support vectors added since (parallel over
// blocks when there is enough work). One query at a time, scattered into a
// dense array (zeroed once, cleared after use in O(nnz)) unless the dimension
// is huge.
class KernelRows {
 public:
  KernelRows(const KernelProblem& p, const SupportSet& S, KernelCache& cache)
      : p_(p), S_(S), cache_(cache), dense_(p.scatter ? p.data.dimension : 0, 0.0) {}

  // Pointer to |S| values, valid until the next call.
  const double* row(std::size_t j) {
    const SupportSet& S = S_;
    KernelCache& cache = cache_;
    const std::size_t m = S.size();
    const std::size_t first = cache.length(j);
    if (first == m) return m == 0 ? nullptr : cache.data(j);
    const RowView x = p_.data.row(j);
    KernelQuery query{x, nullptr, p_.sq[j]};
    if (p_.scatter) {
      for (std::uint32_t p = 0; p < x.nnz; ++p) dense_[x.indices[p]] = x.values[p];
      query.dense = dense_.data();
    }
    const std::size_t count = m - first;
    fresh_.resize(count);
    const std::size_t blocks = (count + kExpansionBlock - 1) / kExpansionBlock;
    auto run_block = [&](std::size_t b) {
      const std::size_t end = std::min(count, (b + 1) * kExpansionBlock);
      for (std::size_t i = b * kExpansionBlock; i < end; ++i) {
        const std::size_t slot = first + i;
        fresh_[i] = query_kernel(p_.kernel, S.sv(slot), S.squared_norms()[slot], query);
      }
    };
    const std::uint64_t work = m == 0 ? 0 : S.nnz() / m * count;
    if (blocks > 1 && (count > kParallelKernelEvaluations || work > kParallelMultiplyAdds)) {
      tbb::parallel_for(tbb::blocked_range<std::size_t>(0, blocks, 1), [&](const tbb::blocked_range<std::size_t>& r) {
        for (std::size_t b = r.begin(); b != r.end(); ++b) run_block(b);
      });
    } else {
      for (std::size_t b = 0; b < blocks; ++b) run_block(b);
    }
    if (p_.scatter) {
      for (std::uint32_t p = 0; p < x.nnz; ++p) dense_[x.indices[p]] = 0.0;
    }
    evaluations_ += count;
    if (cache.extend(j, fresh_.data(), count)) return cache.data(j);
    if (first == 0) return fresh_.data();
    joined_.assign(cache.data(j), cache.data(j) + first);
    joined_.insert(joined_.end(), fresh_.begin(), fresh_.end());
    return joined_.data();
  }

  // Kernel evaluations so far.
  std::uint64_t evaluations() const { return evaluations_; }

 private:
  const KernelProblem& p_;
  const SupportSet& S_;
  KernelCache& cache_;
  std::vector<double> dense_;
  std::vector<double> fresh_, joined_;
  std::uint64_t evaluations_ = 0;
};

// One mini-batch: its rows, raw expansions, scores, subgradient coefficients.
struct KernelBatch {
  KernelBatch(std::size_t k, std::size_t K) : rows(k), raw(k * K), scores(k * K), coeff(k * K), active(k), delta(K) {}
  std::vector<std::size_t> rows;
  std::vector<double> raw, scores, coeff;
  std::vector<char> active;
  std::vector<double> delta;
  std::vector<double> dense, kv, merged;  // merge_weakest's work space
};

// Scores of the batch with the current counts (all judged with the same α),
// w_t = 1/(λ(t−1)k) Σ a φ, w_1 = 0; and the subgradient of each row's loss.
void score_batch(const KernelProblem& p, const KernelHinge& objective, const SupportSet& S, KernelRows& rows,
                 double lambda, std::uint64_t t, KernelBatch& b) {
  const std::size_t k = b.rows.size(), K = p.K;
  for (std::size_t a = 0; a < k; ++a) {
    combine_expansion(S.coefficients(), K, S.size(), rows.row(b.rows[a]), &b.raw[a * K]);
    add_intercept_raw(p, S, &b.raw[a * K]);
  }
  const double scale = t == 1 ? 0.0 : 1.0 / (lambda * static_cast<double>(t - 1) * static_cast<double>(k));
  for (std::size_t a = 0; a < k; ++a) {
    for (std::size_t c = 0; c < K; ++c) {
      if (!std::isfinite(b.raw[a * K + c])) {
        throw InputError(p.data.source + ": the kernel expansion became infinite or NaN at iteration " + std::to_string(t) +
                         "; scale the features or lower the kernel's gamma / degree");
      }
      b.scores[a * K + c] = scale * b.raw[a * K + c];
    }
    b.active[a] = objective.subgradient(p.data.row(b.rows[a]), &b.scores[a * K], &b.coeff[a * K]);
  }
}

// Budget merging (kernel/budget_merge.hpp): the weakest support vector m and
// the partner of its class whose merge loses least become one point. Kernel
// values k(x_m, x_n) for every n (parallel over blocks when there is enough
// work; each value computed alone, so the same bits for any thread count).
// Without a partner of its class, m is removed.
void merge_weakest(const KernelProblem& p, SupportSet& S, KernelBatch& b) {
  const std::size_t m = S.weakest(), K = p.K, size = S.size();
  const RowView xm = S.sv(m);
  KernelQuery q{xm, nullptr, S.squared_norms()[m]};
  if (p.scatter) {
    b.dense.resize(p.data.dimension, 0.0);
    for (std::uint32_t i = 0; i < xm.nnz; ++i) b.dense[xm.indices[i]] = xm.values[i];
    q.dense = b.dense.data();
  }
  b.kv.assign(size, 0.0);
  auto run_block = [&](std::size_t blk) {
    for (std::size_t n = blk * kExpansionBlock; n < std::min(size, (blk + 1) * kExpansionBlock); ++n) {
      if (n != m && S.label(n) == S.label(m)) b.kv[n] = query_kernel(p.kernel, S.sv(n), S.squared_norms()[n], q);
    }
  };
  const std::size_t blocks = (size + kExpansionBlock - 1) / kExpansionBlock;
  if (blocks > 1 && (size > kParallelKernelEvaluations || S.nnz() > kParallelMultiplyAdds)) {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, blocks, 1), [&](const tbb::blocked_range<std::size_t>& r) {
      for (std::size_t blk = r.begin(); blk != r.end(); ++blk) run_block(blk);
    });
  } else {
    for (std::size_t blk = 0; blk < blocks; ++blk) run_block(blk);
  }
  if (p.scatter) {
    for (std::uint32_t i = 0; i < xm.nnz; ++i) b.dense[xm.indices[i]] = 0.0;
  }
  const double* am = &S.coefficients()[m * K];
  std::size_t partner = kNoSlot;
  double least = std::numeric_limits<double>::infinity();
  for (std::size_t n = 0; n < size; ++n) {
    if (n == m || S.label(n) != S.label(m)) continue;
    const double* an = &S.coefficients()[n * K];
    const double e = budget_merge::degradation(am, an, K, b.kv[n], budget_merge::screening_h(am, an, K));
    if (e < least) {
      least = e;
      partner = n;
    }
  }
  if (partner == kNoSlot) {
    S.remove(m);
    return;
  }
  const double* an = &S.coefficients()[partner * K];
  const double kmn = b.kv[partner], h = budget_merge::best_h(am, an, K, kmn);
  const double km = std::pow(kmn, (1.0 - h) * (1.0 - h)), kn = std::pow(kmn, h * h);
  b.merged.resize(K);
  for (std::size_t c = 0; c < K; ++c) b.merged[c] = am[c] * km + an[c] * kn;
  S.merge(m, partner, h, b.merged.data());
}

// Count the violators: a_jc += −∂ℓ/∂s_c (= y_jc for the hinge); a new support
// vector beyond the budget first evicts the weakest (or merges it, p.merge).
// Returns the evictions.
std::uint64_t count_violators(const KernelProblem& p, std::size_t budget, KernelBatch& b, SupportSet& S,
                              KernelCache& cache) {
  std::uint64_t evictions = 0;
  for (std::size_t a = 0; a < b.rows.size(); ++a) {
    if (!b.active[a]) continue;
    const std::size_t j = b.rows[a];
    if (S.slot(j) == kNoSlot && S.size() >= budget) {
      if (p.merge) {
        merge_weakest(p, S, b);
      } else {
        S.remove(S.weakest());
      }
      ++evictions;
    }
    for (std::size_t c = 0; c < p.K; ++c) b.delta[c] = -b.coeff[a * p.K + c];
    S.add(j, b.delta.data(), p.sq[j]);
    // Cached rows are prefixes of the support list: a removal shifts it.
    if (S.removals() != cache.generation()) cache.clear(S.removals());
  }
  return evictions;
}

// The model of support set S after t steps (coefficients as counts; the
// decision scale comes from lambda, t and k).
KernelModel kernel_model_of(const KernelProblem& p, const SupportSet& S, double lambda, std::uint64_t t, std::size_t k) {
  KernelModel m;
  m.classes = p.data.classes;
  m.dimension = p.data.dimension;
  m.outputs = static_cast<int>(p.K);
  m.kernel = p.kernel;
  m.lambda = lambda;
  m.iterations = t;
  m.batch_size = static_cast<int>(k);
  for (std::size_t s_i = 0; s_i < S.size(); ++s_i) {
    const RowView x = S.sv(s_i);
    m.sv_indices.insert(m.sv_indices.end(), x.indices, x.indices + x.nnz);
    m.sv_values.insert(m.sv_values.end(), x.values, x.values + x.nnz);
    m.sv_ptr.push_back(m.sv_indices.size());
  }
  m.coefficients.assign(S.coefficients(), S.coefficients() + S.size() * p.K);
  if (p.intercept) {
    m.intercept.assign(p.K, 0.0);
    add_intercept_raw(p, S, m.intercept.data());
    for (double& b : m.intercept) b *= m.decision_scale();
  }
  m.prepare();
  return m;
}

// Raw expansions Σ_s a_sc k(x_s, x_i) of every training row (n × K).
// Cached kernel rows are reused; the values are those model.scores would
// compute, bit for bit (same kernel values, same block order).
std::vector<double> training_expansions(const KernelProblem& p, const SupportSet& S, const KernelCache& cache) {
  const std::size_t n = p.data.size(), K = p.K;
  const std::uint32_t dim = p.data.dimension;
  const bool scatter = p.scatter;
  std::vector<double> rows_raw(n * K);
  const std::size_t msv = S.size();
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 16), [&](const tbb::blocked_range<std::size_t>& r) {
    std::vector<double> q(scatter ? dim : 0, 0.0), kv(msv);
    for (std::size_t i = r.begin(); i != r.end(); ++i) {
      const std::size_t first = std::min(cache.length(i), msv);
      if (first == msv) {
        combine_expansion(S.coefficients(), K, msv, msv == 0 ? nullptr : cache.data(i), &rows_raw[i * K]);
        continue;
      }
      const RowView x = p.data.row(i);
      KernelQuery query{x, nullptr, p.sq[i]};
      if (scatter) {
        for (std::uint32_t j = 0; j < x.nnz; ++j) q[x.indices[j]] = x.values[j];
        query.dense = q.data();
      }
      if (first > 0) std::copy(cache.data(i), cache.data(i) + first, kv.begin());
      for (std::size_t slot = first; slot < msv; ++slot) {
        kv[slot] = query_kernel(p.kernel, S.sv(slot), S.squared_norms()[slot], query);
      }
      if (scatter) {
        for (std::uint32_t j = 0; j < x.nnz; ++j) q[x.indices[j]] = 0.0;
      }
      combine_expansion(S.coefficients(), K, msv, kv.data(), &rows_raw[i * K]);
    }
  });
  return rows_raw;
}

// The training objective of m: the mean loss over the training rows, and (rows
// in S) the regulariser Σ_c scale² Σ_s a_sc raw_c(x_s), summed in support-set
// order. Stored in m.training ("objective", "regularizer").
void record_objective(const KernelProblem& p, const KernelHinge& objective, const SupportSet& S,
                      const KernelCache& cache, double lambda, KernelModel& m) {
  const std::size_t n = p.data.size(), K = p.K;
  const std::vector<double> rows_raw = training_expansions(p, S, cache);
  const double final_scale = m.decision_scale();
  double regularizer = 0.0;
  if (S.has_merged()) {  // merged points are not training rows: the Gram sum over S
    regularizer = m.regularizer();
  } else {
    double sq_norm = 0.0;
    for (std::size_t s_i = 0; s_i < S.size(); ++s_i) {
      for (std::size_t c = 0; c < K; ++c) sq_norm += m.coefficients[s_i * K + c] * rows_raw[S.row(s_i) * K + c];
    }
    double b2 = 0.0;
    for (const double b : m.intercept) b2 += b * b;
    regularizer = lambda / 2 * (final_scale * final_scale * sq_norm + b2);
  }
  double loss = 0.0;
  std::vector<double> sc(K);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t c = 0; c < K; ++c) {
      sc[c] = final_scale * rows_raw[i * K + c] + (m.intercept.empty() ? 0.0 : m.intercept[c]);
    }
    loss += objective.loss(p.data.row(i), sc.data());
  }
  const double objective_value = regularizer + loss / static_cast<double>(n);
  if (!std::isfinite(objective_value)) {
    throw InputError(p.data.source + ": the kernel expansion of the final model is infinite or NaN; scale the "
                     "features or lower the kernel's gamma / degree");
  }
  m.training.objective = objective_value;
  m.training.regularizer = regularizer;
}

}  // namespace

KernelModel train_kernel(const Dataset& data, const KernelSettings& ks, const EngineSettings& s,
                         const std::function<bool(const EpochInfo&)>& on_epoch) {
  const std::size_t n = data.size();
  if (n == 0) throw InputError(data.source + ": no training examples");
  if (data.classes.size() < 2) throw InputError(data.source + ": a classifier needs at least two classes");
  if (!(s.lambda > 0) || s.batch_size < 1) throw std::invalid_argument("train_kernel: lambda > 0 and batch_size >= 1 required");
  const std::size_t K = data.classes.size() == 2 ? 1 : data.classes.size();
  const KernelHinge objective(static_cast<int>(K));
  const std::uint32_t dim = data.dimension;
  KernelParams kernel = ks.kernel;
  if (kernel.type != KernelType::kLinear && kernel.gamma == 0.0) kernel.gamma = 1.0 / std::max<std::uint32_t>(dim, 1);
  const std::size_t k = batch_for(s, n);
  const double lambda = s.lambda;
  const std::size_t budget = ks.max_support_vectors == 0 ? kNoSlot : static_cast<std::size_t>(ks.max_support_vectors);

  const std::uint64_t steps_per_epoch = (n + k - 1) / k;
  std::uint64_t T = s.iterations;
  const double epochs = T == 0 && s.epochs <= 0 ? kDefaultKernelEpochs : s.epochs;
  if (T == 0) T = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::ceil(epochs * static_cast<double>(n) / static_cast<double>(k))));

  // ‖x_i‖² of every training row (RBF); computed once.
  KernelProblem problem{data, kernel, K, std::vector<double>(n, 0.0), dim <= kDenseQueryMaxDimension, ks.intercept,
                        ks.merge_budget};
  if (ks.merge_budget && kernel.type != KernelType::kRbf) {
    throw std::invalid_argument("train_kernel: budget merging needs the RBF kernel");
  }
  if (kernel.type == KernelType::kRbf) {
    tbb::parallel_for(std::size_t{0}, n, [&](std::size_t i) { problem.sq[i] = row_squared_norm(data.row(i)); });
  }

  Sampler sampler(data, s.sampling, derive_seed(s.seed, 1));
  SupportSet S(data, K);
  std::uint64_t evictions = 0;
  // Budgeted runs evict every step once full, which would clear the cache each
  // time; their support set is small anyway.
  const double cache_mb = budget == kNoSlot ? ks.cache_megabytes : 0.0;
  KernelCache cache(n, static_cast<std::uint64_t>(std::max(0.0, cache_mb) * 1048576.0));
  KernelRows rows(problem, S, cache);
  KernelBatch batch(k, K);

  std::uint64_t t = 0;
  bool stopped_early = false;
  while (t < T) {
    ++t;
    for (std::size_t a = 0; a < k; ++a) batch.rows[a] = sampler.next();
    score_batch(problem, objective, S, rows, lambda, t, batch);
    evictions += count_violators(problem, budget, batch, S, cache);
    if (t % steps_per_epoch == 0 || t == T) {
      EpochInfo info;
      info.epoch = static_cast<int>((t + steps_per_epoch - 1) / steps_per_epoch);
      info.iterations = t;
      if (on_epoch && !on_epoch(info)) {
        stopped_early = true;
        break;
      }
    }
  }

  KernelModel m = kernel_model_of(problem, S, lambda, t, k);
  m.training.examples = n;
  m.training.nnz = data.nnz();
  m.training.iterations = t;
  m.training.epochs = static_cast<double>(t) * static_cast<double>(k) / static_cast<double>(n);
  m.training.support_vectors = S.size();
  m.training.evictions = evictions;
  // A fixed number of steps, no certificate: never "converged".
  m.training.solver = "pegasos";
  m.training.converged = false;
  m.training.stopped_by = to_string(stopped_early ? StopReason::kCallback : StopReason::kBudget);
  m.training.kernel_evaluations = rows.evaluations();
  if (ks.compute_objective) record_objective(problem, objective, S, cache, lambda, m);
  return m;
}

double kernel_model_objective(const KernelModel& model, const Dataset& data) {
  const double regularizer = model.training.regularizer ? *model.training.regularizer : model.regularizer();
  std::vector<std::size_t> rows;
  for (std::size_t i = 0; i < data.size(); ++i) {
    if (data.labels[i] >= 0) rows.push_back(i);
  }
  if (rows.empty()) return regularizer;
  const std::size_t K = static_cast<std::size_t>(model.outputs);
  if (model.one_vs_one) {  // the hinge of every pair a row's class is in, oriented towards it
    const std::vector<double> f = model.decision_values(data);
    const std::size_t P = model.columns();
    double total = 0.0;
    for (std::size_t i : rows) {
      const auto y = static_cast<std::size_t>(data.labels[i]);
      for (std::size_t a = 0, p = 0; a < K; ++a) {
        for (std::size_t b = a + 1; b < K; ++b, ++p) {
          if (y == a) total += std::max(0.0, 1.0 + f[i * P + p]);
          if (y == b) total += std::max(0.0, 1.0 - f[i * P + p]);
        }
      }
    }
    return regularizer + total / static_cast<double>(rows.size());
  }
  const std::vector<double> scores = model.scores(data);
  const KernelHinge objective(model.outputs);
  double total = 0.0;
  for (std::size_t i : rows) total += objective.loss(data.row(i), &scores[i * K]);
  return regularizer + total / static_cast<double>(rows.size());
}

}  // namespace pegasos
