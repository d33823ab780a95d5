#!/usr/bin/python3
"""Multiclass Fashion-MNIST at settings already chosen by bench/multiclass.py
(no validation search): pegasos ova and multiclass_hinge with a fixed number
of epochs against LIBLINEAR -s 2 / -s 3 / -s 4 (-B 1) at one C each. Whole-process
wall times, one tool at a time, and test accuracy.

    /usr/bin/python3 bench/multiclass_fixed.py [--pegasos build/pegasos]
        [--lambda 1.7e-6] [--normalize l2] [--epochs 10] [--C 0.1]

Data: data/cache/fmnist_train.svm.gz / fmnist_test.svm.gz (pixels / 255; see
docs/experiments.md), decompressed once to a temporary folder so that every
tool reads the same plain file.
"""
import argparse
import gzip
import os
import re
import shutil
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def timed(cmd):
    start = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return time.perf_counter() - start, p.stdout + p.stderr


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--solver", default="pegasos", help="pegasos (the documented figures), sdca or auto")
    ap.add_argument("--pegasos", default=os.path.join(ROOT, "build", "pegasos"))
    ap.add_argument("--lambda", dest="lam", type=float, default=1.7e-6)
    ap.add_argument("--normalize", default="l2")
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--C", type=float, default=0.1, help="LIBLINEAR C (pixels in [0, 1])")
    ap.add_argument("--solvers", default="4,3,2")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        files = {}
        for split in ("train", "test"):
            files[split] = os.path.join(tmp, f"fm_{split}.svm")
            with gzip.open(os.path.join(ROOT, f"data/cache/fmnist_{split}.svm.gz"), "rb") as src, \
                    open(files[split], "wb") as dst:
                shutil.copyfileobj(src, dst)
        for objective in ("multiclass_hinge", "ova"):
            model = os.path.join(tmp, f"{objective}.json")
            wall, _ = timed([args.pegasos, "train", "--set", f"solver={args.solver}",
                             "--set", f"objective={objective}", "--set", f"lambda={args.lam}",
                             "--set", f"normalize={args.normalize}", "--set", f"epochs={args.epochs}",
                             files["train"], model])
            _, out = timed([args.pegasos, "eval", model, files["test"]])
            acc = float(re.search(r"^accuracy\s+([\d.]+)", out, re.M).group(1))
            rows.append((f"pegasos {objective} ({args.solver}), {args.epochs} epochs, lambda {args.lam:g}, normalize {args.normalize}",
                         acc, wall))
        for s in args.solvers.split(","):
            model = os.path.join(tmp, f"ll{s}.model")
            wall, _ = timed(["liblinear-train", "-q", "-s", s, "-B", "1", "-c", str(args.C), files["train"], model])
            _, out = timed(["liblinear-predict", files["test"], model, os.path.join(tmp, "pred")])
            acc = float(re.search(r"Accuracy = ([\d.]+)%", out).group(1)) / 100
            rows.append((f"LIBLINEAR -s {s} -B 1 -c {args.C:g}", acc, wall))
    print(f"load average at end {os.getloadavg()[0]:.2f}; {os.cpu_count()} cores (pegasos uses all, LIBLINEAR one)")
    print("| tool | test accuracy | whole-process train s |\n|---|---|---|")
    for name, acc, wall in rows:
        print(f"| {name} | {acc:.4f} | {wall:.2f} |")


if __name__ == "__main__":
    main()
