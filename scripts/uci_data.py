#!/usr/bin/python3
"""Small public classification sets from Debian's R packages as LIBSVM files.

    /usr/bin/python3 scripts/uci_data.py [--out data/cache/uci] [--sets a,b] [--list]

Reads the .rda files shipped by r-cran-mlbench and r-cran-kernlab (no network),
and writes for every set NAME

    OUT/NAME.train.svm   75% of the rows (stratified per class)
    OUT/NAME.test.svm    the other 25%
    OUT/index.json       name, source, n, d, K, classes (label -> R level), class counts,
                         what the features are, how NAs were handled

Conversion rules (the same for every set):
  * numeric columns are kept as RAW values, unscaled (badly conditioned problems are
    the point of the benchmark that uses these files); logical columns become 0/1;
  * factors become one-hot columns, one per level that occurs (a factor whose levels
    are exactly "0"/"1" becomes a single 0/1 column); levels are taken in R's order;
  * rows with an NA are dropped, except for sets marked na="level", where a factor's NA
    is its own one-hot level;
  * columns that are constant over the whole set are dropped (e.g. Ionosphere V2);
  * every value is rounded to float32 and written so that a float32 reader (pegasos)
    and a double reader (LIBLINEAR) see exactly the same number;
  * labels are 1..K in the order of the R factor's levels (levels that occur), so for
    a binary set the second level is label 2, pegasos's positive class;
  * the split is stratified: per class, round(25%) of the rows (at least one when the
    class has two or more rows, never all of them) go to the test file, chosen by a
    numpy Generator seeded from the set's name; both files are then shuffled with the
    same seed. Re-running gives byte-identical files (files already identical are not
    rewritten).

Needs: apt-get install r-cran-mlbench r-cran-kernlab python3-rdata python3-numpy
Exit codes: 0 success, 2 a missing package / file or bad input (message says which).
"""

import argparse
import hashlib
import json
import os
import sys
import tempfile
import warnings
import zlib

INSTALL_HINT = "apt-get install r-cran-mlbench r-cran-kernlab python3-rdata python3-numpy"
R_LIB = "/usr/lib/R/site-library"
SPLIT_SEED = 20240601
TEST_FRACTION = 0.25


def die(msg):
    print(f"uci_data.py: error: {msg}", file=sys.stderr)
    sys.exit(2)


try:
    import numpy as np
except ImportError:
    die(f"python module numpy is missing; install it with: {INSTALL_HINT} "
        "(and run this script with Debian's /usr/bin/python3)")
try:
    import rdata
except ImportError:
    die(f"python module rdata is missing; install it with: {INSTALL_HINT} "
        "(and run this script with Debian's /usr/bin/python3)")


# name: (R package, R object, label column, NA policy, description of the features)
SETS = {
    # binary
    "ionosphere": ("mlbench", "Ionosphere", "Class", "drop",
                   "radar returns: 32 continuous values in [-1, 1] and V1 (0/1); V2 is constant and dropped"),
    "sonar": ("mlbench", "Sonar", "Class", "drop",
              "sonar: 60 band energies in [0, 1]"),
    "breast_cancer": ("mlbench", "BreastCancer", "Class", "drop",
                      "Wisconsin breast cancer: 9 cytology scores 1..10 as factors, one-hot; Id dropped; rows with NA dropped"),
    "house_votes84": ("mlbench", "HouseVotes84", "Class", "level",
                      "1984 US House votes: 16 y/n votes one-hot, NA (no vote) is its own level"),
    "pima": ("mlbench", "PimaIndiansDiabetes", "diabetes", "drop",
             "Pima Indians diabetes: 8 raw clinical measurements (glucose, insulin up to 846, ...), unscaled"),
    "spam": ("kernlab", "spam", "type", "drop",
             "HP spam: 54 word/char frequencies and 3 capital-run lengths (up to 15841), unscaled"),
    "ticdata": ("kernlab", "ticdata", "CARAVAN", "drop",
                "CoIL 2000 insurance (train+test pooled): 23 raw counts, 61 factors one-hot; 6% positive (imbalanced)"),
    "musk": ("kernlab", "musk", "Class", "drop",
             "musk molecules (476 rows): 166 raw shape features (magnitudes up to ~300), unscaled"),
    "promotergene": ("kernlab", "promotergene", "Class", "drop",
                     "E. coli promoter sequences: 57 nucleotides (a/c/g/t) one-hot"),
    # multiclass
    "glass": ("mlbench", "Glass", "Type", "drop",
              "glass identification: refractive index and 8 oxide percentages, unscaled; 6 classes"),
    "vowel": ("mlbench", "Vowel", "Class", "drop",
              "vowel recognition: speaker (V1) one-hot and 9 log-area ratios; 11 classes"),
    "vehicle": ("mlbench", "Vehicle", "Class", "drop",
                "vehicle silhouettes: 18 raw shape measures (up to ~1000), unscaled; 4 classes"),
    "satellite": ("mlbench", "Satellite", "classes", "drop",
                  "Landsat: 36 raw pixel values 0..255 (3x3 neighbourhood, 4 bands); 6 classes"),
    "dna": ("mlbench", "DNA", "Class", "drop",
            "splice junctions: 180 binary indicator variables; 3 classes"),
    "soybean": ("mlbench", "Soybean", "Class", "level",
                "soybean disease: 35 categorical attributes one-hot, NA is its own level; 19 classes"),
    "zoo": ("mlbench", "Zoo", "type", "drop",
            "zoo: 15 boolean attributes (0/1) and legs (0..8); 7 classes"),
    "letter": ("mlbench", "LetterRecognition", "lettr", "drop",
               "letter recognition: 16 integer features 0..15, unscaled; 26 classes, 20000 rows"),
    "shuttle": ("mlbench", "Shuttle", "Class", "drop",
                "statlog shuttle: 9 raw integer sensor values; 7 very imbalanced classes (10 .. 45586 rows), 58000 rows"),
}


