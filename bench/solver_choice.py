#!/usr/bin/env python3
"""Which solver certifies a problem faster: the measurement behind `solver: auto`.

For each LIBSVM file and lambda, trains with solver=sdca and solver=pegasos
(both with automatic stopping, so both end on a certified duality gap or at
their cap) and reports the training time (the `train` part of pegasos' summary,
loading excluded), whether the run converged, its epochs / passes and relative
gap, and kappa = mean |x~|^2 / (lambda n), the conditioning that sets both
solvers' pace.

    /usr/bin/python3 bench/solver_choice.py FILE.svm --lambdas 1e-3,1e-4,1e-5 [--objective hinge]

Defaults: the Fashion-MNIST class-0 files of bench/make_data.sh
(/tmp/pegasos-bench/fmnist0_train.svm and fmnist0_train_x9.svm).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def mean_sq_norm(path, bias=1.0):
    total, rows = 0.0, 0
    with open(path) as f:
        for line in f:
            parts = line.split()
            if not parts:
                continue
            rows += 1
            total += bias * bias + sum(float(p.split(":")[1]) ** 2 for p in parts[1:] if ":" in p)
    return total / max(rows, 1), rows


def train(binary, path, lam, solver, objective, model):
    cmd = [binary, "train", "--set", "lambda=%g" % lam, "--set", "solver=" + solver,
           "--set", "objective=" + objective, path, model]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit("failed: %s\n%s" % (" ".join(cmd), run.stderr))
    seconds = float(re.search(r"train ([0-9.]+)s", run.stderr).group(1))
    with open(model) as f:
        training = json.load(f)["training"]
    return seconds, training


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="*", default=["/tmp/pegasos-bench/fmnist0_train.svm",
                                                 "/tmp/pegasos-bench/fmnist0_train_x9.svm"])
    ap.add_argument("--lambdas", default="1e-3,1e-4,1e-5")
    ap.add_argument("--objective", default="hinge")
    ap.add_argument("--pegasos", default=os.path.join(REPO, "build", "pegasos"))
    args = ap.parse_args()
    lambdas = [float(v) for v in args.lambdas.split(",")]
    print("| file | n | lambda | kappa | solver | train s | epochs/passes | converged | relative gap |")
    print("|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "m.json")
        for path in args.files:
            sq, n = mean_sq_norm(path)
            for lam in lambdas:
                kappa = sq / (lam * n)
                for solver in ("sdca", "pegasos"):
                    seconds, t = train(args.pegasos, path, lam, solver, args.objective, model)
                    gap = t.get("relative_gap")
                    print("| %s | %d | %g | %.3g | %s | %.2f | %.3g | %s | %s |" % (
                        os.path.basename(path), n, lam, kappa, t.get("solver", solver), seconds, t["epochs"],
                        "yes" if t["converged"] else "no (%s)" % t.get("stopped_by"),
                        "%.2g" % gap if gap is not None else "-"), flush=True)


if __name__ == "__main__":
    main()
