// Parallel loops that do not start TBB for work too small to share.
//
// TBB starts its worker threads (and looks for its optional server library)
// at the first parallel loop of a process: about a millisecond, which is most
// of a whole `pegasos train` on a small file (UCI sets of a few hundred rows
// take 1–3 ms in all). A loop whose iterations are independent gives the same
// result run inline, so small loops are run inline.
#pragma once

#include <cstddef>
#include <utility>

#include <tbb/parallel_for.h>

namespace pegasos {

// Row loops of cheap per-row work run inline up to this many rows.
inline constexpr std::size_t kSerialRows = 4096;

// f(i) for i in [0, n), in parallel unless n ≤ serial_up_to. The iterations
// must be independent (each writes only its own results).
template <class F>
void parallel_for_index(std::size_t n, F&& f, std::size_t serial_up_to = 1) {
  if (n <= serial_up_to) {
    for (std::size_t i = 0; i < n; ++i) f(i);
    return;
  }
  tbb::parallel_for(std::size_t{0}, n, std::forward<F>(f));
}

}  // namespace pegasos
