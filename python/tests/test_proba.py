"""predict_proba: Platt scaling on out-of-fold decision values (probability=True)."""
import gzip
import json
import os

import numpy as np
import pytest

import pegasos

from pegasos import PegasosClassifier, TextVectorizer
from pegasos.platt import platt_fit, platt_loss, platt_predict, smoothed_targets

from conftest import make_binary_data, make_multiclass_data

DATA = os.path.join(os.path.dirname(__file__), "..", "..", "data")


def test_no_probability_no_predict_proba():
    X, y = make_binary_data()
    clf = PegasosClassifier().fit(X, y)
    assert not hasattr(clf, "predict_proba")
    assert not hasattr(clf, "predict_log_proba")
    with pytest.raises(AttributeError, match="probability=True"):
        clf.predict_proba(X)
    assert hasattr(PegasosClassifier(probability=True), "predict_proba")


def test_binary_probabilities():
    X, y = make_binary_data(n=400)
    clf = PegasosClassifier(lam=1e-3, probability=True, random_state=3).fit(X, y)
    proba = clf.predict_proba(X)
    assert proba.shape == (len(y), 2)
    assert np.all((proba >= 0) & (proba <= 1))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(clf.predict_log_proba(X), np.log(proba))
    # monotone (increasing) in the decision value toward classes_[1]
    f = clf.decision_function(X)
    order = np.argsort(f)
    assert np.all(np.diff(proba[order, 1]) >= 0)
    assert clf.platt_[0][0] < 0  # P = 1 / (1 + exp(A f + B)) with A < 0
    # the final model is the plain fit's; the calibration does not change it
    plain = PegasosClassifier(lam=1e-3, random_state=3).fit(X, y)
    np.testing.assert_array_equal(plain.decision_function(X), f)
    # the folds are fixed by random_state
    again = PegasosClassifier(lam=1e-3, probability=True, random_state=3).fit(X, y)
    assert again.platt_ == clf.platt_


def test_multiclass_probabilities():
    X, y = make_multiclass_data(n=300)
    clf = PegasosClassifier(lam=1e-3, probability=True).fit(X, y)
    proba = clf.predict_proba(X)
    assert proba.shape == (len(y), 3)
    assert np.all((proba >= 0) & (proba <= 1))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-12)
    assert len(clf.platt_) == 3
    # each column is its class's one-vs-rest sigmoid, normalised
    scores = clf.decision_function(X)
    raw = np.column_stack([platt_predict(A, B, scores[:, c]) for c, (A, B) in enumerate(clf.platt_)])
    np.testing.assert_allclose(proba, raw / raw.sum(axis=1, keepdims=True))
    assert np.mean(clf.classes_[proba.argmax(axis=1)] == y) > 0.9


def test_probability_needs_two_per_class():
    X, y = make_binary_data(n=50)
    y[:] = -1
    y[0] = 1
    with pytest.raises(ValueError, match="at least 2 per class"):
        PegasosClassifier(probability=True).fit(X, y)


def test_partial_fit_drops_calibration():
    X, y = make_binary_data()
    clf = PegasosClassifier(probability=True).fit(X, y)
    clf.predict_proba(X)
    clf.partial_fit(X, y)
    with pytest.raises(AttributeError, match="no calibration"):
        clf.predict_proba(X)


def test_platt_fit_matches_brute_force():
    """The Newton fit reaches the minimum of the same smoothed log-loss that a derivative-free
    minimiser (scipy's Nelder-Mead, tight tolerances) finds, to 1e-6."""
    optimize = pytest.importorskip("scipy.optimize")
    rng = np.random.default_rng(7)
    for n, shift, scale in ((60, 0.3, 1.0), (200, -0.5, 3.0), (25, 0.1, 0.5)):
        f = rng.normal(size=n) * scale
        positive = f + rng.normal(scale=scale, size=n) > shift
        assert 3 <= positive.sum() <= n - 3
        t = smoothed_targets(positive)
        A, B = platt_fit(f, positive)
        best = optimize.minimize(lambda ab: platt_loss(ab[0], ab[1], f, t), x0=[0.0, 0.0], method="Nelder-Mead",
                                 options={"xatol": 1e-11, "fatol": 1e-15, "maxiter": 50000, "maxfev": 100000})
        np.testing.assert_allclose([A, B], best.x, atol=1e-6)
        assert platt_loss(A, B, f, t) <= best.fun + 1e-12


def test_platt_weights_count_as_repeats():
    """An integer weight k fits the sigmoid as the example repeated k times; equal weights are
    no weights (the engine's core/calibration.cpp, tested in tests/test_fit.cpp, does the same)."""
    rng = np.random.default_rng(3)
    f = rng.normal(size=150)
    positive = f + rng.normal(size=150) > 0.2
    w = rng.integers(1, 5, size=150).astype(np.float64)
    A, B = platt_fit(f, positive, weight=w)
    rA, rB = platt_fit(np.repeat(f, w.astype(int)), np.repeat(positive, w.astype(int)))
    np.testing.assert_allclose([A, B], [rA, rB], rtol=1e-9)
    assert abs(A - platt_fit(f, positive)[0]) > 1e-3
    assert platt_fit(f, positive, weight=np.ones(150)) == platt_fit(f, positive)
    with pytest.raises(ValueError, match="weights"):
        platt_fit(f, positive, weight=np.ones(3))


