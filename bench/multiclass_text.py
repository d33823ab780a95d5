#!/usr/bin/python3
"""Crammer-Singer multiclass on a text set: pegasos (default solver, and
solver=sdca) against LIBLINEAR -s 4 -B 1, at several C.

    /usr/bin/python3 bench/multiclass_text.py [--bin build/pegasos] [--C 0.1,1,10] [--repeats 3]

Data: Debian package descriptions (bench/debian_text.py; ~31k documents, 28
sections), featurised once by `pegasos featurize` (default: vocabulary mode,
min_df 2, ~28k features, tf-idf, unit rows; --features hashing for the
default 2^20 hashed buckets), written to data/cache/ and read by every tool.

Objective, one evaluator for every model (scipy, over the training file):
    P = λ/2 (‖W‖² + ‖b‖²) + (1/n) Σ_i max(0, 1 + max_{r≠y_i} s_r − s_{y_i}),  λ = 1/(C n)
(LIBLINEAR's ½‖W‖² + C Σ ξ_i divided by C n; the bias is the weight of a constant
feature 1 in both tools). Wall times are whole processes (load, train, write the
model), the median of --repeats runs taken in turn (tool by tool, round after
round, so that a slow spell of the shared machine falls on every tool), with the
CPU time (user + system) of that run beside them (pegasos computes its exact
objective checks on all cores, LIBLINEAR is single-threaded). "passes" are
pegasos' epochs (visits per example) and LIBLINEAR's iteration count (#iter);
"visits" are visits per example for both: LIBLINEAR's counted in one more,
untimed run by interposing rand(), which its Crammer-Singer solver calls once
per visit (bench/binary_dual.py's counter; none without a C compiler).
--before OTHER_BINARY adds rows for another pegasos build.
"""
import argparse
import json
import os
import re
import resource
import subprocess
import sys
import time

import numpy as np
from sklearn.datasets import load_svmlight_file

