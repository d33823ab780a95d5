#!/usr/bin/env python3
"""Spam filtering on the SpamAssassin split: pegasos (raw JSONL in, plain and
class-weighted hinge) vs scikit-learn's TfidfVectorizer + LinearSVC, each as a
whole process that reads the same files. Also measures pegasos's text
featurisation throughput (MB of raw mail per second of its "load" phase).

Needs scripts/fetch_spamassassin.sh to have run; use Debian's /usr/bin/python3.
  /usr/bin/python3 bench/spam_vs_sklearn.py [--pegasos build/pegasos]
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
CACHE = os.path.join(ROOT, "data", "cache")

SKLEARN_CHILD = r'''
import json, sys, time
import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.svm import LinearSVC
from sklearn.metrics import roc_auc_score
def load(p):
    rows = [json.loads(l) for l in open(p)]
    return [r["text"] for r in rows], np.array([1 if r["label"] == "spam" else 0 for r in rows])
Xtr, ytr = load(sys.argv[1]); Xte, yte = load(sys.argv[2])
vec = TfidfVectorizer(sublinear_tf=True)
A = vec.fit_transform(Xtr); B = vec.transform(Xte)
clf = LinearSVC(C=float(sys.argv[3]), class_weight=None if sys.argv[4] == "none" else "balanced").fit(A, ytr)
s = clf.decision_function(B)
neg = np.sort(s[yte == 0])[::-1]
k = int(np.floor(0.01 * len(neg)))
thr = neg[k] if k < len(neg) else -np.inf
json.dump({"scores": s.tolist(), "y": yte.tolist(), "recall_at_1pct_fpr": float(np.mean(s[yte == 1] > thr)),
           "roc_auc": float(roc_auc_score(yte, s))}, open(sys.argv[5], "w"))
'''


def metrics(scores, y):
    tp = sum(1 for s, t in zip(scores, y) if s > 0 and t == 1)
    fp = sum(1 for s, t in zip(scores, y) if s > 0 and t == 0)
    fn = sum(1 for s, t in zip(scores, y) if s <= 0 and t == 1)
    tn = len(y) - tp - fp - fn
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    return {"accuracy": (tp + tn) / len(y), "precision": p, "recall": r, "f1": 2 * p * r / (p + r) if p + r else 0.0}


def timed(args):
    t0 = time.time()
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("failed: %s\n%s" % (" ".join(args), p.stderr))
    return time.time() - t0, p


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pegasos", default=os.path.join(ROOT, "build", "pegasos"))
    ap.add_argument("--lambda", dest="lam", type=float, default=1e-4)
    args = ap.parse_args()
    train = os.path.join(CACHE, "spamassassin_train.jsonl")
    test = os.path.join(CACHE, "spamassassin_test.jsonl")
    if not os.path.exists(train):
        sys.exit("run scripts/fetch_spamassassin.sh first")
    n = sum(1 for _ in open(train))
    C = 1.0 / (args.lam * n)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, sets in (("pegasos hinge", []),
                           ("pegasos weighted (balanced)", ["--set", "objective=weighted_hinge",
                                                           "--set", "class_weight=balanced"])):
            model, ev = os.path.join(tmp, "m.json"), os.path.join(tmp, "e.json")
            pred = os.path.join(tmp, "p.tsv")
            t_train, p = timed([args.pegasos, "train", "--set", "lambda=%g" % args.lam, "--set",
                                "positive_label=spam"] + sets + [train, model])
            load = float(re.search(r"load ([0-9.]+)s", p.stderr).group(1))
            t_eval, _ = timed([args.pegasos, "eval", model, test, "--json", ev, "--max-fpr", "0.01"])
            t_pred, _ = timed([args.pegasos, "predict", model, test, "--output", pred])
            r = json.load(open(ev))
            spam = next(c for c in r["per_class"] if c["label"] == "spam")
            rows.append({"tool": name, "accuracy": r["accuracy"], "precision": spam["precision"],
                         "recall": spam["recall"], "f1": spam["f1"], "roc_auc": r["roc_auc"],
                         "recall_at_1pct_fpr": r["at_max_fpr"]["recall"], "seconds": t_train + t_pred,
                         "load_seconds": load})
        child = os.path.join(tmp, "child.py")
        open(child, "w").write(SKLEARN_CHILD)
        for cw in ("none", "balanced"):
            out = os.path.join(tmp, "sk.json")
            t, _ = timed([sys.executable, child, train, test, "1.0", cw, out])
            r = json.load(open(out))
            m = metrics(r["scores"], r["y"])
            rows.append({"tool": "sklearn Tfidf+LinearSVC(C=1%s)" % ("" if cw == "none" else ", balanced"),
                         "roc_auc": r["roc_auc"], "recall_at_1pct_fpr": r["recall_at_1pct_fpr"], "seconds": t,
                         **{k: m[k] for k in ("accuracy", "precision", "recall", "f1")}})
    mb = os.path.getsize(train) / 1e6
    print("SpamAssassin split: %d train / %d test messages; pegasos lambda %g (C = 1/(lambda n) = %.3g)\n"
          % (n, sum(1 for _ in open(test)), args.lam, C))
    print("| tool | accuracy | spam precision | spam recall | spam F1 | ROC-AUC | recall @ 1% FPR | whole-process s |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print("| %s | %.4f | %.4f | %.4f | %.4f | %.4f | %.4f | %.2f |" % (
            r["tool"], r["accuracy"], r["precision"], r["recall"], r["f1"], r["roc_auc"], r["recall_at_1pct_fpr"],
            r["seconds"]))
    print("\npegasos featurisation (read + tokenise + hash + tf-idf, 2 cores): %.1f MB in %.2f s = %.0f MB/s"
          % (mb, rows[0]["load_seconds"], mb / rows[0]["load_seconds"]))
    out = "/tmp/pegasos-spam/spam_vs_sklearn.json"
    os.makedirs(os.path.dirname(out), exist_ok=True)
    json.dump(rows, open(out + ".tmp", "w"), indent=1)
    os.replace(out + ".tmp", out)


if __name__ == "__main__":
    main()
