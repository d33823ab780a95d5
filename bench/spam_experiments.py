#!/usr/bin/env python3
"""SpamAssassin experiments for the weighted-hinge and transfer objectives.

Needs the corpus fetched by scripts/fetch_spamassassin.sh (data/cache/) and a
built pegasos. Runs only the `pegasos` CLI; standard library only.

  imbalanced: training mail from spamassassin_train.jsonl with spam kept at 5%
              of the training mail; plain hinge vs class_weight=balanced vs
              sampling=balanced at the same lambda; tested on
              spamassassin_test.jsonl (natural spam rate).
  transfer:   source = spam-1 + easy-ham-1, target = spam-2 + easy-ham-2 +
              hard-ham-1. For target training sizes m, draw m target messages
              (stratified, several seeds), test on the rest of the target.
              Compare target-only, source-only, pooled and transfer, with
              lambda chosen by 3-fold cross-validation on the target training
              messages (source-only: lambda chosen on them as validation set).

  /usr/bin/python3 bench/spam_experiments.py [imbalanced|transfer|all] [--out DIR]
"""
import argparse
import hashlib
import json
import os
import random
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CACHE = os.path.join(ROOT, "data", "cache")
LAMBDAS = [1e-1, 1e-2, 1e-3, 1e-4, 1e-5]


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def write(path, rows):
    with open(path, "w") as f:
        for r in rows:
            f.write(json.dumps({"label": r["label"], "text": r["text"]}) + "\n")


def run(args, check=True):
    p = subprocess.run(args, capture_output=True, text=True)
    if check and p.returncode != 0:
        sys.exit("command failed (%d): %s\n%s" % (p.returncode, " ".join(args), p.stderr))
    return p


class Pegasos:
    def __init__(self, binary, tmp):
        self.binary, self.tmp, self.n = binary, tmp, 0

    def path(self, stem):
        self.n += 1
        return os.path.join(self.tmp, "%s_%d" % (stem, self.n))

    def train(self, rows, sets, model=None):
        data = self.path("train") + ".jsonl"
        write(data, rows)
        model = model or self.path("model") + ".json"
        args = [self.binary, "train", "-q", "--set", "positive_label=spam"]
        for k, v in sets.items():
            args += ["--set", "%s=%s" % (k, json.dumps(v) if not isinstance(v, str) else v)]
        run(args + [data, model])
        os.remove(data)
        return model

    def eval(self, model, rows, max_fpr=None):
        data = self.path("test") + ".jsonl"
        write(data, rows)
        out = self.path("eval") + ".json"
        args = [self.binary, "eval", model, data, "--json", out]
        if max_fpr is not None:
            args += ["--max-fpr", str(max_fpr)]
        run(args)
        with open(out) as f:
            result = json.load(f)
        os.remove(data)
        os.remove(out)
        return result


def spam_class(result):
    return next(c for c in result["per_class"] if c["label"] == "spam")


def stable_rank(message_id, seed):
    return hashlib.sha256(("%d:%s" % (seed, message_id)).encode()).hexdigest()


def imbalanced(peg, out):
    train = load(os.path.join(CACHE, "spamassassin_train.jsonl"))
    test = load(os.path.join(CACHE, "spamassassin_test.jsonl"))
    ham = [r for r in train if r["label"] == "ham"]
    spam = sorted((r for r in train if r["label"] == "spam"), key=lambda r: stable_rank(r["id"], 0))
    keep = round(0.05 * len(ham) / 0.95)
    rows = ham + spam[:keep]
    rows.sort(key=lambda r: stable_rank(r["id"], 1))
    print("imbalanced training set: %d ham, %d spam (%.1f%% spam); test %d messages" %
          (len(ham), keep, 100.0 * keep / len(rows), len(test)), flush=True)
    variants = [("hinge", {"objective": "hinge"}),
                ("weighted (balanced)", {"objective": "weighted_hinge", "class_weight": "balanced"}),
                ("balanced sampling", {"objective": "hinge", "sampling": "balanced"})]
    table = []
    for lam in LAMBDAS:
        for name, sets in variants:
            s = dict(sets, **{"lambda": lam})
            t0 = time.time()
            model = peg.train(rows, s)
            seconds = time.time() - t0
            r = peg.eval(model, test, max_fpr=0.01)
            sc = spam_class(r)
            table.append({"lambda": lam, "variant": name, "accuracy": r["accuracy"],
                          "balanced_accuracy": r["balanced_accuracy"], "spam_precision": sc["precision"],
                          "spam_recall": sc["recall"], "spam_f1": sc["f1"], "roc_auc": r.get("roc_auc"),
                          "recall_at_1pct_fpr": r.get("at_max_fpr", {}).get("recall"), "train_seconds": seconds})
            print("  lambda %g %-20s bal.acc %.4f spam recall %.4f precision %.4f F1 %.4f AUC %.4f recall@1%%FPR %.4f"
                  % (lam, name, r["balanced_accuracy"], sc["recall"], sc["precision"], sc["f1"], r["roc_auc"],
                     table[-1]["recall_at_1pct_fpr"] or 0), flush=True)
    print("\n| lambda | training | balanced acc. | spam recall | spam precision | spam F1 | ROC-AUC | recall @ 1% FPR |")
    print("|---|---|---|---|---|---|---|---|")
    for t in table:
        print("| %g | %s | %.4f | %.4f | %.4f | %.4f | %.4f | %.4f |" % (
            t["lambda"], t["variant"], t["balanced_accuracy"], t["spam_recall"], t["spam_precision"],
            t["spam_f1"], t["roc_auc"], t["recall_at_1pct_fpr"] or 0))
    return table


