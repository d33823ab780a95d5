// A second-order polish for the binary hinge dual (core/sdca.hpp): conjugate
// gradient on faces of the box with projected path searches between them, in
// the spirit of GPCG (Moré & Toraldo, "On the solution of large quadratic
// programming problems with bound constraints", SIAM J. Optim. 1991), written
// from the math.
//
// In the minimisation form, scaled by n,
//     F(α) = (λn/2) ‖w(α)‖² − Σ_i b_i α_i,  0 ≤ α_i ≤ c_i,
//     w(α) = (1/(λn)) Σ_i α_i z_i,  z_i = y_i x̃_i,  b_i = 1 − y_i o_i,
// so F = −n·D, ∇F_i = y_i (w·x̃_i + o_i) − 1 (minus the margin violation; the
// hinge loss of row i is c_i·max(0, −∇F_i)) and the Hessian is
// H = Z Zᵀ/(λn), of rank ≤ d + 1. Everything is matrix-free: H p costs one
// scatter u = Σ p_i z_i/(λn) (so pᵀHp = λn‖u‖²) and one gather (Hp)_i = z_i·u
// over the rows where p is non-zero.
//
// Coordinate ascent slows down when H has a large eigenvalue spread (dense
// unscaled features: a feature ≈ 72 on every row of UCI Glass). This does not
// care. From the vertex of the box that the starting point's margins point
// at (α_i = 0 above the margin, c_i below), rounds of
//   1. Face solve: CG on the free variables (on H_FF + μI, see face_step)
//      from the current point, then the exact first minimiser of F along
//      the projected path P[α + t·d] to the CG point (path_search: piecewise
//      quadratic, rows stop at their bounds one by one); repeated while the
//      path stops rows at bounds, i.e. until the point minimises F on its face.
//   2. Release: the bound variable whose gradient points into the box most
//      steeply joins the free set (as in Lawson & Hanson's active-set method:
//      at a face minimiser, the minimiser on the face with it added moves it
//      inside).
// What did not work (measured on the UCI sets of bench/, from α = 0):
// Moré & Toraldo's own way of leaving a face, projected-gradient steps from
// the Cauchy step with Armijo backtracking, zigzags here (step lengths
// alternating by 10⁴ between stiff and flat directions): 6·10⁴ row reads per
// row on Glass at C = 0.1 and no certificate within 6·10⁶ at C ≥ 10, against
// 250–800 for the rounds above. Releasing several variables per round (4, 16,
// 10% or 50% of the violators) was slower than one on Glass, Pima and
// Ionosphere and sometimes stalled. Starting from the coordinate-ascent point
// itself instead of its vertex cost 5–10× more (more free α_i than rank(H):
// the face solves run into the null space, see face_step).
// The duality gap P − D is exact at every accepted point (the gradient pass
// gives the loss), and a point that seems certified is confirmed after w is
// recomputed from α from scratch. An uncertified result never has a lower
// dual value or a larger gap than the starting point (the start is restored
// if it had).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "core/dataset.hpp"

namespace pegasos {

struct PolishResult {
  bool certified = false;        // P − D ≤ tolerance·|P| at the returned point
  double primal = 0.0;           // P(w) at the returned point
  double dual = 0.0;             // D(α) at the returned point
  std::uint64_t row_visits = 0;  // rows read: one dot product or one axpy each
  int cg_steps = 0;              // conjugate-gradient steps (one product on the free rows each)
  int releases = 0;              // variables released from a bound
};

namespace detail {

class HingeBoxQP {
 public:
  HingeBoxQP(const Dataset& data, const std::vector<double>& signed_cost, const std::vector<double>& offset,
             double lambda, double B, std::vector<double>& alpha, std::vector<double>& w, double& wb)
      : data_(data), n_(data.size()), lambda_(lambda), lambda_n_(lambda * static_cast<double>(data.size())),
        B_(B), alpha_(alpha), w_out_(w), wb_(wb), dim_(w.size()), y_(n_), c_(n_), b_(n_), sq_row_(n_), grad_(n_),
        state_(n_), released_(n_, 0) {
    compact_columns();
    w_.assign(cols_.empty() ? dim_ : cols_.size(), 0.0);
    u_.resize(w_.size());
    shift_.resize(w_.size());
    for (std::size_t i = 0; i < n_; ++i) {
      y_[i] = signed_cost[i] >= 0 ? 1.0 : -1.0;
      c_[i] = std::abs(signed_cost[i]);
      b_[i] = 1.0 - y_[i] * (offset.empty() ? 0.0 : offset[i]);
      sq_row_[i] = squared_norm(data.row(i), B * B);
      alpha_[i] = std::clamp(alpha_[i], 0.0, c_[i]);
    }
  }

