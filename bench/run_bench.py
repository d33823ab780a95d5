#!/usr/bin/python3
"""Benchmark pegasos against LIBLINEAR (-s 3, dual CD) and scikit-learn SGDClassifier.

Every tool runs as its own process; its wall time covers process start to exit
(loading included). All primal objectives  lambda/2 ||w||^2 + mean(max(0, 1 - y w.x))
and test accuracies come from ONE evaluator here (scipy, labels +1/-1), applied to
the weights each tool saved. Data: bash bench/make_data.sh. See bench/README.md.
"""
import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
from sklearn.datasets import load_svmlight_file

PY = "/usr/bin/python3"
SGD_CHILD = """
import sys, numpy as np
from sklearn.datasets import load_svmlight_file
from sklearn.linear_model import SGDClassifier
X, y = load_svmlight_file(sys.argv[1])
clf = SGDClassifier(loss="hinge", alpha=float(sys.argv[2]), fit_intercept=False).fit(X, y)
np.savez(sys.argv[3], coef=clf.coef_.ravel(), classes=clf.classes_, n_iter=clf.n_iter_)
"""


def run(cmd, repeats=1):
    """Run cmd `repeats` times; return (fastest wall time, output of the last run)."""
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        best = min(best, time.perf_counter() - t0)
        if p.returncode:
            raise RuntimeError("exit %d: %s\n%s" % (p.returncode, " ".join(cmd), p.stdout[-2000:]))
    return best, p.stdout


def grab(pattern, text, cast=float):
    m = re.search(pattern, text)
    return cast(m.group(1)) if m else None


# ---- reading each tool's weights, oriented so that score > 0 means label +1 ----

def pegasos_weights(path):
    with open(path) as f:
        m = json.load(f)
    w = np.zeros(m["dimension"])
    entry = m["weights"][0]
    if isinstance(entry, dict):
        w[np.asarray(entry["indices"], dtype=np.int64) - 1] = entry["values"]
    else:
        w[:] = entry
    b = float((m.get("bias") or [0.0])[0])
    sign = 1.0 if float(m["classes"][1]) == 1 else -1.0  # classes[1] is the positive class
    return sign * w, sign * b, m.get("bias_mode") == "feature"


def liblinear_weights(path):
    with open(path) as f:
        lines = f.read().split("\n")
    head = dict(l.split(" ", 1) for l in lines[:lines.index("w")])
    w = np.array([float(l) for l in lines[lines.index("w") + 1:] if l.strip()])
    sign = 1.0 if float(head["label"].split()[0]) == 1 else -1.0  # first label = positive side
    return sign * w, 0.0, False


def sgd_weights(path):
    z = np.load(path)
    sign = 1.0 if float(z["classes"][1]) == 1 else -1.0  # classes_[1] is the positive class
    return sign * z["coef"], 0.0, False


class Evaluator:
    """The common evaluator: objective on the training file, accuracy on the test file."""

    def __init__(self, train, test):
        self.X, y = load_svmlight_file(train)
        self.Xt, yt = load_svmlight_file(test)
        self.y, self.yt = np.where(y == 1, 1.0, -1.0), np.where(yt == 1, 1.0, -1.0)

    @staticmethod
    def _scores(X, w, b):
        d = X.shape[1]
        return X @ (w[:d] if len(w) >= d else np.pad(w, (0, d - len(w)))) + b

    def objective(self, lam, w, b, reg_b, test=False):
        X, y = (self.Xt, self.yt) if test else (self.X, self.y)
        hinge = np.maximum(0.0, 1.0 - y * self._scores(X, w, b)).mean()
        return lam / 2 * (w @ w + (b * b if reg_b else 0.0)) + hinge

    def accuracy(self, w, b):
        return float(np.mean((self._scores(self.Xt, w, b) > 0) == (self.yt > 0)))


# ---- one function per tool: returns a result dict with wall_s and the weights ----

