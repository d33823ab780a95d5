"""pegasos: linear SVMs (Pegasos SGD and dual coordinate ascent) with a scikit-learn face.

The engine is the C++ library of the `pegasos` command-line tool (module
pegasos._pegasos on drivers/api.hpp); nothing here shells out to the binary.

    from pegasos import PegasosClassifier, load
    clf = PegasosClassifier(lam=1e-4).fit(X, y)      # numpy arrays or scipy.sparse
    clf.predict(X_test); clf.decision_function(X_test)
    clf.save("model.json")                            # the CLI's model file
    load("model.json").predict(X_test)                # also models from `pegasos train`

Raw text: a fitted Pipeline(TextVectorizer, PegasosClassifier) saves as the CLI's text
model file (featurizer inside), and a text model file loads as such a pipeline:

    pipe = make_pipeline(TextVectorizer(), PegasosClassifier()).fit(docs, labels)
    pegasos.save(pipe, "spam.json")                   # `pegasos predict spam.json mail.jsonl`
    pegasos.load("spam.json").predict(docs)           # also text models from `pegasos train`

Settings become the CLI's `--set KEY=VALUE` overrides, so they are validated (and
their errors worded) exactly as `pegasos train` does it.
"""
import json
import os
import re
import tempfile
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.model_selection import StratifiedKFold
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.utils import check_random_state
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_is_fitted

from . import _pegasos
from .platt import platt_fit, platt_predict
from .text import TextVectorizer

__all__ = ["PegasosClassifier", "TextVectorizer", "load", "save"]

_OBJECTIVES = ("auto", "hinge", "weighted_hinge", "ova", "multiclass_hinge", "transfer")


def _setting_text(value):
    """A Python value as the VALUE of KEY=VALUE (JSON for numbers, booleans, dicts)."""
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    if isinstance(value, str):
        return value
    return json.dumps(value)


_MAX_THREADS = 4096  # the engine's `threads` setting's bound
_MAX_SEED = 9 * 10 ** 15  # the engine's integer settings' bound (exact in a double)


def _threads(n_jobs):
    """scikit-learn's n_jobs as the engine's `threads` (0 = all cores)."""
    if n_jobs is None:
        return 1
    if isinstance(n_jobs, (bool, np.bool_)) or not isinstance(n_jobs, (int, np.integer)):
        raise ValueError("n_jobs: expected None or a whole number of threads (-1: all cores), got %r" % (n_jobs,))
    n_jobs = int(n_jobs)
    if n_jobs == 0:
        raise ValueError("n_jobs == 0 has no meaning (use None, a positive count or -1)")
    if n_jobs > _MAX_THREADS:
        raise ValueError("n_jobs: at most %d threads, got %d" % (_MAX_THREADS, n_jobs))
    if n_jobs > 0:
        return n_jobs
    return max(1, (os.cpu_count() or 1) + 1 + n_jobs)


# Engine settings that a named parameter sets (settings= is for further ones).
_NAMED_SETTINGS = {"objective": "objective", "lambda": "lam", "solver": "solver", "class_weight": "class_weight",
                   "batch_size": "batch_size", "epochs": "epochs", "max_epochs": "max_epochs",
                   "tolerance": "tol", "bias": "bias", "seed": "random_state", "threads": "n_jobs",
                   "source_model": "source", "init_model": "warm_start"}


def _keeping_state_on_error(estimator, fit, *args):
    """fit(*args), and if it raises, the estimator's attributes as they were before
    (validation sets n_features_in_ before training: a failed refit on 6 columns left a
    4-feature model predicting 6-column rows with 2 ignored)."""
    saved = dict(estimator.__dict__)
    try:
        return fit(*args)
    except BaseException:
        estimator.__dict__.clear()
        estimator.__dict__.update(saved)
        raise


def _engine_names(labels):
    """The engine's spelling of each label (numbers normalised as the CLI's reader does)."""
    names = [_pegasos.canonical_label(str(label)) for label in labels]
    if len(set(names)) != len(names):
        raise ValueError("labels %r: two labels have the same text %r" % (list(labels), names))
    return names


