#!/usr/bin/env python3
"""Warm start (`train --init-model`) vs training from zero, on "one more day" of data.

Each case splits a training file in file order into day 1 (the first 90%) and day 2
(the last 10%; --day2 FRACTION[,FRACTION...]), trains day 1 from zero (yesterday's model), then day 1 + day 2 from zero
and with --init-model yesterday's model, and compares passes (training.epochs: passes
over the data, for SDCA visits / n), the objective and the certificate. Yesterday's model
stores SDCA's dual variables (the default); --margins also warm-starts from a day-1 model
trained with keep_duals=false (the dual point rebuilt from its margins) for comparison.

    /usr/bin/python3 bench/warm_start.py [--uci DIR] [--quick] [--day2 0.1,0.03,0.01] [--margins]

Cases: the bundled SpamAssassin sample (raw text, hashing without idf so that day 1's
featurizer is the one a cold run fits too), the bundled Fashion-MNIST slice, and UCI sets
from DIR (default data/cache/uci, made by scripts/uci_data.py; skipped when absent) at
C = 1 and C = 100 (lambda = 1/(C n) with each run's own n). Needs build/pegasos.
"""
import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(REPO, "build", "pegasos")
DAY2 = 0.1
MARGINS = False


def lines_of(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [l for l in f if l.strip()]


def train(data, out, sets, init=None):
    cmd = [BIN, "train", "-q"] + [a for s in sets for a in ("--set", s)]
    if init:
        cmd += ["--init-model", init]
    start = time.perf_counter()
    subprocess.run(cmd + [data, out], check=True, stderr=subprocess.DEVNULL)
    seconds = time.perf_counter() - start
    t = json.load(open(out))["training"]
    return {"passes": t["epochs"], "objective": t["objective"], "gap": t.get("relative_gap"),
            "converged": t["converged"], "solver": t["solver"], "seconds": seconds}


def case(work, name, ext, rows, sets_for_n, solver_sets=()):
    day1 = rows[: int((1 - DAY2) * len(rows))]
    d1, d12 = os.path.join(work, name + ".d1" + ext), os.path.join(work, name + ".d12" + ext)
    open(d1, "w").writelines(day1)
    open(d12, "w").writelines(rows)
    out = []
    for extra in ([()] + [tuple(solver_sets)]) if solver_sets else [()]:
        m1 = os.path.join(work, name + ".m1.json")
        train(d1, m1, list(sets_for_n(len(day1))) + list(extra))
        sets = list(sets_for_n(len(rows))) + list(extra)
        cold = train(d12, os.path.join(work, name + ".cold.json"), sets)
        warm = train(d12, os.path.join(work, name + ".warm.json"), sets, init=m1)
        margins = None
        if MARGINS:
            m0 = os.path.join(work, name + ".m0.json")
            train(d1, m0, list(sets_for_n(len(day1))) + list(extra) + ["keep_duals=false"])
            margins = train(d12, os.path.join(work, name + ".warm0.json"), sets, init=m0)
        label = f"{name} day2={DAY2:g}" + ("" if not extra else " " + " ".join(extra))
        out.append((label, cold, warm, margins))
        print_row(label, cold, warm, margins)
    return out


def print_row(label, cold, warm, margins=None):
    ratio = warm["passes"] / cold["passes"] if cold["passes"] > 0 else float("nan")
    rel = (warm["objective"] - cold["objective"]) / abs(cold["objective"])
    tail = ""
    if margins is not None and cold["passes"] > 0:
        tail = f" | margins only {margins['passes'] / cold['passes']:5.2f}"
    print(f"{label:52s} {cold['solver']:>7s} cold {cold['passes']:8.1f} passes {cold['seconds']:6.2f}s"
          f" | warm {warm['passes']:8.1f} passes {warm['seconds']:6.2f}s {'conv' if warm['converged'] else 'NOT conv'}"
          f" | warm/cold passes {ratio:5.2f}, objective (warm-cold)/cold {rel:+.1e}{tail}", flush=True)


def summary(title, ratios):
    ratios = sorted(ratios)
    if not ratios:
        return
    halved = sum(r <= 0.5 for r in ratios)
    print(f"{title}: {len(ratios)} cases, warm/cold passes median {ratios[len(ratios) // 2]:.2f}, "
          f"min {ratios[0]:.2f}, max {ratios[-1]:.2f}; at most 1/2 of the cold passes in {halved}")


def main():
    global BIN
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--uci", default=os.path.join(REPO, "data", "cache", "uci"))
    ap.add_argument("--quick", action="store_true", help="the bundled data only")
    ap.add_argument("--day2", default="0.1", help="day 2's share of the rows, or a comma list (default 0.1)")
    ap.add_argument("--margins", action="store_true", help="also warm-start from a day-1 model without stored duals")
    ap.add_argument("--pegasos", default=BIN, help="the binary to run (default: build/pegasos)")
    args = ap.parse_args()
    BIN = args.pegasos
    global DAY2, MARGINS
    MARGINS = args.margins
    if not os.path.exists(BIN):
        sys.exit("build first: build/pegasos not found")
    results = {}
    for day2 in [float(f) for f in args.day2.split(",")]:
        DAY2 = day2
        results[day2] = run_cases(args)
    print()
    for day2, rows in results.items():
        summary(f"day 2 = {day2:g} of the rows, stored duals", [w["passes"] / c["passes"] for _, c, w, _ in rows if c["passes"] > 0])
        if MARGINS:
            summary(f"day 2 = {day2:g} of the rows, margins only", [m["passes"] / c["passes"] for _, c, _, m in rows if c["passes"] > 0])


def run_cases(args):
    results = []
    with tempfile.TemporaryDirectory() as work:
        spam = lines_of(os.path.join(REPO, "data", "spam_sample_train.jsonl.gz"))
        text = ['objective=weighted_hinge', 'class_weight=balanced', 'positive_label=spam',
                'features={"mode":"hashing","hash_bits":20,"idf":false}']
        for lam in ("1e-4", "1e-5"):
            results += case(work, f"spam_sample lambda={lam}", ".jsonl", spam, lambda n, l=lam: text + [f"lambda={l}"])
        fmnist = lines_of(os.path.join(REPO, "data", "fmnist_tshirt_train.svm.gz"))
        for lam in ("1e-2", "1e-3"):
            results += case(work, f"fmnist_tshirt lambda={lam}", ".svm", fmnist, lambda n, l=lam: [f"lambda={l}"])
        # Pegasos where it certifies from zero (lambda n = 300).
        results += case(work, "fmnist_tshirt lambda=1e-1", ".svm", fmnist, lambda n: ["lambda=1e-1", "solver=pegasos"])
        if not args.quick and os.path.isdir(args.uci):
            for name, objectives in [("ionosphere", ["hinge"]), ("sonar", ["hinge"]), ("spam", ["hinge"]),
                                     ("vehicle", ["ova", "multiclass_hinge"])]:
                path = os.path.join(args.uci, name + ".train.svm")
                if not os.path.exists(path):
                    continue
                rows = lines_of(path)
                for objective in objectives:
                    for C in (1, 100):
                        results += case(work, f"uci {name} {objective} C={C}", ".svm", rows,
                                        lambda n, C=C, o=objective: [f"objective={o}", f"lambda={1.0 / (C * n)!r}"])
    return results


if __name__ == "__main__":
    main()