def bench_pegasos(a, tmp, train, test, lam, solver=None):
    """Default settings apart from lambda (and no bias, like the peers); `solver`
    forces one (the default "auto" picks sdca where lambda*n < 10)."""
    model = os.path.join(tmp, "pegasos.json")
    extra = ["--set", "solver=" + solver] if solver else []
    t, out = run([a.pegasos, "train", "--set", "lambda=%r" % lam, "--set", "bias=none"] + extra +
                 [train, model], a.repeats)
    run([a.pegasos, "eval", model, test, "--json", model + ".eval"])
    with open(model + ".eval") as f:
        ev = json.load(f)
    return {"wall_s": t, "weights": pegasos_weights(model),
            "load_s": grab(r"load ([\d.]+)s", out), "train_s": grab(r"train ([\d.]+)s", out),
            "self_objective": grab(r"trained .*objective ([-\d.eE+]+)", out),
            "self_accuracy": ev["accuracy"], "self_test_objective": ev["objective"],
            "note": "%s: %s" % (grab(r"trained \S+ \((\w+)\)", out, str),
                                grab(r"(\d+ iterations \([^)]*\))", out, str))}


def bench_liblinear(a, tmp, train, test, lam, n, eps=None):
    c = 1.0 / (lam * n)
    model = os.path.join(tmp, "liblinear%s.model" % (eps or ""))
    cmd = ["liblinear-train", "-s", "3", "-B", "-1", "-c", "%.17g" % c]
    t, out = run(cmd + (["-e", str(eps)] if eps else []) + [train, model], a.repeats)
    _, pred = run(["liblinear-predict", test, model, model + ".pred"])
    r = {"wall_s": t, "weights": liblinear_weights(model), "C": c,
         "self_accuracy": grab(r"Accuracy = ([\d.]+)%", pred) / 100,
         # liblinear prints 0.5||w||^2 - sum(alpha): minus the dual, scaled by C*n
         "dual_bound": -grab(r"Objective value = ([-\d.eE+]+)", out) / (c * n),
         "note": "#iter %s" % grab(r"#iter = (\d+)", out, str)}
    if "max number of iterations" in out:
        r["note"] += ", hit max iterations"
    return r


def bench_sgd(a, tmp, train, lam):
    dump = os.path.join(tmp, "sgd.npz")
    t, _ = run([PY, "-c", SGD_CHILD, train, repr(lam), dump], a.repeats)
    return {"wall_s": t, "weights": sgd_weights(dump),
            "note": "n_iter_ %d" % np.load(dump)["n_iter"]}


def load_bench(a, tmp, train):
    t_p, out = run([a.pegasos, "train", "--set", "iterations=1", train,
                    os.path.join(tmp, "load.json")], a.repeats)
    t_l, _ = run(["liblinear-train", "-s", "3", "-e", "1e9", train,
                  os.path.join(tmp, "load.model")], a.repeats)
    load = grab(r"load ([\d.]+)s", out)
    return {"file": train, "pegasos_load_s": load, "pegasos_wall_s": t_p,
            "liblinear_wall_s": t_l, "ratio_pegasos_load_over_liblinear": load / t_l}


def dim_bench(a, tmp, data):
    """Time per epoch at d = 1e3 and d = 1e7 (same rows and non-zeros): the
    difference between 25 and 5 epochs over 20, so that fixed costs (allocating
    and zeroing the weight table, writing a model with millions of weights)
    cancel. Fastest of max(3, repeats) interleaved runs."""
    r = {}
    reps = max(3, a.repeats)
    files = ["d1e3", "d1e7"]
    if os.path.exists(os.path.join(data, "synth_d1e7_spread.svm")):
        files.append("d1e7_spread")  # d = 1e7, but the 1000 touched weights of d1e3
    for d in files:
        r[d] = {"file": os.path.join(data, "synth_%s.svm" % d)}
    for e in (5, 25):
        for _ in range(reps):
            for d in files:
                t, o = run([a.pegasos, "train", "--set", "solver=pegasos", "--set", "epochs=%d" % e,
                            "--set", "lambda=1e-4", r[d]["file"],
                            os.path.join(tmp, "dim.json")])
                key = "train_s_%d" % e
                r[d][key] = min(r[d].get(key, float("inf")), grab(r"train ([\d.]+)s", o))
                r[d]["load_s"] = min(r[d].get("load_s", float("inf")), grab(r"load ([\d.]+)s", o))
    for d in files:
        r[d]["epoch_s"] = (r[d]["train_s_25"] - r[d]["train_s_5"]) / 20
        r[d]["train_s"] = r[d]["train_s_5"]
    r["ratio_train_d1e7_over_d1e3"] = r["d1e7"]["train_s_5"] / max(r["d1e3"]["train_s_5"], 1e-9)
    r["ratio_epoch_d1e7_over_d1e3"] = r["d1e7"]["epoch_s"] / max(r["d1e3"]["epoch_s"], 1e-9)
    if "d1e7_spread" in r:
        r["ratio_epoch_spread_over_d1e3"] = r["d1e7_spread"]["epoch_s"] / max(r["d1e3"]["epoch_s"], 1e-9)
    if not a.skip_sgd:  # reference: what the same random-access pattern costs in sklearn
        from sklearn.linear_model import SGDClassifier
        for d in ("d1e3", "d1e7"):
            X, y = load_svmlight_file(r[d]["file"])
            fit = {}
            for e in (5, 25):
                best = float("inf")
                for _ in range(reps):
                    t0 = time.perf_counter()
                    SGDClassifier(loss="hinge", alpha=1e-4, fit_intercept=False, max_iter=e, tol=None,
                                  average=True).fit(X, y)
                    best = min(best, time.perf_counter() - t0)
                fit[e] = best
            r[d]["sgd_fit_s"] = fit[5]
            r[d]["sgd_epoch_s"] = (fit[25] - fit[5]) / 20
        r["sgd_ratio_d1e7_over_d1e3"] = r["d1e7"]["sgd_epoch_s"] / r["d1e3"]["sgd_epoch_s"]
    return r