class PegasosClassifier(ClassifierMixin, BaseEstimator):
    """Linear SVM trained by the pegasos engine (Pegasos SGD or SDCA).

    Parameters (engine setting in brackets; README § Settings):
    objective : "auto" (hinge for two classes, weighted_hinge with class_weight, ova for
        more, transfer with a source), "hinge", "weighted_hinge", "ova", "multiclass_hinge"
        (Crammer-Singer) or "transfer" (lam/2 |w - w_source|^2 + mean hinge).
    lam : float, default 1e-4 [lambda]. The objective is lam/2 |w|^2 + mean loss
        (C = 1 / (lam * n_samples) in LIBLINEAR's terms).
    solver : "auto", "sdca" or "pegasos" [solver].
    class_weight : None, "balanced" or {label: cost} [class_weight].
    batch_size, epochs, max_epochs : None = the engine's default [batch_size, epochs, max_epochs].
    tol : relative duality gap that certifies convergence [tolerance].
    bias : "feature", "none" or "unregularized" [bias].
    random_state : None (the engine's fixed default seed, 42), an int, or a RandomState [seed].
    n_jobs : None (1 thread), -1 (all cores) or a count [threads]; results do not depend on it.
    settings : dict of further engine settings {KEY: VALUE} (e.g. {"output": "last"}).
    source : transfer's source model [source_model]: a model file's path or a fitted binary
        PegasosClassifier (same labels, numeric features).
    warm_start : when True, fit continues from the fitted model (the engine's init_model:
        same objective, classes and bias; SDCA restarts from a dual point rebuilt from it,
        Pegasos continues its step schedule) instead of from zero.

    lam : λ > 0, or "auto": chosen by the engine's stratified 5-fold cross-validation along
        a warm-started path (C = 0.01..1000, README § Choosing λ); lam_ is the chosen one.

    probability : when True, fit also fits Platt scaling on out-of-fold decision values
        (stratified 5-fold, folds by random_state) for predict_proba / predict_log_proba.
        A model file written by `pegasos train --calibrate` loads with its calibration.

    sample_weight: per-example weights s_i >= 0 (the engine's, as `pegasos train --weights`):
    training minimises lam/2 |w|^2 + (1/sum s) sum_i s_i c_{y_i} loss_i, so a weight k is the
    row repeated k times, a weight 0 the row left out, and weights are relative (multiplying
    them all by one number changes nothing; lam sets the regularisation).
    """

    def __init__(self, objective="auto", lam=1e-4, solver="auto", class_weight=None, batch_size=None, epochs=None,
                 tol=1e-3, max_epochs=None, bias="feature", random_state=None, n_jobs=None, settings=None,
                 source=None, warm_start=False, probability=False):
        self.objective = objective
        self.lam = lam
        self.solver = solver
        self.class_weight = class_weight
        self.batch_size = batch_size
        self.epochs = epochs
        self.tol = tol
        self.max_epochs = max_epochs
        self.bias = bias
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.settings = settings
        self.source = source
        self.warm_start = warm_start
        self.probability = probability

    # scikit-learn's estimator checks this estimator fails by design (check_estimator skips
    # them with a SkipTestWarning; parametrize_with_checks marks them xfail). The key is the
    # check function's name, so both kinds of check_sample_weights_invariance are covered.
    _XFAIL_CHECKS = {
        "check_sample_weights_invariance":
            "kind=zeros: zero-weighted rows are removed exactly (the same problem), but the check "
            "also shuffles the rows, so the solver visits them in another order and stops at another "
            "point within its tolerance (SDCA: differences ~3e-7 > the check's rtol 1e-7; the Pegasos "
            "solver: ~2e-3); kind=ones passes",
    }

    # Fails by design only without an intercept: the check's data is not centred, so a
    # separator through the origin misses its accuracy bar (LinearSVC(fit_intercept=False)
    # fails it too).
    _XFAIL_WITHOUT_BIAS = {
        "check_class_weight_classifiers":
            "bias='none': the check's blobs are not centred, and a separator through the origin "
            "cannot reach its accuracy bar (LinearSVC(fit_intercept=False) fails it as well)",
    }

    # With probability=True, predict stays the model's decision (the score's sign, as the
    # CLI's predict and scikit-learn's SVC), which the calibrated argmax may disagree with.
    _XFAIL_WITH_PROBABILITY = {
        "check_classifiers_train":
            "probability=True: predict is the decision value's (as SVC and `pegasos predict`); the "
            "argmax of the Platt probabilities, fitted on out-of-fold values, can differ on rows "
            "near the boundary, and the check asks them to agree",
    }

    def _more_tags(self):
        checks = dict(self._XFAIL_CHECKS)
        if self.bias == "none":
            checks.update(self._XFAIL_WITHOUT_BIAS)
        if self.probability:
            checks.update(self._XFAIL_WITH_PROBABILITY)
        return {"_xfail_checks": checks}

    # ---- settings -------------------------------------------------------------------

    def _objective_name(self, n_classes):
        if self.objective not in _OBJECTIVES:
            raise ValueError("objective: %r is not one of %s" % (self.objective, ", ".join(_OBJECTIVES)))
        # "auto" goes to the engine as it is: the engine's objective auto makes
        # the same choice from the data (hinge / weighted_hinge with a
        # class_weight / transfer with a source for two classes, ova for more).
        return self.objective

    def _overrides(self, n_classes):
        """The engine settings as the CLI's KEY=VALUE overrides."""
        out = ["objective=" + self._objective_name(n_classes)]
        lam = self.lam
        if isinstance(lam, str) and lam != "auto":
            raise ValueError("lam: lambda must be a number > 0 or 'auto', got %r" % lam)
        out.append("lambda=" + _setting_text(lam))
        out.append("solver=" + _setting_text(self.solver))
        if self.class_weight is not None:
            if isinstance(self.class_weight, dict):
                costs = {name: float(cost) for name, cost in
                         zip(_engine_names(list(self.class_weight)), self.class_weight.values())}
                for label, cost in zip(self.class_weight, costs.values()):
                    if not (np.isfinite(cost) and cost > 0):
                        raise ValueError("class_weight: the cost of label %r must be a finite number > 0, got %r"
                                         % (label, cost))
                out.append("class_weight=" + json.dumps(costs))
            else:
                out.append("class_weight=" + _setting_text(self.class_weight))
        for key, value in (("batch_size", self.batch_size), ("epochs", self.epochs),
                           ("max_epochs", self.max_epochs)):
            if value is not None:
                out.append(key + "=" + _setting_text(value))
        out.append("tolerance=" + _setting_text(self.tol))
        out.append("bias=" + _setting_text(self.bias))
        if self.random_state is not None:
            out.append("seed=" + _setting_text(self._seed()))
        out.append("threads=" + str(_threads(self.n_jobs)))
        settings = self.settings if self.settings is not None else {}
        if not isinstance(settings, dict):
            raise TypeError("settings: expected a dict of further engine settings, got %s" % type(settings).__name__)
        for key, value in settings.items():
            if key in _NAMED_SETTINGS:
                # a second value for a named parameter would silently win over it
                raise ValueError("settings: %r is set by the parameter %s; set it there" % (key, _NAMED_SETTINGS[key]))
            out.append("%s=%s" % (key, _setting_text(value)))
        return out

    def _seed(self):
        """The engine's seed: random_state as an int (None: the engine's default, 42; a
        RandomState draws one, once per fit)."""
        if getattr(self, "_drawn_seed", None) is not None:
            return self._drawn_seed
        seed = self.random_state
        if seed is None:
            return 42
        if not isinstance(seed, (int, np.integer)):
            seed = check_random_state(seed).randint(np.iinfo(np.int32).max)
        if not 0 <= int(seed) <= _MAX_SEED:
            raise ValueError("random_state: %d is out of the seed's range 0 .. 9e15" % int(seed))
        return int(seed)

    # ---- data -------------------------------------------------------------------------

    def _check_X(self, X, reset):
        return self._validate_data(X, accept_sparse=("csr", "csc"), dtype=(np.float64, np.float32), reset=reset)

    @staticmethod
    def _dataset(X):
        """The engine's rows. CSR with float32 values and int32 indices (and no explicit
        zeros) is borrowed: the engine reads the arrays in place, no copy (the row
        offsets, n + 1 of them, are converted); anything else is copied once into
        float32 values / uint32 indices, zeros dropped."""
        if sp.issparse(X):
            X = X.tocsr()  # CSC is converted (a copy); CSR is used as it is
            try:  # indptr, indices and data consistent (scipy trusts them; a bad indptr crashed its sort)
                X.check_format(full_check=True)
            except ValueError as e:
                raise ValueError("X: the sparse matrix's arrays are inconsistent: %s" % e) from None
            if not X.has_canonical_format:
                X = X.copy()
                X.sum_duplicates()  # also sorts the indices
            indices = X.indices if X.indices.dtype in (np.int32, np.int64) else X.indices.astype(np.int64)
            return _pegasos.dataset_from_csr(X.indptr, indices, X.data, X.shape[1])
        return _pegasos.dataset_from_dense(X)

    # ---- training ---------------------------------------------------------------------

    def fit(self, X, y, sample_weight=None):
        """Train on X (n_samples x n_features; dense or scipy.sparse) and labels y of any type.
        A fit that raises leaves the estimator as it was (a fitted one keeps its model)."""
        return _keeping_state_on_error(self, self._fit, X, y, sample_weight)

    def _fit(self, X, y, sample_weight=None):
        warm_features = getattr(self, "n_features_in_", None) if self.warm_start and hasattr(self, "_model") else None
        X, y = self._validate_data(X, y, accept_sparse=("csr", "csc"), dtype=(np.float64, np.float32))
        if warm_features is not None and X.shape[1] != warm_features:
            # (fit's _keeping_state_on_error puts n_features_in_ back: the fitted model is kept)
            raise ValueError("X has %d features, but warm_start continues a model of %d features"
                             % (X.shape[1], warm_features))
        check_classification_targets(y)
        classes, y_idx = np.unique(y, return_inverse=True)
        if len(classes) < 2:
            raise ValueError("y: only one class (%r); a classifier needs at least two" % (classes[0],))
        if isinstance(self.class_weight, dict):
            unknown = [label for label in self.class_weight if not np.isin(label, classes)]
            if unknown:
                raise ValueError("class_weight: label %r does not occur in y (its classes: %s)"
                                 % (unknown[0], ", ".join(map(repr, classes))))
        self._drawn_seed = None
        self._drawn_seed = self._seed()  # one draw from a RandomState serves the fit and its folds
        if sample_weight is not None:
            sample_weight = self._check_weights(X, y_idx, classes, sample_weight)
        self._train(X, y_idx, classes, self._overrides(len(classes)), self.warm_start, sample_weight)
        training = self.training_
        if training.get("converged") is False:
            gap = training.get("relative_gap")
            warnings.warn("pegasos: not converged (stopped by %s, %s)"
                          % (training.get("stopped_by"),
                             "no duality gap certifies this solver setting" if gap is None else
                             "relative duality gap %s > tolerance %s" % (gap, training.get("tolerance"))),
                          ConvergenceWarning)
        if hasattr(self, "_threshold"):
            del self._threshold  # a loaded model's stored threshold belonged to that model
        if self.probability:
            self._platt = self._fit_platt(X, y, sample_weight)
        elif hasattr(self, "_platt"):
            del self._platt
        return self

    @property
    def lam_(self):
        """The λ the model was trained with (with lam='auto': the one cross-validation chose;
        training_['selection'] holds the curve)."""
        check_is_fitted(self, "_model")
        return float(json.loads(self._model.to_json())["settings"]["lambda"])

    # ---- probabilities ----------------------------------------------------------------

    _PLATT_FOLDS = 5

    def _fit_platt(self, X, y, sample_weight):
        """Platt's (A, B) per output from out-of-fold decision values: stratified k-fold
        (k = 5, or the smallest class's count when below 5; shuffled by the fit's seed), each
        fold model an estimator with these settings (cold, no probability) through the same
        engine door. Two classes: one sigmoid toward classes_[1]; more: one per class
        (one-vs-rest on that class's score)."""
        _, y_idx, counts = np.unique(y, return_inverse=True, return_counts=True)
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X)
            keep = sample_weight > 0
            X, y, y_idx, sample_weight = X[keep], y[keep], y_idx[keep], sample_weight[keep]
            counts = np.bincount(y_idx, minlength=len(self.classes_))
        k = min(self._PLATT_FOLDS, int(counts.min()))
        if k < 2:
            raise ValueError("probability=True: class %r has %d sample(s); the calibration's stratified "
                             "cross-validation needs at least 2 per class" % (self.classes_[counts.argmin()],
                                                                          counts.min()))
        folds = StratifiedKFold(n_splits=k, shuffle=True, random_state=self._drawn_seed % (2 ** 32))
        scores = None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            for train, test in folds.split(np.zeros(len(y)), y_idx):
                # clone would also clone (unfit) an estimator given as source: pass it as it is
                model = clone(self).set_params(probability=False, warm_start=False, random_state=self._drawn_seed,
                                               source=self.source)
                model.fit(X[train], y[train],
                          None if sample_weight is None else sample_weight[train])
                s = model.decision_function(X[test])
                if scores is None:
                    scores = np.empty((len(y),) + s.shape[1:])
                scores[test] = s
        # The sigmoid's fit weighs the rows as training does: relative weights, scaled to
        # mean 1 over these rows as the engine scales them (equal weights are no weights).
        weight = None if sample_weight is None else sample_weight / sample_weight.mean()
        if scores.ndim == 1:
            return [platt_fit(scores, y_idx == 1, weight=weight)]
        return [platt_fit(scores[:, c], y_idx == c, weight=weight) for c in range(scores.shape[1])]

    def _has_probability(self):
        if not self.probability:
            raise AttributeError("predict_proba is available when probability=True")
        return True

    @available_if(_has_probability)
    def predict_proba(self, X):
        """Calibrated probabilities (n_samples, n_classes) in classes_ order. Two classes:
        [1 - p, p] with p Platt's sigmoid of the score toward classes_[1]; more: each class's
        one-vs-rest sigmoid of its score, normalised to sum 1."""
        check_is_fitted(self, "_model")
        if not hasattr(self, "_platt"):
            raise AttributeError("predict_proba: no calibration (probability was False at fit, "
                                 "or partial_fit updated the model since)")
        scores = self.decision_function(X)
        if scores.ndim == 1:
            A, B = self._platt[0]
            p = platt_predict(A, B, scores)
            return np.column_stack([1.0 - p, p])
        proba = np.column_stack([platt_predict(A, B, scores[:, c]) for c, (A, B) in enumerate(self._platt)])
        total = proba.sum(axis=1, keepdims=True)
        zero = total[:, 0] == 0
        proba[zero] = 1.0
        total[zero] = proba.shape[1]
        return proba / total

    @available_if(_has_probability)
    def predict_log_proba(self, X):
        """log of predict_proba."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    @property
    def platt_(self):
        """Platt's (A, B) per sigmoid: P = 1 / (1 + exp(A f + B))."""
        check_is_fitted(self, "_platt")
        return [tuple(ab) for ab in self._platt]

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """One Pegasos epoch over (X, y), continuing from the model so far (its weights and its
        whole 1/(lam t) step schedule: the engine's warm start with warm_schedule=continue, as
        one run going on over the chunks). `classes` (every label the model
        will see) is required on the first call. Always the Pegasos solver; `epochs`
        (default 1) passes per call; no convergence warning."""
        return _keeping_state_on_error(self, self._partial_fit, X, y, classes, sample_weight)

    def _partial_fit(self, X, y, classes=None, sample_weight=None):
        first = not hasattr(self, "_model")
        if first and classes is None:
            raise ValueError("classes: required on the first call to partial_fit (every label of the problem)")
        X, y = self._validate_data(X, y, accept_sparse=("csr", "csc"), dtype=(np.float64, np.float32), reset=first)
        check_classification_targets(y)
        known = np.unique(classes) if first else self.classes_
        if classes is not None and not np.array_equal(np.unique(classes), known):
            raise ValueError("classes: %r differ from the classes of the first call %r" % (list(classes), list(known)))
        y_idx = np.minimum(np.searchsorted(known, y), len(known) - 1)
        if not np.array_equal(known[y_idx], y):
            raise ValueError("y: labels %r are not in classes %r" % (sorted(set(y) - set(known)), list(known)))
        if sample_weight is not None:
            sample_weight = self._check_weights(X, y_idx, known, sample_weight, need_every_class=False)
        overrides = self._overrides(len(known)) + ["solver=pegasos"]
        if self.epochs is None:
            overrides.append("epochs=1")
        if not first and "warm_schedule" not in (self.settings or {}):
            # The chunks are one stream: the schedule goes on from the whole step count (a
            # warm start's default caps it at 4 epochs of the new chunk, for a new day's data).
            overrides.append("warm_schedule=continue")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            self._train(X, y_idx, known, overrides, not first, sample_weight)
        if hasattr(self, "_platt"):
            del self._platt  # the calibration belonged to the model fit produced
        if hasattr(self, "_threshold"):
            del self._threshold  # as in fit: a loaded model's threshold belonged to that model
        return self

    def _train(self, X, y_idx, classes, overrides, warm, sample_weight=None):
        """Engine training on rows X with labels classes[y_idx]; `warm`: from the fitted model;
        sample_weight: checked per-example weights (None: all 1)."""
        names = _engine_names(classes)
        order = _pegasos.sort_classes(names)
        engine_id = np.array([order.index(name) for name in names], dtype=np.int64)
        data = self._dataset(X)
        data.set_labels(engine_id[y_idx], order)
        if sample_weight is not None:
            data.set_weights(sample_weight)  # the engine drops the rows of weight 0, scales the rest to mean 1
        if not (warm and hasattr(self, "_model")):  # how a warm start takes up the schedule: none from zero
            overrides = [o for o in overrides if not o.startswith("warm_schedule=")]
        with tempfile.TemporaryDirectory(prefix="pegasos-") as tmp:
            overrides = overrides + self._model_file_overrides(tmp, warm)
            try:
                model = _pegasos.train(_pegasos.Settings(overrides), data)
            except ValueError as e:
                # the fitted models handed over as files are named by their parameters
                message = str(e).replace(os.path.join(tmp, "init_model.json"), "warm_start (the fitted model)")
                message = message.replace(os.path.join(tmp, "source_model.json"), "source (the fitted estimator)")
                if message == str(e):
                    raise
                raise ValueError(message) from None
        self._set_model(model, classes, names)

    def _model_file_overrides(self, tmp, warm):
        """source_model and init_model: the engine reads them from model files (fitted
        estimators are written to the temporary folder `tmp` for the call)."""
        out = []
        if self.source is not None:
            if isinstance(self.source, PegasosClassifier):
                if not hasattr(self.source, "_model"):
                    # scikit-learn's clone (GridSearchCV, cross_val_score, ...) clones an
                    # estimator given as a parameter, which drops its fit
                    raise NotFittedError(
                        "source: the PegasosClassifier given as source is not fitted (scikit-learn's clone, "
                        "used by GridSearchCV and cross_val_score, refits nothing and drops the fit of an "
                        "estimator parameter); save it and pass the path instead: "
                        "src.save('source.json'); PegasosClassifier(objective='transfer', source='source.json')")
                path = os.path.join(tmp, "source_model.json")
                self.source._model.save(path)
            elif isinstance(self.source, (str, os.PathLike)):
                path = os.fspath(self.source)
            else:
                raise TypeError("source: expected a model file's path or a fitted PegasosClassifier, got %r"
                                % type(self.source).__name__)
            out.append("source_model=" + json.dumps(path))
        if warm and hasattr(self, "_model"):
            path = os.path.join(tmp, "init_model.json")
            self._model.save(path)
            out.append("init_model=" + json.dumps(path))
        return out

    @staticmethod
    def _check_weights(X, y_idx, classes, sample_weight, need_every_class=True):
        """sample_weight as float64, one finite weight >= 0 per row, some > 0 (and, for fit, some
        in every class). A new array: the caller's weights are never written."""
        sample_weight = np.array(_check_sample_weight(sample_weight, X), dtype=np.float64, copy=True)
        if not np.all(np.isfinite(sample_weight)):
            raise ValueError("sample_weight: weights must be finite")
        if np.any(sample_weight < 0):
            raise ValueError("sample_weight: negative weights are not supported")
        if not np.any(sample_weight > 0):
            raise ValueError("sample_weight: every weight is 0")
        top = float(sample_weight.max())
        if top > 1e30:  # only their ratios count; the engine keeps weights as float32 (max 3.4e38)
            sample_weight /= top
        if need_every_class:
            missing = np.setdiff1d(np.arange(len(classes)), y_idx[sample_weight > 0])
            if missing.size:
                raise ValueError("sample_weight: class %r has no example of non-zero weight" % (classes[missing[0]],))
        return sample_weight

    def _set_model(self, model, classes, names):
        """Fitted attributes; engine output k belongs to classes_[self._py_of_engine[k]]."""
        self._model = model
        self.classes_ = classes
        position = {name: i for i, name in enumerate(names)}
        self._py_of_engine = np.array([position[name] for name in model.classes], dtype=np.int64)

    # ---- prediction -------------------------------------------------------------------

    def decision_function(self, X):
        """Two classes: (n_samples,) scores toward classes_[1]; else (n_samples, n_classes)."""
        check_is_fitted(self, "_model")
        X = self._check_X(X, reset=False)
        if self._model.text:
            raise ValueError("this model was trained on raw text by `pegasos train`; it needs text, not numeric rows")
        scores = self._model.scores(self._dataset(X), _threads(self.n_jobs))
        return self._to_classes(scores.T).T

    def _to_classes(self, rows):
        """Engine outputs (rows: one per output) in classes_' order. Two classes: one row toward
        classes_[1] (a multiclass objective's two outputs become their difference)."""
        if rows.shape[0] == 1:
            return rows[0] if self._py_of_engine[1] == 1 else -rows[0]
        out = np.empty_like(rows)
        out[self._py_of_engine] = rows
        if len(self.classes_) == 2:
            return out[1] - out[0]
        return out

    def predict(self, X):
        """Binary: classes_[1] where the score exceeds 0, or the threshold a model file loaded
        with pegasos.load stores (`pegasos train --max-fpr / --target-recall`)."""
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return self.classes_[(scores > getattr(self, "_threshold", 0.0)).astype(np.intp)]
        return self.classes_[np.argmax(scores, axis=1)]

    @property
    def coef_(self):
        """(1, n_features) for two classes (toward classes_[1]), else (n_classes, n_features)."""
        check_is_fitted(self, "_model")
        w = self._to_classes(self._model.weights())
        return w.reshape(1, -1) if w.ndim == 1 else w

    @property
    def intercept_(self):
        check_is_fitted(self, "_model")
        b = self._to_classes(np.asarray(self._model.bias(), dtype=np.float64).reshape(-1, 1))
        return np.atleast_1d(b.ravel())

    @property
    def training_(self):
        """The model file's `training` block (solver, passes, convergence, duality gap) as a dict."""
        check_is_fitted(self, "_model")
        return json.loads(self._model.training)

    # ---- model files and pickling -----------------------------------------------------

    def save(self, path, vectorizer=None):
        """Write the model file `pegasos predict / eval / inspect` read (labels as text).

        vectorizer: the fitted TextVectorizer whose rows this classifier was trained on;
        the file is then a text model (the featurizer inside, as `pegasos train` writes
        on raw text), which `pegasos predict` applies to raw documents."""
        check_is_fitted(self, "_model")
        if hasattr(self, "_platt"):
            warnings.warn("pegasos: save() writes the model without its probability=True calibration "
                          "(predict_proba of the loaded model needs `pegasos train --calibrate`)", UserWarning)
        model = self._model if vectorizer is None else self._text_model(vectorizer)
        model.save(os.fspath(path))

    def _text_model(self, vectorizer):
        """The engine's text model: this numeric model with the vectorizer's featurizer inside
        and its parameters echoed as the `features` setting (null when all are defaults, as
        `pegasos train` echoes a run without the setting)."""
        if not isinstance(vectorizer, TextVectorizer):
            raise TypeError("vectorizer: expected a fitted pegasos.TextVectorizer, got %s" % type(vectorizer).__name__)
        check_is_fitted(vectorizer, "_featurizer")
        setting = vectorizer.features_setting()
        return self._model.with_featurizer(vectorizer._featurizer, json.dumps(setting if setting else None))

    def __getstate__(self):
        state = dict(super().__getstate__())  # Python 3.11's object.__getstate__ returns __dict__ itself
        model = state.pop("_model", None)
        if model is not None:
            state["_model_json"] = model.to_json()
        return state

    def __setstate__(self, state):
        text = state.pop("_model_json", None)
        super().__setstate__(state)
        if text is not None:
            self._model = _pegasos.Model.parse(text, "<pickled model>")


