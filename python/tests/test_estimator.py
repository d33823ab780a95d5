"""PegasosClassifier as a scikit-learn estimator: inputs, determinism, model
selection, pickling, labels, sample weights and errors."""
import json
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV

import pegasos
from conftest import make_binary_data, make_multiclass_data

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


def model_text(clf):
    return clf._model.to_json()


@pytest.mark.parametrize("objective", ["hinge", "multiclass_hinge"])
def test_sparse_and_dense_give_the_same_model(objective):
    X, y = make_binary_data() if objective == "hinge" else make_multiclass_data()
    reference = model_text(pegasos.PegasosClassifier(objective=objective).fit(X, y))
    variants = [X.astype(np.float64), np.asfortranarray(X), sp.csr_matrix(X), sp.csc_matrix(X),
                sp.csr_matrix(X.astype(np.float64)), sp.coo_matrix(X)]
    csr64 = sp.csr_matrix(X)
    csr64.indices = csr64.indices.astype(np.int64)
    csr64.indptr = csr64.indptr.astype(np.int64)
    variants.append(csr64)
    unsorted = sp.csr_matrix(X)[:, ::-1][:, ::-1]  # valid CSR whose indices may be unsorted
    variants.append(unsorted)
    for variant in variants:
        assert model_text(pegasos.PegasosClassifier(objective=objective).fit(variant, y)) == reference


def test_float32_int32_csr_is_borrowed_not_copied():
    """CSR float32 values with int32 indices are trained on in place (no second
    full-size buffer); every other layout is copied once; the caller's arrays are
    never written, and stay alive as long as the engine's rows point into them."""
    X, y = make_binary_data()
    A = sp.csr_matrix(X)
    assert A.data.dtype == np.float32 and A.indices.dtype == np.int32

    def rows(M):
        return pegasos._pegasos.dataset_from_csr(M.indptr.astype(np.int64), M.indices, M.data, M.shape[1])

    assert rows(A).borrowed
    assert not rows(sp.csr_matrix(X.astype(np.float64))).borrowed
    wide = sp.csr_matrix(X)
    wide.indices = wide.indices.astype(np.int64)
    assert not rows(wide).borrowed
    zeros = sp.csr_matrix(X)
    zeros.data[::5] = 0.0
    assert not rows(zeros).borrowed
    # Normalising rows changes them: the engine copies first, the caller's data stay as they were.
    before = A.data.copy()
    normalized = pegasos.PegasosClassifier(settings={"normalize": "l2"}).fit(A, y)
    np.testing.assert_array_equal(A.data, before)
    assert model_text(normalized) == model_text(pegasos.PegasosClassifier(settings={"normalize": "l2"}).fit(X, y))
    # The borrowed arrays outlive every Python reference but the Dataset's own.
    clf = pegasos.PegasosClassifier().fit(X, y)
    B = sp.csr_matrix(X)
    ds = pegasos._pegasos.dataset_from_csr(B.indptr.astype(np.int64), B.indices.copy(), B.data.copy(), B.shape[1])
    assert ds.borrowed
    del B
    import gc
    gc.collect()
    _ = [np.ones(len(before)) for _ in range(50)]  # reuse freed memory, were it freed
    np.testing.assert_array_equal(clf._model.scores(ds, 0)[:, 0], clf.decision_function(X))


def test_explicit_zeros_are_dropped():
    X, y = make_binary_data()
    A = sp.csr_matrix(X)
    A.data[::7] = 0.0  # explicit zeros stored in the matrix
    assert model_text(pegasos.PegasosClassifier().fit(A, y)) == \
        model_text(pegasos.PegasosClassifier().fit(A.toarray(), y))


@pytest.mark.parametrize("params", [dict(), dict(objective="ova"), dict(solver="pegasos", epochs=3),
                                    dict(objective="multiclass_hinge")])
def test_results_do_not_depend_on_n_jobs(params):
    X, y = make_multiclass_data(n=600)
    models = {n_jobs: model_text(pegasos.PegasosClassifier(n_jobs=n_jobs, **params).fit(X, y))
              for n_jobs in (None, 1, 2, -1)}
    assert len(set(models.values())) == 1
    clf = pegasos.PegasosClassifier(n_jobs=1, **params).fit(X, y)
    dec = clf.decision_function(X)
    clf.set_params(n_jobs=-1)
    np.testing.assert_array_equal(clf.decision_function(X), dec)


