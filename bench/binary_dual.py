#!/usr/bin/python3
"""The binary dual solver on small dense, unscaled problems: pegasos solver=sdca
against LIBLINEAR's dual coordinate descent (liblinear-train -s 3 -B 1).

    /usr/bin/python3 bench/binary_dual.py [--bin build/pegasos] [--before OTHER_BIN]
        [--data data/cache/uci] [--sets ionosphere,sonar,pima] [--C 10,100]

Data: NAME.train.svm as scripts/uci_data.py writes them (raw, unscaled
features; labels 1/2). Each set is trained plain and with class weights
"balanced" (n / (2 n_k); LIBLINEAR -wK n/(2 n_k)), lambda = 1/(C n).

Per run: pegasos at its defaults (automatic stopping at a relative gap of 1e-3
or its visit cap) and with max_epochs 100000 (the passes the certificate needs);
LIBLINEAR at its defaults (-e 0.1, at most 1000 iterations over its active
set). Objectives are computed here from the model files, in pegasos' scale:
    P = lambda/2 (|w|^2 + b^2) + (1/n) sum_i c_i max(0, 1 - y_i (w.x_i + b)).
LIBLINEAR's visits per example (coordinate steps / n) are counted by
interposing rand(), which its solver calls once per visit (a small shared
object built here with cc; the column is empty without a C compiler).
"""
import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
from sklearn.datasets import load_svmlight_file

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