def save(estimator, path):
    """Write a fitted estimator's model file, the one `pegasos predict / eval / inspect` read.

    estimator: a PegasosClassifier (its model file, as estimator.save(path)), or a Pipeline
    of exactly [TextVectorizer, PegasosClassifier]: a text model file, the featurizer
    inside, which `pegasos train` would write on the same documents with the same
    settings; `pegasos predict` applies it to raw text (README § Python)."""
    if isinstance(estimator, PegasosClassifier):
        estimator.save(path)
        return
    if isinstance(estimator, Pipeline):
        steps = [step for _, step in estimator.steps]
        if len(steps) != 2 or not isinstance(steps[0], TextVectorizer) or not isinstance(steps[1], PegasosClassifier):
            raise TypeError("pegasos.save: a Pipeline makes a text model file when its steps are exactly "
                            "[TextVectorizer, PegasosClassifier]; got [%s]"
                            % ", ".join(type(step).__name__ for step in steps))
        steps[1].save(path, vectorizer=steps[0])
        return
    raise TypeError("pegasos.save: expected a fitted PegasosClassifier or Pipeline(TextVectorizer, "
                    "PegasosClassifier), got %s" % type(estimator).__name__)


def _label_array(labels):
    """A model file's labels (canonical text) as classes_: integers of at most 15 digits
    (how `pegasos` spells numeric labels: 1, -1, 7) as int64, other plain decimal numbers
    (0.5, 1e-3) as float64, when every label is one and no two are equal as numbers;
    anything else (text, integers longer than 15 digits, kept as text) as str. So a model
    of LIBSVM data predicts numbers, comparable with the y that load_svmlight_file reads.
    Labels that are all "False" or "True" (how a bool y is written, str(True); also pandas'
    spelling of a bool column in CSV) come back as bool, so a model fitted on a bool y
    predicts bools after save / load as before."""
    if labels and set(labels) <= {"False", "True"}:
        return np.array([t == "True" for t in labels], dtype=bool)
    integer = re.compile(r"-?(0|[1-9][0-9]{0,14})")
    number = re.compile(r"-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?")
    if labels and all(integer.fullmatch(t) for t in labels):
        return np.array([int(t) for t in labels], dtype=np.int64)
    if labels and all(number.fullmatch(t) for t in labels) and not any(re.fullmatch(r"-?[0-9]{16,}", t) for t in labels):
        values = np.array([float(t) for t in labels], dtype=np.float64)
        if np.all(np.isfinite(values)) and len(np.unique(values)) == len(values):
            return values
    return np.array(labels)