def test_grid_search_over_lam():
    X, y = make_binary_data(n=400)
    search = GridSearchCV(pegasos.PegasosClassifier(), {"lam": [1e-4, 1e-2, 1.0]}, cv=3).fit(X, y)
    assert search.best_params_["lam"] in (1e-4, 1e-2, 1.0)
    assert search.best_score_ > 0.8
    assert len(search.cv_results_["mean_test_score"]) == 3


def test_pickle_round_trip():
    X, y = make_multiclass_data()
    clf = pegasos.PegasosClassifier(objective="multiclass_hinge").fit(X, y)
    copy = pickle.loads(pickle.dumps(clf))
    assert copy.get_params() == clf.get_params()
    np.testing.assert_array_equal(copy.decision_function(X), clf.decision_function(X))
    np.testing.assert_array_equal(copy.predict(X), clf.predict(X))
    np.testing.assert_array_equal(copy.coef_, clf.coef_)
    assert model_text(copy) == model_text(clf)
    unfitted = pickle.loads(pickle.dumps(pegasos.PegasosClassifier(lam=0.5)))
    assert unfitted.lam == 0.5


def test_save_and_load(tmp_path):
    X, y = make_binary_data()
    clf = pegasos.PegasosClassifier().fit(X, y)
    clf.save(tmp_path / "m.json")
    loaded = pegasos.load(tmp_path / "m.json")
    assert list(loaded.classes_) == [-1, 1] and loaded.classes_.dtype == np.int64
    np.testing.assert_array_equal(loaded.decision_function(X), clf.decision_function(X))
    # numbers, so scoring against float labels (as load_svmlight_file reads them) works
    assert loaded.score(X, y.astype(np.float64)) == clf.score(X, y) > 0.5


def test_a_loaded_model_keeps_its_training_settings_so_a_clone_refits_alike(tmp_path):
    """pegasos.load gave PegasosClassifier(lam, objective) only: a clone's refit took the
    default solver, seed and tolerance."""
    from sklearn.base import clone
    X, y = make_multiclass_data(n=300)
    fitted = pegasos.PegasosClassifier(lam=0.01, solver="pegasos", random_state=3, tol=1e-2,
                                       class_weight="balanced", epochs=7).fit(X, y)
    fitted.save(tmp_path / "m.json")
    loaded = pegasos.load(tmp_path / "m.json")
    params = loaded.get_params()
    assert (params["solver"], params["random_state"], params["tol"], params["class_weight"], params["epochs"]) == \
        ("pegasos", 3, 1e-2, "balanced", 7)
    np.testing.assert_array_equal(clone(loaded).fit(X, y).decision_function(X), fitted.decision_function(X))
    plain = pegasos.PegasosClassifier(lam=0.01).fit(X, y)
    plain.save(tmp_path / "p.json")
    params = pegasos.load(tmp_path / "p.json").get_params()
    assert (params["solver"], params["random_state"], params["tol"], params["epochs"]) == ("auto", None, 1e-3, None)


@pytest.mark.parametrize("labels,dtype", [
    (np.array(["0.5", "2.25"]), np.float64), (np.array(["ham", "spam"]), np.str_), (np.array([3, 10]), np.int64),
    (np.array(["1.5", "abc"]), np.str_), (np.array([False, True]), np.bool_)])
def test_loaded_classes_are_numbers_where_every_label_is_one(tmp_path, labels, dtype):
    X, y = make_binary_data()
    target = labels[(y > 0).astype(int)]
    clf = pegasos.PegasosClassifier().fit(X, target)
    clf.save(tmp_path / "m.json")
    loaded = pegasos.load(tmp_path / "m.json")
    assert loaded.classes_.dtype.type == dtype
    assert [str(c) for c in loaded.classes_] == [str(c) for c in clf.classes_]
    assert [str(c) for c in loaded.predict(X)] == [str(c) for c in clf.predict(X)]
    assert np.mean(loaded.predict(X) == target.astype(dtype)) == clf.score(X, target)


