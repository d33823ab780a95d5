#!/usr/bin/python3
"""Data for bench/speed.py (issue 17): a9a x 24 and an RCV1-shaped sparse file.

    /usr/bin/python3 bench/speed_data.py --a9a PATH [--out DIR] [--seed S]

writes, in DIR (default /tmp/pegasos-speed; files that exist are kept):
- a9a_x24.svm: the rows of a9a (the LIBSVM collection's "adult" set, 32561 rows,
  123 binary features) repeated 24 times and shuffled (about 46 MB).
- rcv1_like.svm: about 780k rows, 47k features, about 70 non-zeros a row with
  Zipf-like feature frequencies, tf-idf-like unit-norm values written with five
  decimals, labels from a planted linear separator with 5% of them flipped
  (about 757 MB). Deterministic given --seed.
- a9a_300k.csv (with --csv): a9a_x24's first 300k rows as dense CSV, for
  `build/parse_speed a9a_300k.csv csv`.

a9a is not shipped with the project: download it from the LIBSVM data page
(binary/a9a), or take it from a public GitHub repository, e.g.
    git clone --depth 1 https://github.com/SofianeTanji/snacks /tmp/snacks
    head -n 32561 /tmp/snacks/a9a > /tmp/a9a   # that file is a9a (32561 rows) then a9a.t
    /usr/bin/python3 bench/speed_data.py --a9a /tmp/a9a
(the copy in HeJingweiFoward/SVM has lost its colons: "3 1" for "3:1"; unusable).
Never commit the data.
"""
import argparse
import os
import sys

import numpy as np

ROWS, DIM, MEAN_NNZ = 780_000, 47_236, 70
ZIPF_EXPONENT = 1.1    # feature frequency ~ rank^-s, as word frequencies
LABEL_NOISE = 0.05     # fraction of labels flipped after the planted separator
BLOCK_ROWS = 20_000    # rows generated (and written) at a time


def a9a_x24(src, dst, seed, copies=24):
    with open(src, "rb") as f:
        lines = [l.rstrip(b"\r\n") for l in f if l.strip()]
    if b":" not in lines[0]:
        sys.exit("%s: no INDEX:VALUE pairs on its first line; not a LIBSVM file" % src)
    if len(lines) != 32561:
        print("warning: %s has %d rows, a9a has 32561" % (src, len(lines)), file=sys.stderr)
    order = np.random.default_rng(seed).permutation(len(lines) * copies) % len(lines)
    with open(dst + ".tmp", "wb") as f:
        f.write(b"\n".join(lines[i] for i in order) + b"\n")
    os.replace(dst + ".tmp", dst)


def a9a_csv(src, dst, rows=300_000):
    """The first `rows` rows of a9a_x24.svm as dense CSV (header f0..f122,label; 75 MB)."""
    from sklearn.datasets import load_svmlight_file
    X, y = load_svmlight_file(src, n_features=123)
    table = np.column_stack([X[:rows].toarray().astype(np.int8), y[:rows].astype(int)])
    header = ",".join(["f%d" % i for i in range(123)] + ["label"])
    np.savetxt(dst + ".tmp", table, fmt="%d", delimiter=",", header=header, comments="")
    os.replace(dst + ".tmp", dst)


def digits_into(buf, starts, numbers, widths):
    """Write numbers (non-negative ints) right-aligned in `widths` digits at buf[starts]."""
    n = numbers.copy()
    for k in range(int(widths.max()) - 1, -1, -1):
        live = widths > k
        buf[starts[live] + k] = (n[live] % 10 + 48).astype(np.uint8)
        n[live] //= 10


def draws_for_mean_nnz(p):
    """Draws with replacement whose expected number of distinct features is MEAN_NNZ."""
    lo, hi = float(MEAN_NNZ), 20.0 * MEAN_NNZ
    for _ in range(60):
        m = (lo + hi) / 2
        lo, hi = (m, hi) if np.sum(-np.expm1(m * np.log1p(-p))) < MEAN_NNZ else (lo, m)
    return lo


