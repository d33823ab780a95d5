#!/usr/bin/python3
"""Multiclass Fashion-MNIST benchmark: pegasos (ova, multiclass_hinge) against
LIBLINEAR -s 2 / -s 3 / -s 4 (all with -B 1).

Run with Debian's /usr/bin/python3 (numpy, scipy, sklearn):

    /usr/bin/python3 bench/multiclass.py [--bin build/pegasos] [--data DIR] [--out FILE]

Protocol (see bench/README.md, section "Multiclass"):
  * data: fm_train.svm (60k) / fm_test.svm (10k) from scripts/fashion_mnist.py
    (pixels/255, labels 0..9). Validation split: the first 50k training rows are
    the sub-train set, the last 10k the validation set (deterministic).
  * every method picks C from one grid on the validation split, then is retrained on
    all 60k rows with that C and scored on the test file. pegasos uses
    lambda = 1/(C n), n = rows of the file it is trained on (50k, then 60k).
  * times are wall seconds of whole processes (start to exit).
"""
import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time

import numpy as np
from sklearn.datasets import load_svmlight_file

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
N_FEATURES = 784


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def loadavg():
    return [round(x, 2) for x in os.getloadavg()]


def run(cmd, timeout=None, stdout_path=None):
    """Run cmd, return dict(wall, rc, stdout, stderr, timed_out, load_before)."""
    la = loadavg()
    t0 = time.perf_counter()
    out = open(stdout_path, "w") if stdout_path else subprocess.PIPE
    try:
        p = subprocess.run(cmd, stdout=out, stderr=subprocess.PIPE, text=True, timeout=timeout)
        wall = time.perf_counter() - t0
        res = dict(wall=wall, rc=p.returncode, stdout=p.stdout if not stdout_path else "",
                   stderr=p.stderr, timed_out=False, load_before=la)
    except subprocess.TimeoutExpired as e:
        wall = time.perf_counter() - t0
        res = dict(wall=wall, rc=None, stdout="", stderr=str(e.stderr or ""), timed_out=True, load_before=la)
    finally:
        if stdout_path:
            out.close()
    return res


def check(res, what):
    if res["timed_out"] or res["rc"] != 0:
        raise SystemExit("%s failed (rc=%s, timed_out=%s):\n%s" % (what, res["rc"], res["timed_out"], res["stderr"][-2000:]))


# ----------------------------------------------------------------------------- data

def prepare_data(d):
    os.makedirs(d, exist_ok=True)
    paths = {k: os.path.join(d, "fm_%s.svm" % k) for k in ("train", "test", "sub", "val")}
    for split in ("train", "test"):
        if not os.path.exists(paths[split]):
            log("writing %s" % paths[split])
            subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "fashion_mnist.py"),
                            "--split", split, "--out", paths[split]], check=True)
    with open(paths["train"]) as f:
        lines = f.readlines()
    assert len(lines) == 60000, len(lines)
    for key, part in (("sub", lines[:50000]), ("val", lines[50000:])):
        if not os.path.exists(paths[key]):
            with open(paths[key] + ".tmp", "w") as f:
                f.writelines(part)
            os.replace(paths[key] + ".tmp", paths[key])
    return paths


def load(path):
    X, y = load_svmlight_file(path, n_features=N_FEATURES)
    return X.tocsr(), y.astype(int)


# ------------------------------------------------------------- shared objective evaluator

def primal(kind, W, b, X, y, lam):
    """pegasos-scaled primal: lam/2 (|W|^2 + |b|^2) + mean loss (bias regularised,
    i.e. LIBLINEAR -B 1 / pegasos bias=feature). W: (d, K), b: (K,), classes 0..K-1."""
    S = X @ W + b
    reg = 0.5 * lam * (float(np.sum(W * W)) + float(np.sum(b * b)))
    n, K = S.shape
    if kind == "ova":
        Y = -np.ones_like(S)
        Y[np.arange(n), y] = 1.0
        per_class = 0.5 * lam * (np.sum(W * W, axis=0) + b * b) + np.maximum(0.0, 1.0 - Y * S).mean(axis=0)
        return float(per_class.sum())
    sy = S[np.arange(n), y].copy()
    S[np.arange(n), y] = -np.inf
    return reg + float(np.maximum(0.0, 1.0 + S.max(axis=1) - sy).mean())