def _classifier(model):
    """A fitted PegasosClassifier around a numeric linear engine model."""
    document = json.loads(model.to_json())
    settings = document.get("settings", {})
    calibration = document.get("calibration")
    # The settings the model was trained with, as the estimator's parameters, so that
    # clone(load(f)).fit(X, y) trains the same way (settings at their defaults stay None).
    params = dict(objective=settings.get("objective", "auto"), lam=settings.get("lambda", 1e-4),
                  bias=settings.get("bias", "feature"), probability=calibration is not None)
    for key, name, default in (("solver", "solver", "auto"), ("tolerance", "tol", 1e-3), ("seed", "random_state", 42),
                               ("epochs", "epochs", 0), ("max_epochs", "max_epochs", 0), ("batch_size", "batch_size", 1)):
        if key in settings and settings[key] != default:
            params[name] = settings[key]
    if settings.get("class_weight") == "balanced":
        params["class_weight"] = "balanced"
    clf = PegasosClassifier(**params)
    classes = _label_array(list(model.classes))
    clf._set_model(model, classes, list(model.classes))
    clf.n_features_in_ = int(model.dimension)
    if calibration is not None:  # `pegasos train --calibrate`: the same sigmoids, engine order = classes_ order
        clf._platt = [(float(a), float(b)) for a, b in zip(calibration["a"], calibration["b"])]
    if document.get("threshold") is not None:
        clf._threshold = float(document["threshold"]["score"])
    return clf


def load(path):
    """The estimator of a model file (written by `pegasos train`, save() or pegasos.save).

    A numeric model: a fitted PegasosClassifier. A text model (trained on raw text; the
    featurizer inside): a fitted Pipeline(TextVectorizer, PegasosClassifier) whose
    predict / decision_function take raw documents (str) and give what `pegasos predict`
    gives; its steps are the featurizer (parameters: the model's `features` options) and
    the classifier on the featurizer's rows. classes_ are the file's labels: bool where they
    are False / True, numbers where every label is one (int64 for integers of at most 15
    digits, else float64), else text (str)."""
    model = _pegasos.Model.load(os.fspath(path))
    if model.kernel:
        raise ValueError("%s: a kernel model; the Python package handles linear models only" % path)
    featurizer = model.featurizer
    if featurizer is None:
        return _classifier(model)
    vectorizer = TextVectorizer._fitted(_pegasos.TextFeaturizer.from_json(featurizer))
    return make_pipeline(vectorizer, _classifier(model.without_featurizer()))