def bench_file(a, tmp, ev, train, test, name, log):
    """Every tool at every lambda on one train/test pair; P* from a tight LIBLINEAR run."""
    n = ev.X.shape[0]
    runs = []
    for lam in [float(x) for x in a.lambdas.split(",")]:
        tools = [("pegasos", bench_pegasos, (a, tmp, train, test, lam)),
                 ("pegasos solver=pegasos", bench_pegasos, (a, tmp, train, test, lam, "pegasos")),
                 ("liblinear", bench_liblinear, (a, tmp, train, test, lam, n)),
                 ("liblinear_tight", bench_liblinear, (a, tmp, train, test, lam, n, a.tight_eps))]
        if not a.skip_sgd:
            tools.append(("sgd", bench_sgd, (a, tmp, train, lam)))
        rows = {}
        for tool, fn, args in tools:
            log("%s, lambda %g: %s" % (name, lam, tool))
            r = attempt(fn, *args)
            if "weights" in r:
                w, b, reg_b = r.pop("weights")
                r["objective"] = ev.objective(lam, w, b, reg_b)
                r["test_objective"] = ev.objective(lam, w, b, reg_b, test=True)
                r["accuracy"] = ev.accuracy(w, b)
            rows[tool] = dict(r, tool=tool, lam=lam, data=name, n=n, lambda_n=lam * n)
        p_star = rows["liblinear_tight"].get("objective")
        for r in rows.values():
            if p_star and "objective" in r:
                r["gap"] = (r["objective"] - p_star) / p_star
        runs += rows.values()
    return runs


def binary_id(path):
    with open(path, "rb") as f:
        return {"sha256": hashlib.sha256(f.read()).hexdigest()[:16],
                "mtime": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(os.path.getmtime(path)))}