def load_r(pkg, obj):
    path = os.path.join(R_LIB, pkg, "data", obj + ".rda")
    if not os.path.exists(path):
        die(f"{path} not found: the R package r-cran-{pkg} is missing; install it with: {INSTALL_HINT}")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            parsed = rdata.parser.parse_file(path)
            conv = rdata.conversion.convert(parsed)
    except Exception as e:  # noqa: BLE001 - any parse failure is bad input
        die(f"cannot read {path}: {e}")
    if obj not in conv:
        die(f"{path} has no object {obj!r} (found {sorted(conv)})")
    return conv[obj]


def is_categorical(series):
    return str(series.dtype) == "category"


def convert(name, spec):
    """Returns X (float32, rows x d), y (1..K), classes, column names, info dict."""
    pkg, obj, label_col, na_policy, desc = spec
    df = load_r(pkg, obj)
    if not hasattr(df, "columns") or label_col not in df.columns:
        die(f"{name}: {pkg}::{obj} has no label column {label_col!r}")
    n_raw = len(df)
    labels = df[label_col]
    feats = [c for c in df.columns if c != label_col]
    # Non-numeric, non-factor columns (e.g. BreastCancer's Id, stored as strings) are identifiers: drop.
    dropped_cols = []
    keep = []
    for c in feats:
        s = df[c]
        if is_categorical(s) or s.dtype.kind in "biuf":
            keep.append(c)
        else:
            dropped_cols.append(c)
    feats = keep

    # Rows to drop: label NA always; feature NA unless na_policy == "level" (factors only).
    bad = labels.isna().to_numpy().copy()
    for c in feats:
        s = df[c]
        if na_policy == "level" and is_categorical(s):
            continue
        bad |= s.isna().to_numpy()
    rows = np.flatnonzero(~bad)

    cols = []
    names = []
    for c in feats:
        s = df[c].iloc[rows]
        if is_categorical(s):
            present = [lv for lv in s.cat.categories if (s == lv).any()]
            codes = s.astype(object)
            if [str(lv) for lv in present] in (["0", "1"],):
                cols.append((codes == present[1]).to_numpy(dtype=np.float64))
                names.append(f"{c}=={present[1]}")
            else:
                for lv in present:
                    cols.append((codes == lv).to_numpy(dtype=np.float64))
                    names.append(f"{c}=={lv}")
            na = s.isna().to_numpy()
            if na.any():
                cols.append(na.astype(np.float64))
                names.append(f"{c}==NA")
        elif s.dtype.kind == "b":
            cols.append(s.to_numpy(dtype=np.float64))
            names.append(str(c))
        else:
            cols.append(s.to_numpy(dtype=np.float64))
            names.append(str(c))
    X = np.column_stack(cols) if cols else np.zeros((len(rows), 0))
    X = X.astype(np.float32).astype(np.float64)  # what a float32 reader sees
    if not np.all(np.isfinite(X)):
        die(f"{name}: non-finite feature values after conversion")
    const = np.all(X == X[:1, :], axis=0) if len(X) else np.ones(X.shape[1], bool)
    const_names = [names[j] for j in np.flatnonzero(const)]
    X = X[:, ~const]
    names = [nm for nm, cst in zip(names, const) if not cst]

    lab = labels.iloc[rows]
    levels = [str(lv) for lv in lab.cat.categories] if is_categorical(lab) else sorted({str(v) for v in lab})
    lab_str = lab.astype(str).to_numpy()
    classes = [lv for lv in levels if (lab_str == lv).any()]
    cmap = {lv: i + 1 for i, lv in enumerate(classes)}
    y = np.array([cmap[v] for v in lab_str], dtype=np.int64)
    if len(classes) < 2:
        die(f"{name}: fewer than two classes")
    info = {
        "source": f"{pkg}::{obj} (Debian r-cran-{pkg})",
        "features": desc,
        "rows_in_source": n_raw,
        "rows_dropped_na": int(n_raw - len(rows)),
        "na_policy": "rows with NA dropped" if na_policy == "drop" else "factor NA is its own one-hot level",
        "columns_dropped": {"identifiers": [str(c) for c in dropped_cols], "constant": const_names},
        "feature_names": names,
    }
    return X, y, classes, info


