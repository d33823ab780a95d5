#!/usr/bin/python3
"""Differential test of the LIBSVM/SVMlight reader against scikit-learn (issue 19).

    /usr/bin/python3 tests/svmlight_diff.py PEGASOS [--files N] [--seed S] [--keep DIR]

A seeded generator writes N valid files mixing every variant that
sklearn.datasets.load_svmlight_file and LIBLINEAR read: explicit '+' signs on
values and labels, exponents (1e-3, 2E+2, +5e05), leading zeros in indices and
values, tabs and runs of spaces, qid:N, whole-line and trailing '#' comments
(also glued to a value), CRLF (per file or per line), label-only rows, blank
lines, no final newline. Each file is read by scikit-learn and by
`PEGASOS featurize FILE OUT`, which writes the parsed rows back as canonical
LIBSVM; labels, indices, values (float32 tolerance), row count and dimension
must agree.

Then malformed lines that both scikit-learn and pegasos reject ('1:+', '1:++2',
'1:2x', '+:1', index 0, unsorted indices, ...) must make pegasos exit 2 naming
FILE:LINE:COLUMN; and the inputs pegasos rejects on purpose although
scikit-learn reads them (NaN, inf, '1_0', '+1:1', 'qid:x') must too.

Exit 0: all agree; 1: a difference (the first few are printed with the source
line); 77: scikit-learn is not importable (ctest's SKIP_RETURN_CODE).
"""
import argparse
import os
import random
import re
import subprocess
import sys
import tempfile

SKIP = 77
try:
    import numpy as np
    from sklearn.datasets import load_svmlight_file
except ImportError as e:  # pragma: no cover - depends on the machine
    print(f"svmlight_diff: skipped, scikit-learn is not available ({e})")
    sys.exit(SKIP)


# ---------------------------------------------------------------------------
# Generator of valid variant files.

def digits(rng, lo, hi, leading_zero_ok=True):
    s = "".join(rng.choice("0123456789") for _ in range(rng.randint(lo, hi)))
    if not leading_zero_ok and s[:1] == "0":
        s = str(rng.randint(1, 9)) + s[1:]
    return s


def value_text(rng):
    """A decimal number in one of the spellings both readers take. Magnitudes
    stay within float32's normal range (at most 10 digits, |exponent| <= 20)."""
    form = rng.random()
    if form < 0.08:
        return rng.choice(["0", "-0", "+0", "0.0", "+0e5", "000", "-0.000E-3"])
    sign = rng.choice(["", "", "+", "-"])
    whole = digits(rng, 0, 4)
    frac = digits(rng, 0, 6)
    if not whole and not frac:
        whole = str(rng.randint(1, 9))
    body = whole
    if frac or rng.random() < 0.2:
        body += "." + frac  # also "5." and ".5"
    if rng.random() < 0.35:
        body += rng.choice("eE") + rng.choice(["", "+", "-"]) + rng.choice(["", "0"]) + str(rng.randint(0, 20))
    return sign + body


def label_text(rng, value):
    """One of several spellings of the integer class `value`."""
    plus = "+" if value >= 0 and rng.random() < 0.5 else ""
    return plus + rng.choice([
        f"{value}", f"{value}.0", f"{value}.", f"{value}e0", f"{value}E+00", f"{value * 10}e-1",
        f"{value * 100}E-2", re.sub(r"^(-?)", r"\g<1>0", str(value)),  # leading zero: 01, -01
    ])


def separator(rng):
    return rng.choice([" ", " ", " ", "\t", "  ", " \t ", "\t\t", "   "])


def feature_tokens(rng, max_gap):
    tokens = []
    index = 0
    for _ in range(rng.choice([0, 1, 2, 3, 5, 8, 13])):
        index += 1 + rng.randint(0, max_gap)
        zeros = "0" * rng.choice([0, 0, 0, 0, 1, 2, 5])
        tokens.append(f"{zeros}{index}:{value_text(rng)}")
    return tokens


def comment(rng):
    return rng.choice(["#", "# a comment", "#1:5 2:6", "# qid:3 7:7 \t", "## twice # hashes"])


