#!/usr/bin/python3
"""Helper of scripts/golden.sh (standard library only).

  golden.py inputs REPO WORK   write the small inputs the golden cases read into WORK/in
  golden.py normalize DIR WORK REPO
                               rewrite the collected outputs in DIR in place, dropping what
                               varies from run to run (timings; the paths WORK and REPO
                               become <work> and <repo>)

Inputs are slices of the bundled data (data/*.gz), chosen by fixed strides so that every
class is present; derived inputs (pooled pixels, CSV, TSV, folder per class) are computed
with exact decimal formatting, so they are the same bytes on every machine.
"""

import gzip
import json
import os
import re
import sys


def read_libsvm(path):
    rows = []
    with gzip.open(path, "rt") as f:
        for line in f:
            parts = line.split()
            feats = {int(k): float(v) for k, v in (p.split(":") for p in parts[1:])}
            rows.append((parts[0], feats))
    return rows


def write_libsvm(path, rows):
    with open(path, "w") as f:
        for label, feats in rows:
            f.write(label + "".join(f" {k}:{v}" for k, v in sorted(feats.items()) if v != 0) + "\n")


def pooled(feats):
    """28x28 pixels (indices 1..784) -> 7x7 means of 4x4 blocks (49 features), 4 decimals."""
    out = {}
    for by in range(7):
        for bx in range(7):
            s = 0.0
            for y in range(4 * by, 4 * by + 4):
                for x in range(4 * bx, 4 * bx + 4):
                    s += feats.get(28 * y + x + 1, 0.0)
            out[7 * by + bx + 1] = float(f"{s / 16:.4f}")
    return out


def three_classes(label, feats):
    """T-shirt vs the rest split by ink: a learnable 3-class problem from the binary data."""
    if label == "+1":
        return "1"
    return "2" if sum(feats.values()) < 13.0 else "3"


def write_csv(path, rows, sep, header):
    with open(path, "w") as f:
        if header:
            f.write(sep.join([f"p{j}" for j in range(1, 50)] + ["label"]) + "\n")
        for label, feats in rows:
            f.write(sep.join([str(feats.get(j, 0.0)) for j in range(1, 50)] + [label]) + "\n")


def read_jsonl(path):
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def write_jsonl(path, docs):
    with open(path, "w", encoding="utf-8") as f:
        for d in docs:
            f.write(json.dumps({"id": d["id"], "group": d["group"], "label": d["label"], "text": d["text"]},
                               ensure_ascii=False) + "\n")


def shortest(docs, stride, per_group):
    """Every stride-th document, the per_group shortest of each group (easy-ham-1, spam-2, ...),
    in file order: every group and both labels, and small models."""
    picked = docs[::stride]
    keep = set()
    for group in sorted({d["group"] for d in picked}):
        members = [i for i, d in enumerate(picked) if d["group"] == group]
        keep.update(sorted(members, key=lambda i: (len(picked[i]["text"]), i))[:per_group])
    return [d for i, d in enumerate(picked) if i in keep]