def block_text(rng, w_star, feature_p, idf, rows, draws):
    """One block of rows as LIBSVM bytes."""
    nnz = np.clip(rng.poisson(draws, rows), 5, None)  # repeated features are merged below
    row_of = np.repeat(np.arange(rows), nnz)
    feat = np.searchsorted(feature_p, rng.random(row_of.size))
    key = np.unique(row_of.astype(np.int64) * DIM + feat)
    row_of, feat = key // DIM, key % DIM
    counts = np.bincount(row_of, minlength=rows)
    tf = rng.geometric(0.6, feat.size)
    v = (1.0 + np.log(tf)) * idf[feat]
    starts = np.concatenate(([0], np.cumsum(counts)))
    norm = np.sqrt(np.add.reduceat(v * v, starts[:-1]))
    v /= norm[row_of]
    micro = np.clip(np.rint(v * 1e5), 1, 99_999).astype(np.int64)  # "0.ddddd"
    score = np.add.reduceat(micro * 1e-5 * w_star[feat], starts[:-1])
    y = np.where(score > np.median(score), 1, -1)
    y[rng.random(rows) < LABEL_NOISE] *= -1
    # Layout: "+1" or "-1", then " IDX:0.dddddd" per non-zero, then "\n".
    idx = feat + 1
    idx_w = np.floor(np.log10(idx)).astype(np.int64) + 1
    pair_len = 1 + idx_w + 1 + 7
    row_len = 2 + np.add.reduceat(pair_len, starts[:-1]) + 1
    row_start = np.concatenate(([0], np.cumsum(row_len)))
    buf = np.full(int(row_start[-1]), ord(" "), dtype=np.uint8)
    buf[row_start[:-1]] = np.where(y > 0, ord("+"), ord("-"))
    buf[row_start[:-1] + 1] = ord("1")
    buf[row_start[1:] - 1] = ord("\n")
    cum = np.concatenate(([0], np.cumsum(pair_len)))  # exclusive prefix sums
    within = cum[:-1] - cum[starts[:-1]][row_of]       # offset of a pair in its row
    pos = row_start[row_of] + 2 + within + 1  # first index digit
    digits_into(buf, pos, idx, idx_w)
    buf[pos + idx_w] = ord(":")
    buf[pos + idx_w + 1] = ord("0")
    buf[pos + idx_w + 2] = ord(".")
    digits_into(buf, pos + idx_w + 3, micro, np.full(micro.size, 5))
    return buf.tobytes()


def rcv1_like(dst, seed):
    rng = np.random.default_rng(seed)
    ranks = rng.permutation(DIM) + 1           # feature j's popularity rank
    weight = ranks.astype(np.float64) ** -ZIPF_EXPONENT
    feature_p = np.cumsum(weight / weight.sum())
    feature_p[-1] = 1.0
    idf = np.log(1.0 / np.minimum(1.0, weight / weight.sum() * MEAN_NNZ)) + 1.0
    w_star = rng.standard_normal(DIM)
    draws = draws_for_mean_nnz(np.diff(feature_p, prepend=0.0))
    with open(dst + ".tmp", "wb") as f:
        for b in range(0, ROWS, BLOCK_ROWS):
            f.write(block_text(np.random.default_rng([seed, b]), w_star, feature_p, idf,
                               min(BLOCK_ROWS, ROWS - b), draws))
    os.replace(dst + ".tmp", dst)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--a9a", help="path of the a9a file (see above for where to get it)")
    ap.add_argument("--out", default="/tmp/pegasos-speed")
    ap.add_argument("--seed", type=int, default=17)
    ap.add_argument("--csv", action="store_true", help="also a9a_300k.csv (CSV reader timing)")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    x24 = os.path.join(a.out, "a9a_x24.svm")
    if not os.path.exists(x24):
        if not a.a9a:
            sys.exit("give --a9a PATH (see --help for where to get a9a)")
        a9a_x24(a.a9a, x24, a.seed)
    rcv = os.path.join(a.out, "rcv1_like.svm")
    if not os.path.exists(rcv):
        rcv1_like(rcv, a.seed)
    csv = os.path.join(a.out, "a9a_300k.csv")
    if a.csv and not os.path.exists(csv):
        a9a_csv(x24, csv)
    for p in (x24, rcv) + ((csv,) if a.csv else ()):
        print("%s: %.1f MB" % (p, os.path.getsize(p) / 1e6))


if __name__ == "__main__":
    main()
