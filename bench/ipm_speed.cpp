// The interior-point solver (core/interior_point.hpp) on one binary hinge
// problem, timed apart from the process around it: what the hand-over of
// binary SDCA costs on small, badly conditioned data (issue 21's tiny sets,
// where a C = 10 run's training is mostly this solve).
//
//   build/ipm_speed FILE C [REPEATS [cs]]
//
// Class id 1 (the larger of two labels) is +1, costs 1, the constant feature
// B = 1, lambda = 1/(C n); with "cs" the Crammer–Singer problem of all the
// file's classes instead. Prints the Newton steps, the best of REPEATS solves
// in ms, the certified gap, and a checksum of α (equal for equal results, so
// two builds can be compared bit for bit).
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "core/dataset.hpp"
#include "core/interior_point.hpp"
#include "core/sdca_common.hpp"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s FILE C [REPEATS [cs]]\n", argv[0]);
    return 2;
  }
  try {
    const pegasos::Dataset data = pegasos::read_dataset(argv[1], pegasos::ReadOptions{});
    const double C = std::strtod(argv[2], nullptr);
    const int repeats = argc > 3 ? std::atoi(argv[3]) : 20;
    const std::size_t n = data.size();
    std::vector<double> signed_cost(n), offset(n, 0.0);
    for (std::size_t i = 0; i < n; ++i) signed_cost[i] = data.labels[i] == 1 ? 1.0 : -1.0;
    const double lambda_n = 1.0 / C;
    // "cs": the Crammer–Singer problem of all the file's classes (U_i = C).
    const bool cs = argc > 4 && std::strcmp(argv[4], "cs") == 0;
    const pegasos::InteriorPointProblem pr =
        cs ? pegasos::crammer_singer_interior_point_problem(data, 1.0, data.classes.size(), std::vector<double>(n, C))
           : pegasos::binary_interior_point_problem(data, 1.0, lambda_n, signed_cost, offset);
    double best = 1e300;
    pegasos::InteriorPointResult r;
    for (int k = 0; k < repeats; ++k) {
      const auto t0 = std::chrono::steady_clock::now();
      r = pegasos::solve_interior_point(pr, 2.5e-4, pegasos::InteriorPointGate::kMaxIterations);
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      if (ms < best) best = ms;
    }
    std::uint64_t h = 14695981039346656037ull;
    for (const double a : r.alpha) {
      std::uint64_t bits = 0;
      std::memcpy(&bits, &a, sizeof bits);
      h = (h ^ bits) * 1099511628211ull;
    }
    std::printf("%d steps, best %.3f ms, gap %.3g, certified %d, checksum %016llx\n", r.iterations, best,
                (r.primal - r.dual) / r.primal, int(r.certified), static_cast<unsigned long long>(h));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
}