from binary_dual import build_counter

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CACHE = os.path.join(ROOT, "data", "cache")


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def timed(cmd):
    """Run cmd; return (wall s, CPU s (user + sys of the child), stdout, stderr)."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        raise SystemExit("%s failed (rc %d):\n%s" % (" ".join(cmd), p.returncode, p.stderr[-2000:]))
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime), p.stdout, p.stderr


def prepare(args):
    jsonl = os.path.join(CACHE, "debian_text.jsonl")
    if not os.path.exists(jsonl):
        subprocess.run([sys.executable, os.path.join(HERE, "debian_text.py"), "--out", jsonl], check=True)
    svm = os.path.join(CACHE, "debian_text_%s.svm" % args.features)
    if not os.path.exists(svm):
        cmd = [args.bin, "featurize", "--set", "format=jsonl"]
        if args.features == "vocabulary":
            cmd += ["--set", 'features={"mode":"vocabulary","min_df":2}']
        subprocess.run(cmd + [jsonl, svm], check=True)
    return svm


def primal(W, b, X, y, lam):
    """Our scale: λ/2 (‖W‖² + ‖b‖²) + mean Crammer-Singer hinge. W: (d, K), classes 0..K-1."""
    S = np.asarray(X @ W) + b
    n = S.shape[0]
    sy = S[np.arange(n), y].copy()
    S[np.arange(n), y] = -np.inf
    return 0.5 * lam * (float(np.sum(W * W)) + float(np.sum(b * b))) + float(
        np.maximum(0.0, 1.0 + S.max(axis=1) - sy).mean())


def liblinear_model(path, d):
    with open(path) as f:
        lines = f.read().split("\n")
    header, i = {}, 0
    while lines[i].strip() != "w":
        key, _, val = lines[i].partition(" ")
        header[key] = val
        i += 1
    labels = [int(v) for v in header["label"].split()]
    nr_feature = int(header["nr_feature"])
    M = np.loadtxt(lines[i + 1:i + 1 + nr_feature + 1], ndmin=2)
    M = M[:, np.argsort(labels)]  # columns in class order 1..K
    W = np.zeros((d, len(labels)))
    W[:nr_feature] = M[:nr_feature]
    return W, M[nr_feature] * float(header["bias"])


def pegasos_model(path, d):
    m = json.load(open(path))
    K = m["outputs"]
    W = np.zeros((d, K))
    for k, wk in enumerate(m["weights"]):  # dense list or {indices (1-based), values} per output
        if isinstance(wk, dict):
            W[np.array(wk["indices"], dtype=int) - 1, k] = wk["values"]
        else:
            W[:len(wk), k] = wk
    order = np.argsort([int(c) for c in m["classes"]])
    return W[:, order], np.array(m["bias"], dtype=float)[order], m["training"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "pegasos"))
    ap.add_argument("--features", default="vocabulary", choices=["vocabulary", "hashing"])
    ap.add_argument("--C", default="0.1,1,10")
    ap.add_argument("--repeats", type=int, default=1, help="run every command N times in turn, report the median")
    ap.add_argument("--before", default=None,
                    help="another pegasos binary (e.g. built from an older commit): adds its solver=sdca rows")
    ap.add_argument("--work", default="/tmp/pegasos-mctext")
    ap.add_argument("--out", default=None, help="JSON results (default WORK/results.json)")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)

    svm = prepare(args)
    X, y = load_svmlight_file(svm)
    X = X.tocsr()
    y = y.astype(int) - 1  # featurize writes 1..K
    n, d = X.shape
    log("%s: %d rows, %d features, %d classes" % (svm, n, d, y.max() + 1))
    counter = build_counter(args.work)
    git = subprocess.run(["git", "-C", ROOT, "log", "-1", "--oneline"], capture_output=True, text=True).stdout.strip()
    rows = []
    for C in [float(c) for c in args.C.split(",")]:
        lam = 1.0 / (C * n)
        runs = [("liblinear -s 4", ["liblinear-train", "-s", "4", "-B", "1", "-c", repr(C)]),
                ("pegasos auto", [args.bin, "train", "--set", "objective=multiclass_hinge", "--set", "lambda=%r" % lam]),
                ("pegasos sdca", [args.bin, "train", "--set", "objective=multiclass_hinge", "--set", "lambda=%r" % lam,
                                  "--set", "solver=sdca"])]
        if args.before:
            runs.append(("before sdca", [args.before, "train", "--set", "objective=multiclass_hinge",
                                         "--set", "lambda=%r" % lam, "--set", "solver=sdca"]))
        results = {name: [] for name, _ in runs}
        for _ in range(args.repeats):
            for name, cmd in runs:
                model = os.path.join(args.work, "%s_C%g.model" % (name.replace(" ", "_").replace("-", ""), C))
                results[name].append(timed(cmd + [svm, model]))
        for name, cmd in runs:
            model = os.path.join(args.work, "%s_C%g.model" % (name.replace(" ", "_").replace("-", ""), C))
            runs_sorted = sorted(results[name], key=lambda res: res[0])
            wall, cpu, out, err = runs_sorted[len(runs_sorted) // 2]
            row = dict(C=C, lam=lam, tool=name, wall=wall, cpu=cpu)
            if name.startswith("liblinear"):
                W, b = liblinear_model(model, d)
                row["passes"] = int(re.search(r"#iter = (\d+)", out).group(1))
                if counter:
                    p = subprocess.run(cmd + [svm, model], capture_output=True, text=True,
                                       env=dict(os.environ, LD_PRELOAD=counter))
                    m = re.search(r"RANDCALLS (\d+)", p.stderr)
                    row["visits"] = int(m.group(1)) / n if m else None
            else:
                W, b, tr = pegasos_model(model, d)
                row.update(passes=tr["epochs"], visits=tr["epochs"], solver=tr["solver"], converged=tr["converged"],
                           own_objective=tr["objective"],
                           train_s=float(re.search(r"train ([0-9.]+)s", err).group(1)))
            row["objective"] = primal(W, b, X, y, lam)
            rows.append(row)
            log(json.dumps(row))
    ref = {r["C"]: r["objective"] for r in rows if r["tool"].startswith("liblinear")}
    print("data: %s (%d rows, %d features, %d classes); pegasos %s" % (os.path.basename(svm), n, d, y.max() + 1, git))
    print("| C | tool | solver | wall s | CPU s | train s | passes | visits | P (ours) | (P − P_LL)/P_LL |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print("| %g | %s | %s | %.2f | %.2f | %s | %.1f | %s | %.6f | %+.2e |" % (
            r["C"], r["tool"], r.get("solver", "-"), r["wall"], r["cpu"],
            "%.2f" % r["train_s"] if "train_s" in r else "-", r["passes"],
            "%.1f" % r["visits"] if r.get("visits") is not None else "-", r["objective"],
            (r["objective"] - ref[r["C"]]) / ref[r["C"]]))
    with open(args.out or os.path.join(args.work, "results.json"), "w") as f:
        json.dump(dict(git=git, data=svm, rows=rows), f, indent=1)


if __name__ == "__main__":
    main()
