#!/usr/bin/env python3
"""Warm start on real "one more day of mail": SpamAssassin ordered by each message's date.

The corpus's messages carry the date they were delivered (the mbox "From " line); 5451 of
6046 have one. For each chosen day D, yesterday's model is trained from zero on every
message delivered before D, then all messages up to and including D are trained from zero
("cold") and from yesterday's model ("warm", `train --init-model`), and the passes
(training.epochs) and objectives are compared. Settings: configs/spam.json (weighted hinge,
balanced class weights, hashed text, lambda 1e-4) with idf off, so that day D's cold run
fits the same featurizer as yesterday's model (a warm start keeps yesterday's).

    scripts/fetch_spamassassin.sh && ninja -C build pegasos
    /usr/bin/python3 bench/warm_start_dated.py [--days 2002-09-26,2002-10-01,...] [--pegasos BIN]

By default every day with at least 30 new messages after the first 2000 (45 days, about
3 minutes); --days picks some.

The issue-19 target: warm passes at most 1/2 of cold passes, objectives within the tolerance.
"""
import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(REPO, "build", "pegasos")
CORPUS = os.path.join(REPO, "data", "cache", "spamassassin.jsonl")
MIN_BEFORE, MIN_NEW = 2000, 30  # the default days: at least this much mail before, and new


def dated_messages():
    """(date, JSONL line) of every message whose first line is an mbox 'From ' line, by date."""
    out = []
    with open(CORPUS, encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            first = json.loads(line)["text"].split("\n", 1)[0]
            parts = first.split(None, 2)
            if len(parts) != 3 or parts[0] != "From":
                continue
            try:
                when = datetime.datetime.strptime(parts[2].strip(), "%a %b %d %H:%M:%S %Y")
            except ValueError:
                continue
            out.append((when, line))
    out.sort(key=lambda x: x[0])
    return out


def train(tmp, lines, config, out, init=None):
    data = os.path.join(tmp, "data.jsonl")
    with open(data, "w", encoding="utf-8") as f:
        f.writelines(lines)
    cmd = [BIN, "train", "-q", "-c", config] + (["--init-model", init] if init else []) + [data, out]
    subprocess.run(cmd, check=True, capture_output=True)
    with open(out) as f:
        t = json.load(f)["training"]
    return t["epochs"], t["objective"], t["converged"]


def main():
    global BIN
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--days", default="", help="comma-separated YYYY-MM-DD days (default: every day with at least "
                    "%d new messages after the first %d)" % (MIN_NEW, MIN_BEFORE))
    ap.add_argument("--pegasos", default=BIN, help="the binary to run (default: build/pegasos)")
    args = ap.parse_args()
    BIN = args.pegasos
    if not os.path.exists(BIN):
        sys.exit("%s missing: build it (ninja -C build pegasos) or pass --pegasos" % BIN)
    if not os.path.exists(CORPUS):
        sys.exit("%s missing: run scripts/fetch_spamassassin.sh" % CORPUS)
    messages = dated_messages()
    print("%d dated messages, %s to %s" % (len(messages), messages[0][0].date(), messages[-1][0].date()))
    with open(os.path.join(REPO, "configs", "spam.json")) as f:
        config = json.load(f)
    config["features"]["idf"] = False
    if args.days:
        days = args.days.split(",")
    else:
        per_day, before, days = {}, 0, []
        for when, _ in messages:
            per_day[when.date()] = per_day.get(when.date(), 0) + 1
        for d in sorted(per_day):
            if before >= MIN_BEFORE and per_day[d] >= MIN_NEW:
                days.append(d.isoformat())
            before += per_day[d]
    ratios = []
    with tempfile.TemporaryDirectory() as tmp:
        cfg = os.path.join(tmp, "spam_no_idf.json")
        with open(cfg, "w") as f:
            json.dump(config, f)
        print("| day | before it | new | cold passes | warm passes | warm/cold | objective cold / warm |")
        print("|---|---|---|---|---|---|---|")
        for day in days:
            d = datetime.date.fromisoformat(day)
            before = [l for when, l in messages if when.date() < d]
            upto = [l for when, l in messages if when.date() <= d]
            yesterday = os.path.join(tmp, "yesterday.json")
            train(tmp, before, cfg, yesterday)
            ec, oc, cc = train(tmp, upto, cfg, os.path.join(tmp, "cold.json"))
            ew, ow, cw = train(tmp, upto, cfg, os.path.join(tmp, "warm.json"), init=yesterday)
            if not (cc and cw):
                print("warning: %s: a run was not certified (cold %s, warm %s)" % (day, cc, cw), file=sys.stderr)
            ratios.append(ew / ec)
            print("| %s | %d | %d | %.1f | %.1f | %.2f | %.7g / %.7g |" % (
                day, len(before), len(upto) - len(before), ec, ew, ew / ec, oc, ow), flush=True)
    ratios.sort()
    mid = len(ratios) // 2
    median = ratios[mid] if len(ratios) % 2 else (ratios[mid - 1] + ratios[mid]) / 2
    print("warm/cold passes: median %.2f, min %.2f, max %.2f; at most 1/2 on %d of %d days" % (
        median, ratios[0], ratios[-1], sum(r <= 0.5 for r in ratios), len(ratios)))


if __name__ == "__main__":
    main()
