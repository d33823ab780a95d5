"""Platt scaling (Platt 1999) fitted by the numerically safe Newton method of Lin, Lin and
Weng (2007), "A note on Platt's probabilistic outputs for support vector machines".

P(positive | f) = 1 / (1 + exp(A f + B)), (A, B) minimising the cross-entropy against the
smoothed targets t = (N+ + 1) / (N+ + 2) for positives and 1 / (N- + 2) for negatives.
With sample weights s_i each example's term is weighted by s_i and it counts s_i times in
N+ and N-, so an integer weight k fits as the example repeated k times (the engine's
core/calibration.cpp does the same for `pegasos train --calibrate --weights`).
"""
import numpy as np


def _loss_terms(z, t):
    """-(t log p + (1 - t) log(1 - p)) with p = 1 / (1 + exp(z)), without overflow:
    log(1 + e^z) - (1 - t) z, written with exp of a non-positive number only."""
    pos = z >= 0
    out = np.empty_like(z)
    out[pos] = t[pos] * z[pos] + np.log1p(np.exp(-z[pos]))
    out[~pos] = (t[~pos] - 1.0) * z[~pos] + np.log1p(np.exp(z[~pos]))
    return out


def _weights(weight, n):
    if weight is None:
        return None
    weight = np.asarray(weight, dtype=np.float64)
    if weight.shape != (n,):
        raise ValueError("platt: %d weights for %d examples" % (weight.size, n))
    return weight


def platt_loss(A, B, f, t, weight=None):
    """The objective Platt scaling minimises (the (weighted) sum over the examples)."""
    terms = _loss_terms(A * np.asarray(f, dtype=np.float64) + B, t)
    weight = _weights(weight, terms.size)
    return float(np.sum(terms if weight is None else weight * terms))


def _sigmoid(z):
    """1 / (1 + exp(z)) and 1 - that, without overflow."""
    e = np.exp(-np.abs(z))
    small = e / (1.0 + e)  # the smaller of the two
    big = 1.0 / (1.0 + e)
    p = np.where(z >= 0, small, big)
    q = np.where(z >= 0, big, small)
    return p, q


def _class_totals(positive, weight):
    if weight is None:
        n_pos = int(positive.sum())
        return n_pos, positive.size - n_pos
    return float(weight[positive].sum()), float(weight[~positive].sum())


def smoothed_targets(positive, weight=None):
    positive = np.asarray(positive, dtype=bool)
    n_pos, n_neg = _class_totals(positive, _weights(weight, positive.size))
    return np.where(positive, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))


def platt_fit(f, positive, max_iter=100, min_step=1e-10, sigma=1e-12, eps=1e-10, weight=None):
    """(A, B) for decision values f and booleans `positive` (Lin, Lin & Weng, Algorithm 1:
    Newton steps on the Hessian with sigma added to its diagonal, backtracking line search
    with the Armijo condition; stops when the gradient is below eps or no step helps).
    weight: None, or one s_i > 0 per example."""
    f = np.asarray(f, dtype=np.float64)
    positive = np.asarray(positive, dtype=bool)
    weight = _weights(weight, f.size)
    n_pos, n_neg = _class_totals(positive, weight)
    if not (n_pos > 0 and n_neg > 0):
        raise ValueError("platt: needs examples of both classes")
    t = smoothed_targets(positive, weight)
    A = 0.0
    B = float(np.log((n_neg + 1.0) / (n_pos + 1.0)))
    value = platt_loss(A, B, f, t, weight)
    for _ in range(max_iter):
        p, q = _sigmoid(A * f + B)
        d2 = p * q
        d1 = t - p  # derivative of the loss term by z = A f + B
        if weight is not None:
            d2, d1 = weight * d2, weight * d1
        g1 = float(np.dot(f, d1))
        g2 = float(np.sum(d1))
        if abs(g1) < eps and abs(g2) < eps:
            break
        h11 = float(np.dot(f * f, d2)) + sigma
        h22 = float(np.sum(d2)) + sigma
        h21 = float(np.dot(f, d2))
        det = h11 * h22 - h21 * h21
        dA = -(h22 * g1 - h21 * g2) / det
        dB = -(-h21 * g1 + h11 * g2) / det
        gd = g1 * dA + g2 * dB
        step = 1.0
        while step >= min_step:
            newA, newB = A + step * dA, B + step * dB
            new_value = platt_loss(newA, newB, f, t, weight)
            if new_value < value + 1e-4 * step * gd:
                A, B, value = newA, newB, new_value
                break
            step /= 2.0
        else:
            break  # no step decreases the loss: at the optimum within rounding
    return A, B


def platt_predict(A, B, f):
    """P(positive | f) for the fitted (A, B)."""
    return _sigmoid(A * np.asarray(f, dtype=np.float64) + B)[0]
