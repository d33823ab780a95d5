#!/usr/bin/python3
"""Cost of learning-curve traces in `pegasos run`.

Runs the same experiment without a trace, with the default sampled trace
(trace_every 1, trace_sample 0.1) and with an exact trace (trace_sample 1),
in interleaved rounds, with threads 1 so that each run's thread CPU time
(results.json timing.train_cpu_seconds) is exact. Reports the summed training
CPU time of each variant (best of the rounds) and the overhead against no trace.

    /usr/bin/python3 bench/trace_overhead.py [--pegasos build/pegasos] [--rounds 3]

Data: the bundled T-shirt file (binary, 3000 rows) and, when present,
data/cache/fmnist10k_train.svm.gz / fmnist2k_test.svm.gz (10 classes, see
docs/experiments.md for how to make them) and data/cache/fmnist_train.svm.gz /
fmnist_test.svm.gz (60k / 10k).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def multiclass_case(train, test, lam, repeats):
    """Multiclass hinge, 10 epochs, on two cached Fashion-MNIST files (None when absent)."""
    if not os.path.exists(os.path.join(ROOT, train)):
        return None
    return {"data": {"train": train, "test": test},
            "config": {"objective": "multiclass_hinge", "normalize": "l2", "lambda": lam, "epochs": 10, "threads": 1},
            "repeats": repeats}


def cases():
    out = [("binary 3000 rows, 20 epochs, k in {1,8} x 10 seeds",
            {"data": {"train": "data/fmnist_tshirt_train.svm.gz", "test": "data/fmnist_tshirt_test.svm.gz"},
             "config": {"lambda": 1e-4, "epochs": 20, "threads": 1},
             "grid": {"batch_size": [1, 8]}, "repeats": 10}),
           ("multiclass hinge 10k rows, 10 epochs x 10 seeds",
            multiclass_case("data/cache/fmnist10k_train.svm.gz", "data/cache/fmnist2k_test.svm.gz", 1e-4, 10)),
           ("multiclass hinge 60k rows, 10 epochs x 3 seeds",
            multiclass_case("data/cache/fmnist_train.svm.gz", "data/cache/fmnist_test.svm.gz", 1e-5, 3))]
    return [(name, experiment) for name, experiment in out if experiment is not None]


def run(pegasos, experiment, tmp):
    path = os.path.join(tmp, "exp.json")
    experiment = dict(experiment, plots=False)
    experiment["data"] = {k: os.path.join(ROOT, v) for k, v in experiment["data"].items()}
    with open(path, "w") as f:
        json.dump(experiment, f)
    out = os.path.join(tmp, "out")
    subprocess.run([pegasos, "run", path, "--quiet", "--output", out], check=True)
    with open(os.path.join(out, "results.json")) as f:
        runs = json.load(f)["runs"]
    return sum(r["timing"]["train_cpu_seconds"] for r in runs)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pegasos", default=os.path.join(ROOT, "build", "pegasos"))
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    variants = [("no trace", {}), ("trace_every 1 (sampled, default)", {"trace_every": 1}),
                ("trace_every 5 (sampled)", {"trace_every": 5}),
                ("trace_every 1, trace_sample 1 (exact)", {"trace_every": 1, "trace_sample": 1})]
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        for name, base in cases():
            best = {v: float("inf") for v, _ in variants}
            for _ in range(args.rounds):
                for v, extra in variants:
                    best[v] = min(best[v], run(args.pegasos, dict(base, **extra), tmp))
            print(f"\n{name}\n| trace | train CPU s (sum over runs) | overhead |\n|---|---|---|")
            for v, _ in variants:
                print(f"| {v} | {best[v]:.3f} | {best[v] / best['no trace'] - 1:+.1%} |")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
