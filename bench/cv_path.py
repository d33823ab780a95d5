#!/usr/bin/python3
"""Cost of a warm-started lambda path in `pegasos train --cv 5 --grid`, and how
good the lambda it chooses is.

For each data set: whole-process wall time of
  (a) pegasos train --cv 5 --grid lambda=LO:HI   (10 values, warm-started path)
  (b) pegasos train --cv 5 --set lambda=LO       (one CV fit at the path's final lambda)
  (c) with --cold-path: (a) with --cold (every fit from zero)
and the ratio a/b (target <= 3). Then, with a test file, every grid value is
trained on the whole training file and evaluated on the test file: the test
score of the CV-chosen lambda against the best lambda in hindsight.

  /usr/bin/python3 bench/cv_path.py [--pegasos build/pegasos] [--cold-path] [--repeat N]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
UCI = os.path.join(ROOT, "data/cache/uci")

# name, training file, test file, extra settings, grid range
SETS = [
    ("spam sample (raw mail, weighted_hinge balanced)", "data/spam_sample_train.jsonl.gz",
     "data/spam_sample_test.jsonl.gz", ["--config", "configs/spam.json"], "1e-5:1e-1"),
    ("Fashion-MNIST T-shirt vs rest (hinge)", "data/fmnist_tshirt_train.svm.gz",
     "data/fmnist_tshirt_test.svm.gz", [], "1e-5:1e-1"),
    ("UCI spambase, unscaled (hinge)", UCI + "/spam.train.svm", UCI + "/spam.test.svm", [], "1e-5:1e-1"),
    ("UCI spambase, normalize=l2 (hinge)", UCI + "/spam.train.svm", UCI + "/spam.test.svm",
     ["--set", "normalize=l2"], "1e-5:1e-1"),
]


def run(cmd):
    start = time.perf_counter()
    p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if p.returncode != 0:
        sys.exit("failed: " + " ".join(cmd) + "\n" + p.stderr)
    return seconds, p.stdout


def best_of(cmd, repeat):
    times, out = [], ""
    for _ in range(repeat):
        t, out = run(cmd)
        times.append(t)
    return min(times), out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pegasos", default=os.path.join(ROOT, "build/pegasos"))
    ap.add_argument("--cold-path", action="store_true", help="also time the path with --cold")
    ap.add_argument("--repeat", type=int, default=1, help="best of N runs for each timing")
    args = ap.parse_args()
    for name, train, test, extra, grid in SETS:
        if not os.path.exists(os.path.join(ROOT, train)):
            print(f"{name}: {train} missing, skipped")
            continue
        low = grid.split(":")[0]
        base = [args.pegasos, "train", "--quiet", train] + extra
        t_path, out = best_of(base + ["--cv", "5", "--grid", "lambda=" + grid], args.repeat)
        t_final, _ = best_of(base + ["--cv", "5", "--set", "lambda=" + low], args.repeat)
        print(f"\n## {name}\n{out}")
        print(f"path (10 values, warm) {t_path:.2f} s; one --cv 5 fit at lambda={low} {t_final:.2f} s; "
              f"ratio {t_path / t_final:.2f} (target <= 3)")
        if args.cold_path:
            t_cold, _ = best_of(base + ["--cv", "5", "--cold", "--grid", "lambda=" + grid], args.repeat)
            print(f"path with --cold {t_cold:.2f} s ({t_cold / t_path:.1f}x the warm path)")
        metric = "balanced_accuracy" if "balanced accuracy " in out.split("best:")[1] else "accuracy"
        values = re.findall(r"^(\S+)\s+\d\.\d{4} ±", out, re.M)
        chosen = re.search(r"^best: lambda=(\S+)", out, re.M).group(1)
        scores = {}
        with tempfile.TemporaryDirectory() as tmp:
            for v in values:
                model = os.path.join(tmp, "m.json")
                run([args.pegasos, "train", "--quiet", train, model] + extra + ["--set", "lambda=" + v])
                report = os.path.join(tmp, "e.json")
                run([args.pegasos, "eval", model, test, "--json", report])
                with open(report) as f:
                    scores[v] = json.load(f)[metric]
        best = max(scores, key=lambda v: scores[v])
        print(f"test {metric}: " + "  ".join(f"{v}:{scores[v]:.4f}" for v in values))
        print(f"CV-chosen lambda={chosen}: test {metric} {scores[chosen]:.4f}; best in hindsight lambda={best}: "
              f"{scores[best]:.4f} (difference {scores[best] - scores[chosen]:.4f})")


if __name__ == "__main__":
    main()
