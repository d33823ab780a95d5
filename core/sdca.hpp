// Stochastic dual coordinate ascent (SDCA) for the hinge objectives:
//     P(w) = λ/2 ‖w‖² + (1/n) Σ_i c_i · max(0, 1 − y_i (w·x_i + o_i))
// (c_i = 1 for the plain hinge, the class cost for the weighted hinge, o_i the
// source model's score for transfer), through its dual
//     D(α) = (1/n) Σ_i α_i (1 − y_i o_i) − λ/2 ‖w(α)‖²,  w(α) = 1/(λn) Σ_i α_i y_i x_i,
// with 0 ≤ α_i ≤ c_i (Shalev-Shwartz & Zhang, "Stochastic Dual Coordinate
// Ascent Methods for Regularized Loss Minimization", JMLR 2013; the same
// coordinate step as LIBLINEAR's dual solver, Hsieh et al., ICML 2008).
//
// Why a second solver in a Pegasos suite: SGD needs ~1/(λn·ε) epochs to reach
// a relative gap ε, so where λn is small (few examples or a small λ: text
// data with thousands of documents) the 1/(λt) schedule cannot get within
// 0.1% of the optimum in any reasonable number of epochs. Coordinate ascent
// on the dual converges linearly there, and P − D bounds the gap to the
// optimum: automatic stopping on SDCA is a certificate, not an estimate.
//
// Step for example i (exact maximisation of D along α_i):
//     α_i ← clip(α_i + λn (1 − y_i s_i) / ‖x_i‖², 0, c_i),  w += (Δα_i y_i / (λn)) x_i,
// s_i = w·x_i + o_i. Visits: a fresh permutation per epoch (seeded).
// The bias is the weight of a constant feature (regularised), or none.
//
// The solvers: core/sdca_binary.hpp (train_sdca, the hinge objectives) and
// core/sdca_multiclass.hpp (train_sdca_multiclass, Crammer–Singer), on the
// shared parts of core/sdca_common.hpp.
#pragma once

#include "core/sdca_binary.hpp"
#include "core/sdca_multiclass.hpp"
