"""The Python package and `pegasos train / predict` are the same engine on the same
model files: same data + settings + seed give the same model file, and a model
written by either side gives identical decision values on the other."""
import subprocess

import numpy as np
import pytest

import pegasos
from conftest import make_binary_data, make_multiclass_data, write_libsvm

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")

CASES = [
    ("binary", dict(random_state=3)),
    ("binary", dict(objective="weighted_hinge", class_weight="balanced", lam=1e-3)),
    ("binary", dict(solver="pegasos", epochs=5, batch_size=4, random_state=7)),
    ("multiclass", dict(objective="ova", lam=1e-3)),
    ("multiclass", dict(objective="multiclass_hinge", lam=1e-3, random_state=1)),
    # kernel_approximation: the map is fitted on the same rows and stored in the file
    ("binary", dict(settings={"kernel_approximation": {"type": "nystroem", "components": 40}})),
    ("multiclass", dict(objective="ova", lam=1e-3, settings={"kernel_approximation": {"type": "rff", "components": 64}})),
]


def data_of(kind):
    return make_binary_data() if kind == "binary" else make_multiclass_data()


def cli_train(binary, clf, n_classes, data_path, model_path):
    args = [binary, "train"]
    for override in clf._overrides(n_classes):
        args += ["--set", override]
    subprocess.run(args + [str(data_path), str(model_path)], check=True, capture_output=True)


def cli_predict(binary, model_path, data_path):
    out = subprocess.run([binary, "predict", str(model_path), str(data_path)], check=True, capture_output=True,
                         text=True).stdout
    return [line.split("\t") for line in out.splitlines()]


def formatted(labels, scores):
    """What `pegasos predict` prints: label, then each score as %.9g."""
    scores = scores.reshape(len(labels), -1)
    return [[str(label)] + ["%.9g" % s for s in row] for label, row in zip(labels, scores)]


@pytest.mark.parametrize("kind,params", CASES)
def test_same_model_file_as_cli_train(binary, tmp_path, kind, params):
    X, y = data_of(kind)
    write_libsvm(tmp_path / "d.svm", X, y)
    clf = pegasos.PegasosClassifier(**params).fit(X, y)
    clf.save(tmp_path / "py.json")
    cli_train(binary, clf, len(np.unique(y)), tmp_path / "d.svm", tmp_path / "cli.json")
    assert (tmp_path / "py.json").read_bytes() == (tmp_path / "cli.json").read_bytes()


def engine_order_scores(clf, X):
    """decision_function in the model file's class order (what `pegasos predict` prints)."""
    dec = clf.decision_function(X)
    engine_classes = list(clf._model.classes)
    names = [str(c) for c in clf.classes_]
    if dec.ndim == 1:
        return dec if names.index(engine_classes[1]) == 1 else -dec
    return dec[:, [names.index(c) for c in engine_classes]]


@pytest.mark.parametrize("kind,params", CASES)
def test_python_model_predicts_with_cli(binary, tmp_path, kind, params):
    X, y = data_of(kind)
    write_libsvm(tmp_path / "d.svm", X, y)
    clf = pegasos.PegasosClassifier(**params).fit(X, y)
    clf.save(tmp_path / "py.json")
    expected = formatted(clf.predict(X), engine_order_scores(clf, X))
    assert cli_predict(binary, tmp_path / "py.json", tmp_path / "d.svm") == expected


@pytest.mark.parametrize("kind,params", CASES)
def test_cli_model_predicts_in_python(binary, tmp_path, kind, params):
    X, y = data_of(kind)
    write_libsvm(tmp_path / "d.svm", X, y)
    clf = pegasos.PegasosClassifier(**params)
    cli_train(binary, clf, len(np.unique(y)), tmp_path / "d.svm", tmp_path / "cli.json")
    loaded = pegasos.load(tmp_path / "cli.json")
    assert [str(c) for c in loaded.classes_] == sorted({str(c) for c in y}, key=lambda c: (float(c) if kind == "binary" else c))
    if kind == "binary":  # numeric labels load as numbers
        assert loaded.classes_.dtype == np.int64
        assert loaded.score(X, y.astype(np.float64)) == pytest.approx(np.mean(loaded.predict(X) == y))
    expected = cli_predict(binary, tmp_path / "cli.json", tmp_path / "d.svm")
    assert formatted(loaded.predict(X), engine_order_scores(loaded, X)) == expected
    # and the same decision values as the estimator trained in Python
    np.testing.assert_array_equal(loaded.decision_function(X), clf.fit(X, y).decision_function(X))


def test_transfer_from_a_source_model_file_as_cli(binary, tmp_path):
    X, y = make_binary_data(seed=0)
    X2, y2 = make_binary_data(n=120, seed=5)
    write_libsvm(tmp_path / "source.svm", X, y)
    write_libsvm(tmp_path / "target.svm", X2, y2)
    subprocess.run([binary, "train", str(tmp_path / "source.svm"), str(tmp_path / "source.json")], check=True,
                   capture_output=True)
    clf = pegasos.PegasosClassifier(source=str(tmp_path / "source.json"), lam=1e-2).fit(X2, y2)
    assert clf.training_["converged"]
    clf.save(tmp_path / "py.json")
    args = [binary, "train"]
    for override in clf._overrides(2) + ['source_model="%s"' % (tmp_path / "source.json")]:
        args += ["--set", override]
    subprocess.run(args + [str(tmp_path / "target.svm"), str(tmp_path / "cli.json")], check=True, capture_output=True)
    assert (tmp_path / "py.json").read_bytes() == (tmp_path / "cli.json").read_bytes()


@pytest.mark.parametrize("kind,params", CASES)
def test_sample_weights_same_model_file_as_cli_weights(binary, tmp_path, kind, params):
    X, y = data_of(kind)
    w = (np.arange(len(y)) % 5) * 0.5  # 0, 0.5, ..., 2: zero rows too
    write_libsvm(tmp_path / "d.svm", X, y)
    (tmp_path / "w.txt").write_text("".join("%r\n" % v for v in w))
    clf = pegasos.PegasosClassifier(**params).fit(X, y, sample_weight=w)
    clf.save(tmp_path / "py.json")
    args = [binary, "train", "--weights", str(tmp_path / "w.txt")]
    for override in clf._overrides(len(np.unique(y))):
        args += ["--set", override]
    subprocess.run(args + [str(tmp_path / "d.svm"), str(tmp_path / "cli.json")], check=True, capture_output=True)
    assert (tmp_path / "py.json").read_bytes() == (tmp_path / "cli.json").read_bytes()