def test_probability_uses_sample_weight():
    """probability=True with sample_weight: the calibration weighs the rows as the fit does.
    Weights scaled by one number change nothing; weights that favour the positives move the
    sigmoid toward them (the mean probability of class 1 rises)."""
    X, y = make_binary_data(n=400, seed=5)
    base = dict(lam=1e-2, probability=True, random_state=0)
    plain = PegasosClassifier(**base).fit(X, y)
    twice = PegasosClassifier(**base).fit(X, y, sample_weight=np.full(len(y), 2.0))
    assert twice.platt_ == plain.platt_
    w = np.where(y == 1, 4.0, 1.0)
    heavy = PegasosClassifier(**base).fit(X, y, sample_weight=w)
    assert heavy.platt_ != plain.platt_
    assert heavy.predict_proba(X)[:, 1].mean() > plain.predict_proba(X)[:, 1].mean()


def test_platt_separable_stays_finite():
    """Separable values (the smoothed targets keep the optimum finite)."""
    f = np.array([-3.0, -2.0, -1.0, 1.0, 2.0, 3.0])
    A, B = platt_fit(f, f > 0)
    assert np.isfinite(A) and np.isfinite(B) and A < 0
    p = platt_predict(A, B, f)
    assert np.all((p > 0) & (p < 1))


def _spam(name):
    with gzip.open(os.path.join(DATA, "spam_sample_%s.jsonl.gz" % name), "rt", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    return [r["text"] for r in rows], np.array([r["label"] for r in rows])


def test_brier_better_than_raw_sigmoid_on_spam():
    """Held-out Brier score of the calibrated probabilities vs 1 / (1 + exp(-f)) of the raw score."""
    texts, y = _spam("train")
    test_texts, y_test = _spam("test")
    vec = TextVectorizer()
    X, X_test = vec.fit_transform(texts), vec.transform(test_texts)
    clf = PegasosClassifier(lam=1e-4, probability=True).fit(X, y)
    positive = y_test == clf.classes_[1]
    p = clf.predict_proba(X_test)[:, 1]
    raw = 1.0 / (1.0 + np.exp(-clf.decision_function(X_test)))
    brier, brier_raw = np.mean((p - positive) ** 2), np.mean((raw - positive) ** 2)
    print("spam Brier: calibrated %.4f, raw sigmoid %.4f" % (brier, brier_raw))
    assert brier < brier_raw


def test_lam_auto_picks_from_the_engine_grid_and_matches_the_cli(binary, tmp_path):
    from conftest import make_binary_data, write_libsvm
    import json
    import subprocess
    X, y = make_binary_data()
    clf = pegasos.PegasosClassifier(lam="auto", random_state=3).fit(X, y)
    n = X.shape[0]
    # C = 0.01 .. 1000, three values a decade; extended to C = 1e-4 where the best is C = 0.01.
    grid = [float("%.6g" % (1.0 / (0.01 * 10 ** (i / 3) * n))) for i in range(-6, 16)]
    assert clf.lam_ in grid
    assert clf.training_["selection"]["value"] == clf.lam_
    write_libsvm(tmp_path / "d.svm", X, y)
    args = [binary, "train"]
    for override in clf._overrides(2):
        args += ["--set", override]
    subprocess.run(args + [str(tmp_path / "d.svm"), str(tmp_path / "cli.json")], check=True, capture_output=True)
    with open(tmp_path / "cli.json") as f:
        assert json.load(f)["settings"]["lambda"] == clf.lam_
    with pytest.raises(ValueError, match="lam"):
        pegasos.PegasosClassifier(lam="best").fit(X, y)


def test_a_cli_calibrated_model_gives_the_cli_probabilities_and_threshold(binary, tmp_path):
    from conftest import make_binary_data, write_libsvm
    import subprocess
    X, y = make_binary_data()
    write_libsvm(tmp_path / "d.svm", X, y)
    model = tmp_path / "m.json"
    subprocess.run([binary, "train", str(tmp_path / "d.svm"), str(model), "--calibrate", "--max-fpr", "0.05"],
                   check=True, capture_output=True)
    out = subprocess.run([binary, "predict", "--proba", str(model), str(tmp_path / "d.svm")], check=True,
                         capture_output=True, text=True).stdout
    rows = [line.split("\t") for line in out.splitlines()]
    loaded = pegasos.load(model)
    p = loaded.predict_proba(X)[:, 1]
    np.testing.assert_allclose(p, [float(r[1]) for r in rows], rtol=1e-8, atol=1e-12)
    assert [str(c) for c in loaded.predict(X)] == [r[0] for r in rows]


def test_partial_fit_drops_a_loaded_threshold_as_fit_does(binary, tmp_path):
    # The stored --max-fpr threshold belonged to the file's model: after partial_fit, Python's
    # predict must agree with the CLI on the saved model (which has no threshold).
    from conftest import make_binary_data, write_libsvm
    import subprocess
    X, y = make_binary_data()
    write_libsvm(tmp_path / "d.svm", X, y)
    model = tmp_path / "m.json"
    subprocess.run([binary, "train", str(tmp_path / "d.svm"), str(model), "--max-fpr", "0.05"], check=True,
                   capture_output=True)
    loaded = pegasos.load(model)
    assert hasattr(loaded, "_threshold")
    loaded.partial_fit(X, y)  # the file's labels -1, 1 load as numbers
    assert not hasattr(loaded, "_threshold")
    loaded.save(tmp_path / "after.json")
    out = subprocess.run([binary, "predict", str(tmp_path / "after.json"), str(tmp_path / "d.svm")], check=True,
                         capture_output=True, text=True).stdout
    assert [str(c) for c in loaded.predict(X)] == [line.split("\t")[0] for line in out.splitlines()]


def test_saving_a_python_calibrated_model_warns_that_the_calibration_is_left_out(tmp_path):
    from conftest import make_binary_data
    X, y = make_binary_data()
    clf = pegasos.PegasosClassifier(probability=True).fit(X, y)
    with pytest.warns(UserWarning, match="without its probability=True calibration"):
        clf.save(tmp_path / "p.json")
