#!/usr/bin/env python3
"""The Python package against the CLI on 500k rows: what the door costs.

    PYTHONPATH=build/python /usr/bin/python3 bench/python_fit.py [--rows 500000] [--cols 2000]
        [--nnz 30] [--lam 1e-4] [--binary build/pegasos] [--dir /tmp/pegasos-bench-python]

Synthetic sparse rows (float32 values of about unit-norm rows, `--nnz` non-zeros per row from `--cols` features,
labels from a fixed linear rule with 5% flipped), once as scipy CSR in memory and once as
a LIBSVM file. Measured, each the fastest of `--repeats` runs:
  - copy:  building the engine's Dataset from the CSR arrays (PegasosClassifier._dataset);
  - fit:   PegasosClassifier(...).fit(X, y) on CSR (the copy included) and on a dense array
           (when it fits in memory; skipped above 2 GB);
  - train: `pegasos train` on the LIBSVM file (wall time; its own load and train times);
  - predict: decision_function on the training rows vs `pegasos predict` to /dev/null.
The model files of fit and train must be byte-identical (same rows, settings, seed).
Peak resident memory of this process is reported too (ru_maxrss).
"""
import argparse
import os
import re
import resource
import subprocess
import time

import numpy as np
import scipy.sparse as sp

import pegasos


def make_rows(rows, cols, nnz, seed=0):
    rng = np.random.default_rng(seed)
    indices = np.sort(np.stack([rng.choice(cols, size=nnz, replace=False) for _ in range(min(rows, 4096))]), axis=1)
    indices = indices[rng.integers(0, len(indices), size=rows)]  # rows share index patterns (fast to make)
    values = rng.normal(size=(rows, nnz))
    values = np.round(values / np.linalg.norm(values, axis=1, keepdims=True), 4).astype(np.float32)  # ~unit rows
    values[values == 0] = np.float32(1e-4)
    X = sp.csr_matrix((values.ravel(), indices.ravel().astype(np.int32), np.arange(0, rows * nnz + 1, nnz)),
                      shape=(rows, cols))
    w = rng.normal(size=cols)
    y = np.where(X @ w > 0, 1, -1)
    flip = rng.random(rows) < 0.05
    y[flip] = -y[flip]
    return X, y


def write_libsvm(path, X, y):
    with open(path, "w") as f:
        for i in range(X.shape[0]):
            lo, hi = X.indptr[i], X.indptr[i + 1]
            f.write("%d %s\n" % (y[i], " ".join("%d:%r" % (j + 1, float(v))
                                                for j, v in zip(X.indices[lo:hi], X.data[lo:hi]))))


def best(fn, repeats):
    times, out = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return min(times), out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=500000)
    ap.add_argument("--cols", type=int, default=2000)
    ap.add_argument("--nnz", type=int, default=30)
    ap.add_argument("--lam", type=float, default=1e-4)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--binary", default="build/pegasos")
    ap.add_argument("--dir", default="/tmp/pegasos-bench-python")
    args = ap.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    X, y = make_rows(args.rows, args.cols, args.nnz)
    svm = os.path.join(args.dir, "rows_%d_%d_%d.svm" % (args.rows, args.cols, args.nnz))
    if not os.path.exists(svm):
        write_libsvm(svm + ".tmp", X, y)
        os.replace(svm + ".tmp", svm)
    params = dict(lam=args.lam, n_jobs=-1)
    print("rows %d, features %d, nnz %d, lambda %g, %d threads" % (X.shape[0], X.shape[1], X.nnz, args.lam,
                                                                   os.cpu_count()))
    t, _ = best(lambda: pegasos.PegasosClassifier._dataset(X), args.repeats)
    print("copy into the engine's Dataset (CSR):   %7.3f s" % t)
    t, clf = best(lambda: pegasos.PegasosClassifier(**params).fit(X, y), args.repeats)
    tr = clf.training_
    print("fit (CSR):                              %7.3f s  (%s, %.1f passes, converged %s)"
          % (t, tr["solver"], tr["epochs"], tr["converged"]))
    clf.save(os.path.join(args.dir, "py.json"))
    if X.shape[0] * X.shape[1] * 4 <= 2 << 30:
        dense = X.toarray()
        t, _ = best(lambda: pegasos.PegasosClassifier(**params).fit(dense, y), args.repeats)
        print("fit (dense float32, %4.2f GB):          %7.3f s" % (dense.nbytes / 2**30, t))
        del dense
    cli = [args.binary, "train"] + sum((["--set", o] for o in clf._overrides(2)), []) + [
        svm, os.path.join(args.dir, "cli.json")]
    t, run = best(lambda: subprocess.run(cli, check=True, capture_output=True, text=True), args.repeats)
    m = re.search(r"load ([\d.]+)s, train ([\d.]+)s", run.stderr)
    print("pegasos train (LIBSVM file):            %7.3f s  (its load %ss, train %ss)" % (t, m.group(1), m.group(2)))
    same = open(os.path.join(args.dir, "py.json"), "rb").read() == open(os.path.join(args.dir, "cli.json"), "rb").read()
    print("model files byte-identical:             %s" % same)
    t, _ = best(lambda: clf.decision_function(X), args.repeats)
    print("decision_function (CSR):                %7.3f s" % t)
    pred = [args.binary, "predict", os.path.join(args.dir, "py.json"), svm, "--output", "/dev/null"]
    t, _ = best(lambda: subprocess.run(pred, check=True, capture_output=True), args.repeats)
    print("pegasos predict (LIBSVM file):          %7.3f s" % t)
    print("peak RSS of this process:               %7.0f MB"
          % (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024))


if __name__ == "__main__":
    main()