def attempt(fn, *args):
    try:
        return fn(*args)
    except Exception as e:  # one failing tool must not lose the others' numbers
        print("error: %s" % e, file=sys.stderr)
        return {"error": str(e)[:2000]}


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--pegasos", default=os.path.join(here, "..", "build", "pegasos"))
    ap.add_argument("--spam", default=os.path.join(here, "..", "data", "cache"),
                    help="folder with spamassassin_{train,test}.jsonl (scripts/fetch_spamassassin.sh); "
                         "skipped when absent; '' to skip")
    ap.add_argument("--data", default="/tmp/pegasos-bench")
    ap.add_argument("--out", default=None, help="results JSON (default DATA/results.json)")
    ap.add_argument("--small", action="store_true", help="use the 60k file only (quick run)")
    ap.add_argument("--skip-sgd", action="store_true")
    ap.add_argument("--lambdas", default="1e-4,1e-5")
    ap.add_argument("--tight-eps", type=float, default=1e-4, help="liblinear eps for P*")
    ap.add_argument("--repeats", type=int, default=1, help="runs per timing; fastest kept")
    a = ap.parse_args()
    out_path = a.out or os.path.join(a.data, "results.json")
    train = os.path.join(a.data, "fmnist0_train.svm" if a.small else "fmnist0_train_x9.svm")
    test = os.path.join(a.data, "fmnist0_test.svm")

    log = lambda msg: print("[%s] %s" % (time.strftime("%H:%M:%S"), msg), file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="pegasos-bench-") as tmp:
        # benchmark a snapshot: others may rebuild build/pegasos while this runs
        res = {"pegasos": a.pegasos, "pegasos_binary": binary_id(a.pegasos)}
        a.pegasos = shutil.copy2(a.pegasos, os.path.join(tmp, "pegasos"))
        log("loading %s for the evaluator" % train)  # also warms the page cache
        ev = Evaluator(train, test)
        n = ev.X.shape[0]
        res.update({"train_file": train, "test_file": test, "n": n, "nnz": int(ev.X.nnz),
                    "nproc": os.cpu_count(), "loadavg_start": os.getloadavg()[0],
                    "repeats": a.repeats, "tight_eps": a.tight_eps, "runs": []})
        res["runs"] += bench_file(a, tmp, ev, train, test, "fmnist", log)
        spam = [os.path.join(a.spam, "spamassassin_%s.jsonl" % part) for part in ("train", "test")]
        if a.spam and all(os.path.exists(f) for f in spam):
            # The same features for every tool: pegasos featurize (configs/spam.json's
            # text settings), written as LIBSVM.
            svm = [os.path.join(tmp, "spam_%s.svm" % part) for part in ("train", "test")]
            config = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "configs", "spam.json")
            run([a.pegasos, "featurize", "-q", "--config", config, spam[0], svm[0]])
            run([a.pegasos, "train", "-q", "--config", config, "--set", "epochs=1", spam[0], svm[0] + ".model"])
            run([a.pegasos, "featurize", "-q", "--model", svm[0] + ".model", spam[1], svm[1]])
            log("loading %s for the evaluator" % svm[0])
            res["runs"] += bench_file(a, tmp, Evaluator(svm[0], svm[1]), svm[0], svm[1], "spamassassin", log)
        log("load benchmark")
        res["load"] = attempt(load_bench, a, tmp, train)
        log("dimension check")
        res["dimension"] = attempt(dim_bench, a, tmp, a.data)
        res["loadavg_end"] = os.getloadavg()[0]
    tmp_out = out_path + ".tmp"
    with open(tmp_out, "w") as f:
        json.dump(res, f, indent=1)
    os.replace(tmp_out, out_path)
    print(report(res))
    log("results written to %s" % out_path)


def fmt(x, spec):
    return "-" if x is None else format(x, spec)


