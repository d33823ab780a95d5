#!/usr/bin/python3
"""Thread scaling of one-vs-all: the same `pegasos train` with threads 1 and 2.

    /usr/bin/python3 bench/ova_threads.py [--pegasos build/pegasos] [--data FILE]
        [--epochs 10] [--rounds 3] [--set KEY=VALUE ...]

Default data: data/cache/fmnist_train.svm.gz (Fashion-MNIST 60k, 10 classes; see
docs/experiments.md), else the bundled T-shirt file. Rounds alternate threads=1
and threads=2; each variant keeps its fastest round. Reports the training time
pegasos prints ("train Y.YYs"), the whole-process wall time, the speed-ups and
whether the two model files are byte-identical (they must be).
"""
import argparse
import filecmp
import os
import re
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pegasos", default=os.path.join(ROOT, "build", "pegasos"))
    default = os.path.join(ROOT, "data/cache/fmnist_train.svm.gz")
    if not os.path.exists(default):
        default = os.path.join(ROOT, "data/fmnist_tshirt_train.svm.gz")
    ap.add_argument("--data", default=default)
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--set", action="append", default=["normalize=l2", "lambda=1e-5", "solver=pegasos"])
    args = ap.parse_args()
    best = {}
    with tempfile.TemporaryDirectory() as tmp:
        models = {}
        for _ in range(args.rounds):
            for th in (1, 2):
                models[th] = os.path.join(tmp, f"ova_t{th}.json")
                cmd = [args.pegasos, "train", "--set", "objective=ova", "--set", f"threads={th}",
                       "--set", f"epochs={args.epochs}"]
                for s in args.set:
                    cmd += ["--set", s]
                start = time.perf_counter()
                p = subprocess.run(cmd + [args.data, models[th]], capture_output=True, text=True, check=True)
                wall = time.perf_counter() - start
                train = float(re.search(r"train ([0-9.]+)s", p.stderr).group(1))
                old = best.get(th, (float("inf"), float("inf")))
                best[th] = (min(old[0], train), min(old[1], wall))
        identical = filecmp.cmp(models[1], models[2], shallow=False)
    print(f"data {os.path.basename(args.data)}, {args.epochs} epochs, {args.set}, load average {os.getloadavg()[0]:.2f}")
    print("| threads | train s | whole process s |\n|---|---|---|")
    for th in (1, 2):
        print(f"| {th} | {best[th][0]:.2f} | {best[th][1]:.2f} |")
    print(f"speed-up: train {best[1][0] / best[2][0]:.2f}x, whole process {best[1][1] / best[2][1]:.2f}x; "
          f"models byte-identical: {'yes' if identical else 'NO'}")


if __name__ == "__main__":
    main()