@pytest.mark.parametrize("labels", [
    np.array([False, True]), np.array([1.0, 2.0]), np.array(["ham", "spam"]), np.array(["10", "9"]),
    np.array([3, -7]), np.array(["no", "yes"], dtype=object),
])
def test_labels_of_any_type(labels):
    X, y01 = make_binary_data()
    y = labels[(y01 > 0).astype(int)]
    clf = pegasos.PegasosClassifier().fit(X, y)
    np.testing.assert_array_equal(clf.classes_, np.unique(y))
    dec = clf.decision_function(X)
    np.testing.assert_array_equal(clf.predict(X), clf.classes_[(dec > 0).astype(int)])
    assert clf.score(X, y) > 0.8
    np.testing.assert_allclose(X.astype(np.float64) @ clf.coef_.ravel() + clf.intercept_[0], dec, rtol=1e-5,
                               atol=1e-6)


def test_multiclass_coef_and_columns_follow_classes():
    X, y = make_multiclass_data()
    y = np.where(y == "cat", "10", np.where(y == "dog", "9", "100"))  # engine order 9 < 10 < 100, numpy's '10' < '100' < '9'
    clf = pegasos.PegasosClassifier(objective="multiclass_hinge").fit(X, y)
    assert list(clf.classes_) == ["10", "100", "9"]
    dec = clf.decision_function(X)
    np.testing.assert_allclose(X.astype(np.float64) @ clf.coef_.T + clf.intercept_, dec, rtol=1e-5, atol=1e-6)
    assert clf.score(X, y) > 0.9


def test_sample_weight():
    X, y = make_binary_data()
    plain = pegasos.PegasosClassifier(lam=1e-3).fit(X, y)
    ones = pegasos.PegasosClassifier(lam=1e-3).fit(X, y, sample_weight=np.ones(len(y)))
    assert model_text(ones) == model_text(plain)
    # weights are relative: all equal is no weights
    doubled = pegasos.PegasosClassifier(lam=1e-3).fit(X, y, sample_weight=np.full(len(y), 2.0))
    assert model_text(doubled) == model_text(plain)
    keep = np.arange(len(y)) % 3 != 0
    dropped = pegasos.PegasosClassifier(lam=1e-3).fit(X, y, sample_weight=keep.astype(float))
    assert model_text(dropped) == model_text(pegasos.PegasosClassifier(lam=1e-3).fit(X[keep], y[keep]))
    w = np.arange(len(y), dtype=float) % 4
    before = w.copy()
    weighted = pegasos.PegasosClassifier(lam=1e-3).fit(X, y, sample_weight=w)
    np.testing.assert_array_equal(w, before)  # never written
    assert weighted.training_["converged"]
    assert weighted.training_["sample_weights"].startswith("scaled to mean 1")
    for bad, message in ((-w, "negative"), (np.zeros(len(y)), "every weight is 0"),
                         (np.where(y == 1, 0.0, 1.0), "no example of non-zero weight")):
        with pytest.raises(ValueError, match=message):
            pegasos.PegasosClassifier().fit(X, y, sample_weight=bad)


def weighted_objective(clf, X, y, w, lam):
    """lam/2 (|w|^2 + b^2) + (1/sum w) sum_i w_i hinge_i, written out (binary, bias feature)."""
    score = clf.decision_function(X)
    sign = np.where(y == clf.classes_[1], 1.0, -1.0)
    loss = np.maximum(0.0, 1.0 - sign * score)
    return lam / 2 * (np.sum(clf.coef_ ** 2) + np.sum(clf.intercept_ ** 2)) + np.sum(w * loss) / np.sum(w)


@pytest.mark.parametrize("params", [dict(), dict(solver="pegasos", tol=1e-3),
                                    dict(objective="weighted_hinge", class_weight="balanced")])
