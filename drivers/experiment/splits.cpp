// Deterministic splits: k folds, a holdout, and row subsets of a dataset.
#include <algorithm>
#include <cmath>
#include <span>

#include "core/random.hpp"
#include "drivers/experiment.hpp"

namespace pegasos {

namespace {

// Rows grouped by class (all rows in one group when not stratified), each
// group shuffled with its own stream so the split of one class does not
// depend on the others.
std::vector<std::vector<std::size_t>> shuffled_groups(const std::vector<int>& labels, bool stratified,
                                                      std::uint64_t seed) {
  std::vector<std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const std::size_t g = stratified ? static_cast<std::size_t>(std::max(labels[i], -1) + 1) : 0;
    if (groups.size() <= g) groups.resize(g + 1);
    groups[g].push_back(i);
  }
  for (std::size_t g = 0; g < groups.size(); ++g) {
    Rng rng(derive_seed(seed, 1000 + g));
    rng.shuffle(std::span<std::size_t>(groups[g]));
  }
  return groups;
}

}  // namespace

std::vector<std::vector<std::size_t>> make_folds(const std::vector<int>& labels, int folds, bool stratified,
                                                 std::uint64_t seed) {
  const std::size_t K = static_cast<std::size_t>(folds);
  std::vector<std::vector<std::size_t>> out(K);
  std::size_t next = 0;
  for (const auto& group : shuffled_groups(labels, stratified, seed)) {
    for (std::size_t i : group) {
      out[next].push_back(i);
      next = (next + 1) % K;
    }
  }
  for (auto& f : out) std::sort(f.begin(), f.end());
  return out;
}

HoldoutSplit holdout_split(const std::vector<int>& labels, double fraction, bool stratified, std::uint64_t seed) {
  HoldoutSplit s;
  for (const auto& group : shuffled_groups(labels, stratified, seed)) {
    const auto take = static_cast<std::size_t>(std::llround(fraction * static_cast<double>(group.size())));
    s.test.insert(s.test.end(), group.begin(), group.begin() + static_cast<std::ptrdiff_t>(take));
    s.train.insert(s.train.end(), group.begin() + static_cast<std::ptrdiff_t>(take), group.end());
  }
  std::sort(s.train.begin(), s.train.end());
  std::sort(s.test.begin(), s.test.end());
  return s;
}

}  // namespace pegasos