def folds_of(rows, k, seed):
    by_label = {}
    for r in sorted(rows, key=lambda r: stable_rank(r["id"], seed)):
        by_label.setdefault(r["label"], []).append(r)
    folds = [[] for _ in range(k)]
    for label in sorted(by_label):
        for i, r in enumerate(by_label[label]):
            folds[i % k].append(r)
    return folds


def cv_choose(peg, target_train, make_sets, extra_rows=(), k=3, seed=0):
    """lambda with the best mean validation accuracy over k stratified folds."""
    folds = folds_of(target_train, k, seed)
    best = None
    for lam in LAMBDAS:
        accs = []
        for i in range(k):
            val = folds[i]
            fit = [r for j in range(k) if j != i for r in folds[j]] + list(extra_rows)
            if len({r["label"] for r in fit}) < 2 or not val:
                continue
            model = peg.train(fit, make_sets(lam))
            accs.append(peg.eval(model, val)["accuracy"])
        score = sum(accs) / len(accs) if accs else 0
        if best is None or score > best[0]:
            best = (score, lam)
    return best[1]


def draw_target(target, m, rep):
    """m target messages, stratified, in a seed-dependent order; the rest is the test set."""
    ranked = folds_of(target, 1, 100 + rep)[0]
    by_label = {}
    for r in ranked:
        by_label.setdefault(r["label"], []).append(r)
    n_spam = round(m * len(by_label["spam"]) / len(target))
    tr = by_label["spam"][:n_spam] + by_label["ham"][:m - n_spam]
    chosen = {r["id"] for r in tr}
    return tr, [r for r in target if r["id"] not in chosen]


def transfer_auto(peg, out, source, target, sizes, repeats):
    """Every variant as a user runs it: `lambda: "auto"` (the CLI's own
    stratified CV along a warm-started path) on its own training rows."""
    auto = {"lambda": "auto"}
    src = peg.train(source, auto)
    results = []
    for m in sizes:
        for rep in range(repeats):
            tr, te = draw_target(target, m, rep)
            row = {"m": m, "repeat": rep, "select": "auto"}
            row["source_only"] = peg.eval(src, te)["accuracy"]
            row["target_only"] = peg.eval(peg.train(tr, auto), te)["accuracy"]
            row["pooled"] = peg.eval(peg.train(tr + source, auto), te)["accuracy"]
            model = peg.train(tr, {"objective": "transfer", "source_model": src, "lambda": "auto"})
            row["transfer"] = peg.eval(model, te)["accuracy"]
            with open(model) as f:
                row["transfer_lambda"] = json.load(f)["settings"]["lambda"]
            results.append(row)
            print("  m=%d rep=%d: source-only %.4f target-only %.4f pooled %.4f transfer %.4f (lambda %g)" % (
                m, rep, row["source_only"], row["target_only"], row["pooled"], row["transfer"],
                row["transfer_lambda"]), flush=True)
    return summarise_transfer(results, sizes, os.path.join(out, "transfer_accuracy_auto.png"), 'λ by lambda "auto"')