def test_integer_weights_are_repeated_rows(params):
    X, y = make_binary_data(n=200)
    w = (np.arange(len(y)) * 7 + np.arange(len(y)) // 5) % 4
    tol = params.get("tol", 1e-6)
    base = dict(lam=1e-2, tol=tol, max_epochs=3000, **{k: v for k, v in params.items() if k != "tol"})
    a = pegasos.PegasosClassifier(**base).fit(X, y, sample_weight=w.astype(float))
    b = pegasos.PegasosClassifier(**base).fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    assert a.training_["converged"] and b.training_["converged"]
    pa, pb = a.training_["objective"], b.training_["objective"]
    assert abs(pa - pb) <= 2 * tol * pb
    if not params:  # the plain hinge objective, written out with the weights, is the certified one
        assert weighted_objective(a, X, y, w, 1e-2) == pytest.approx(pa, rel=1e-6)


@pytest.mark.parametrize("params,message", [
    (dict(lam=-1.0), "lambda: must be > 0"),
    (dict(lam="big"), "lambda"),
    (dict(objective="hinge2"), "objective"),
    (dict(solver="newton"), "solver: 'newton' is not one of"),
    (dict(bias="maybe"), "bias"),
    (dict(settings={"lamda": 1}), "did you mean 'lambda'"),
    (dict(class_weight={"nope": 2.0}), "class_weight: label 'nope' does not occur"),
    (dict(objective="hinge", class_weight="balanced"), "class_weight"),
    (dict(tol=-1), "tolerance"),
])
def test_bad_settings_raise_value_error(params, message):
    X, y = make_binary_data()
    with pytest.raises(ValueError, match=message):
        pegasos.PegasosClassifier(**params).fit(X, y)


def test_bad_inputs_raise():
    X, y = make_binary_data()
    with pytest.raises(NotFittedError):
        pegasos.PegasosClassifier().predict(X)
    bad = X.copy()
    bad[3, 2] = np.nan
    with pytest.raises(ValueError):
        pegasos.PegasosClassifier().fit(bad, y)
    with pytest.raises(ValueError, match="one class"):
        pegasos.PegasosClassifier().fit(X, np.ones(len(y)))
    with pytest.raises(ValueError, match="is binary but the data has 3 classes"):
        pegasos.PegasosClassifier(objective="hinge").fit(X[:3], [0, 1, 2])
    with pytest.raises(ValueError, match="Unknown label type"):
        pegasos.PegasosClassifier().fit(X, np.linspace(0, 1, len(y)))
    with pytest.raises(ValueError):
        pegasos.PegasosClassifier().fit(X, y[:-1])
    with pytest.raises(ValueError, match="float32"):
        pegasos.PegasosClassifier().fit(X.astype(np.float64) * 1e300, y)
    clf = pegasos.PegasosClassifier().fit(X, y)
    with pytest.raises(ValueError, match="features"):
        clf.predict(X[:, :3])
    with pytest.raises(ValueError):
        pegasos.load("/nonexistent/model.json")
    with pytest.raises((TypeError, ValueError)):
        pegasos.PegasosClassifier().fit([["a", "b"]] * 4, [0, 1, 0, 1])


def test_load_rejects_broken_model_files(tmp_path):
    (tmp_path / "m.json").write_text('{"format_version": 1, "kind": "linear"')
    with pytest.raises(ValueError, match="m.json"):
        pegasos.load(tmp_path / "m.json")


def test_fits_in_threads_run_concurrently_and_agree():
    """Training releases the GIL; fits in parallel Python threads give the sequential models."""
    from concurrent.futures import ThreadPoolExecutor
    X, y = make_multiclass_data(n=400)
    params = [dict(lam=lam, objective=objective) for lam in (1e-3, 1e-2) for objective in ("ova", "multiclass_hinge")]
    sequential = [model_text(pegasos.PegasosClassifier(**p).fit(X, y)) for p in params]
    with ThreadPoolExecutor(max_workers=4) as pool:
        parallel = list(pool.map(lambda p: model_text(pegasos.PegasosClassifier(n_jobs=2, **p).fit(X, y)), params))
    assert parallel == sequential


def test_warm_start_continues_from_the_fitted_model():
    X, y = make_multiclass_data(n=600)
    cold = pegasos.PegasosClassifier(objective="multiclass_hinge", lam=1e-3).fit(X, y)
    warm = pegasos.PegasosClassifier(objective="multiclass_hinge", lam=1e-3, warm_start=True)
    warm.fit(X[:500], y[:500])
    assert "warm_start" not in warm.training_
    warm.fit(X, y)
    assert "warm_start" in warm.training_ and warm.training_["converged"]
    assert abs(warm.training_["objective"] - cold.training_["objective"]) <= 1e-3 * cold.training_["objective"]
    np.testing.assert_array_equal(warm.classes_, cold.classes_)
    # binary SDCA from the optimum on the same data: the dual point rebuilt from the margins
    # is nearly optimal, a few passes instead of 7
    Xb, yb = make_binary_data(n=600)
    binary = pegasos.PegasosClassifier(lam=1e-2, warm_start=True).fit(Xb, yb)
    first = binary.training_["epochs"]
    assert binary.fit(Xb, yb).training_["converged"] and binary.training_["epochs"] <= 0.5 * first
    with pytest.raises(ValueError, match="hinge"):  # another objective than the model's
        warm.set_params(objective="ova").fit(X, y)


def test_transfer_from_a_fitted_estimator():
    X, y = make_binary_data(seed=0)
    X2, y2 = make_binary_data(n=60, seed=5)
    source = pegasos.PegasosClassifier(lam=1e-2).fit(X, y)
    near = pegasos.PegasosClassifier(source=source, lam=1e3).fit(X2, y2)  # large lam: w stays at w_source
    assert near.training_["solver"] == "sdca"
    np.testing.assert_allclose(near.coef_, source.coef_, atol=2e-3)
    free = pegasos.PegasosClassifier(lam=1e3).fit(X2, y2)
    assert np.abs(free.coef_).max() < 1e-2
    with pytest.raises(ValueError, match="source_model"):
        pegasos.PegasosClassifier(objective="transfer").fit(X2, y2)
    with pytest.raises(TypeError, match="source"):
        pegasos.PegasosClassifier(source=3).fit(X2, y2)
    with pytest.raises(ValueError, match="labels|classes"):
        pegasos.PegasosClassifier(source=source).fit(X2, np.where(y2 > 0, "a", "b"))


def test_transfer_source_under_clone_says_to_pass_a_path(tmp_path):
    # clone (GridSearchCV, cross_val_score) unfits an estimator parameter: a clear error naming
    # the remedy, and the remedy (a path) works under cross-validation
    from sklearn.base import clone
    from sklearn.exceptions import NotFittedError
    from sklearn.model_selection import cross_val_score
    X, y = make_binary_data(seed=0)
    X2, y2 = make_binary_data(n=60, seed=5)
    source = pegasos.PegasosClassifier(lam=1e-2).fit(X, y)
    with pytest.raises(NotFittedError, match="pass the path"):
        clone(pegasos.PegasosClassifier(objective="transfer", source=source)).fit(X2, y2)
    source.save(tmp_path / "source.json")
    by_path = pegasos.PegasosClassifier(objective="transfer", source=str(tmp_path / "source.json"), lam=1e3)
    scores = cross_val_score(by_path, X2, y2, cv=3, error_score="raise")
    direct = pegasos.PegasosClassifier(objective="transfer", source=source, lam=1e3).fit(X2, y2)
    np.testing.assert_array_equal(clone(by_path).fit(X2, y2).coef_, direct.coef_)
    assert scores.min() > 0.5


def test_in_pipelines_and_calibration():
    """No predict_proba of its own; scikit-learn's calibration and pipelines wrap it."""
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    X, y = make_multiclass_data(n=300)
    pipe = make_pipeline(StandardScaler(), pegasos.PegasosClassifier(objective="multiclass_hinge")).fit(X, y)
    assert pipe.score(X, y) > 0.9
    calibrated = CalibratedClassifierCV(pegasos.PegasosClassifier(), cv=3).fit(X, y)
    proba = calibrated.predict_proba(X)
    assert proba.shape == (len(y), 3)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


def test_partial_fit():
    X, y = make_multiclass_data(n=1200)
    chunks = np.array_split(np.arange(len(y)), 12)
    online = pegasos.PegasosClassifier(objective="multiclass_hinge", lam=1e-3)
    with pytest.raises(ValueError, match="classes"):
        online.partial_fit(X[:10], y[:10])
    for epoch in range(3):
        for chunk in chunks:
            online.partial_fit(X[chunk], y[chunk], classes=np.unique(y) if epoch == 0 else None)
    assert online.training_["solver"] == "pegasos" and "warm_start" in online.training_
    assert online.score(X, y) > 0.9
    # one call = one Pegasos epoch from zero, as fit with those settings
    first = pegasos.PegasosClassifier(lam=1e-3, objective="ova").partial_fit(X[:200], y[:200], classes=np.unique(y))
    same = pegasos.PegasosClassifier(lam=1e-3, objective="ova", solver="pegasos", epochs=1).fit(X[:200], y[:200])
    np.testing.assert_array_equal(first.decision_function(X), same.decision_function(X))
    # a chunk may miss classes; unknown labels and a changed feature count are errors
    only_cats = y == "cat"
    online.partial_fit(X[only_cats][:20], y[only_cats][:20])
    with pytest.raises(ValueError, match="not in classes"):
        online.partial_fit(X[:5], np.array(["cow"] * 5))
    with pytest.raises(ValueError, match="features"):
        online.partial_fit(X[:5, :3], y[:5])


def test_partial_fit_goes_on_down_the_schedule_over_small_chunks():
    """Chunks of one stream continue the whole 1/(lam t) schedule (warm_schedule=continue):
    with the warm start's cap of 4 epochs of the new chunk, each 20-row chunk restarted
    with large steps and 20 epochs of chunks ended where one had (objective 3.16 on this
    problem, against 0.32 for a full fit)."""
    X, y = make_binary_data(n=600, d=10)
    lam = 1e-3

    def objective(clf):
        margins = np.where(y > 0, 1.0, -1.0) * clf.decision_function(X)
        return lam / 2 * float(np.sum(clf.coef_ ** 2)) + float(np.mean(np.maximum(0.0, 1.0 - margins)))

    def stream(settings, epochs=20):
        online, after = pegasos.PegasosClassifier(lam=lam, settings=settings), []
        for _ in range(epochs):
            for start in range(0, len(y), 20):
                online.partial_fit(X[start:start + 20], y[start:start + 20], classes=[-1, 1])
            after.append(objective(online))
        return online, after

    online, after = stream(None)  # the averaged iterate: it restarts each call at the average
    assert after[-1] < 0.8 * after[0]
    assert json.loads(online._model.to_json())["settings"]["warm_schedule"] == "continue"
    _, capped = stream({"warm_schedule": "capped"}, epochs=3)
    assert capped[-1] > 2 * after[-1]
    # asked for explicitly, it is dropped where a call starts from zero (the first one, a clone's fit)
    explicit = pegasos.PegasosClassifier(lam=lam, settings={"warm_schedule": "continue"})
    explicit.partial_fit(X[:20], y[:20], classes=[-1, 1])
    pegasos.PegasosClassifier(lam=lam, warm_start=True, settings={"warm_schedule": "continue"}).fit(X, y)
    _, last = stream({"output": "last"})  # the last iterate follows the stream as one run
    full = objective(pegasos.PegasosClassifier(lam=lam, solver="pegasos").fit(X, y))
    assert last[-1] < 1.2 * full


@pytest.mark.parametrize("solver", ["pegasos", "sdca"])
def test_ctrl_c_stops_training(solver):
    """A signal (here interrupt_main, as Ctrl-C) stops a long fit within an epoch: KeyboardInterrupt."""
    import _thread
    import threading
    import time
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20000, 50)).astype(np.float32)
    y = np.where(rng.random(20000) < 0.5, 1, -1)  # noise: no early convergence
    clf = pegasos.PegasosClassifier(lam=1e-9, solver=solver, epochs=10 ** 6, tol=1e-12)
    timer = threading.Timer(0.3, _thread.interrupt_main)
    start = time.perf_counter()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            clf.fit(X, y)
    finally:
        timer.cancel()
    assert time.perf_counter() - start < 30
    assert not hasattr(clf, "_model")


