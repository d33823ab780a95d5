#!/usr/bin/python3
"""SDCA's growing first pass (README, Solvers): passes and training time to the
default certificate, this binary against one built before it, seed by seed.

    /usr/bin/python3 bench/first_pass.py --before OLD_BINARY [--bin build/pegasos]
        [--seeds 1,2,3] [--runs FILE:LAMBDA[:SETTING=VALUE...],...]

OLD_BINARY: a pegasos built from a commit before the growing first pass, e.g.
    git worktree add /tmp/pegasos-f6ebe2e f6ebe2e && bash /tmp/pegasos-f6ebe2e/scripts/build.sh
    --before /tmp/pegasos-f6ebe2e/build/pegasos
Default runs: the RCV1-like file of bench/speed_data.py at lambda 1e-4 and 1e-5
(lambda n = 78 and 7.8, bias none). Each run prints both binaries' passes, the
`train` timer and the final relative duality gap; the summary sums the passes.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_RUNS = ("/tmp/pegasos-speed/rcv1_like.svm:1e-4:bias=none,"
                "/tmp/pegasos-speed/rcv1_like.svm:1e-5:bias=none")


def train(binary, path, lam, settings, seed, model):
    cmd = [binary, "train", path, model, "--set", "lambda=" + lam, "--set", "seed=%d" % seed]
    for s in settings:
        cmd += ["--set", s]
    out = subprocess.run(cmd, capture_output=True, text=True)
    text = out.stdout + out.stderr
    if out.returncode != 0:
        sys.exit("%s exited %d:\n%s" % (" ".join(cmd), out.returncode, text))
    passes = re.search(r"\(([0-9.e+]+) passes", text)
    timer = re.search(r"train ([0-9.]+)s", text)
    gap = re.search(r"relative duality gap ([0-9.e+-]+)", text)
    if not (passes and timer):
        sys.exit("%s: no passes or train timer in its summary:\n%s" % (" ".join(cmd), text))
    return float(passes.group(1)), float(timer.group(1)), gap.group(1) if gap else "-"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "pegasos"))
    ap.add_argument("--before", required=True, help="a pegasos binary from before the growing first pass")
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--runs", default=DEFAULT_RUNS)
    a = ap.parse_args()
    for b in (a.bin, a.before):
        if not os.access(b, os.X_OK):
            sys.exit("%s: not an executable (build it first)" % b)
    seeds = [int(s) for s in a.seeds.split(",")]
    total = {"before": 0.0, "now": 0.0}
    with tempfile.TemporaryDirectory() as work:
        model = os.path.join(work, "m.json")
        print("| file | lambda | seed | passes before / now | train s before / now | gap before / now |")
        print("|---|---|---|---|---|---|")
        for spec in a.runs.split(","):
            parts = spec.split(":")
            if len(parts) < 2:
                sys.exit("--runs: %r is not FILE:LAMBDA[:SETTING=VALUE...]" % spec)
            path, lam, settings = parts[0], parts[1], parts[2:]
            if not os.path.exists(path):
                sys.exit("%s: no such file (bench/speed_data.py writes the RCV1-like one)" % path)
            for seed in seeds:
                p0, t0, g0 = train(a.before, path, lam, settings, seed, model)
                p1, t1, g1 = train(a.bin, path, lam, settings, seed, model)
                total["before"] += p0
                total["now"] += p1
                print("| %s | %s | %d | %g / %g | %.2f / %.2f | %s / %s |"
                      % (os.path.basename(path), lam, seed, p0, p1, t0, t1, g0, g1), flush=True)
    print("\npasses in all: before %g, now %g" % (total["before"], total["now"]))


if __name__ == "__main__":
    main()