def make_inputs(repo, work):
    data = os.path.join(repo, "data")
    out = os.path.join(work, "in")
    os.makedirs(out, exist_ok=True)
    train = read_libsvm(os.path.join(data, "fmnist_tshirt_train.svm.gz"))
    test = read_libsvm(os.path.join(data, "fmnist_tshirt_test.svm.gz"))
    # Binary, 784 pixels: 300 training rows (26 T-shirts), 200 test rows; a second
    # 300-row slice is the target domain of transfer; 1000 rows for the experiment.
    write_libsvm(os.path.join(out, "bin_train.svm"), train[:300])
    write_libsvm(os.path.join(out, "bin_test.svm"), test[:200])
    write_libsvm(os.path.join(out, "bin_target.svm"), train[300:600])
    write_libsvm(os.path.join(out, "run_train.svm"), train[:1000])
    # (49 pooled pixels: the other numeric cases, so that their models stay small.)
    # 49 pooled pixels: binary and 3-class, LIBSVM, CSV (header) and TSV (no header).
    small_train = [(l, pooled(f)) for l, f in train[:240]]
    small_test = [(l, pooled(f)) for l, f in test[:120]]
    write_libsvm(os.path.join(out, "pool_train.svm"), small_train)
    write_libsvm(os.path.join(out, "pool_test.svm"), small_test)
    write_libsvm(os.path.join(out, "pool_target.svm"), [(l, pooled(f)) for l, f in train[240:480]])
    write_csv(os.path.join(out, "pool_train.csv"), small_train, ",", True)
    write_csv(os.path.join(out, "pool_test.csv"), small_test, ",", True)
    multi_train = [(three_classes(l, p), p) for l, p in ((l, pooled(f)) for l, f in train[:240])]
    multi_test = [(three_classes(l, p), p) for l, p in ((l, pooled(f)) for l, f in test[:120])]
    write_libsvm(os.path.join(out, "multi_train.svm"), multi_train)
    write_libsvm(os.path.join(out, "multi_test.svm"), multi_test)
    write_csv(os.path.join(out, "multi_train.tsv"), multi_train, "\t", False)
    write_csv(os.path.join(out, "multi_test.tsv"), multi_test, "\t", False)
    write_csv(os.path.join(out, "multi_small.tsv"), multi_test[:30], "\t", False)
    write_libsvm(os.path.join(out, "kernel_train.svm"), small_train[:100])
    write_libsvm(os.path.join(out, "kernel_multi_train.svm"), multi_train[:100])

    # Raw mail: every 10th message, the shortest of each of the five groups.
    mail_train = read_jsonl(os.path.join(data, "spam_sample_train.jsonl.gz"))
    mail_test = read_jsonl(os.path.join(data, "spam_sample_test.jsonl.gz"))
    text_train = shortest(mail_train, 10, 3)
    text_test = shortest(mail_test, 10, 3)
    write_jsonl(os.path.join(out, "mail_train.jsonl"), text_train)
    write_jsonl(os.path.join(out, "mail_test.jsonl"), text_test)
    write_jsonl(os.path.join(out, "mail_target.jsonl"), shortest(mail_train[5:], 10, 3))
    # configs/spam.json hashes into 2^20 buckets: its model lists every token seen.
    write_jsonl(os.path.join(out, "mail_small.jsonl"), shortest(mail_train, 10, 2))
    with gzip.GzipFile(os.path.join(out, "mail_test.jsonl.gz"), "wb", mtime=0) as f:
        with open(os.path.join(out, "mail_test.jsonl"), "rb") as src:
            f.write(src.read())
    # LABEL TAB TEXT (whitespace runs folded to one space) and a folder per class.
    for name, docs in (("mail_train.tsv", text_train), ("mail_test.tsv", text_test)):
        with open(os.path.join(out, name), "w", encoding="utf-8") as f:
            for d in docs:
                f.write(d["label"] + "\t" + " ".join(d["text"].split()) + "\n")
    for name, docs in (("mail_train_dir", text_train), ("mail_test_dir", text_test)):
        for i, d in enumerate(docs):
            folder = os.path.join(out, name, d["label"])
            os.makedirs(folder, exist_ok=True)
            with open(os.path.join(folder, f"{i:04d}.txt"), "w", encoding="utf-8") as f:
                f.write(d["text"])


# Timing fields: "load 0.00s, train 0.01s" on stderr; in JSON, keys containing "seconds"
# and, in a "timing" object (pegasos run), also "threads" (the cores of the machine).
SECONDS_TEXT = re.compile(r"\b\d+(\.\d+)?s\b")
JSON_KEY = re.compile(r'^(\s*)"([A-Za-z_]*)": (.*?)(,?)$')


def normalize_text(text):
    return SECONDS_TEXT.sub("<s>", text)


def normalize_json_lines(text):
    """Pretty-printed JSON (one key per line): the value of a timing key becomes <s>
    (a number, or an array spanning lines), the key and the layout stay."""
    out, skip_to, timing_indent = [], None, None
    for line in text.split("\n"):
        if skip_to is not None:  # inside a multi-line array being dropped
            if re.match(r"^" + skip_to + r"\],?$", line):
                out[-1] += "," if line.rstrip().endswith(",") else ""
                skip_to = None
            continue
        m = JSON_KEY.match(line)
        if timing_indent is not None and re.match(r"^" + timing_indent + r"\},?$", line):
            timing_indent = None
        if not m:
            out.append(line)
            continue
        indent, key, value, comma = m.groups()
        if key == "timing" and value == "{":
            timing_indent = indent
        timed = "seconds" in key or (key == "threads" and timing_indent is not None and indent != timing_indent)
        if not timed:
            out.append(line)
        elif value == "[":
            out.append(f'{indent}"{key}": <s>')
            skip_to = indent
        else:
            out.append(f'{indent}"{key}": <s>{comma}')
    return "\n".join(out)


def normalize_csv(text):
    lines = text.split("\n")
    if not lines or "seconds" not in lines[0]:
        return text
    header = lines[0].split(",")
    cols = [i for i, h in enumerate(header) if "seconds" in h]
    out = [lines[0]]
    for line in lines[1:]:
        fields = line.split(",")
        for i in cols:
            if i < len(fields):
                fields[i] = "<s>"
        out.append(",".join(fields) if line else line)
    return "\n".join(out)


def normalize(directory, work, repo):
    for root, _, files in os.walk(directory):
        for name in files:
            path = os.path.join(root, name)
            with open(path, "rb") as f:
                raw = f.read()
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                continue
            new = text.replace(work, "<work>").replace(repo, "<repo>")
            if name.endswith(".json"):
                new = normalize_json_lines(new)
            elif name.endswith(".csv"):
                new = normalize_csv(new)
            elif name.endswith(".log") or name.endswith(".txt"):
                new = normalize_text(new)
            if new != text:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(new)


def main(argv):
    if len(argv) == 4 and argv[1] == "inputs":
        make_inputs(argv[2], argv[3])
    elif len(argv) == 5 and argv[1] == "normalize":
        normalize(argv[2], argv[3], argv[4])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