  PolishResult run(double tolerance, std::uint64_t max_visits) {
    tolerance_ = tolerance;
    recompute_w();
    refresh();
    if (within_tolerance()) return finish();
    const std::vector<double> start = alpha_;
    const double start_dual = dual_, start_gap = primal_ - dual_;
    // Start from the vertex of the box the margins point at (α_i = 0 where
    // the margin is above 1, c_i where below; see the top of the file).
    for (std::size_t i = 0; i < n_; ++i) {
      if (grad_[i] > 0.0) alpha_[i] = 0.0;
      if (grad_[i] < 0.0) alpha_[i] = c_[i];
    }
    recompute_w();
    refresh();
    int idle = 0;
    while (!certified() && visits_ < max_visits) {
      double gained = 0.0;
      while (visits_ < max_visits) {  // to the minimiser on the current face
        const double dec = face_step();
        if (certified()) return finish();
        gained += dec;
        if (dec <= 0.0 || stopped_ == 0) break;
      }
      // A release that gains nothing (the variable goes straight back, e.g.
      // after an inexact face solve) is retried with the next most
      // violating one, a few times.
      if (gained > 0.0) {
        idle = 0;
        tried_.clear();
      } else if (last_released_ < n_) {
        ++idle;
        tried_.push_back(last_released_);
      }
      if (idle > kMaxIdle || !release()) break;
    }
    // Never hand back a worse point: a lower D, or a larger gap (a worse
    // model where the caller stops uncertified).
    if (!within_tolerance() && (dual_ < start_dual || primal_ - dual_ > start_gap)) {
      alpha_ = start;
      recompute_w();
      refresh();
    }
    return finish();
  }

 private:
  static constexpr int kMaxIdle = 10;
  static constexpr double kCgResidual = 1e-10;  // CG stops at ‖r‖ ≤ this·‖r₀‖
  static constexpr double kProx = 1e-10;        // μ = kProx · max_F ‖x̃_i‖²/(λn)
  static constexpr char kLower = 0, kFree = 1, kUpper = 2;

  // Hashed text has a million-wide w of which a few percent of the columns occur
  // in the rows (1200 mails: 30k of 2^20), and every CG step and path search
  // clears and sums vectors as wide as w: where the rows use less than half
  // the columns, they are copied with their columns renumbered 0..m-1
  // (cols_: the original numbers) and w, u, Δ are m wide. The sums run over
  // the same non-zeros in the same order, so the result is the same to the
  // bit. (A stalled CV fold of 1200 SpamAssassin mails, 2^20 hashed features:
  // 28.1 s -> 2.3 s.)
  void compact_columns() {
    std::vector<std::uint32_t> number(dim_, kUnused);
    std::size_t used = 0, nnz = 0;
    for (std::size_t i = 0; i < n_; ++i) {
      const RowView x = data_.row(i);
      nnz += x.nnz;
      for (std::uint32_t j = 0; j < x.nnz; ++j) {
        if (number[x.indices[j]] == kUnused) {
          number[x.indices[j]] = 0;
          ++used;
        }
      }
    }
    if (2 * used >= dim_) return;
    cols_.reserve(used);
    for (std::size_t j = 0; j < dim_; ++j) {
      if (number[j] != kUnused) {
        number[j] = static_cast<std::uint32_t>(cols_.size());
        cols_.push_back(static_cast<std::uint32_t>(j));
      }
    }
    ptr_.assign(n_ + 1, 0);
    idx_.reserve(nnz);
    val_.reserve(nnz);
    for (std::size_t i = 0; i < n_; ++i) {
      const RowView x = data_.row(i);
      for (std::uint32_t j = 0; j < x.nnz; ++j) {
        idx_.push_back(number[x.indices[j]]);
        val_.push_back(x.values[j]);
      }
      ptr_[i + 1] = idx_.size();
    }
  }
  // Row i, in w_'s numbering.
  RowView row(std::size_t i) const {
    if (cols_.empty()) return data_.row(i);
    RowView x;
    x.indices = idx_.data() + ptr_[i];
    x.values = val_.data() + ptr_[i];
    x.nnz = static_cast<std::uint32_t>(ptr_[i + 1] - ptr_[i]);
    return x;
  }

