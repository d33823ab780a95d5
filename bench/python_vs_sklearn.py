#!/usr/bin/env python3
"""PegasosClassifier vs scikit-learn's LinearSVC (liblinear, dual CD, hinge) and SGDClassifier
(hinge) on a synthetic RCV1-like sparse problem: test accuracy, fit time, peak memory of the fit.

    PYTHONPATH=build/python /usr/bin/python3 bench/python_vs_sklearn.py [--rows 500000] [--test 100000]
        [--cols 30000] [--nnz 50] [--C 1] [--dir /tmp/pegasos-bench-vs-sklearn] [--only NAME ...]

Data (seeded): feature j drawn with probability ~ 1/(j + 20)^1.1 (Zipf-like), about `--nnz` draws
per row (Poisson), repeats summed; value log(1 + count) * idf (idf from the drawn frequency);
rows L2-normalised; labels the sign of a planted separator w ~ N(0, 1) minus its median, 5% flipped.
float64 canonical CSR (sorted indices, no duplicates) with int32 indices (scikit-learn's native
type), saved once as an .npz. (Non-canonical CSR costs PegasosClassifier a copy of the matrix.)
`pegasos` fits it as it is (float64 values are copied once into the engine's float32 rows);
`pegasos32` fits the same rows converted to float32 before the measurement, which the engine
reads in place (no copy of values or indices), so its peak growth is the solver's own memory.

Each fit runs in its own subprocess (`--worker NAME`): it loads the .npz, reads VmRSS, resets VmHWM
(`echo 5 > /proc/self/clear_refs`), times fit(), and reports VmHWM minus that RSS (the fit's peak
growth) and the test accuracy. The input matrix's size is data + indices + indptr bytes.
Settings at C: PegasosClassifier(lam = 1/(C n)) (defaults otherwise: SDCA for hinge, bias="feature",
tol 1e-3), LinearSVC(C, loss="hinge", dual=True, fit_intercept=True: liblinear's bias is a constant
feature 1 whose weight is regularised, as our bias="feature"), SGDClassifier(loss="hinge",
alpha=lam; its intercept is not regularised and it stops by its own tol=1e-3 rule).
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np
import scipy.sparse as sp


def make_data(rows, cols, nnz, seed=0):
    rng = np.random.default_rng(seed)
    p = 1.0 / (np.arange(cols) + 20.0) ** 1.1
    p /= p.sum()
    cdf = np.cumsum(p)
    per_row = np.maximum(1, rng.poisson(nnz, size=rows))
    indptr = np.concatenate([[0], np.cumsum(per_row)]).astype(np.int64)
    indices = np.minimum(np.searchsorted(cdf, rng.random(indptr[-1])), cols - 1).astype(np.int32)
    X = sp.csr_matrix((np.ones(indptr[-1]), indices, indptr), shape=(rows, cols))
    X.sum_duplicates()  # counts of repeated draws; sorts the indices
    idf = np.log(1.0 / (p * nnz) + 1.0)
    X.data = np.log1p(X.data) * idf[X.indices]
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    X = sp.diags(1.0 / norms) @ X
    X = X.tocsr()
    X.sort_indices()  # the product leaves them unsorted; canonical CSR, as load_svmlight_file gives
    X.indices = X.indices.astype(np.int32)
    X.indptr = X.indptr.astype(np.int32)
    w = rng.normal(size=cols)
    score = X @ w
    y = np.where(score > np.median(score), 1, -1)
    flip = rng.random(rows) < 0.05
    y[flip] = -y[flip]
    return X, y


def status(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    raise KeyError(key)


def make_estimator(name, C, n):
    if name in ("pegasos", "pegasos32"):
        import pegasos
        return pegasos.PegasosClassifier(lam=1.0 / (C * n))
    if name == "linearsvc":
        from sklearn.svm import LinearSVC
        return LinearSVC(C=C, loss="hinge", dual=True, fit_intercept=True, random_state=0)
    if name == "sgd":
        from sklearn.linear_model import SGDClassifier
        return SGDClassifier(loss="hinge", alpha=1.0 / (C * n), random_state=0)
    raise ValueError(name)


def worker(args):
    import gc
    import warnings
    with np.load(os.path.join(args.dir, "data.npz")) as z:
        X = sp.csr_matrix((z["data"], z["indices"], z["indptr"]), shape=tuple(z["shape"]))
        y = z["y"]
    n = X.shape[0] - args.test
    X_train, y_train, X_test, y_test = X[:n], y[:n], X[n:], y[n:]
    del X
    if args.worker == "pegasos32":  # the same rows as float32 CSR (int32 indices): trained on in place
        X_train = X_train.astype(np.float32)
    est = make_estimator(args.worker, args.C, n)
    gc.collect()
    base = status("VmRSS")
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        start = time.perf_counter()
        est.fit(X_train, y_train)
        seconds = time.perf_counter() - start
    peak = status("VmHWM") - base
    out = {"name": args.worker, "fit_s": seconds, "peak_growth_bytes": peak,
           "train_input_bytes": X_train.data.nbytes + X_train.indices.nbytes + X_train.indptr.nbytes,
           "test_accuracy": float(np.mean(est.predict(X_test) == y_test)),
           "warnings": sorted({"%s: %s" % (w.category.__name__, str(w.message)[:120]) for w in caught})}
    if args.worker.startswith("pegasos"):
        t = est.training_
        out["training"] = {k: t.get(k) for k in ("solver", "passes", "epochs", "converged", "relative_gap")}
    if hasattr(est, "n_iter_"):
        out["n_iter"] = int(np.max(est.n_iter_))
    print(json.dumps(out))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=500000)
    ap.add_argument("--test", type=int, default=100000)
    ap.add_argument("--cols", type=int, default=30000)
    ap.add_argument("--nnz", type=int, default=50)
    ap.add_argument("--C", type=float, default=1.0)
    ap.add_argument("--dir", default="/tmp/pegasos-bench-vs-sklearn")
    ap.add_argument("--only", nargs="*", default=["pegasos", "pegasos32", "linearsvc", "sgd"])
    ap.add_argument("--worker")
    args = ap.parse_args()
    if args.worker:
        return worker(args)
    os.makedirs(args.dir, exist_ok=True)
    path = os.path.join(args.dir, "data.npz")
    start = time.perf_counter()
    X, y = make_data(args.rows + args.test, args.cols, args.nnz)
    np.savez(path, data=X.data, indices=X.indices, indptr=X.indptr, shape=np.array(X.shape), y=y)
    Xt = X[:args.rows]
    size = Xt.data.nbytes + Xt.indices.nbytes + Xt.indptr.nbytes
    print("data: %d train + %d test rows x %d features, %.1f nnz/row, train matrix %.1f MB (%.1f s to make)"
          % (args.rows, args.test, args.cols, X.nnz / X.shape[0], size / 1e6, time.perf_counter() - start),
          flush=True)
    del X, Xt
    results = {}
    for name in args.only:
        cmd = [sys.executable, os.path.abspath(__file__), "--worker", name, "--dir", args.dir,
               "--test", str(args.test), "--C", str(args.C)]
        r = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1])
        results[name] = r
        print("%-10s test accuracy %.4f  fit %.2f s  peak growth %.1f MB = %.2fx its input matrix (%.1f MB)  %s"
              % (name, r["test_accuracy"], r["fit_s"], r["peak_growth_bytes"] / 1e6,
                 r["peak_growth_bytes"] / r["train_input_bytes"], r["train_input_bytes"] / 1e6, {k: v for k, v in r.items() if k in ("training", "n_iter", "warnings")}),
              flush=True)
    if "pegasos" in results and "linearsvc" in results:
        p, l = results["pegasos"], results["linearsvc"]
        print("pegasos vs LinearSVC: accuracy %+.2f pt (target >= -0.2), time %.3fx (target <= 0.25), "
              "peak memory %.2fx the input (target <= 1.3)"
              % (100 * (p["test_accuracy"] - l["test_accuracy"]), p["fit_s"] / l["fit_s"],
                 p["peak_growth_bytes"] / size))
    if "pegasos" in results and "sgd" in results:
        print("pegasos vs SGDClassifier: time %.3fx" % (results["pegasos"]["fit_s"] / results["sgd"]["fit_s"]))


if __name__ == "__main__":
    main()