COUNTER_C = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
static unsigned long long calls = 0;
int rand(void) {
  static int (*real)(void) = 0;
  if (!real) real = (int (*)(void))dlsym(RTLD_NEXT, "rand");
  ++calls;
  return real();
}
__attribute__((destructor)) static void report(void) { fprintf(stderr, "RANDCALLS %llu\n", calls); }
"""


def build_counter(work):
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        return None
    src, lib = os.path.join(work, "randcount.c"), os.path.join(work, "randcount.so")
    with open(src, "w") as f:
        f.write(COUNTER_C)
    r = subprocess.run([cc, "-O2", "-shared", "-fPIC", "-o", lib, src, "-ldl"], capture_output=True, text=True)
    return lib if r.returncode == 0 else None


def run(cmd, env=None):
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        raise SystemExit("%s failed:\n%s" % (" ".join(cmd), p.stderr[-2000:]))
    return wall, p.stdout, p.stderr


def primal(X, y, pos, w, b, lam, cost):
    yy = np.where(y == pos, 1.0, -1.0)
    c = np.array([cost[v] for v in y])
    return lam / 2 * (w @ w + b * b) + float(np.mean(c * np.maximum(0.0, 1.0 - yy * (X @ w + b))))


def liblinear_model(path, d):
    lines = open(path).read().split("\n")
    header, i = {}, 0
    while lines[i].strip() != "w":
        key, _, val = lines[i].partition(" ")
        header[key] = val
        i += 1
    labels = [int(v) for v in header["label"].split()]
    nr = int(header["nr_feature"])
    vals = [float(ln.split()[0]) for ln in lines[i + 1:] if ln.strip()]
    w = np.zeros(d)
    w[:nr] = vals[:nr]
    b = vals[nr] * float(header["bias"]) if len(vals) > nr else 0.0
    return w, b, labels[0]  # the first label is LIBLINEAR's +1


def pegasos_model(path, d):
    m = json.load(open(path))
    wk = m["weights"][0]
    w = np.zeros(d)
    if isinstance(wk, dict):
        w[np.array(wk["indices"], dtype=int) - 1] = wk["values"]
    else:
        w[:len(wk)] = wk
    # One output: scores > 0 predict the last class (the positive one).
    return w, float(m["bias"][0]), int(m["classes"][-1]), m["training"]


def pegasos(binary, path, lam, balanced, model, extra=()):
    cmd = [binary, "train", "--set", "solver=sdca", "--set", "lambda=%r" % lam]
    if balanced:
        cmd += ["--set", "objective=weighted_hinge", "--set", "class_weight=balanced"]
    for kv in extra:
        cmd += ["--set", kv]
    wall, _, _ = run(cmd + [path, model])
    return wall


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "pegasos"))
    ap.add_argument("--before", default=None, help="another pegasos binary: adds its rows")
    ap.add_argument("--data", default=os.path.join(ROOT, "data", "cache", "uci"))
    ap.add_argument("--sets", default="ionosphere,sonar,pima")
    ap.add_argument("--C", default="10,100")
    ap.add_argument("--out", default=None, help="JSON results")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="binary-dual-")
    counter = build_counter(work)
    bins = [("pegasos", args.bin)] + ([("before", args.before)] if args.before else [])
    rows = []
    print("| set | C | weights | tool | passes (defaults) | P (defaults) | wall s | passes to certify (default tolerance) |"
          " P certified | LIBLINEAR visits/example | P − P_LL |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name in args.sets.split(","):
        path = os.path.join(args.data, name + ".train.svm")
        if not os.path.exists(path):
            raise SystemExit("%s missing: write it with scripts/uci_data.py" % path)
        X, y = load_svmlight_file(path)
        X, y = X.toarray(), y.astype(int)
        n, d = X.shape
        counts = collections.Counter(y.tolist())
        for C in [float(c) for c in args.C.split(",")]:
            lam = 1.0 / (C * n)
            for balanced in (False, True):
                cost = {k: (n / (len(counts) * v) if balanced else 1.0) for k, v in counts.items()}
                model = os.path.join(work, "ll.model")
                cmd = ["liblinear-train", "-s", "3", "-B", "1", "-c", repr(C)]
                if balanced:
                    for k in sorted(cost):
                        cmd += ["-w%d" % k, "%.12g" % cost[k]]
                env = dict(os.environ, LD_PRELOAD=counter) if counter else None
                wall, out, err = run(cmd + [path, model], env=env)
                w, b, pos = liblinear_model(model, d)
                p_ll = primal(X, y, pos, w, b, lam, cost)
                m = re.search(r"RANDCALLS (\d+)", err)
                ll = dict(set=name, C=C, balanced=balanced, tool="liblinear -s 3", P=p_ll, wall=wall,
                          iterations=int(re.search(r"#iter = (\d+)", out).group(1)),
                          visits=int(m.group(1)) / n if m else None)
                rows.append(ll)
                print("| %s | %g | %s | liblinear -s 3 | %d iter | %.6f | %.3f | - | - | %s | 0 |" % (
                    name, C, "balanced" if balanced else "-", ll["iterations"], p_ll, wall,
                    "%.0f" % ll["visits"] if ll["visits"] is not None else "-"))
                for label, binary in bins:
                    model = os.path.join(work, "p.json")
                    wall = pegasos(binary, path, lam, balanced, model)
                    w, b, pos, tr = pegasos_model(model, d)
                    p_def = primal(X, y, pos, w, b, lam, cost)
                    pegasos(binary, path, lam, balanced, model, ["max_epochs=100000"])
                    w, b, pos, tr_long = pegasos_model(model, d)
                    p_long = primal(X, y, pos, w, b, lam, cost)
                    row = dict(set=name, C=C, balanced=balanced, tool=label, P=p_def, wall=wall,
                               passes=tr["epochs"], converged=tr["converged"], passes_certify=tr_long["epochs"],
                               certified=tr_long["converged"], P_certified=p_long)
                    rows.append(row)
                    print("| %s | %g | %s | %s | %.0f%s | %.6f | %.3f | %s | %.6f | - | %+.2e |" % (
                        name, C, "balanced" if balanced else "-", label, tr["epochs"],
                        "" if tr["converged"] else " (cap)", p_def, wall,
                        "%.0f" % tr_long["epochs"] if tr_long["converged"] else "> %.0f" % tr_long["epochs"],
                        p_long, (p_def - p_ll) / p_ll))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(rows, f, indent=1)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
