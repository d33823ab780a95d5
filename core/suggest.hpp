// "Did you mean ...?": the closest of a list of names to a misspelt one, by
// edit distance. Used for settings (drivers/config), nested text settings
// (text/options) and the command line (drivers/cli_suggest).
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace pegasos {

// Levenshtein distance: insertions, deletions and substitutions of one byte.
inline std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

// The closest of `names` to a misspelt `key` (the first on ties), or "" when
// none is within max(2, |key|/3) edits.
inline std::string closest_name(const std::string& key, const std::vector<std::string>& names) {
  std::string best;
  std::size_t best_d = std::string::npos;
  for (const auto& n : names) {
    const std::size_t d = edit_distance(key, n);
    if (d < best_d) {
      best_d = d;
      best = n;
    }
  }
  return best_d <= std::max<std::size_t>(2, key.size() / 3) ? best : "";
}

// " (did you mean 'NAME'?)" for the closest name, or "" when none is close.
inline std::string did_you_mean(const std::string& key, const std::vector<std::string>& names) {
  const std::string near = closest_name(key, names);
  return near.empty() ? "" : " (did you mean '" + near + "'?)";
}

}  // namespace pegasos