  // x̃_i·(v, vb)
  double dot(std::size_t i, const std::vector<double>& v, double vb) {
    const RowView x = row(i);
    double s = vb * B_;
    for (std::uint32_t j = 0; j < x.nnz; ++j) s += static_cast<double>(x.values[j]) * v[x.indices[j]];
    ++visits_;
    return s;
  }
  // (v, vb) += a·x̃_i
  void axpy(std::size_t i, double a, std::vector<double>& v, double& vb) {
    const RowView x = row(i);
    for (std::uint32_t j = 0; j < x.nnz; ++j) v[x.indices[j]] += a * x.values[j];
    vb += a * B_;
    ++visits_;
  }
  static double sq(const std::vector<double>& v, double vb) {
    double s = vb * vb;
    for (double e : v) s += e * e;
    return s;
  }

  void recompute_w() {
    std::fill(w_.begin(), w_.end(), 0.0);
    wb_ = 0.0;
    for (std::size_t i = 0; i < n_; ++i) {
      if (alpha_[i] != 0.0) axpy(i, alpha_[i] * y_[i] / lambda_n_, w_, wb_);
    }
  }

  // The gradient, the face and the exact P and D at the current point (one pass).
  void refresh() {
    double loss = 0.0, linear = 0.0;
    for (std::size_t i = 0; i < n_; ++i) {
      grad_[i] = y_[i] * dot(i, w_, wb_) - b_[i];
      if (grad_[i] < 0.0) loss += c_[i] * -grad_[i];
      linear += alpha_[i] * b_[i];
      state_[i] = alpha_[i] <= 0.0 ? kLower : alpha_[i] >= c_[i] ? kUpper : kFree;
    }
    const double nd = static_cast<double>(n_);
    const double reg = lambda_ / 2 * sq(w_, wb_);
    primal_ = reg + loss / nd;
    dual_ = linear / nd - reg;
  }

  bool within_tolerance() const { return primal_ - dual_ <= tolerance_ * std::abs(primal_); }

  bool certified() {
    if (!within_tolerance()) return false;
    // Confirm without the drift of incremental updates: w = w(α) afresh.
    recompute_w();
    refresh();
    return within_tolerance();
  }

  PolishResult finish() {
    PolishResult r;
    r.certified = within_tolerance();  // certified() has just recomputed w when true
    if (!r.certified) {
      recompute_w();
      refresh();
      r.certified = within_tolerance();
    }
    // The caller's w: w(α), zero off the columns the rows use (the last use of w_).
    if (cols_.empty()) {
      w_out_.swap(w_);
    } else {
      std::fill(w_out_.begin(), w_out_.end(), 0.0);
      for (std::size_t k = 0; k < cols_.size(); ++k) w_out_[cols_[k]] = w_[k];
    }
    r.primal = primal_;
    r.dual = dual_;
    r.row_visits = visits_;
    r.cg_steps = cg_steps_;
    r.releases = releases_;
    return r;
  }

