#!/usr/bin/python3
"""Write a synthetic binary LIBSVM file: ROWS rows, NNZ distinct indices per row
drawn uniformly from 1..DIM, unit-norm values, labels sign(w*.x) for a hidden
Gaussian w* with 5% of the labels flipped (learnable, not separable)."""
import argparse
import os

import numpy as np

ap = argparse.ArgumentParser(description=__doc__)
ap.add_argument("--dim", type=int, required=True)
ap.add_argument("--rows", type=int, default=200_000)
ap.add_argument("--nnz", type=int, default=20)
ap.add_argument("--seed", type=int, default=1)
ap.add_argument("--out", required=True)
a = ap.parse_args()

rng = np.random.default_rng(a.seed)
hidden = rng.standard_normal(a.dim).astype(np.float32)
tmp = a.out + ".tmp"
with open(tmp, "w") as f:
    for start in range(0, a.rows, 10_000):
        m = min(10_000, a.rows - start)
        idx = np.sort(rng.integers(0, a.dim, (m, a.nnz)), axis=1)
        while True:  # redraw rows with a repeated index, so indices are distinct
            bad = np.flatnonzero((np.diff(idx, axis=1) == 0).any(axis=1))
            if not len(bad):
                break
            idx[bad] = np.sort(rng.integers(0, a.dim, (len(bad), a.nnz)), axis=1)
        val = rng.random((m, a.nnz)) + 0.1
        val /= np.linalg.norm(val, axis=1, keepdims=True)
        score = (hidden[idx] * val).sum(axis=1)
        y = np.where(score > 0, 1, -1) * np.where(rng.random(m) < 0.05, -1, 1)
        lines = []
        for yi, ii, vi in zip(y, idx + 1, val):
            lines.append("%+d %s\n" % (yi, " ".join("%d:%.6g" % p for p in zip(ii, vi))))
        f.writelines(lines)
os.replace(tmp, a.out)
