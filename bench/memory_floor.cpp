// The hardware floor under "time per epoch flat in the dimension".
//
// Replays the memory traffic of one Pegasos epoch with none of its arithmetic:
// n rows of `nnz` uniform random indices in 0..d, visited in a random order;
// per row, a dot product with a table of (V, U) pairs (16 bytes per feature,
// the layout of core/scaled_weights.hpp) and then an update of both entries
// of every touched row, with the rows' weights prefetched `ahead` rows early.
// It also times independent random 64-byte loads from a table of the same size.
//
// At d = 10^3 the table sits in L1/L2; at d = 10^7 (160 MB) every touched
// weight is a memory access. n·nnz such loads, fully overlapped, are a lower
// bound for any epoch over bench/synth_d1e7.svm (4M touched weights); compare
// it with the engine's measured epoch at d = 10^3 (bench/run_bench.py).
//
// Build and run: ninja -C build memory_floor && build/memory_floor
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace {

struct Table {
  explicit Table(std::size_t doubles) {
    constexpr std::size_t kHuge = std::size_t{2} << 20;
    bytes = (doubles * sizeof(double) + kHuge - 1) / kHuge * kHuge;
    p = static_cast<double*>(std::aligned_alloc(kHuge, bytes));
    if (p == nullptr) std::abort();
    ::madvise(p, bytes, MADV_HUGEPAGE);
    std::fill_n(p, bytes / sizeof(double), 0.0);
  }
  ~Table() { std::free(p); }
  double* p;
  std::size_t bytes;
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Best time of `epochs` epochs of the Pegasos access pattern.
double epoch_time(std::size_t d, std::size_t n, std::size_t nnz, std::size_t ahead, int epochs) {
  std::mt19937_64 rng(1);
  std::vector<std::uint32_t> idx(n * nnz);
  std::vector<float> val(n * nnz, 0.2f);
  for (std::size_t i = 0; i < n; ++i) {
    std::uint32_t* r = &idx[i * nnz];
    for (std::size_t j = 0; j < nnz; ++j) r[j] = static_cast<std::uint32_t>(rng() % d);
    std::sort(r, r + nnz);
  }
  Table t(2 * d);
  std::vector<std::uint32_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = static_cast<std::uint32_t>(i);
  double best = 1e300, sink = 0.0;
  for (int e = 0; e < epochs; ++e) {
    std::shuffle(order.begin(), order.end(), rng);
    const auto t0 = std::chrono::steady_clock::now();
    for (std::size_t s = 0; s < n; ++s) {
      if (s + ahead < n) {
        const std::uint32_t* r = &idx[std::size_t{order[s + ahead]} * nnz];
        for (std::size_t j = 0; j < nnz; ++j) __builtin_prefetch(t.p + 2 * std::size_t{r[j]}, 1);
      }
      const std::uint32_t* r = &idx[std::size_t{order[s]} * nnz];
      const float* v = &val[std::size_t{order[s]} * nnz];
      double dot = 0.0;
      for (std::size_t j = 0; j < nnz; ++j) dot += t.p[2 * std::size_t{r[j]}] * v[j];
      sink += dot;
      for (std::size_t j = 0; j < nnz; ++j) {  // every row updates V and U (worst case)
        t.p[2 * std::size_t{r[j]}] += 1e-9 * v[j];
        t.p[2 * std::size_t{r[j]} + 1] -= 2e-9 * v[j];
      }
    }
    best = std::min(best, seconds_since(t0));
  }
  if (sink == 42.0) std::puts("");
  return best;
}

// Nanoseconds per independent random 64-byte load from a table of `bytes`.
double random_load_ns(std::size_t bytes) {
  const std::size_t lines = bytes / 64;
  Table t(bytes / sizeof(double));
  std::mt19937_64 rng(2);
  std::vector<std::uint32_t> at(4'000'000);
  for (auto& a : at) a = static_cast<std::uint32_t>(rng() % lines);
  double best = 1e300, sink = 0.0;
  for (int r = 0; r < 3; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (std::uint32_t a : at) sink += t.p[std::size_t{a} * 8];
    best = std::min(best, seconds_since(t0));
  }
  if (sink == 42.0) std::puts("");
  return best / static_cast<double>(at.size()) * 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t n = 200'000, nnz = 20;  // the shape of bench/synth_d1e*.svm
  const int epochs = argc > 1 ? std::atoi(argv[1]) : 5;
  const double load_ns = random_load_ns(std::size_t{160} << 20);
  const double weights = static_cast<double>(n * nnz);
  std::printf("random 64-byte loads from a 160 MB table: %.1f ns each, overlapped as much as the core allows\n",
              load_ns);
  std::printf("lower bound at d = 1e7: %.1fM weights per epoch x %.1f ns = %.4f s per epoch (reads alone)\n",
              weights / 1e6, load_ns, weights * load_ns * 1e-9);
  double small = 0.0, large = 1e300;
  for (std::size_t ahead : {0, 1, 2, 4, 8}) {
    const double a = epoch_time(1000, n, nnz, ahead, epochs);
    const double b = epoch_time(10'000'000, n, nnz, ahead, epochs);
    std::printf("prefetch %zu rows ahead: epoch d = 1e3 %.4f s, d = 1e7 %.4f s (%.2fx)\n", ahead, a, b, b / a);
    small = ahead == 0 ? a : std::min(small, a);
    large = std::min(large, b);
  }
  std::printf("this loop: best d = 1e7 epoch %.4f s = %.2fx its best d = 1e3 epoch\n", large, large / small);
  return 0;
}
