"""Shared fixtures: the `pegasos` binary (PEGASOS_BINARY, set by ctest) and small data sets."""
import os
import shutil

import numpy as np
import pytest


@pytest.fixture(scope="session")
def binary():
    path = os.environ.get("PEGASOS_BINARY") or shutil.which("pegasos")
    if not path or not os.path.exists(path):
        pytest.skip("no pegasos binary (set PEGASOS_BINARY)")
    return path


def make_binary_data(n=300, d=8, seed=0):
    """float32 rows (every column non-zero somewhere) and -1/+1 labels."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)).astype(np.float32)
    X[rng.random(size=X.shape) < 0.3] = 0.0  # some sparsity
    y = np.where(X[:, 0] + 0.5 * X[:, 1] + 0.3 * rng.normal(size=n) > 0, 1, -1)
    return X, y


def make_multiclass_data(n=300, d=6, seed=1):
    rng = np.random.default_rng(seed)
    centers = rng.normal(scale=3.0, size=(3, d))
    y = rng.integers(0, 3, size=n)
    X = (centers[y] + rng.normal(size=(n, d))).astype(np.float32)
    return X, np.array(["cat", "dog", "emu"])[y]


def write_libsvm(path, X, y):
    """LIBSVM text whose values read back to exactly X's float32 values."""
    with open(path, "w") as f:
        for row, label in zip(np.asarray(X, dtype=np.float32), y):
            pairs = " ".join("%d:%r" % (j + 1, float(v)) for j, v in enumerate(row) if v != 0)
            f.write("%s %s\n" % (label, pairs))