def data_line(rng, classes, max_gap):
    """One example row (and its class) in a random spelling."""
    y = rng.choice(classes)
    tokens = [label_text(rng, y)]
    if rng.random() < 0.15:  # scikit-learn takes qid only right after the label
        tokens.append("qid:" + rng.choice(["", "+", "0"]) + str(rng.randint(0, 99)))
    tokens += feature_tokens(rng, max_gap)
    line = rng.choice(["", "", "", " ", "\t", "  "]) + tokens[0]
    for t in tokens[1:]:
        line += separator(rng) + t
    r = rng.random()
    if r < 0.1:
        line += separator(rng) + comment(rng)
    elif r < 0.15:
        line += comment(rng)  # glued to the last token: "1:2#c"
    elif r < 0.3:
        line += rng.choice([" ", "\t", "  \t"])
    return line, y


def noise_line(rng):
    return rng.choice(["", "", "   ", "\t", " \t ", "#", "# comment 1:1", "  # indented 2:2", "#1 1:1"])


def make_file(rng):
    """(bytes, rows) where rows[i] = 1-based source line of example i."""
    classes = rng.choice([[-1, 1], [0, 1], [1, 2, 3], [-1, 1, 7], [3, 10, 20, 40]])
    max_gap = rng.choice([1, 3, 20, 300])
    endings = rng.choice(["lf", "crlf", "mixed"])
    lines, rows, seen = [], [], set()
    n = rng.randint(2, 60)
    while len(rows) < n or len(seen) < 2:
        if rng.random() < 0.12:
            lines.append(noise_line(rng))
            continue
        line, y = data_line(rng, classes, max_gap)
        lines.append(line)
        rows.append(len(lines))
        seen.add(y)
    text = ""
    for i, line in enumerate(lines):
        last = i == len(lines) - 1
        if last and rng.random() < 0.2:
            text += line  # no final newline
            break
        crlf = endings == "crlf" or (endings == "mixed" and rng.random() < 0.5)
        text += line + ("\r\n" if crlf else "\n")
    return text.encode(), rows


# ---------------------------------------------------------------------------
# Readers.

def read_pegasos_output(path):
    """Canonical LIBSVM as 'featurize' writes it: exactly 'LABEL I:V I:V'."""
    labels, rows = [], []
    with open(path, encoding="ascii") as f:
        for line in f.read().split("\n")[:-1]:
            tokens = line.split(" ")
            labels.append(float(tokens[0]))
            row = []
            for t in tokens[1:]:
                i, v = t.split(":")
                row.append((int(i), float(v)))
            rows.append(row)
    return labels, rows


def featurize(pegasos, src, out):
    return subprocess.run([pegasos, "featurize", src, out], capture_output=True, text=True)


def compare(pegasos, path, rows_at, problems):
    X, y = load_svmlight_file(path, zero_based=False, dtype=np.float64)
    X = X.tocsr()
    X.eliminate_zeros()  # scikit-learn keeps explicit zeros, pegasos drops them
    out = path + ".out"
    run = featurize(pegasos, path, out)
    if run.returncode != 0:
        problems.append(f"{path}: pegasos featurize failed (exit {run.returncode}): {run.stderr.strip()}")
        return
    m = re.search(r"wrote (\d+) rows, (\d+) features", run.stderr)
    if not m or (int(m.group(1)), int(m.group(2))) != X.shape:
        problems.append(f"{path}: pegasos summary {run.stderr.strip()!r}, scikit-learn shape {X.shape}")
        return
    labels, rows = read_pegasos_output(out)
    for r, (label, row) in enumerate(zip(labels, rows)):
        where = f"{path}:{rows_at[r]}"
        if label != y[r]:
            problems.append(f"{where}: label {label!r} (pegasos) vs {y[r]!r} (scikit-learn)")
        start, end = X.indptr[r], X.indptr[r + 1]
        sk_idx = (X.indices[start:end] + 1).tolist()
        sk_val = X.data[start:end]
        if [i for i, _ in row] != sk_idx:
            problems.append(f"{where}: indices {[i for i, _ in row]} (pegasos) vs {sk_idx} (scikit-learn)")
            continue
        ours = np.array([v for _, v in row])
        # pegasos rounds each decimal to float32 once; allow one float32 ulp.
        if not np.all(np.abs(ours - sk_val) <= 2.0 ** -23 * np.abs(sk_val)):
            problems.append(f"{where}: values {ours.tolist()} (pegasos) vs {sk_val.tolist()} (scikit-learn)")


