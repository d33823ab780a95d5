// Training in the feature space the data uses. Hashed text puts 4702 mails
// into 2^20 buckets of which 82k are used, so every dense weight vector of a
// solver is 12× longer than the problem: coordinate ascent's random reads of
// w spread over 8 MB instead of 650 kB, every exact check sums ‖w‖² over 2^20
// entries and copies them, and each new vector faults in 8 MB of pages.
// Where the used features are at most half of a large dimension, training
// runs on a copy of the row indices renumbered to 0..u−1 (in increasing
// order, so every row keeps its entries' order), and the result's weights are
// put back in the data's dimension (every solver: core/solver.hpp,
// core/ova_trainer.hpp). Every sum over the weights is a sequential sum in
// index order or a sum over a row's entries, so dropping features that are
// zero throughout changes no bit of the result; Pegasos' check schedule,
// sized by the dimension, keeps the data's (EngineSettings::check_dimension);
// where another decision is sized by the dimension itself (the interior-point
// hand-over, the multiclass dual's smoothed point) and would come out
// otherwise, nothing is compacted (of()), and a warm start's weights keep
// their features. The tests compare runs with compaction on and off bit for
// bit. SpamAssassin by date, 4702 mails, default settings: train 0.16–0.18 →
// 0.13–0.14 s, the same passes and the same model. Pegasos on 3 mails hashed
// into 2^24 buckets: every check averaged and summed 16M weights.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "core/dataset.hpp"
#include "core/fresh_memory.hpp"
#include "core/parallel.hpp"
#include "core/sdca_common.hpp"
#include "core/training.hpp"

namespace pegasos {

class CompactFeatures {
 public:
  // Below this many features a dense vector is cheap enough (512 kB).
  static constexpr std::uint32_t kMinDimension = 65536;

  // What a solver decides from the dimension, to keep: the outputs K of the
  // problem it solves (1 for a binary one, also per class of one-vs-all), and
  // whether it is the multiclass dual (its smoothed point is kept only where
  // the K·(d + b) weights are at most nnz).
  struct Shape {
    std::size_t outputs = 1;
    bool multiclass_dual = false;
    // Whether the run may hand over to the interior-point solver: the dual
    // solvers' own runs. Pegasos' dual points are improved by runs of
    // kCertifyPasses passes (core/solver.hpp), whose budget never pays for
    // it (InteriorPointGate::pays: 80 steps of n·p² against 2n visits of 4p).
    bool interior_point = true;
  };

  // The renumbered copy of `data`, or nullopt where it does not pay or could
  // change the run: a dimension under kMinDimension, more than half of the
  // features used, compaction off (EngineSettings::compact_features), a trace
  // (its callback reads the weights), or a decision the dual solvers size by
  // the dimension that would come out otherwise — the interior-point
  // hand-over, possible for at most 1024 unknowns (never in the full
  // dimension), and the multiclass dual's smoothed point (sdca_common.hpp
  // SmoothedIterate::affordable). `warm`: warm starts' weights (dimension ×
  // outputs each); features where one is non-zero are kept too, so the old
  // model's weights on features the new data lacks are carried as before.
  // One read of the row indices to count, one to renumber.
  static std::optional<CompactFeatures> of(const Dataset& data, const EngineSettings& s, Shape solver,
                                           const std::vector<const WarmStart*>& warm = {}) {
    if (data.dimension < kMinDimension || s.trace_objective || !s.compact_features) return std::nullopt;
    std::vector<std::uint32_t> rank;  // 1 for a used feature, then its new index
    fill_fresh(rank, data.dimension, std::uint32_t{0});
    const std::uint32_t* idx = data.indices.data();
    const std::uint64_t nnz = data.nnz();
    for (std::uint64_t e = 0; e < nnz; ++e) rank[idx[e]] = 1;
    for (const WarmStart* w : warm) {
      const std::size_t K = w->weights.size() / data.dimension;
      for (std::size_t e = 0; e < w->weights.size(); ++e) {
        if (w->weights[e] != 0.0) rank[e / K] = 1;
      }
    }
    CompactFeatures c;
    for (std::uint32_t j = 0; j < data.dimension; ++j) {
      if (rank[j] != 0) {
        rank[j] = static_cast<std::uint32_t>(c.used_.size());
        c.used_.push_back(j);
      }
    }
    if (c.used_.empty() || c.used_.size() > data.dimension / 2) return std::nullopt;
    const std::size_t b = s.bias == BiasMode::kFeature ? 1 : 0, K = solver.outputs;
    if (solver.interior_point && (c.used_.size() + b) * K <= InteriorPointGate::kMaxUnknowns) return std::nullopt;
    if (solver.multiclass_dual && ((c.used_.size() + b) * K <= nnz) != ((data.dimension + b) * K <= nnz)) {
      return std::nullopt;
    }
    c.dimension_ = data.dimension;
    Dataset& d = c.data_;
    d.row_ptr = Buffer<std::uint64_t>::borrow(data.row_ptr.data(), data.row_ptr.size());
    d.values = Buffer<float>::borrow(data.values.data(), data.values.size());
    d.unit_values = data.unit_values;  // unit values stay unit: every row reads the array's start
    std::vector<std::uint32_t> renumbered;
    resize_populated(renumbered, nnz);
    parallel_for_index(data.size(), [&](std::size_t i) {
      for (std::uint64_t e = data.row_ptr[i]; e < data.row_ptr[i + 1]; ++e) renumbered[e] = rank[idx[e]];
    }, kSerialRows);
    d.indices = std::move(renumbered);
    d.labels = data.labels;
    d.classes = data.classes;
    d.dimension = static_cast<std::uint32_t>(c.used_.size());
    d.source = data.source;
    d.weights = data.weights;
    d.lender = data.lender;
    return c;
  }