def report(res):
    L = ["## pegasos benchmark: %s (n=%d, nnz=%d, %d cores)\n"
         % (os.path.basename(res["train_file"]), res["n"], res["nnz"], res["nproc"]),
         "pegasos binary sha256 %s..., built %s; 1-min load average %.2f at start, %.2f "
         "at end\n" % (res["pegasos_binary"]["sha256"], res["pegasos_binary"]["mtime"],
                       res["loadavg_start"], res["loadavg_end"]),
         "P* = objective of liblinear -e %g; gap = (P - P*)/P*. Times are whole-process "
         "wall seconds (fastest of %d).\n" % (res["tight_eps"], res["repeats"]),
         "| data | lambda (lambda*n) | tool | wall s | test acc | P (train) | gap | notes |",
         "|---|---|---|---|---|---|---|---|"]
    for r in res["runs"]:
        note = r.get("error", r.get("note") or "")[:80].replace("\n", " ").replace("|", "/")
        L.append("| %s | %g (%.3g) | %s | %s | %s | %s | %s | %s |" % (
            r.get("data", "fmnist"), r["lam"], r.get("lambda_n", 0), r["tool"], fmt(r.get("wall_s"), ".2f"),
            fmt(r.get("accuracy"), ".4f"),
            fmt(r.get("objective"), ".6f"), fmt(r.get("gap"), "+.2e"), note))
    L += ["", "| data | lambda | t(pegasos)/t(liblinear) | t(pegasos)/t(sgd) | pegasos load s / train s "
          "| liblinear P* dual bound: (P*-D)/D |", "|---|---|---|---|---|---|"]
    for data, lam in sorted({(r.get("data", "fmnist"), r["lam"]) for r in res["runs"]}, key=lambda k: (k[0], -k[1])):
        by = {r["tool"]: r for r in res["runs"] if r["lam"] == lam and r.get("data", "fmnist") == data}
        t = {k: v.get("wall_s") for k, v in by.items()}
        ratio = lambda k: t["pegasos"] / t[k] if t.get("pegasos") and t.get(k) else None
        p, tight = by.get("pegasos", {}), by.get("liblinear_tight", {})
        dual = ((tight["objective"] - tight["dual_bound"]) / tight["dual_bound"]
                if "objective" in tight else None)
        L.append("| %s | %g | %s | %s | %s / %s | %s |" % (
            data, lam, fmt(ratio("liblinear"), ".2f"), fmt(ratio("sgd"), ".2f"),
            fmt(p.get("load_s"), ".2f"), fmt(p.get("train_s"), ".2f"), fmt(dual, ".2e")))
    L += ["", "Cross-checks (tool's own number vs the common evaluator):", "",
          "| data | lambda | tool | own acc | acc | own train P | P | own test P | test P |",
          "|---|---|---|---|---|---|---|---|---|"]
    for r in res["runs"]:
        if r["tool"] in ("pegasos", "liblinear") and "objective" in r:
            L.append("| %s | %g | %s | %s | %.4f | %s | %.6f | %s | %.6f |" % (
                r.get("data", "fmnist"), r["lam"], r["tool"], fmt(r.get("self_accuracy"), ".4f"), r["accuracy"],
                fmt(r.get("self_objective"), ".6f"), r["objective"],
                fmt(r.get("self_test_objective"), ".6f"), r["test_objective"]))
    ld, dm = res["load"], res["dimension"]
    L += ["", "| load benchmark (%s) | seconds |" % os.path.basename(ld.get("file", "?")),
          "|---|---|"]
    if "error" in ld:
        L.append("| error | %s |" % ld["error"][:200].replace("\n", " "))
    else:
        L += ["| pegasos \"load\" (iterations=1) | %.2f |" % ld["pegasos_load_s"],
              "| pegasos whole process (iterations=1) | %.2f |" % ld["pegasos_wall_s"],
              "| liblinear-train -e 1e9 whole process | %.2f |" % ld["liblinear_wall_s"],
              "| ratio pegasos load / liblinear | %.3f |"
              % ld["ratio_pegasos_load_over_liblinear"]]
    L += ["", "| dimension check (lambda=1e-4) | load s | train s, 5 epochs | train s, 25 epochs | s per epoch "
          "| ref: sklearn SGD s per epoch |", "|---|---|---|---|---|---|"]
    if "error" in dm:
        L.append("| error | %s | | | | |" % dm["error"][:200].replace("\n", " "))
    else:
        for d in ("d1e3", "d1e7"):
            L.append("| %s | %.2f | %.2f | %.2f | %.4f | %s |" % (
                os.path.basename(dm[d]["file"]), dm[d]["load_s"], dm[d]["train_s_5"], dm[d]["train_s_25"],
                dm[d]["epoch_s"], fmt(dm[d].get("sgd_epoch_s"), ".4f")))
        if "d1e7_spread" in dm:
            sp = dm["d1e7_spread"]
            L.append("| %s | %.2f | %.2f | %.2f | %.4f | - |" % (
                os.path.basename(sp["file"]), sp["load_s"], sp["train_s_5"], sp["train_s_25"], sp["epoch_s"]))
        L.append("| ratio d=1e7 / d=1e3 | | %.2f | | %.2f | %s |" % (
            dm["ratio_train_d1e7_over_d1e3"], dm["ratio_epoch_d1e7_over_d1e3"],
            fmt(dm.get("sgd_ratio_d1e7_over_d1e3"), ".2f")))
        if "ratio_epoch_spread_over_d1e3" in dm:
            L.append("| ratio d=1e7 spread (1000 touched weights) / d=1e3 | | | | %.2f | |"
                     % dm["ratio_epoch_spread_over_d1e3"])
    return "\n".join(L)


if __name__ == "__main__":
    main()