  // α ← P[α + t·d] on the rows `rows` (d[k] for rows[k]), t the first local
  // minimiser of F along that projected path (piecewise quadratic: the rows
  // stop one by one at their bounds). O(nnz of the rows) plus a sort: w
  // moves lazily as w + Δ + t·u, u = Σ_{moving} d_i z_i/(λn), and a row that
  // stops moves its share of t·u into Δ. Returns the decrease of F (0: no
  // move); stopped_ = rows that stopped at a bound on the way.
  double path_search(const std::vector<std::uint32_t>& rows, const std::vector<double>& d) {
    stopped_ = 0;
    order_.clear();
    for (std::size_t k = 0; k < rows.size(); ++k) {
      const std::uint32_t i = rows[k];
      if (d[k] > 0.0) order_.push_back({(c_[i] - alpha_[i]) / d[k], static_cast<std::uint32_t>(k)});
      if (d[k] < 0.0) order_.push_back({-alpha_[i] / d[k], static_cast<std::uint32_t>(k)});
    }
    if (order_.empty()) return 0.0;
    std::sort(order_.begin(), order_.end());
    std::fill(u_.begin(), u_.end(), 0.0);
    std::fill(shift_.begin(), shift_.end(), 0.0);
    double ub = 0.0, shift_b = 0.0;
    double slope = 0.0;  // dF/dt on the current segment, at its start
    for (const auto& [tb, k] : order_) {
      axpy(rows[k], d[k] * y_[rows[k]] / lambda_n_, u_, ub);
      slope += grad_[rows[k]] * d[k];
    }
    double curvature = lambda_n_ * sq(u_, ub);  // d²F/dt² on the current segment
    double t = 0.0, change = 0.0;
    std::size_t next = 0, since_exact = 0;
    while (slope < 0.0 && next < order_.size()) {  // else a local minimiser at t, or every row at its bound
      const double end = order_[next].first;
      if (curvature > 0.0 && t - slope / curvature <= end) {
        const double dt = -slope / curvature;
        change += slope * dt / 2;
        t += dt;
        break;
      }
      const double dt = end - t;
      change += slope * dt + curvature * dt * dt / 2;
      slope += curvature * dt;
      t = end;
      // Rows stopping at t leave the moving set.
      for (; next < order_.size() && order_[next].first <= t; ++next) {
        const std::uint32_t k = order_[next].second, i = rows[k];
        if (order_[next].first > 0.0) ++stopped_;
        const double a = d[k] * y_[i] / lambda_n_;  // row i's share of u
        const double xu = dot(i, u_, ub);
        const double grad_t = grad_[i] + y_[i] * (dot(i, shift_, shift_b) + t * xu);  // ∇F_i at x(t)
        slope -= d[k] * grad_t;
        curvature += lambda_n_ * (a * a * sq_row_[i] - 2.0 * a * xu);
        axpy(i, -a, u_, ub);
        axpy(i, t * a, shift_, shift_b);  // w(t) stays put: Δ + t·u unchanged
      }
      if (++since_exact >= 64 || curvature < 0.0) {  // rounding of the incremental updates
        curvature = lambda_n_ * sq(u_, ub);
        since_exact = 0;
      }
    }
    if (!(change < 0.0) || !(t > 0.0)) return 0.0;
    for (std::size_t k = 0; k < rows.size(); ++k) {
      const std::uint32_t i = rows[k];
      alpha_[i] = std::clamp(alpha_[i] + t * d[k], 0.0, c_[i]);
    }
    // With every row stopped u is zero but for rounding, which t must not scale.
    const double tu = next == order_.size() ? 0.0 : t;
    for (std::size_t j = 0; j < u_.size(); ++j) w_[j] += shift_[j] + tu * u_[j];
    wb_ += shift_b + tu * ub;
    return -change;
  }

  // CG on the free (and just released) variables from the current point,
  // then the path search to the CG point and a gradient pass. Returns the
  // decrease of F.
  double face_step() {
    rows_.clear();
    for (std::size_t i = 0; i < n_; ++i) {
      if (state_[i] == kFree || released_[i]) rows_.push_back(static_cast<std::uint32_t>(i));
      released_[i] = 0;
    }
    stopped_ = 0;
    const std::size_t m = rows_.size();
    if (m == 0) return 0.0;
    r_.resize(m);
    p_.resize(m);
    dir_.assign(m, 0.0);  // the CG displacement
    double rr = 0.0;
    for (std::size_t k = 0; k < m; ++k) {
      r_[k] = -grad_[rows_[k]];
      p_[k] = r_[k];
      rr += r_[k] * r_[k];
    }
    if (rr == 0.0) return 0.0;
    // CG on H_FF + μI: with more free rows than rank(H_FF) ≤ d + 1 the face
    // problem can be unbounded (the linear term has a part in the null space
    // of H_FF) and plain CG diverges. The tiny proximal term keeps it
    // consistent; H_FF + μI has at most d + 2 distinct eigenvalues, so CG
    // still needs at most d + 2 steps in exact arithmetic, and the null-space
    // part −g/μ of its solution points the path search at the bounds.
    double diag_max = 0.0;
    for (std::size_t k = 0; k < m; ++k) diag_max = std::max(diag_max, sq_row_[rows_[k]] / lambda_n_);
    const double mu = kProx * diag_max;
    const double rr0 = rr;
    const std::size_t max_steps = 3 * (std::min<std::size_t>(m, dim_ + 1) + 1) + 10;
    for (std::size_t step = 0; step < max_steps; ++step) {
      std::fill(u_.begin(), u_.end(), 0.0);
      double ub = 0.0, pp = 0.0;
      for (std::size_t k = 0; k < m; ++k) {
        axpy(rows_[k], p_[k] * y_[rows_[k]] / lambda_n_, u_, ub);
        pp += p_[k] * p_[k];
      }
      const double curvature = lambda_n_ * sq(u_, ub) + mu * pp;
      ++cg_steps_;
      if (!(curvature > 0.0)) {
        if (step == 0) dir_ = p_;  // F linear along p: the path search goes to the bounds
        break;
      }
      const double t = rr / curvature;
      double rr_new = 0.0;
      for (std::size_t k = 0; k < m; ++k) {
        dir_[k] += t * p_[k];
        r_[k] -= t * (y_[rows_[k]] * dot(rows_[k], u_, ub) + mu * p_[k]);  // (Hp)_i = z_i·u
        rr_new += r_[k] * r_[k];
      }
      if (rr_new <= kCgResidual * kCgResidual * rr0) break;
      const double beta = rr_new / rr;
      for (std::size_t k = 0; k < m; ++k) p_[k] = r_[k] + beta * p_[k];
      rr = rr_new;
    }
    const double dec = path_search(rows_, dir_);
    if (dec > 0.0) refresh();
    return dec;
  }