def transfer(peg, out, sizes, repeats, select="cv3"):
    rows = load(os.path.join(CACHE, "spamassassin.jsonl"))
    source = [r for r in rows if r["group"] in ("spam-1", "easy-ham-1")]
    target = [r for r in rows if r["group"] in ("spam-2", "easy-ham-2", "hard-ham-1")]
    print("transfer: source %d messages (spam-1 + easy-ham-1), target %d (spam-2 + easy-ham-2 + hard-ham-1)"
          % (len(source), len(target)), flush=True)
    if select == "auto":
        return transfer_auto(peg, out, source, target, sizes, repeats)
    source_models = {lam: peg.train(source, {"lambda": lam}) for lam in LAMBDAS}
    results = []
    for m in sizes:
        for rep in range(repeats):
            tr, te = draw_target(target, m, rep)
            row = {"m": m, "repeat": rep}
            # source-only: lambda chosen on the target training messages
            lam_s = max(LAMBDAS, key=lambda lam: peg.eval(source_models[lam], tr)["accuracy"])
            row["source_only"] = peg.eval(source_models[lam_s], te)["accuracy"]
            # target-only
            lam_t = cv_choose(peg, tr, lambda lam: {"lambda": lam}, seed=rep)
            row["target_only"] = peg.eval(peg.train(tr, {"lambda": lam_t}), te)["accuracy"]
            # pooled: source + target training messages
            lam_p = cv_choose(peg, tr, lambda lam: {"lambda": lam}, extra_rows=source, seed=rep)
            row["pooled"] = peg.eval(peg.train(tr + source, {"lambda": lam_p}), te)["accuracy"]
            # transfer toward the source model chosen above
            src = source_models[lam_s]
            sets = lambda lam: {"objective": "transfer", "source_model": src, "lambda": lam}
            lam_x = cv_choose(peg, tr, sets, seed=rep)
            row["transfer"] = peg.eval(peg.train(tr, sets(lam_x)), te)["accuracy"]
            row["lambdas"] = {"source": lam_s, "target": lam_t, "pooled": lam_p, "transfer": lam_x}
            results.append(row)
            print("  m=%d rep=%d: source-only %.4f target-only %.4f pooled %.4f transfer %.4f  (lambdas %s)" % (
                m, rep, row["source_only"], row["target_only"], row["pooled"], row["transfer"], row["lambdas"]),
                flush=True)
    return summarise_transfer(results, sizes, os.path.join(out, "transfer_accuracy.png"))


def summarise_transfer(results, sizes, plot_path, how="λ by 3-fold CV"):
    print("\n| target training messages | target-only | source-only | pooled | transfer | transfer − best other |")
    print("|---|---|---|---|---|---|")
    summary = []
    for m in sizes:
        rs = [r for r in results if r["m"] == m]
        mean = {k: sum(r[k] for r in rs) / len(rs) for k in ("target_only", "source_only", "pooled", "transfer")}
        summary.append(dict(mean, m=m))
        margin = mean["transfer"] - max(mean["target_only"], mean["source_only"], mean["pooled"])
        print("| %d | %.4f | %.4f | %.4f | %.4f | %+.1f pt |" % (m, mean["target_only"], mean["source_only"],
                                                               mean["pooled"], mean["transfer"], 100 * margin))
    plot(summary, plot_path, how)
    return {"runs": results, "summary": summary}


def plot(summary, path, how="λ by 3-fold CV"):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib missing: no plot; use Debian's /usr/bin/python3 with python3-matplotlib)")
        return
    fig, ax = plt.subplots(figsize=(6, 4))
    xs = [s["m"] for s in summary]
    for key, label in (("target_only", "target only"), ("source_only", "source only"), ("pooled", "pooled"),
                       ("transfer", "transfer (λ/2‖w − w_R‖²)")):
        ax.plot(xs, [s[key] for s in summary], marker="o", label=label)
    ax.set_xscale("log")
    ax.set_xticks(xs)
    ax.set_xticklabels([str(x) for x in xs])
    ax.set_xlabel("target training messages")
    ax.set_ylabel("target test accuracy")
    ax.set_title("SpamAssassin transfer: (spam-1, easy-ham-1) → (spam-2, easy/hard-ham); " + how, fontsize=8)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    tmp = path + ".tmp.png"
    fig.savefig(tmp, dpi=110)
    os.replace(tmp, path)
    print("plot:", path)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("which", nargs="?", default="all", choices=["imbalanced", "transfer", "all"])
    ap.add_argument("--pegasos", default=os.path.join(ROOT, "build", "pegasos"))
    ap.add_argument("--out", default="/tmp/pegasos-spam")
    ap.add_argument("--sizes", default="25,50,100,200,500")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--select", default="cv3", choices=["cv3", "auto"],
                    help="transfer: how each variant's lambda is chosen: cv3 (this script's 3-fold CV over "
                         "%s; the default) or auto (the CLI's lambda \"auto\" on each variant's own rows)" % LAMBDAS)
    args = ap.parse_args()
    if not os.path.exists(os.path.join(CACHE, "spamassassin.jsonl")):
        sys.exit("run scripts/fetch_spamassassin.sh first")
    os.makedirs(args.out, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        peg = Pegasos(args.pegasos, tmp)
        results = {}
        if args.which in ("imbalanced", "all"):
            results["imbalanced"] = imbalanced(peg, args.out)
        if args.which in ("transfer", "all"):
            results["transfer"] = transfer(peg, args.out, [int(s) for s in args.sizes.split(",")], args.repeats,
                                          args.select)
    path = os.path.join(args.out, "spam_results.json")
    with open(path + ".tmp", "w") as f:
        json.dump(results, f, indent=1)
    os.replace(path + ".tmp", path)
    print("results:", path)


if __name__ == "__main__":
    main()