def read_liblinear_model(path):
    with open(path) as f:
        lines = f.read().split("\n")
    header = {}
    i = 0
    while lines[i].strip() != "w":
        key, _, val = lines[i].partition(" ")
        header[key] = val
        i += 1
    labels = [int(v) for v in header["label"].split()]
    nr_feature = int(header["nr_feature"])
    rows = [[float(v) for v in ln.split()] for ln in lines[i + 1:] if ln.strip()]
    M = np.array(rows)  # (nr_feature [+1 bias], nr_class) columns in `labels` order
    K = len(labels)
    order = np.argsort(labels)  # reorder columns to classes 0..K-1
    M = M[:, order]
    W = M[:nr_feature]
    b = M[nr_feature] * float(header.get("bias", "1")) if M.shape[0] > nr_feature else np.zeros(K)
    Wfull = np.zeros((N_FEATURES, K))
    Wfull[:nr_feature] = W
    return Wfull, b


def read_pegasos_model(path):
    m = json.load(open(path))
    K, d = m["outputs"], m["dimension"]
    W = np.zeros((max(N_FEATURES, d), K))
    for k, wk in enumerate(m["weights"]):  # one entry per output: dense list or {indices (1-based), values}
        if isinstance(wk, dict):
            W[np.array(wk["indices"], dtype=int) - 1, k] = wk["values"]
        else:
            W[:d, k] = wk
    b = np.array(m["bias"], dtype=float)
    order = np.argsort([int(c) for c in m["classes"]])  # output k -> class label; reorder to 0..K-1
    return W[:N_FEATURES, order], b[order], m


# --------------------------------------------------------------------------- LIBLINEAR

ACC_RE = re.compile(r"Accuracy = ([0-9.]+)%")
OBJ_RE = re.compile(r"Objective value = (-?[0-9.eE+-]+)")


def liblinear(solver, C, train, test, wd, timeout):
    model = os.path.join(wd, "ll_s%d_C%g_%s.model" % (solver, C, os.path.basename(train)))
    pred = model + ".pred"
    tr = run(["liblinear-train", "-s", str(solver), "-B", "1", "-c", repr(C), train, model], timeout=timeout)
    row = dict(solver=solver, C=C, train=os.path.basename(train), train_wall=tr["wall"],
               timed_out=tr["timed_out"], load_before=tr["load_before"])
    if tr["timed_out"]:
        return row
    check(tr, "liblinear-train -s %d -c %g" % (solver, C))
    row["max_iter_warnings"] = tr["stdout"].count("reaching max number of iterations")
    objs = [float(v) for v in OBJ_RE.findall(tr["stdout"])]
    if objs:
        # printed value is the dual minimisation objective f(alpha); dual value D = -f
        row["dual_value_sum"] = -sum(objs)
    pr = run(["liblinear-predict", test, model, pred])
    check(pr, "liblinear-predict")
    row["predict_wall"] = pr["wall"]
    row["total_wall"] = tr["wall"] + pr["wall"]
    row["accuracy"] = float(ACC_RE.search(pr["stdout"]).group(1)) / 100.0
    row["model"] = model
    return row


# ----------------------------------------------------------------------------- pegasos

TIMES_RE = re.compile(r"load ([0-9.]+)s, train ([0-9.]+)s")


def pegasos_train(binary, objective, lam, normalize, train, model, extra=()):
    cmd = [binary, "train", "--set", "solver=pegasos", "--set", "objective=" + objective, "--set", "lambda=%r" % lam,
           "--set", "normalize=" + normalize]  # the documented figures are Pegasos
    for kv in extra:
        cmd += ["--set", kv]
    cmd += [train, model]
    tr = run(cmd)
    check(tr, " ".join(cmd))
    m = TIMES_RE.search(tr["stderr"])
    info = json.load(open(model))["training"]
    return dict(cmd=" ".join(cmd), train_wall=tr["wall"], load_s=float(m.group(1)), train_s=float(m.group(2)),
                epochs=info["epochs"], converged=info["converged"], iterations=info["iterations"],
                objective_printed=info["objective"], load_before=tr["load_before"])


