"""Inputs the estimator used to take badly: a sparse matrix whose arrays disagree
(scipy's sort crashed the process), a failed refit (it left a model of the old width
predicting rows of the new one), messages that named X for y or a deleted temporary
file for warm_start, rows numbered from 1, settings that silently overrode a named
parameter, and a failed save raised as RuntimeError."""
import json
import os

import numpy as np
import pytest
import scipy.sparse as sp

import pegasos
from conftest import make_binary_data, make_multiclass_data

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


def test_inconsistent_sparse_arrays_are_a_value_error_naming_X():
    X, y = make_binary_data()
    clf = pegasos.PegasosClassifier().fit(X, y)
    bad = sp.csr_matrix((np.array([1.0, 2.0, 3.0]), np.array([0, 1, 2]), np.array([0, 3, 3])), shape=(2, X.shape[1]))
    bad.indptr = np.array([0, 5, 3])  # past the end of indices, then backwards
    with pytest.raises(ValueError, match="X: the sparse matrix's arrays are inconsistent"):
        clf.decision_function(bad)
    with pytest.raises(ValueError, match="X: the sparse matrix's arrays are inconsistent"):
        pegasos.PegasosClassifier().fit(bad, np.array([0, 1]))
    bad.has_canonical_format = True  # a claim scipy does not check: the engine read past the indices
    with pytest.raises(ValueError, match="inconsistent"):
        clf.decision_function(bad)


def test_the_private_module_checks_csr_structure_and_refuses_a_consumed_dataset():
    from pegasos import _pegasos as E
    ones = np.ones(3, np.float32)
    with pytest.raises(ValueError, match="indptr ends at 5, past the 5 indices and 3 values"):
        E.dataset_from_csr(np.array([0, 5]), np.arange(5, dtype=np.int32), ones, 5)
    with pytest.raises(ValueError, match="indptr decreases at row 1"):
        E.dataset_from_csr(np.array([0, 2, 1]), np.array([0, 1], np.int32), ones[:2], 5)
    with pytest.raises(ValueError, match="indptr.0. is negative"):
        E.dataset_from_csr(np.array([-1, 1]), np.array([0, 1], np.int32), ones[:2], 5)
    assert E.dataset_from_csr(np.array([0, 2]), np.array([0, 1], np.int64), np.ones(2), 5).nnz == 2
    X, y = make_binary_data()
    d = E.dataset_from_dense(X)
    d.set_labels((y > 0).astype(np.int64), ["-1", "1"])
    E.train(E.Settings(["lambda=0.01"]), d)  # moves the rows into the engine
    for use in (lambda: d.nnz, lambda: d.rows, lambda: E.train(E.Settings(["lambda=0.01"]), d),
                lambda: d.set_weights(np.ones(len(y)))):
        with pytest.raises(ValueError, match="consumed by train"):
            use()


def test_a_failed_refit_keeps_the_fitted_model():
    X, y = make_binary_data()
    clf = pegasos.PegasosClassifier().fit(X, y)
    before = clf.decision_function(X)
    wider = np.hstack([X, np.ones((X.shape[0], 2))])
    with pytest.raises(ValueError, match="lambda"):
        clf.set_params(lam=0).fit(wider, y)
    assert clf.n_features_in_ == X.shape[1]
    np.testing.assert_array_equal(clf.decision_function(X), before)
    with pytest.raises(ValueError, match="features"):
        clf.predict(wider)  # the old model does not silently ignore two columns
    clf.set_params(lam=1e-4)
    with pytest.raises(ValueError, match="y: only one class"):
        clf.fit(X, np.ones(X.shape[0]))
    np.testing.assert_array_equal(clf.decision_function(X), before)


def test_rows_are_numbered_as_numpy_indexes_them(tmp_path):
    X, y = make_binary_data()
    path = str(tmp_path / "m.json")
    pegasos.PegasosClassifier().fit(X, y).save(path)
    model = json.load(open(path))
    width = len(model["weights"][0]) if isinstance(model["weights"][0], list) else None
    assert width == X.shape[1]
    model["weights"] = [[1.7e308] * width]
    with open(path, "w") as f:
        json.dump(model, f)
    clf = pegasos.load(path)
    Z = np.zeros((3, X.shape[1]))
    Z[2] = 1.0  # Z[2] sums 1.7e308 several times: infinite
    with pytest.raises(ValueError, match=r"X: row 2: the model's decision value is infinite"):
        clf.decision_function(Z)


def test_save_to_a_full_device_is_an_os_error():
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    X, y = make_binary_data()
    clf = pegasos.PegasosClassifier().fit(X, y)
    with pytest.raises(OSError, match="/dev/full"):
        clf.save("/dev/full")


@pytest.mark.parametrize("params, error, match", [
    (dict(settings=[("a", 1)]), TypeError, "settings: expected a dict"),
    (dict(lam=1e-4, settings={"lambda": 0.5}), ValueError, "settings: 'lambda' is set by the parameter lam"),
    (dict(objective="multiclass_hinge", settings={"objective": "hinge"}), ValueError, "parameter objective"),
    # (kernel_hinge through settings trained a model that pegasos.load then refused)
    (dict(settings={"objective": "kernel_hinge"}), ValueError, "set by the parameter objective"),
    (dict(n_jobs="a"), ValueError, "n_jobs: expected None or a whole number"),
    (dict(n_jobs=1.5), ValueError, "n_jobs"),
    (dict(random_state=2 ** 70), ValueError, "random_state: .* out of the seed's range"),
    (dict(random_state=2 ** 60), ValueError, "random_state: .* out of the seed's range 0 .. 9e15"),
    (dict(n_jobs=5000), ValueError, "n_jobs: at most 4096 threads, got 5000"),
    (dict(class_weight={1: float("nan")}), ValueError, "class_weight: the cost of label 1 must be a finite number"),
    (dict(class_weight={5: 2.0}), ValueError, "class_weight: label 5 does not occur in y"),
])
def test_parameter_errors_name_the_parameter(params, error, match):
    X, y = make_binary_data()
    with pytest.raises(error, match=match):
        pegasos.PegasosClassifier(**params).fit(X, y)


def test_warm_start_errors_name_warm_start_not_a_temporary_file():
    X, y = make_binary_data()
    X3, y3 = make_multiclass_data(d=X.shape[1])
    clf = pegasos.PegasosClassifier(warm_start=True).fit(X, y)
    with pytest.raises(ValueError, match="warm_start") as info:
        clf.fit(X3, y3)  # three classes cannot continue a two-class model
    assert "init_model.json" not in str(info.value)
    assert "pegasos-" not in str(info.value)
