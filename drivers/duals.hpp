// SDCA's dual variables in a model file (README § Warm start, core/model.hpp
// StoredDuals): which training rows they belong to, by a hash of the row's
// content, so that a warm start on new data that repeats some of the old rows
// resumes them from their old values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <future>
#include <optional>
#include <utility>
#include <string>
#include <string_view>
#include <vector>

#include "core/dataset.hpp"
#include "core/model.hpp"

namespace pegasos {

// XXH3-64 (fixed seed) over the row as training sees it, after the reader,
// the featurizer and normalize: the label's text, then the feature indices
// (0-based uint32) and values (float bit patterns) in the row's order. The
// same line or document read again hashes the same on any day.
std::uint64_t row_hash(const RowView& x, std::string_view label);

// row_hash of every row of `data` (its label's text), in parallel unless `serial`.
std::vector<std::uint64_t> row_hashes(const Dataset& data, bool serial = false);

// The rows' hashes in increasing order, as (hash, row) pairs: what
// collect_duals groups the fractions by. They depend on the data alone, so a
// large training set's are computed on a thread of their own while the
// solver runs (SDCA is serial, the second core idle): a 780k-row RCV1-like
// file's 440 MB of rows take 60-70 ms to hash and sort after training, all
// but the wait hidden behind it.
class RowHashJob {
 public:
  using Sorted = std::vector<std::pair<std::uint64_t, std::size_t>>;
  RowHashJob() = default;
  // Starts the job on `data` (which must outlive it) when `background`
  // (background_hashing_pays); otherwise take() computes them in parallel.
  RowHashJob(const Dataset& data, bool background);
  // The rows' hashes already computed (row_hashes, e.g. for a warm start's
  // dual_entries): take() only sorts them.
  explicit RowHashJob(std::vector<std::uint64_t> hashes) : known_(std::move(hashes)) {}
  Sorted take(const Dataset& data);

 private:
  std::future<Sorted> pending_;
  std::optional<std::vector<std::uint64_t>> known_;
};

// Whether a RowHashJob on `data` should start now: the data is large enough
// (about a million non-zeros) and a second thread may run (`threads`).
bool background_hashing_pays(const Dataset& data);

// The entries to store from a run's box fractions (n × K, TrainResult::
// alpha_fraction): rows with the same hash share one entry, the mean of
// their fractions; entries whose values are all 0 are left out; sorted by
// hash. None when there are more than StoredDuals::kMaxEntries (`note` says why).
// `hashes` (optional): the rows' job, started before training.
std::optional<StoredDuals> collect_duals(const Dataset& data, const std::vector<double>& fraction, std::size_t K,
                                         std::string& note, RowHashJob* hashes = nullptr);

// The stored fractions of output k (k < 0: all outputs, n × outputs) for each
// row of `data`: its entry's, NaN for a row with none. `matched` counts the
// rows found.
std::vector<double> match_duals(const StoredDuals& duals, const Dataset& data, int k, std::size_t& matched);

// Each row's entry in `duals` (-1 for none): the rows hashed once, for the
// warm starts of every output (match_duals below reads them per output).
std::vector<std::ptrdiff_t> dual_entries(const StoredDuals& duals, const Dataset& data, std::size_t& matched);
// The same from the rows' hashes (row_hashes(data)).
std::vector<std::ptrdiff_t> dual_entries(const StoredDuals& duals, const std::vector<std::uint64_t>& hash,
                                         std::size_t& matched);
std::vector<double> match_duals(const StoredDuals& duals, const std::vector<std::ptrdiff_t>& entries, int k);

}  // namespace pegasos