def test_warm_start_refuses_another_feature_count_and_keeps_the_model():
    X, y = make_binary_data()
    clf = pegasos.PegasosClassifier(warm_start=True).fit(X, y)
    before = clf.coef_.copy()
    for other in (X[:, :3], np.hstack([X, X[:, :1]]), sp.csr_matrix(X[:, :3])):
        with pytest.raises(ValueError, match="warm_start continues a model of %d features" % X.shape[1]):
            clf.fit(other, y)
        assert clf.n_features_in_ == X.shape[1]
        np.testing.assert_array_equal(clf.coef_, before)
        clf.predict(X)  # still usable


def test_huge_sample_weights_train_as_their_ratios():
    # Weights past float32's range (the engine's) train as the same weights scaled down.
    X, y = make_binary_data()
    w = np.ones(len(y))
    w[:10] = 50.0
    ref = pegasos.PegasosClassifier().fit(X, y, sample_weight=w * 1e30)
    huge = pegasos.PegasosClassifier().fit(X, y, sample_weight=w * 1e38)
    np.testing.assert_allclose(huge.coef_, ref.coef_, rtol=1e-5, atol=1e-7)
    assert np.all(np.isfinite(huge.decision_function(X)))


def test_integer_ids_beyond_2_to_the_53_survive_a_model_file(tmp_path):
    X, y = make_binary_data()
    ids = np.array([2**53, 2**53 + 1], dtype=np.int64)
    clf = pegasos.PegasosClassifier().fit(X, ids[(y > 0).astype(int)])
    clf.save(tmp_path / "m.json")
    assert list(pegasos.load(tmp_path / "m.json").classes_) == [str(2**53), str(2**53 + 1)]
