#!/usr/bin/python3
"""Kernel SDCA (objective=kernel_hinge, default solver auto -> sdca) against LIBSVM.

On 11 small UCI sets, 8 binary and 3 multiclass (glass, vowel, vehicle: one-vs-one
for both at default settings; `--set multiclass=ova` for pegasos' one-vs-all) (data/cache/uci/*.svm, written by scripts/uci_data.py:
stratified 75/25 train/test, raw unscaled values) over the grid
C in {1, 10, 100} x gamma in {0.1, 1, 10}/d (RBF), lambda = 1/(C n):

  pegasos train --set objective=kernel_hinge --set kernel={rbf, gamma}
                --set lambda=1/(C n)          (defaults otherwise: bias unregularized,
                                               multiclass ovo, tolerance 1e-3; --set K=V
                                               adds settings)
  svm-train -t 2 -g gamma -c C                (Debian libsvm-tools; -e 0.001, -m 100)

Both read the same files: every feature min-max scaled to [0, 1] on the training
set (the same map applied to the test set; LIBSVM's svm-scale convention), written
once to a temporary folder. Per grid point: test accuracy of each, the training
process's wall time (process start to exit, loading included), and the objective:
pegasos' certified primal P = lambda/2 ||w||^2 + mean hinge (its model's
training.objective) and LIBSVM's optimum on the same scale, -obj * lambda (LIBSVM
minimises the dual 1/2 a'Qa - e'a; its primal 1/2||w||^2 + C sum hinge is P/lambda).
Both intercepts are free (unregularised) by default, so the binary objectives are
the same problem's; with --set bias=feature (the kernel + 1 trick, a regularised
intercept) LIBSVM's optimum is at or below ours by construction.

    /usr/bin/python3 bench/kernel_sdca.py [--build build] [--data data/cache/uci]
        [--sets ionosphere,sonar,...] [--out FILE.json]

Prints one line per grid point and a summary (accuracy differences, summed times).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_SETS = "ionosphere,sonar,breast_cancer,house_votes84,pima,musk,promotergene,spam,glass,vowel,vehicle"


def read_svm(path):
    rows = []
    with open(path) as f:
        for line in f:
            parts = line.split()
            if not parts:
                continue
            feats = {}
            for p in parts[1:]:
                i, v = p.split(":")
                feats[int(i)] = float(v)
            rows.append((parts[0], feats))
    return rows


def scale_and_write(train, test, d, out_train, out_test):
    lo = {j: 0.0 for j in range(1, d + 1)}  # absent = 0 counts in the range
    hi = dict(lo)
    for _, feats in train:
        for j, v in feats.items():
            lo[j] = min(lo.get(j, 0.0), v)
            hi[j] = max(hi.get(j, 0.0), v)

    def write(rows, path):
        with open(path, "w") as f:
            for label, feats in rows:
                items = []
                for j in sorted(feats):
                    if j not in lo or hi[j] == lo[j]:
                        continue
                    v = (feats[j] - lo[j]) / (hi[j] - lo[j])
                    if v != 0.0:
                        items.append("%d:%.9g" % (j, v))
                f.write(label + (" " + " ".join(items) if items else "") + "\n")

    write(train, out_train)
    write(test, out_test)


def timed(cmd):
    start = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    if p.returncode != 0:
        raise RuntimeError("%s failed (%d): %s" % (" ".join(cmd), p.returncode, p.stderr[-2000:]))
    return wall, p.stdout + p.stderr


def run_pegasos(binary, train, test, gamma, lam, work, extra=()):
    model = os.path.join(work, "pegasos.model.json")
    settings = []
    for kv in extra:
        settings += ["--set", kv]
    wall, _ = timed([binary, "train", "--quiet", "--set", "objective=kernel_hinge",
                     "--set", 'kernel={"type": "rbf", "gamma": %r}' % gamma, "--set", "lambda=%r" % lam]
                    + settings + [train, model])
    with open(model) as f:
        t = json.load(f)["training"]
    ev = os.path.join(work, "pegasos.eval.json")
    timed([binary, "eval", model, test, "--json", ev])
    with open(ev) as f:
        acc = json.load(f)["accuracy"]
    return {"accuracy": acc, "train_seconds": wall, "objective": t["objective"], "converged": t["converged"],
            "relative_gap": t["relative_gap"], "passes": t["epochs"], "support_vectors": t["support_vectors"],
            "solver": t["solver"]}


def run_libsvm(train, test, gamma, C, lam, work, binary_task):
    model = os.path.join(work, "libsvm.model")
    wall, out = timed(["svm-train", "-t", "2", "-g", repr(gamma), "-c", repr(C),
                       train, model])
    objs = [float(m) for m in re.findall(r"obj = (-?[0-9.eE+-]+)", out)]
    nsv = re.findall(r"nSV = (\d+)", out)
    pred = os.path.join(work, "libsvm.pred")
    _, pout = timed(["svm-predict", test, model, pred])
    m = re.search(r"Accuracy = ([0-9.]+)%", pout)
    return {"accuracy": float(m.group(1)) / 100.0, "train_seconds": wall,
            # one-vs-one for multiclass: its objectives are not the one-vs-all problem's
            "objective": -objs[-1] * lam if objs and binary_task else None, "support_vectors": int(nsv[-1]) if nsv else None}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--data", default=os.path.join(ROOT, "data", "cache", "uci"))
    ap.add_argument("--sets", default=DEFAULT_SETS)
    ap.add_argument("--out", default="")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="a setting passed to pegasos train (repeatable), e.g. bias=unregularized")
    args = ap.parse_args()
    binary = os.path.join(args.build, "pegasos")
    if shutil.which("svm-train") is None:
        sys.exit("svm-train not found: apt-get install libsvm-tools")
    with open(os.path.join(args.data, "index.json")) as f:
        index = {s["name"]: s for s in json.load(f)["sets"]}
    results = []
    work = tempfile.mkdtemp(prefix="kernel_sdca.")
    try:
        for name in args.sets.split(","):
            meta = index[name]
            d = meta["d"]
            train, test = (read_svm(os.path.join(args.data, "%s.%s.svm" % (name, part))) for part in ("train", "test"))
            n = len(train)
            tr, te = os.path.join(work, name + ".train.svm"), os.path.join(work, name + ".test.svm")
            scale_and_write(train, test, d, tr, te)
            for C in (1.0, 10.0, 100.0):
                for g in (0.1, 1.0, 10.0):
                    gamma = g / d
                    lam = 1.0 / (C * n)
                    p = run_pegasos(binary, tr, te, gamma, lam, work, args.set)
                    l = run_libsvm(tr, te, gamma, C, lam, work, meta.get("K", 2) == 2)
                    r = {"set": name, "n": n, "d": d, "C": C, "gamma_d": g, "gamma": gamma, "lambda": lam,
                         "pegasos": p, "libsvm": l}
                    results.append(r)
                    print("%-14s C=%-5g g=%-4g/d  acc %.4f vs %.4f (%+.1f pt)  time %.3fs vs %.3fs  "
                          "P %.6g vs %.6g  %s gap %.1e passes %d" %
                          (name, C, g, p["accuracy"], l["accuracy"], 100 * (p["accuracy"] - l["accuracy"]),
                           p["train_seconds"], l["train_seconds"], p["objective"], l["objective"] or float("nan"),
                           "converged" if p["converged"] else "NOT converged", p["relative_gap"], p["passes"]),
                          flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    k = len(results)
    diff = [r["pegasos"]["accuracy"] - r["libsvm"]["accuracy"] for r in results]
    tp = sum(r["pegasos"]["train_seconds"] for r in results)
    tl = sum(r["libsvm"]["train_seconds"] for r in results)
    summary = {
        "grid_points": k,
        "mean_accuracy_pegasos": sum(r["pegasos"]["accuracy"] for r in results) / k,
        "mean_accuracy_libsvm": sum(r["libsvm"]["accuracy"] for r in results) / k,
        "points_more_than_1pt_below": sum(1 for x in diff if x < -0.01),
        "worst_difference_pt": 100 * min(diff),
        "converged": sum(1 for r in results if r["pegasos"]["converged"]),
        "train_seconds_pegasos": tp,
        "train_seconds_libsvm": tl,
        "objective_ratio_max": max((r["pegasos"]["objective"] / r["libsvm"]["objective"] for r in results
                                    if r["libsvm"]["objective"]), default=None),
    }
    for C in (1.0, 10.0, 100.0):
        sel = [x for r, x in zip(results, diff) if r["C"] == C]
        summary["mean_difference_pt_C%g" % C] = 100 * sum(sel) / len(sel)
        summary["train_seconds_C%g" % C] = [sum(r[t]["train_seconds"] for r in results if r["C"] == C)
                                            for t in ("pegasos", "libsvm")]
    print(json.dumps(summary, indent=1))
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"summary": summary, "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