def pegasos_eval(binary, model, data, wd):
    out = os.path.join(wd, "eval_%d.json" % os.getpid())
    ev = run([binary, "eval", model, data, "--json", out])
    check(ev, "pegasos eval")
    j = json.load(open(out))
    return dict(accuracy=j["accuracy"], macro_f1=j["macro_f1"], objective=j["objective"], eval_wall=ev["wall"])


# -------------------------------------------------------------------------------- tables

def md_table(headers, rows):
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    for r in rows:
        out.append("| " + " | ".join(str(c) for c in r) + " |")
    return "\n".join(out)


def f(x, nd=4):
    if x is None:
        return "-"
    if isinstance(x, float):
        return ("%." + str(nd) + "g") % x if abs(x) < 1e-3 and x != 0 else ("%." + str(nd) + "f") % x
    return str(x)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "pegasos"))
    ap.add_argument("--data", default="/tmp/mcb/data")
    ap.add_argument("--work", default="/tmp/mcb/work")
    ap.add_argument("--out", default="/tmp/mcb/results.json")
    ap.add_argument("--built-from", default=None,
                    help="commit the binary was built from (default: `git log -1 --oneline` now)")
    ap.add_argument("--grid", default="0.001,0.01,0.1,1", help="C grid (LIBLINEAR C; pegasos lambda = 1/(C n))")
    ap.add_argument("--grid-s2", default=None, help="C grid for -s 2 (default: --grid)")
    ap.add_argument("--grid-s3", default=None, help="C grid for -s 3 (default: --grid)")
    ap.add_argument("--grid-s4", default=None, help="C grid for -s 4 (default: --grid)")
    ap.add_argument("--ll-timeout", type=float, default=240.0, help="per liblinear-train run on the 50k split")
    ap.add_argument("--normalize", default="none,l2", help="pegasos normalize values searched")
    ap.add_argument("--grid-l2", default="0.1,1,10,100",
                    help="C grid for pegasos normalize=l2 (unit rows: mean |x|^2 is ~164 with pixels/255, "
                         "so the useful C range is ~100x higher than for raw pixels)")
    ap.add_argument("--grid-max-epochs", type=int, default=50,
                    help="pegasos max_epochs during the validation search (automatic stopping otherwise)")
    ap.add_argument("--final-max-epochs", type=int, default=200, help="pegasos max_epochs for the 60k retrain")
    ap.add_argument("--scaling-epochs", type=int, default=20,
                    help="thread-scaling pair: ova on 60k, chosen lambda/normalize, this many fixed epochs")
    ap.add_argument("--scaling-full", action="store_true",
                    help="also rerun the final ova retrain (automatic stopping) with threads=1 and compare it")
    args = ap.parse_args()

    t_start = time.perf_counter()
    os.makedirs(args.work, exist_ok=True)
    binary = os.path.join(args.work, "pegasos")  # a frozen copy of the binary under test
    shutil.copy2(args.bin, binary)
    meta = dict(
        git=args.built_from or subprocess.run(["git", "-C", ROOT, "log", "-1", "--oneline"],
                                              capture_output=True, text=True).stdout.strip(),
        git_head_at_run=subprocess.run(["git", "-C", ROOT, "log", "-1", "--oneline"],
                                       capture_output=True, text=True).stdout.strip(),
        binary=os.path.abspath(args.bin),
        binary_sha256=hashlib.sha256(open(binary, "rb").read()).hexdigest(),
        liblinear=subprocess.run(["dpkg-query", "-W", "-f", "${Version}", "liblinear-tools"],
                                 capture_output=True, text=True).stdout.strip(),
        nproc=os.cpu_count(), load_start=loadavg(),
        started=time.strftime("%Y-%m-%d %H:%M:%S"))
    log("meta: %s" % meta)
    P = prepare_data(args.data)
    results = dict(meta=meta, settings=vars(args), liblinear_grid=[], liblinear_final=[],
                   pegasos_grid=[], pegasos_final=[], threads=[])

    def dump():
        results["meta"]["elapsed_s"] = time.perf_counter() - t_start
        results["meta"]["load_end"] = loadavg()
        with open(args.out + ".tmp", "w") as fh:
            json.dump(results, fh, indent=1)
        os.replace(args.out + ".tmp", args.out)

    grid = [float(c) for c in args.grid.split(",")]

    # ---------------------------------------------------------------- 1. LIBLINEAR
    ll_best = {}
    for s in (2, 3, 4):
        g = getattr(args, "grid_s%d" % s)
        g = [float(c) for c in g.split(",")] if g else grid
        rows = []
        for C in g:
            r = liblinear(s, C, P["sub"], P["val"], args.work, args.ll_timeout)
            log("liblinear -s %d C=%g: %s" % (s, C, {k: r.get(k) for k in ("accuracy", "train_wall", "timed_out")}))
            rows.append(r)
            results["liblinear_grid"].append(r)
            dump()
        ok = [r for r in rows if not r["timed_out"]]
        best = max(ok, key=lambda r: (r["accuracy"], -r["C"]))  # ties: smaller C
        ll_best[s] = best["C"]
        fin = liblinear(s, best["C"], P["train"], P["test"], args.work, None)
        fin["val_accuracy"] = best["accuracy"]
        results["liblinear_final"].append(fin)
        log("liblinear -s %d final C=%g: acc %.4f, %.2fs" % (s, best["C"], fin["accuracy"], fin["total_wall"]))
        dump()

    # ------------------------------------------------------------------ 2. pegasos
    norms = args.normalize.split(",")
    n_sub, n_full = 50000, 60000
    peg_best = {}
    for obj in ("ova", "multiclass_hinge"):
        rows = []
        for norm in norms:
            for C in (grid if norm == "none" else [float(c) for c in args.grid_l2.split(",")]):
                lam = 1.0 / (C * n_sub)
                model = os.path.join(args.work, "peg_%s_%s_C%g_sub.json" % (obj, norm, C))
                r = pegasos_train(binary, obj, lam, norm, P["sub"], model,
                                  extra=["max_epochs=%d" % args.grid_max_epochs])
                ev = pegasos_eval(binary, model, P["val"], args.work)
                r.update(objective=obj, normalize=norm, C=C, **{"lambda": lam}, val_accuracy=ev["accuracy"],
                         val_macro_f1=ev["macro_f1"])
                log("pegasos %s %s C=%g: acc %.4f, %d epochs conv=%s, %.1fs" % (
                    obj, norm, C, ev["accuracy"], r["epochs"], r["converged"], r["train_wall"]))
                rows.append(r)
                results["pegasos_grid"].append(r)
                dump()
        best = max(rows, key=lambda r: (r["val_accuracy"], -r["C"], r["normalize"] == "none"))
        peg_best[obj] = best
        lam = 1.0 / (best["C"] * n_full)
        model = os.path.join(args.work, "peg_%s_final_t2.json" % obj)
        r = pegasos_train(binary, obj, lam, best["normalize"], P["train"], model,
                          extra=["threads=2", "max_epochs=%d" % args.final_max_epochs])
        ev = pegasos_eval(binary, model, P["test"], args.work)
        evtr = pegasos_eval(binary, model, P["train"], args.work)
        r.update(objective=obj, normalize=best["normalize"], C=best["C"], **{"lambda": lam},
                 val_accuracy=best["val_accuracy"], accuracy=ev["accuracy"], macro_f1=ev["macro_f1"],
                 predict_wall=ev["eval_wall"], total_wall=r["train_wall"] + ev["eval_wall"],
                 train_objective_eval=evtr["objective"], model=model)
        results["pegasos_final"].append(r)
        log("pegasos %s final: %s" % (obj, {k: r[k] for k in ("accuracy", "train_wall", "epochs", "converged")}))
        dump()

    # ---- objective cross-check: one evaluator for pegasos and LIBLINEAR models (normalize none only)
    X, y = load(P["train"])
    for r in results["pegasos_final"]:
        W, b, _ = read_pegasos_model(r["model"])
        if r["normalize"] == "none":
            r["train_objective_numpy"] = primal("ova" if r["objective"] == "ova" else "cs", W, b, X, y, r["lambda"])
            s = 3 if r["objective"] == "ova" else 4
            ll = [x for x in results["liblinear_final"] if x["solver"] == s][0]
            if ll["C"] == r["C"] and "dual_value_sum" in ll:
                Wl, bl = read_liblinear_model(ll["model"])
                p_ll = primal("ova" if s == 3 else "cs", Wl, bl, X, y, r["lambda"])
                lb = r["lambda"] * ll["dual_value_sum"]  # weak duality: lower bound on the optimum
                r["ref_liblinear_s%d" % s] = dict(primal=p_ll, dual_lower_bound=lb,
                                                  pegasos_gap_vs_dual=(r["train_objective_numpy"] - lb) / lb,
                                                  liblinear_gap_vs_dual=(p_ll - lb) / lb)
    for r in results["liblinear_final"]:
        if r["solver"] in (3, 4):
            Wl, bl = read_liblinear_model(r["model"])
            lam = 1.0 / (r["C"] * n_full)
            r["primal_pegasos_scale"] = primal("ova" if r["solver"] == 3 else "cs", Wl, bl, X, y, lam)
            if "dual_value_sum" in r:
                r["dual_pegasos_scale"] = lam * r["dual_value_sum"]
    dump()

    # ------------------------------------------------------------ 3. thread scaling (ova)
    fin = [r for r in results["pegasos_final"] if r["objective"] == "ova"][0]
    lam, norm = fin["lambda"], fin["normalize"]
    pairs = []
    if args.scaling_epochs:
        pairs.append(("epochs=%d fixed" % args.scaling_epochs, ["epochs=%d" % args.scaling_epochs], None))
    if args.scaling_full:
        pairs.append(("final settings (max_epochs=%d, automatic stopping)" % args.final_max_epochs,
                      ["max_epochs=%d" % args.final_max_epochs], fin))
    for label, extra, t2 in pairs:
        models = {}
        runs = {}
        for th in ((1, 2) if t2 is not None else (2, 1)):
            if th == 2 and t2 is not None:
                runs[2], models[2] = t2, t2["model"]
                continue
            models[th] = os.path.join(args.work, "peg_ova_scal_%s_t%d.json" % (extra[0].replace("=", ""), th))
            runs[th] = pegasos_train(binary, "ova", lam, norm, P["train"], models[th], extra=extra + ["threads=%d" % th])
        same = subprocess.run(["cmp", "-s", models[1], models[2]]).returncode == 0
        row = dict(setting=label, lam=lam, normalize=norm,
                   t1_wall=runs[1]["train_wall"], t2_wall=runs[2]["train_wall"],
                   t1_train_s=runs[1]["train_s"], t2_train_s=runs[2]["train_s"],
                   speedup_wall=runs[1]["train_wall"] / runs[2]["train_wall"],
                   speedup_train=runs[1]["train_s"] / runs[2]["train_s"],
                   epochs=runs[2]["epochs"], identical=same,
                   load_before_t1=runs[1]["load_before"], load_before_t2=runs[2]["load_before"])
        results["threads"].append(row)
        log("threads %s: %s" % (label, row))
        dump()

    # ----------------------------------------------------------------------- report
    lines = []
    lines.append("commit `%s`, binary sha256 %s..., liblinear-tools %s, %d cores, load avg start %s end %s, elapsed %.0fs" % (
        meta["git"], meta["binary_sha256"][:12], meta["liblinear"], meta["nproc"], meta["load_start"], loadavg(),
        time.perf_counter() - t_start))
    lines.append("\n### Validation grid (train on first 50k, accuracy on last 10k)\n")
    allc = sorted({x["C"] for x in results["liblinear_grid"]} | {x["C"] for x in results["pegasos_grid"]})
    hdr = ["method"] + ["C=%g" % c for c in allc]
    trow = []
    for s in (2, 3, 4):
        cells = []
        for c in allc:
            r = [x for x in results["liblinear_grid"] if x["solver"] == s and x["C"] == c]
            if not r:
                cells.append("-")
            elif r[0]["timed_out"]:
                cells.append("timeout >%.0fs" % r[0]["train_wall"])
            else:
                cells.append("%.4f (%.1fs%s)" % (r[0]["accuracy"], r[0]["train_wall"],
                                                  ", max-iter" if r[0].get("max_iter_warnings") else ""))
        trow.append(["liblinear -s %d" % s] + cells)
    for obj in ("ova", "multiclass_hinge"):
        for norm in norms:
            cells = []
            for c in allc:
                r = [x for x in results["pegasos_grid"] if x["objective"] == obj and x["normalize"] == norm and x["C"] == c]
                if not r:
                    cells.append("-")
                    continue
                r = r[0]
                cells.append("%.4f (%.1fs, %g ep%s)" % (r["val_accuracy"], r["train_wall"], r["epochs"],
                                                         "" if r["converged"] else ", not conv"))
            trow.append(["pegasos %s norm=%s" % (obj, norm)] + cells)
    lines.append(md_table(hdr, trow))
    lines.append("\n(cells: validation accuracy (train wall s); pegasos: epochs used, capped at max_epochs=%d. "
                 "C for normalize=l2 refers to the unit-norm rows; lambda = 1/(C * 50000))\n" % args.grid_max_epochs)

    lines.append("### Final: retrain on all 60k, score on the 10k test file\n")
    rows = []
    for r in results["liblinear_final"]:
        rows.append(["liblinear -s %d -B 1" % r["solver"], "%g" % r["C"], "-", "-", f(r["val_accuracy"]),
                     f(r["accuracy"]), "-", f(r["train_wall"], 3), f(r["predict_wall"], 3), f(r["total_wall"], 3),
                     "-", "max-iter x%d" % r["max_iter_warnings"] if r.get("max_iter_warnings") else "-"])
    for r in results["pegasos_final"]:
        rows.append(["pegasos %s" % r["objective"], "%g" % r["C"], "%.4g" % r["lambda"], r["normalize"],
                     f(r["val_accuracy"]), f(r["accuracy"]), f(r["macro_f1"]), f(r["train_wall"], 3),
                     f(r["predict_wall"], 3), f(r["total_wall"], 3),
                     "%g%s" % (r["epochs"], "" if r["converged"] else " (not converged)"),
                     "printed %.6f / eval %.6f" % (r["objective_printed"], r["train_objective_eval"])])
    lines.append(md_table(["method", "C", "lambda", "normalize", "val acc", "test acc", "test macro-F1",
                           "train wall s", "predict wall s", "total wall s", "epochs", "objective (train)"], rows))
    ref = []
    for r in results["pegasos_final"]:
        for key in ("ref_liblinear_s3", "ref_liblinear_s4"):
            if key in r:
                x = r[key]
                ref.append(["pegasos %s vs %s" % (r["objective"], key[4:].replace("_", " -")), "%.4g" % r["lambda"],
                            "%.6f" % r["train_objective_numpy"], "%.6f" % x["primal"], "%.6f" % x["dual_lower_bound"],
                            "%.2e" % x["pegasos_gap_vs_dual"], "%.2e" % x["liblinear_gap_vs_dual"]])
    if ref:
        lines.append("\n### Objective at the same lambda (one numpy evaluator, 60k training file)\n")
        lines.append(md_table(["pair", "lambda", "P pegasos", "P liblinear", "D liblinear (lower bound)",
                               "pegasos (P-D)/D", "liblinear (P-D)/D"], ref))
    lines.append("\n### One-vs-all thread scaling (60k, whole-process wall s)\n")
    lines.append(md_table(["setting", "lambda", "epochs", "threads=1 wall", "threads=2 wall", "speed-up (wall)",
                           "speed-up (train s)", "models identical", "load before t1 / t2"],
                          [[r["setting"], "%.4g" % r["lam"], "%g" % r["epochs"], f(r["t1_wall"], 3), f(r["t2_wall"], 3),
                            "%.2fx" % r["speedup_wall"], "%.2fx" % r["speedup_train"], "yes" if r["identical"] else "NO",
                            "%s / %s" % (r["load_before_t1"][0], r["load_before_t2"][0])] for r in results["threads"]]))
    text = "\n".join(lines)
    results["report_markdown"] = text
    dump()
    print(text)


if __name__ == "__main__":
    main()
