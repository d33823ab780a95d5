#!/usr/bin/python3
"""How good is `lambda: "auto"`, and what does it cost?

For each data set (a training file and a test file):
  * `pegasos train --set lambda=auto` (whole-process time), evaluated on the test file;
  * hindsight: every lambda of the auto grid (C = 0.01..1000, 3 a decade) trained on the
    whole training file and evaluated on the test file; the gap between the best test
    score and the auto model's (target: <= 0.3 pt);
  * the time of one plain fit at the chosen lambda (auto's cost in single fits);
  * with --liblinear, for the UCI sets: LIBLINEAR `-s 3 -B 1` (L1-loss SVC, one-vs-rest)
    at every C of the same grid, its best test accuracy picked on the test set
    (optimistic; target: auto within 0.5 pt).
The score is the one auto selects by: accuracy, or balanced accuracy with class weights.

  /usr/bin/python3 bench/lambda_auto.py [--sets NAME,...] [--liblinear] [--fmnist DIR]
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
UCI = os.path.join(ROOT, "data/cache/uci")
CACHE = os.path.join(ROOT, "data/cache")


def sets(fmnist_dir):
    out = [
        ("spam-sample", "data/spam_sample_train.jsonl.gz", "data/spam_sample_test.jsonl.gz",
         ["--config", "configs/spam.json"], False),
        ("fmnist-tshirt", "data/fmnist_tshirt_train.svm.gz", "data/fmnist_tshirt_test.svm.gz", [], False),
        ("spamassassin", os.path.join(CACHE, "spamassassin_train.jsonl"), os.path.join(CACHE, "spamassassin_test.jsonl"),
         ["--config", "configs/spam.json"], False),
    ]
    if fmnist_dir:
        out.append(("fmnist-10", os.path.join(fmnist_dir, "fmnist_train.svm"), os.path.join(fmnist_dir, "fmnist_test.svm"),
                    ["--set", "objective=ova"], False))
    for name in ["dna", "glass", "letter", "satellite", "shuttle", "soybean", "vehicle", "vowel", "zoo"]:
        out.append((name, os.path.join(UCI, name + ".train.svm"), os.path.join(UCI, name + ".test.svm"),
                    ["--set", "objective=ova"], True))
    return out


def run(cmd):
    start = time.perf_counter()
    p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("failed: " + " ".join(cmd) + "\n" + p.stderr)
    return time.perf_counter() - start, p


def score(pegasos, model, test, tmp, metric):
    report = os.path.join(tmp, "eval.json")
    run([pegasos, "eval", model, test, "--json", report])
    with open(report) as f:
        return json.load(f)[metric]


def liblinear_best(train, test, grid_c, tmp):
    best = (-1.0, None)
    for c in grid_c:
        model = os.path.join(tmp, "ll.model")
        run(["liblinear-train", "-q", "-s", "3", "-B", "1", "-c", "%g" % c, train, model])
        _, p = run(["liblinear-predict", test, model, os.path.join(tmp, "ll.out")])
        acc = float(re.search(r"Accuracy = ([\d.]+)%", p.stdout).group(1)) / 100
        if acc > best[0]:
            best = (acc, c)
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pegasos", default=os.path.join(ROOT, "build/pegasos"))
    ap.add_argument("--sets", default="", help="comma-separated names (default: all present)")
    ap.add_argument("--liblinear", action="store_true")
    ap.add_argument("--auto-only", action="store_true",
                    help="only lambda auto (its score, chosen lambda, time); no hindsight or LIBLINEAR")
    ap.add_argument("--fmnist", default="", help="folder with fmnist_{train,test}.svm (scripts/fashion_mnist.py --unit-norm)")
    args = ap.parse_args()
    wanted = set(args.sets.split(",")) if args.sets else None
    rows = []
    for name, train, test, extra, uci in sets(args.fmnist):
        if wanted and name not in wanted:
            continue
        if not os.path.exists(os.path.join(ROOT, train)):
            print(f"{name}: {train} missing, skipped", flush=True)
            continue
        with tempfile.TemporaryDirectory() as tmp:
            model = os.path.join(tmp, "auto.json")
            t_auto, _ = run([args.pegasos, "train", "--quiet", train, model, "--set", "lambda=auto"] + extra)
            with open(model) as f:
                m = json.load(f)
            sel = m["training"]["selection"]
            metric = sel["metric"]
            chosen = m["settings"]["lambda"]
            n = sel["auto"]["examples"]
            s_auto = score(args.pegasos, model, test, tmp, metric)
            if args.auto_only:
                print(f"{name:14s} {metric:17s} auto {s_auto:.4f} (lambda {chosen:.3g}, C {1 / (chosen * n):.3g}, "
                      f"{len(sel['curve'])} points)  auto {t_auto:.2f}s", flush=True)
                continue
            grid = [1.0 / (c * n) for c in [0.01 * 10 ** (i / 3) for i in range(16)]]
            hindsight = []
            t_plain = None
            for lam in [float("%.6g" % g) for g in grid]:
                path = os.path.join(tmp, "m.json")
                t, _ = run([args.pegasos, "train", "--quiet", train, path, "--set", "lambda=%.6g" % lam] + extra)
                if abs(lam - chosen) <= 1e-9 * chosen:
                    t_plain = t
                hindsight.append((score(args.pegasos, path, test, tmp, metric), lam))
            best, best_lam = max(hindsight)
            row = {"set": name, "metric": metric, "auto": s_auto, "chosen_lambda": chosen, "C": 1 / (chosen * n),
                   "points_run": len(sel["curve"]), "hindsight_best": best, "hindsight_lambda": best_lam,
                   "gap_pt": 100 * (best - s_auto), "auto_seconds": t_auto, "plain_fit_seconds": t_plain}
            if args.liblinear and uci and shutil.which("liblinear-train"):
                acc, c = liblinear_best(train, test, [1.0 / (g * n) for g in grid], tmp)
                row.update({"liblinear_best_on_test": acc, "liblinear_C": c, "gap_vs_liblinear_pt": 100 * (acc - s_auto)})
            rows.append(row)
            line = (f"{name:14s} {metric:17s} auto {s_auto:.4f} (lambda {chosen:.3g}, C {row['C']:.3g}, "
                    f"{row['points_run']} points)  hindsight best {best:.4f} (lambda {best_lam:.3g})  "
                    f"gap {row['gap_pt']:+.2f} pt  auto {t_auto:.2f}s = {t_auto / t_plain:.1f}x one fit")
            if "liblinear_best_on_test" in row:
                line += f"  LIBLINEAR best-on-test {row['liblinear_best_on_test']:.4f} (gap {row['gap_vs_liblinear_pt']:+.2f} pt)"
            print(line, flush=True)
    json.dump(rows, sys.stderr, indent=1)


if __name__ == "__main__":
    main()