# ---------------------------------------------------------------------------
# Inputs that must be rejected: (line 2 of a file, column of the error).

BOTH_REJECT = [
    ("1 1:+", 5), ("1 1:++2", 5), ("1 1:+-2", 5), ("1 1:-+2", 5), ("1 1:2x", 5), ("1 1:+2x", 5),
    ("1 1:2e", 5), ("1 1:2e+", 5), ("1 1:.", 5), ("1 1:", 5), ("1 1:0x10", 5), ("1 1:2:3", 5),
    ("1 +:1", 3), ("1 :1", 3), ("1 x:1", 3), ("1 1.5:1", 3), ("1 0:1", 3), ("1 000:1", 3),
    ("1 2:1 1:1", 7), ("1 2:1 2:1", 7), ("1 2:1 02:1", 7), ("1 1:1 abc", 7), ("1 1:1 2", 7),
]
# (Labels are not here: a label that is not a number is a class name for pegasos.)
# Read by scikit-learn (float('nan'), float('1_0'), int('+1'), qid unparsed), rejected by
# pegasos on purpose (tests/bad_inputs: index_plus_sign.svm, nan_value.svm, inf_value.svm).
PEGASOS_REJECTS = [("1 1:nan", 5), ("1 1:+inf", 5), ("1 1:-Infinity", 5), ("1 1:1_0", 5), ("1 +1:1", 3),
                   ("1 qid:x 1:1", 7)]


def rejects_by_sklearn(path):
    try:
        load_svmlight_file(path, zero_based=False)
    except ValueError:
        return True
    return False


def check_rejections(pegasos, folder, problems):
    for k, (bad, column) in enumerate(BOTH_REJECT + PEGASOS_REJECTS):
        path = os.path.join(folder, f"bad{k}.svm")
        with open(path, "w") as f:
            f.write(f"1 1:1 2:+2\n{bad}\n-1 3:1\n")
        sk_rejects = rejects_by_sklearn(path)
        # Keep the two lists honest about scikit-learn.
        if (bad, column) in BOTH_REJECT and not sk_rejects:
            problems.append(f"{bad!r}: scikit-learn reads it; move it to PEGASOS_REJECTS")
        if (bad, column) in PEGASOS_REJECTS and sk_rejects:
            problems.append(f"{bad!r}: scikit-learn rejects it too; move it to BOTH_REJECT")
        run = featurize(pegasos, path, path + ".out")
        where = f"{path}:2:{column}:"
        if run.returncode != 2 or where not in run.stderr:
            problems.append(f"{bad!r}: pegasos exit {run.returncode}, stderr {run.stderr.strip()!r}; "
                            f"expected exit 2 and {where!r}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("pegasos")
    ap.add_argument("--files", type=int, default=150)
    ap.add_argument("--seed", type=int, default=19)
    ap.add_argument("--keep", help="write the files here (kept) instead of a temporary folder")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or tmp
        os.makedirs(folder, exist_ok=True)
        examples = 0
        for k in range(args.files):
            data, rows_at = make_file(rng)
            path = os.path.join(folder, f"variant{k}.svm")
            with open(path, "wb") as f:
                f.write(data)
            compare(args.pegasos, path, rows_at, problems)
            examples += len(rows_at)
        check_rejections(args.pegasos, folder, problems)
        for p in problems[:20]:
            print(p)
        if problems:
            print(f"svmlight_diff: {len(problems)} differences (seed {args.seed}; --keep DIR keeps the files)")
            return 1
    print(f"svmlight_diff: {args.files} files, {examples} rows: pegasos reads what scikit-learn reads; "
          f"{len(BOTH_REJECT)} malformed lines rejected by both, {len(PEGASOS_REJECTS)} by pegasos on purpose")
    return 0


if __name__ == "__main__":
    sys.exit(main())
