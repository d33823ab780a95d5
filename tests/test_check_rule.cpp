// When the dual solvers take the exact duality gap (end_of_pass in
// core/sdca_common.hpp): the estimate's rule, the near rule with its spacing,
// the dual's rise holding both back, the every-10th-pass check, and the
// binary solver's spacing of them by visits (CheckHints::min_spacing).
#include <catch2/catch.hpp>

#include <vector>

#include "core/sdca_common.hpp"
#include "tests/fixtures.hpp"

using namespace pegasos;

namespace {

struct Outcome {
  bool checked = false, stopped = false;
};

// One end of pass at `epoch` after `t` visits on 1000 rows (tolerance 1e-3,
// P estimate 1), the estimate's gap `estimate` (relative), `since` visits
// since the last check, the dual's rise over the pass `rise` (relative), and
// an exact gap of `exact` (relative).
// `min_spacing`: CheckHints::min_spacing (0: the per-pass rule).
Outcome pass_end(int epoch, std::uint64_t t, double estimate, std::uint64_t since, double rise,
                 double exact = 1e-2, std::uint64_t min_spacing = 0) {
  static const Dataset data = fixtures::gaussian(1000, 5, 3);
  EngineSettings s;
  s.tolerance = 1e-3;
  s.min_epochs = 1;
  TrainResult result;
  std::vector<double> w(5, 0.0), b(1, 0.0);
  Outcome o;
  o.stopped = end_of_pass(data, s, epoch, t, 1u << 30, true, true, CheckHints{since, rise, false, min_spacing}, 1.0, 1.0,
                          1.0 - estimate,
                          [&] {
                            o.checked = true;
                            return 1.0;
                          },
                          [&] { return 1.0 - exact; }, w, b, result, {});
  return o;
}

}  // namespace

TEST_CASE("check rule: the exact gap is taken when the estimate meets the tolerance and the dual has settled",
          "[sdca][stopping]") {
  CHECK(pass_end(3, 3000, 5e-4, 1000, 1e-3).checked);
  CHECK_FALSE(pass_end(3, 3000, 5e-4, 1000, 2e-2).checked);  // the dual still rose 20 tolerances
  CHECK_FALSE(pass_end(3, 3000, 2e-3, 3000, 2e-2).checked);
  // A met exact gap stops the run; a missed one does not.
  CHECK(pass_end(3, 3000, 5e-4, 1000, 1e-3, 5e-4).stopped);
  CHECK_FALSE(pass_end(3, 3000, 5e-4, 1000, 1e-3, 2e-3).stopped);
}

TEST_CASE("check rule: an estimate within 10 tolerances is checked once half a pass and a quarter of the run went by",
          "[sdca][stopping]") {
  CHECK(pass_end(3, 3000, 5e-3, 750, 1e-3).checked);         // spacing max(500, 750)
  CHECK_FALSE(pass_end(3, 3000, 5e-3, 749, 1e-3).checked);   // too soon after the last check
  CHECK_FALSE(pass_end(3, 3000, 2e-2, 3000, 1e-3).checked);  // 20 tolerances: the estimate alone
  CHECK(pass_end(2, 800, 5e-3, 500, 1e-3).checked);          // early: half a pass
  CHECK_FALSE(pass_end(2, 800, 5e-3, 499, 1e-3).checked);
  CHECK_FALSE(pass_end(3, 3000, 5e-3, 3000, 2e-2).checked);  // the dual still rises
}

TEST_CASE("check rule: every 10th pass is checked whatever the estimate", "[sdca][stopping]") {
  CHECK(pass_end(10, 10000, 0.5, 0, 0.3).checked);
  CHECK(pass_end(20, 20000, 0.5, 0, 0.3).checked);
  CHECK_FALSE(pass_end(11, 11000, 0.5, 1000, 0.3).checked);
}

TEST_CASE("check rule: with a minimum spacing, no check comes sooner after the last one", "[sdca][stopping]") {
  // 1000 rows, spacing half a pass (the binary solver): an estimate within
  // the tolerance is not checked 499 visits after the last check (short
  // shrunk passes), at 500 it is.
  CHECK_FALSE(pass_end(41, 20000, 5e-4, 499, 1e-3, 1e-2, 500).checked);
  CHECK(pass_end(41, 20000, 5e-4, 500, 1e-3, 1e-2, 500).checked);
  CHECK(pass_end(41, 20000, 5e-4, 500, 1e-3, 5e-4, 500).stopped);
  // The near rule keeps its own, longer spacing: max(500, t/4).
  CHECK_FALSE(pass_end(41, 20000, 5e-3, 4999, 1e-3, 1e-2, 500).checked);
  CHECK(pass_end(41, 20000, 5e-3, 5000, 1e-3, 1e-2, 500).checked);
  // The every-10th-pass check too: not 300 visits after the last one.
  CHECK_FALSE(pass_end(50, 20000, 0.5, 300, 0.3, 1e-2, 500).checked);
  CHECK(pass_end(50, 20000, 0.5, 500, 0.3, 1e-2, 500).checked);
  CHECK_FALSE(pass_end(51, 20000, 0.5, 5000, 0.3, 1e-2, 500).checked);
}