  // `train(data, settings, warm)` on the compact data where of() compacts
  // (with compaction off in `settings`, every warm start compacted), its
  // result's weights put back; nullopt where of() does not compact.
  template <class Train>
  static std::optional<TrainResult> train_compacted(const Dataset& data, const EngineSettings& s, Shape shape,
                                                    const std::vector<const WarmStart*>& warm, Train&& train) {
    const std::optional<CompactFeatures> c = of(data, s, shape, warm);
    if (!c) return std::nullopt;
    std::vector<WarmStart> cw;
    for (const WarmStart* w : warm) cw.push_back(c->compact(*w));
    EngineSettings inner = s;
    inner.compact_features = false;  // compact already
    if (inner.check_dimension == 0) inner.check_dimension = data.dimension;  // Pegasos checks as in the full space
    TrainResult r = train(c->data(), inner, cw);
    c->expand(r);
    return r;
  }

  // The rows with their features renumbered (borrows the original's values
  // and row starts: the original must outlive it).
  const Dataset& data() const { return data_; }

  // A warm start's weights (dimension × K) in the compact space.
  WarmStart compact(const WarmStart& warm) const {
    WarmStart out = warm;
    const std::size_t K = warm.weights.size() / dimension_;
    out.weights.assign(used_.size() * K, 0.0);
    for (std::size_t u = 0; u < used_.size(); ++u) {
      for (std::size_t k = 0; k < K; ++k) out.weights[u * K + k] = warm.weights[used_[u] * K + k];
    }
    return out;
  }

  // The result's weights back in the data's dimension (zero off the used
  // features).
  void expand(TrainResult& r) const {
    const std::size_t K = r.weights.size() / used_.size();
    std::vector<double> w;
    fill_fresh(w, static_cast<std::size_t>(dimension_) * K, 0.0);
    for (std::size_t u = 0; u < used_.size(); ++u) {
      for (std::size_t k = 0; k < K; ++k) w[used_[u] * K + k] = r.weights[u * K + k];
    }
    r.weights = std::move(w);
    r.dimension = dimension_;
  }

  // `on_epoch` for a run on the compact data: the same calls, without the
  // weights (only traces read them, and traces do not compact).
  static std::function<bool(const EpochInfo&)> without_weights(const std::function<bool(const EpochInfo&)>& on_epoch) {
    if (!on_epoch) return {};
    return [&on_epoch](const EpochInfo& e) {
      EpochInfo copy = e;
      copy.weights = nullptr;
      copy.bias = nullptr;
      return on_epoch(copy);
    };
  }

 private:
  std::vector<std::uint32_t> used_;  // compact index → the data's feature index, increasing
  std::uint32_t dimension_ = 0;      // the data's
  Dataset data_;
};

}  // namespace pegasos