  // Frees the bound variable whose gradient points into the box most
  // steeply (skipping the ones released in vain since the last gain); false
  // when none does.
  bool release() {
    std::size_t best = n_;
    double best_violation = 0.0;
    for (std::size_t i = 0; i < n_; ++i) {
      double v = 0.0;
      if (state_[i] == kLower && grad_[i] < 0.0) v = -grad_[i];
      if (state_[i] == kUpper && grad_[i] > 0.0) v = grad_[i];
      if (v > best_violation && std::find(tried_.begin(), tried_.end(), i) == tried_.end()) {
        best_violation = v;
        best = i;
      }
    }
    if (best == n_) return false;
    released_[best] = 1;
    last_released_ = best;
    ++releases_;
    return true;
  }

  const Dataset& data_;
  std::size_t n_;
  double lambda_, lambda_n_, B_;
  std::vector<double>& alpha_;
  std::vector<double>& w_out_;  // the caller's w, written by finish()
  double& wb_;
  static constexpr std::uint32_t kUnused = std::numeric_limits<std::uint32_t>::max();
  std::size_t dim_;                 // the caller's w.size()
  std::vector<std::uint32_t> cols_;  // compact: original column of each of w_'s (empty: not compact)
  std::vector<std::uint64_t> ptr_;
  std::vector<std::uint32_t> idx_;
  std::vector<float> val_;
  std::vector<double> w_;
  std::vector<double> y_, c_, b_, sq_row_, grad_;
  std::vector<char> state_, released_;
  std::vector<std::size_t> tried_;
  std::vector<double> u_, shift_, r_, p_, dir_;
  std::vector<std::uint32_t> rows_;
  std::vector<std::pair<double, std::uint32_t>> order_;
  double tolerance_ = 0.0, primal_ = 0.0, dual_ = 0.0;
  std::uint64_t visits_ = 0;
  std::size_t stopped_ = 0, last_released_ = std::numeric_limits<std::size_t>::max();
  int cg_steps_ = 0, releases_ = 0;
};

}  // namespace detail

// Improves the dual point (alpha, w, wb) of the binary hinge dual of
// core/sdca.hpp in place until the duality gap
//     P − D ≤ tolerance·|P|,  P = λ/2 (‖w‖² + wb²) + (1/n) Σ c_i max(0, 1 − y_i (w·x_i + wb·B + o_i)),
//                             D = (1/n) Σ α_i (1 − y_i o_i) − λ/2 (‖w‖² + wb²),
// or until about `max_visits` rows have been read (one product H·p over all
// rows reads 2n; a pass of coordinate ascent reads n rows twice). Returns
// the P and D of the returned point, exact for w = w(α) computed afresh.
// signed_cost[i] = y_i c_i, offset empty or o_i, B the value of the constant
// bias feature (0: no bias). alpha (clipped into its box) seeds the start;
// when the result is not certified its D is at least, and its P − D at most,
// the starting point's.
// The caller's w, wb are overwritten with w(α) (w.size() must exceed every
// feature index). Deterministic; single-threaded.
inline PolishResult polish_hinge_dual(const Dataset& data, const std::vector<double>& signed_cost,
                                      const std::vector<double>& offset, double lambda, double B,
                                      std::vector<double>& alpha, std::vector<double>& w, double& wb,
                                      double tolerance, std::uint64_t max_visits) {
  detail::HingeBoxQP qp(data, signed_cost, offset, lambda, B, alpha, w, wb);
  return qp.run(tolerance, max_visits);
}

}  // namespace pegasos
