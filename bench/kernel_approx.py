#!/usr/bin/python3
"""Kernel approximation (kernel_approximation: rff, nystroem) against LIBSVM's exact RBF SVM.

Data: Fashion-MNIST, pixels in [0, 1] (scripts/fashion_mnist.py): a 10,000-image
training subset and the 10,000 test images; with --full also all 60,000
training images. Without --data the files are made in a temporary folder.
Every tool runs as its own process; times are whole-process wall clock
(reading the data included), measured in the same run:

  LIBSVM   svm-train -t 2 -g GAMMA -c C -m 1000 (one-vs-one SMO), then svm-predict
  pegasos  pegasos train --set objective=ova --set kernel_approximation=... with
           lambda = 1/(C n) (LIBLINEAR's / LIBSVM's C), SDCA (the default solver),
           then pegasos eval on the test file

    /usr/bin/python3 bench/kernel_approx.py [--build build] [--data DIR] [--full]
        [--components 2000] [--gamma 0.01] [--C 10] [--tolerance 0.01]
        [--types rff,nystroem] [--skip-libsvm] [--out FILE]

DIR holds train.svm and test.svm (the 10k subset; --full also writes or
reads train60k.svm there). Prints one line per run and a JSON summary.
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


def run(cmd):
    start = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.monotonic() - start
    if p.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (p.returncode, " ".join(cmd), p.stderr[-2000:]))
    return seconds, p.stdout, p.stderr


def make_data(folder, full):
    script = os.path.join(ROOT, "scripts", "fashion_mnist.py")
    wanted = [("train.svm", ["--split", "train", "--limit", "10000"]), ("test.svm", ["--split", "test"])]
    if full:
        wanted.append(("train60k.svm", ["--split", "train"]))
    for name, args in wanted:
        path = os.path.join(folder, name)
        if not os.path.exists(path):
            print("making %s" % path, file=sys.stderr)
            subprocess.run([sys.executable, script] + args + ["--out", path], check=True)


def rows(path):
    with open(path) as f:
        return sum(1 for line in f if line.strip())


def libsvm(train, test, gamma, C, work):
    model = os.path.join(work, "libsvm.model")
    train_s, _, _ = run(["svm-train", "-q", "-t", "2", "-g", str(gamma), "-c", str(C), "-m", "1000", train, model])
    predict_s, out, _ = run(["svm-predict", test, model, os.path.join(work, "libsvm.out")])
    accuracy = float(re.search(r"Accuracy = ([0-9.]+)%", out).group(1)) / 100
    return {"tool": "libsvm", "train_seconds": train_s, "predict_seconds": predict_s, "accuracy": accuracy}


def pegasos(binary, train, test, kind, m, gamma, C, tolerance, work):
    n = rows(train)
    model = os.path.join(work, "%s.json" % kind)
    approx = {"type": kind, "components": m, "gamma": gamma}
    cmd = [binary, "train", "--set", "objective=ova", "--set", "kernel_approximation=" + json.dumps(approx),
           "--set", "lambda=%.17g" % (1.0 / (C * n)), "--set", "tolerance=%g" % tolerance, train, model]
    train_s, _, err = run(cmd)
    fit = re.search(r"fit ([0-9.]+)s, map ([0-9.]+)s", err)
    load = re.search(r"load ([0-9.]+)s, train ([0-9.]+)s", err)
    passes = re.search(r"\(([0-9.]+) passes", err)
    metrics = os.path.join(work, "%s.eval.json" % kind)
    eval_s, _, _ = run([binary, "eval", "--json", metrics, model, test])
    with open(metrics) as f:
        accuracy = json.load(f)["accuracy"]
    return {"tool": "pegasos", "type": kind, "components": m, "gamma": gamma, "C": C, "lambda": 1.0 / (C * n),
            "tolerance": tolerance, "examples": n, "train_seconds": train_s, "eval_seconds": eval_s,
            "accuracy": accuracy, "load_seconds": float(load.group(1)), "fit_seconds": float(fit.group(1)),
            "map_seconds": float(fit.group(2)),
            "solve_seconds": float(load.group(2)) - float(fit.group(1)) - float(fit.group(2)),
            "passes": float(passes.group(1)) if passes else None, "model_bytes": os.path.getsize(model)}


def show(r):
    if r["tool"] == "libsvm":
        print("libsvm           train %6.2fs  predict %6.2fs  accuracy %.4f" %
              (r["train_seconds"], r["predict_seconds"], r["accuracy"]))
    else:
        print("%-8s m=%-5d n=%-5d train %6.2fs (load %.2f, fit %.2f, map %.2f, solve %.2f, %s passes)  eval %5.2fs  "
              "accuracy %.4f" % (r["type"], r["components"], r["examples"], r["train_seconds"], r["load_seconds"],
                                 r["fit_seconds"], r["map_seconds"], r["solve_seconds"], r["passes"],
                                 r["eval_seconds"], r["accuracy"]))
    sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--data", help="folder with train.svm and test.svm (made when missing)")
    ap.add_argument("--full", action="store_true", help="also train on all 60k training images")
    ap.add_argument("--components", type=int, default=2000)
    ap.add_argument("--gamma", default="0.01", help="RBF gamma (LIBSVM -g), or scale")
    ap.add_argument("--C", type=float, default=10.0)
    ap.add_argument("--tolerance", type=float, default=0.01, help="SDCA's relative duality gap")
    ap.add_argument("--types", default="rff,nystroem")
    ap.add_argument("--skip-libsvm", action="store_true")
    ap.add_argument("--out", help="write the results as JSON here")
    args = ap.parse_args()
    binary = os.path.join(args.build, "pegasos")
    gamma = args.gamma if args.gamma == "scale" else float(args.gamma)
    with tempfile.TemporaryDirectory() as work:
        folder = args.data or work
        make_data(folder, args.full)
        train, test = os.path.join(folder, "train.svm"), os.path.join(folder, "test.svm")
        results = []
        if not args.skip_libsvm:
            results.append(libsvm(train, test, 0.01 if gamma == "scale" else gamma, args.C, work))
            show(results[-1])
        for kind in args.types.split(","):
            results.append(pegasos(binary, train, test, kind, args.components, gamma, args.C, args.tolerance, work))
            show(results[-1])
        if args.full:
            for kind in args.types.split(","):
                big = os.path.join(folder, "train60k.svm")
                results.append(pegasos(binary, big, test, kind, args.components, gamma, args.C, args.tolerance, work))
                show(results[-1])
    if not args.skip_libsvm:
        base = results[0]["train_seconds"] + results[0]["predict_seconds"]
        for r in results[1:]:
            if r["examples"] == 10000:
                r["time_vs_libsvm"] = (r["train_seconds"] + r["eval_seconds"]) / base
    text = json.dumps(results, indent=1)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