def split(name, y):
    seed = (SPLIT_SEED * 1000003 + zlib.crc32(name.encode())) % (2**63)
    rng = np.random.Generator(np.random.PCG64(seed))
    test = np.zeros(len(y), dtype=bool)
    for k in np.unique(y):
        idx = np.flatnonzero(y == k)
        idx = idx[rng.permutation(len(idx))]
        nt = int(np.floor(TEST_FRACTION * len(idx) + 0.5))
        if len(idx) >= 2:
            nt = min(max(nt, 1), len(idx) - 1)
        else:
            nt = 0
        test[idx[:nt]] = True
    tr = np.flatnonzero(~test)
    te = np.flatnonzero(test)
    return tr[rng.permutation(len(tr))], te[rng.permutation(len(te))]


def fmt(v):
    if v == int(v) and abs(v) < 2**53:
        return str(int(v))
    return repr(float(v))


def libsvm_text(X, y):
    lines = []
    for i in range(len(y)):
        nz = np.flatnonzero(X[i])
        lines.append(" ".join([str(int(y[i]))] + [f"{j + 1}:{fmt(X[i, j])}" for j in nz]))
    return "\n".join(lines) + "\n"


def write_if_changed(path, text):
    data = text.encode()
    if os.path.exists(path):
        with open(path, "rb") as f:
            if hashlib.sha256(f.read()).digest() == hashlib.sha256(data).digest():
                return False
    d = os.path.dirname(path)
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(path) + ".tmp-", dir=d)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)
    return True


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.dirname(here)
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(repo, "data", "cache", "uci"))
    ap.add_argument("--sets", default="", help="comma-separated subset (default: all)")
    ap.add_argument("--list", action="store_true", help="list the sets and exit")
    args = ap.parse_args()
    if args.list:
        for k, v in SETS.items():
            print(f"{k:14s} {v[0]}::{v[1]}  {v[4]}")
        return 0
    names = [s for s in args.sets.split(",") if s] or list(SETS)
    unknown = [s for s in names if s not in SETS]
    if unknown:
        die(f"unknown set(s) {', '.join(unknown)}; known: {', '.join(SETS)}")
    try:
        os.makedirs(args.out, exist_ok=True)
    except OSError as e:
        die(f"cannot create {args.out}: {e}")
    index_path = os.path.join(args.out, "index.json")
    index = {}
    if os.path.exists(index_path):
        try:
            with open(index_path) as f:
                index = {e["name"]: e for e in json.load(f)["sets"]}
        except (OSError, ValueError, KeyError, TypeError):
            index = {}
    for name in names:
        X, y, classes, info = convert(name, SETS[name])
        tr, te = split(name, y)
        K = len(classes)
        changed = write_if_changed(os.path.join(args.out, f"{name}.train.svm"), libsvm_text(X[tr], y[tr]))
        changed |= write_if_changed(os.path.join(args.out, f"{name}.test.svm"), libsvm_text(X[te], y[te]))
        counts = lambda idx: [int((y[idx] == k + 1).sum()) for k in range(K)]  # noqa: E731
        index[name] = {
            "name": name,
            "task": "binary" if K == 2 else "multiclass",
            "n": int(len(y)), "n_train": int(len(tr)), "n_test": int(len(te)),
            "d": int(X.shape[1]), "K": K,
            "nnz_per_row": round(float((X != 0).sum()) / max(1, len(y)), 2),
            "max_abs_value": float(np.max(np.abs(X))) if X.size else 0.0,
            "classes": {str(k + 1): c for k, c in enumerate(classes)},
            "class_counts": {"all": counts(np.arange(len(y))), "train": counts(tr), "test": counts(te)},
            **info,
        }
        print(f"{name:14s} n={len(y):6d} (train {len(tr)}, test {len(te)}) d={X.shape[1]:4d} K={K:2d} "
              f"{'written' if changed else 'unchanged'}", file=sys.stderr)
    doc = {
        "about": "written by scripts/uci_data.py; stratified 75/25 split, raw unscaled numeric values, factors one-hot",
        "split_seed": SPLIT_SEED,
        "sets": [index[k] for k in SETS if k in index] + [v for k, v in index.items() if k not in SETS],
    }
    write_if_changed(index_path, json.dumps(doc, indent=1) + "\n")
    print(f"{len(names)} set(s) in {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
