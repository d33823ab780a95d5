#!/usr/bin/python3
"""Issue 17's speed benchmark: first-time parsing and whole-process training time
to 0.1% of P*, pegasos against LIBLINEAR in the same run.

    /usr/bin/python3 bench/speed_data.py --a9a PATH     # the data, once
    ninja -C build pegasos parse_speed
    /usr/bin/python3 bench/speed.py [--data DIR] [--repeats 5] [--skip-train] [--sgd-dir DIR]

Parsing ("first-time": the file's bytes are in the page cache, read once with
cat before timing, but no process has parsed them; every timed run is a new
process): build/parse_speed reads the file once and prints its wall and CPU
time (user + system); LIBLINEAR's reader is timed as the whole process of
`liblinear-train -s 3 -e 1e9` (one pass of coordinate descent after reading, a
few percent of its time). `pegasos train --set iterations=1` gives the CLI's
own "load" figure. The fastest of --repeats runs is kept (the machine is shared).

Training: lambda = 1e-4, no bias (C = 1/(lambda n) for LIBLINEAR -s 3 -B -1).
P* is the lowest objective among a tight LIBLINEAR run (-e 1e-4) and every run
measured. Objectives lambda/2 |w|^2 + mean hinge come from ONE evaluator here
(scipy), applied to each tool's model file. "time to 0.1%" is the whole-process
time of the loosest setting that is within 0.1% of P*, tried in order until one
is: pegasos default, then tolerance=1e-4; LIBLINEAR -e 0.1, then 0.01, 0.001.

Bottou's SGD programs (--sgd-dir DIR, optional): svmsgd (plain SGD, step
eta0 / (1 + lambda eta0 t)) and svmasgd (averaged SGD) from Leon Bottou's sgd
2.0, as mirrored at github.com/npinto/bottou-sgd. Nothing of them is in this
repository; build them yourself outside it and pass the folder that holds the
two binaries. Loss and bias are chosen when compiling, not on the command line,
and their timer counts CPU time unless told otherwise, so build with

    cd <copy of the repository>/svm    # needs lib/ and svm/ only, and zlib1g-dev
    make svmsgd svmasgd OPT='-DLOSS=HingeLoss -DBIAS=0 -DREGULARIZED_BIAS=0 -DUSE_REALTIME_CLOCK'

(hinge loss, no bias term, wall-clock timer like pegasos' "train X s"; the
script refuses binaries whose "# Compiled with:" line says another loss or a
bias). Each runs as `svmsgd -lambda 1e-4 -epochs E -dontnormalize FILE.txt`
(-dontnormalize: otherwise every row is scaled to unit norm while loading,
another problem; they only accept the suffixes .txt/.bin(.gz), so the script
links the data file under a .txt name in the work folder) for E = 1, 2, 3, 5,
8, 12, stopping at the first E within 0.1% of P*. Every run is a fresh process
(they train in the same order every time, so a run of E epochs repeats the
first E-1 epochs of the previous one). They cannot write their weights, so
their objective is the one they print after the last epoch, evaluated on the
training file by themselves: svmsgd's "Cost" (= lambda/2 |w|^2 + mean hinge;
checked by hand against this script's evaluator on weights dumped by a patched
copy: equal to 1e-11 on 0/1 features, 2e-7 relative on the RCV1-like values,
which they store as float). svmasgd's printed "Cost" adds the mean hinge of the
averaged weights to lambda/2 |w|^2 of the current SGD iterate, not of the
averaged weights, so its objective here is its printed "Loss" + lambda/2
"aNorm" (aNorm, printed with 6 digits, is the averaged weights' squared norm).
These printed objectives are compared with P* but never set it. Their own
timer ("Total training time", cumulative over epochs) counts the training
passes and the choice of eta0 on the first 1001 rows; the whole process also
reads the file (a C++ stream parser) and makes one evaluation pass over the
training set after every epoch, which they always do.

Memory: every run's peak resident set (GNU time's %M, from /usr/bin/time, which
also gives the CPU seconds; file pages the process maps count in it) is in the
training table, the largest of the repeats.

Report: for each file, "training time alone to 0.1% of P*" (pegasos' own
"train X s", svmsgd's and svmasgd's own timer; LIBLINEAR prints none) next to
whole-process wall and CPU seconds of the same runs. Every figure is the
fastest of the repeats by its own clock (before 2026-12-02 the own timers
were read from the last repeat only, which let one slow run decide).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_bench import grab, liblinear_weights, pegasos_weights  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FILES = ("a9a_x24.svm", "rcv1_like.svm")
TIME = "/usr/bin/time"  # GNU time (Debian package time)
LAMBDA = 1e-4
WITHIN = 1e-3
SGD_EPOCHS = (1, 2, 3, 5, 8, 12)
SGD_PROGRAMS = ("svmsgd", "svmasgd")


def timed(cmd):
    """Run cmd; return (wall s, CPU s, peak RSS in MB, stdout + stderr) of that child alone.
    The peak comes from GNU time (/usr/bin/time -f %M): a child forked from this Python
    process would count the parent's pages (the evaluator's matrix) in its own ru_maxrss."""
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as rss:
        t0 = time.perf_counter()
        p = subprocess.run([TIME, "-f", "%M %U %S", "-o", rss.name] + cmd, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT)
        wall = time.perf_counter() - t0
        out = p.stdout.decode(errors="replace")
        if p.returncode:
            raise RuntimeError("exit %d: %s\n%s" % (p.returncode, " ".join(cmd), out[-2000:]))
        kb, user, system = rss.read().split()[-3:]
    return wall, float(user) + float(system), float(kb) / 1024.0, out


def best_of(cmd, repeats):
    """Fastest wall and fastest CPU over `repeats` runs, the largest peak RSS, the last
    output ("out") and every run's ("outs", for the fastest of a tool's own timer), load
    averages."""
    walls, cpus, rss, loads, outs = [], [], [], [], []
    for _ in range(repeats):
        loads.append(os.getloadavg()[0])
        w, c, m, out = timed(cmd)
        walls.append(w)
        cpus.append(c)
        rss.append(m)
        outs.append(out)
    return {"wall_s": min(walls), "cpu_s": min(cpus), "peak_rss_mb": max(rss), "load": [min(loads), max(loads)],
            "out": out, "outs": outs}


def warm(path):
    with open(path, "rb") as f:
        while f.read(1 << 24):
            pass


def parse_bench(a, path, tmp):
    size = os.path.getsize(path)
    warm(path)
    r = {"bytes": size}
    ps = best_of([a.parse_speed, path], a.repeats)
    inproc = sorted(float(grab(r"wall ([\d.]+)", o)) for o in ps["outs"])
    ps["wall_s"] = min([ps["wall_s"]] + inproc)
    ps["median_wall_s"] = inproc[len(inproc) // 2]  # the reader's own timer, as wall_s
    ps["inproc_cpu_s"] = min(grab(r"cpu ([\d.]+)", o) for o in ps["outs"])
    r["pegasos_reader"] = ps
    r["liblinear_reader"] = best_of(["liblinear-train", "-s", "3", "-e", "1e9", path,
                                     os.path.join(tmp, "load.model")], a.repeats)
    cli = best_of([a.pegasos, "train", "--set", "solver=pegasos", "--set", "iterations=1", path,
                   os.path.join(tmp, "load.json")], a.repeats)
    cli["load_s"] = min(grab(r"load ([\d.]+)s", o) for o in cli["outs"])
    r["pegasos_cli"] = cli
    for k in ("pegasos_reader", "liblinear_reader", "pegasos_cli"):
        r[k].pop("out")
        r[k].pop("outs")
    gb = size / 1e9
    p, l = r["pegasos_reader"], r["liblinear_reader"]
    r["gbps_wall"] = gb / p["wall_s"]
    r["gbps_cpu"] = gb / p["inproc_cpu_s"]
    r["liblinear_gbps_wall"] = gb / l["wall_s"]
    r["ratio_wall_liblinear_over_pegasos"] = l["wall_s"] / p["wall_s"]
    return r


class Objective:
    def __init__(self, path):
        from sklearn.datasets import load_svmlight_file
        self.X, y = load_svmlight_file(path)
        self.y = np.where(y == 1, 1.0, -1.0)

    def __call__(self, w):
        d = self.X.shape[1]
        w = w[:d] if len(w) >= d else np.pad(w, (0, d - len(w)))
        return LAMBDA / 2 * (w @ w) + np.maximum(0.0, 1.0 - self.y * (self.X @ w)).mean()


def train_bench(a, path, tmp):
    warm(path)
    obj = Objective(path)
    n = obj.X.shape[0]
    c = 1.0 / (LAMBDA * n)
    runs = {}

    def liblinear(eps, repeats):
        model = os.path.join(tmp, "ll%g.model" % eps)
        r = best_of(["liblinear-train", "-s", "3", "-B", "-1", "-c", "%.17g" % c, "-e", str(eps), path, model],
                    repeats)
        r["objective"] = obj(liblinear_weights(model)[0])
        r.pop("outs")
        r["note"] = "#iter %s" % grab(r"#iter = (\d+)", r.pop("out"), str)
        return r

    def pegasos(extra, repeats):
        model = os.path.join(tmp, "peg.json")
        r = best_of([a.pegasos, "train", "--set", "lambda=%r" % LAMBDA, "--set", "bias=none"] + extra +
                    [path, model], repeats)
        r["objective"] = obj(pegasos_weights(model)[0])
        out, outs = r.pop("out"), r.pop("outs")
        # The fastest of the runs by each timer, as for wall and CPU time.
        r["load_s"] = min(grab(r"load ([\d.]+)s", o) for o in outs)
        r["train_s"] = min(grab(r"train ([\d.]+)s", o) for o in outs)
        r["note"] = "%s, %s" % (grab(r"trained \S+ \((\w+)\)", out, str), grab(r"([\d.]+ (?:epochs|passes))", out, str))
        return r

    def bottou(prog, epochs, repeats):
        name = os.path.basename(path)
        if not name.endswith((".txt", ".txt.gz")):  # the suffix picks their reader
            link = os.path.join(tmp, name + ".txt")
            if os.path.lexists(link):
                os.remove(link)
            os.symlink(os.path.abspath(path), link)
            name = link
        else:
            name = path
        r = best_of([os.path.join(a.sgd_dir, prog), "-lambda", "%r" % LAMBDA, "-epochs", str(epochs),
                     "-dontnormalize", name], repeats)
        out, outs = r.pop("out"), r.pop("outs")
        compiled = grab(r"# Compiled with:\s*(.*)", out, str) or ""
        if "-DLOSS=HingeLoss" not in compiled or "-DBIAS=0" not in compiled:
            sys.exit("%s was compiled with %r; build it with OPT='-DLOSS=HingeLoss -DBIAS=0 -DREGULARIZED_BIAS=0 "
                     "-DUSE_REALTIME_CLOCK' (see --help)" % (prog, compiled))
        last = lambda pattern: float(re.findall(pattern, out)[-1])  # noqa: E731  (after the last epoch)
        r["train_s"] = min(float(re.findall(r"Total training time ([\d.eE+-]+) secs", o)[-1]) for o in outs)
        r["printed_cost"] = last(r"train: Loss=\S+ Cost=([\d.eE+-]+)")
        r["printed_loss"] = last(r"train: Loss=([\d.eE+-]+)")
        if prog == "svmasgd":  # its Cost uses the SGD iterate's norm; the averaged weights' is aNorm
            r["objective"] = r["printed_loss"] + LAMBDA / 2 * last(r"aNorm=([\d.eE+-]+)")
        else:
            r["objective"] = r["printed_cost"]
        r["objective_source"] = "printed"
        r["note"] = "%d epochs, eta0 %s, own timer %.3g s, objective as printed" % (
            epochs, grab(r"Using eta0=(\S+)", out, str), r["train_s"])
        return r

    runs["liblinear -e 1e-4 (P*)"] = liblinear(1e-4, 1)

    def first_within(settings, run):
        """Run settings in order until one is within 0.1% of the best objective so far."""
        for name, arg in settings:
            runs[name] = run(arg, a.train_repeats)
            best = min(r["objective"] for r in runs.values())
            if runs[name]["objective"] - best <= WITHIN * best:
                return name
        return None

    ll = first_within([("liblinear -e %g" % e, e) for e in (0.1, 0.01, 0.001)], liblinear)
    pg = first_within([("pegasos default", []), ("pegasos tolerance=1e-4", ["--set", "tolerance=1e-4"])], pegasos)
    p_star = min(r["objective"] for r in runs.values())  # this script's evaluator only
    sgd = {}
    if a.sgd_dir:
        for prog in SGD_PROGRAMS:
            sgd[prog] = None
            for e in SGD_EPOCHS:
                name = "%s -epochs %d" % (prog, e)
                runs[name] = bottou(prog, e, a.train_repeats)
                if runs[name]["objective"] - p_star <= WITHIN * p_star:
                    sgd[prog] = name
                    break
    for r in runs.values():
        r["gap"] = (r["objective"] - p_star) / p_star
    res = {"n": n, "C": c, "p_star": p_star, "runs": runs, "liblinear_to_0.1%": ll, "pegasos_to_0.1%": pg}
    if ll and pg:
        res["ratio_wall"] = runs[pg]["wall_s"] / runs[ll]["wall_s"]
        res["ratio_cpu"] = runs[pg]["cpu_s"] / runs[ll]["cpu_s"]
    if a.sgd_dir:
        res.update({"%s_to_0.1%%" % k: v for k, v in sgd.items()})
        # time to 0.1% of P*, one row per tool: its own training timer (None for LIBLINEAR) and the whole process
        res["to_0.1%"] = {}
        for tool, name in (("pegasos", pg), ("svmsgd", sgd["svmsgd"]), ("svmasgd", sgd["svmasgd"]),
                           ("liblinear", ll)):
            r = runs.get(name) if name else None
            res["to_0.1%"][tool] = {"run": name, "train_s": r.get("train_s") if r else None,
                                    "wall_s": r["wall_s"] if r else None, "cpu_s": r["cpu_s"] if r else None,
                                    "gap": r["gap"] if r else None}
    return res


def report(res):
    L = ["speed benchmark %s, 1-min load average %.1f at start" % (res["date"], res["load_start"]), ""]
    L += ["| file | MB | pegasos reader wall s / CPU s (median wall) | GB/s wall, fastest (median) "
          "| GB per CPU-s (x2: 2-core bound) | LIBLINEAR reader wall s / CPU s "
          "| GB per CPU-s | LIBLINEAR / pegasos CPU | pegasos CLI load s | load avg |",
          "|---|---|---|---|---|---|---|---|---|---|"]
    for f, r in res["parse"].items():
        p, l = r["pegasos_reader"], r["liblinear_reader"]
        gb = r["bytes"] / 1e9
        L.append("| %s | %.0f | %.3f / %.3f (%.3f) | %.2f (%.2f) | %.3f (%.2f) | %.2f / %.2f | %.3f | %.1f | %s | %.0f-%.0f |" % (
            f, r["bytes"] / 1e6, p["wall_s"], p["inproc_cpu_s"], p["median_wall_s"], r["gbps_wall"],
            gb / p["median_wall_s"], r["gbps_cpu"], 2 * r["gbps_cpu"],
            l["wall_s"], l["cpu_s"], r["bytes"] / 1e9 / l["cpu_s"], l["cpu_s"] / p["inproc_cpu_s"],
            r["pegasos_cli"]["load_s"], min(p["load"][0], l["load"][0]), max(p["load"][1], l["load"][1])))
    for f, t in res.get("train", {}).items():
        L += ["", "%s: n = %d, lambda = %g, C = %.4g, P* = %.8g" % (f, t["n"], LAMBDA, t["C"], t["p_star"]),
              "| run | wall s | CPU s | peak RSS MB | (P - P*)/P* | notes | load avg |", "|---|---|---|---|---|---|---|"]
        for k, r in t["runs"].items():
            L.append("| %s | %.2f | %.2f | %.0f | %.2e | %s | %.0f-%.0f |" % (
                k, r["wall_s"], r["cpu_s"], r["peak_rss_mb"], r["gap"], r.get("note"), r["load"][0], r["load"][1]))
        L.append("time to 0.1%% of P*: pegasos (%s) / LIBLINEAR (%s) = %s wall, %s CPU" % (
            t["pegasos_to_0.1%"], t["liblinear_to_0.1%"],
            "%.3f" % t["ratio_wall"] if "ratio_wall" in t else "n/a",
            "%.3f" % t["ratio_cpu"] if "ratio_cpu" in t else "n/a"))
        if "to_0.1%" in t:
            L += ["", "%s, time to 0.1%% of P*: training alone (each tool's own timer) and whole process" % f,
                  "| tool | run | training s (own timer) | whole process wall s | CPU s | (P - P*)/P* |",
                  "|---|---|---|---|---|---|"]
            for tool, r in t["to_0.1%"].items():
                if r["run"] is None:
                    tried = [k for k in t["runs"] if k.startswith(tool + " ")]
                    best = min(tried, key=lambda k: t["runs"][k]["gap"]) if tried else None
                    L.append("| %s | not reached (tried up to %s) | | | | best %s (%s) |" % (
                        tool, tried[-1] if tried else "nothing", "%.2e" % t["runs"][best]["gap"] if best else "n/a",
                        best))
                else:
                    L.append("| %s | %s | %s | %.2f | %.2f | %.2e |" % (
                        tool, r["run"], "%.3g" % r["train_s"] if r["train_s"] is not None else "n/a (prints none)",
                        r["wall_s"], r["cpu_s"], r["gap"]))
    return "\n".join(L)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default="/tmp/pegasos-speed")
    ap.add_argument("--pegasos", default=os.path.join(ROOT, "build", "pegasos"))
    ap.add_argument("--parse-speed", default=os.path.join(ROOT, "build", "parse_speed"))
    ap.add_argument("--repeats", type=int, default=5, help="runs per parsing figure (fastest kept)")
    ap.add_argument("--train-repeats", type=int, default=1, help="runs per training figure")
    ap.add_argument("--files", default=",".join(FILES))
    ap.add_argument("--skip-train", action="store_true")
    ap.add_argument("--out", default="/tmp/pegasos-speed/speed.json")
    ap.add_argument("--work", help="folder for the models and links the runs write (default DATA/runs)")
    ap.add_argument("--sgd-dir", help="folder holding Bottou's svmsgd and svmasgd, built as above: adds them to "
                    "the training comparison")
    a = ap.parse_args()
    if a.sgd_dir:
        for prog in SGD_PROGRAMS:
            if not os.access(os.path.join(a.sgd_dir, prog), os.X_OK):
                sys.exit("%s: no executable %s (see --help for how to build it)" % (a.sgd_dir, prog))
    tmp = a.work or os.path.join(a.data, "runs")
    os.makedirs(tmp, exist_ok=True)
    res = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "load_start": os.getloadavg()[0],
           "parse": {}, "train": {}}
    files = [f for f in a.files.split(",") if f]
    for f in files:
        path = os.path.join(a.data, f)
        if not os.path.exists(path):
            sys.exit("%s missing: run bench/speed_data.py first" % path)
        res["parse"][f] = parse_bench(a, path, tmp)
        print(report(res), flush=True)
    if not a.skip_train:
        for f in files:
            res["train"][f] = train_bench(a, os.path.join(a.data, f), tmp)
            print(report(res), flush=True)
    with open(a.out, "w") as fh:
        json.dump(res, fh, indent=1)


if __name__ == "__main__":
    main()
