// SDCA's dual variables in a model file (README § Warm start, core/model.hpp
// StoredDuals): which training rows they belong to, by a hash of the row's
// content, so that a warm start on new data that repeats some of the old rows
// resumes them from their old values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
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

// row_hash of every row of `data` (its label's text), in parallel.
std::vector<std::uint64_t> row_hashes(const Dataset& data);

// The entries to store from a run's box fractions (n × K, TrainResult::
// alpha_fraction): rows with the same hash share one entry, the mean of
// their fractions; entries whose values are all 0 are left out; sorted by
// hash. None when there are more than StoredDuals::kMaxEntries (`note` says why).
std::optional<StoredDuals> collect_duals(const Dataset& data, const std::vector<double>& fraction, std::size_t K,
                                         std::string& note);

// The stored fractions of output k (k < 0: all outputs, n × outputs) for each
// row of `data`: its entry's, NaN for a row with none. `matched` counts the
// rows found.
std::vector<double> match_duals(const StoredDuals& duals, const Dataset& data, int k, std::size_t& matched);

// Each row's entry in `duals` (-1 for none): the rows hashed once, for the
// warm starts of every output (match_duals below reads them per output).
std::vector<std::ptrdiff_t> dual_entries(const StoredDuals& duals, const Dataset& data, std::size_t& matched);
std::vector<double> match_duals(const StoredDuals& duals, const std::vector<std::ptrdiff_t>& entries, int k);

}  // namespace pegasos
