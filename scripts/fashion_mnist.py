#!/usr/bin/env python3
"""Convert Fashion-MNIST (Debian package dataset-fashion-mnist) to LIBSVM files.

Pixels are scaled to [0, 1] (value/255); --unit-norm rescales every row to unit
L2 norm instead. --binary K makes a binary task "class K vs rest" with labels
+1 / -1; otherwise labels are the class names (0..9 as in the dataset).
Only the standard library is used, so it runs on any Python 3.
"""
import argparse
import gzip
import math
import os
import random
import struct
import sys

SOURCE = "/usr/share/datasets/fashion-mnist"


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    magic, count = struct.unpack(">II", data[:8])
    if magic == 2049:  # labels
        return list(data[8:8 + count])
    rows, cols = struct.unpack(">II", data[8:16])
    size = rows * cols
    body = data[16:]
    return [body[i * size:(i + 1) * size] for i in range(count)]


def write(path, images, labels, indices, args):
    opener = gzip.open if path.endswith(".gz") else open
    tmp = path + ".tmp"
    with opener(tmp, "wt") as out:
        for i in indices:
            pixels = images[i]
            label = labels[i]
            if args.binary is not None:
                label = "+1" if label == args.binary else "-1"
            if args.unit_norm:
                norm = math.sqrt(sum(p * p for p in pixels)) or 1.0
                scale = 1.0 / norm
            else:
                scale = 1.0 / 255.0
            fmt = "%d:%." + str(args.digits) + "g"
            feats = " ".join(fmt % (j + 1, p * scale) for j, p in enumerate(pixels) if p)
            out.write("%s %s\n" % (label, feats))
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--source", default=SOURCE)
    ap.add_argument("--split", choices=["train", "test"], required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--binary", type=int, default=None, help="class K vs rest")
    ap.add_argument("--unit-norm", action="store_true")
    ap.add_argument("--limit", type=int, default=0, help="random subset of this many rows")
    ap.add_argument("--repeat", type=int, default=1, help="write the rows this many times")
    ap.add_argument("--digits", type=int, default=6, help="significant digits of values")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    prefix = "train" if args.split == "train" else "t10k"
    img = os.path.join(args.source, prefix + "-images-idx3-ubyte.gz")
    lab = os.path.join(args.source, prefix + "-labels-idx1-ubyte.gz")
    if not os.path.exists(img):
        sys.exit("missing %s: install the Debian package dataset-fashion-mnist" % img)
    images, labels = read_idx(img), read_idx(lab)
    indices = list(range(len(labels)))
    if args.limit:
        random.Random(args.seed).shuffle(indices)
        indices = sorted(indices[:args.limit])
    write(args.out, images, labels, indices * args.repeat, args)


if __name__ == "__main__":
    main()
