"""TextVectorizer: the pegasos tool's raw-text featurisation (tokenizer, n-grams,
hashing or vocabulary, tf-idf; README § Raw text) as a scikit-learn transformer.

    import pegasos
    from pegasos import TextVectorizer, PegasosClassifier
    from sklearn.pipeline import make_pipeline
    clf = make_pipeline(TextVectorizer(), PegasosClassifier()).fit(docs, labels)
    pegasos.save(clf, "m.json")      # a text model file: `pegasos predict m.json mail.jsonl`
    pegasos.load("m.json")           # back as Pipeline(TextVectorizer, PegasosClassifier)

The rows are those `pegasos featurize --set features={...}` writes for the same
documents (tested). The classifier on its own is a numeric model; saved with its
vectorizer (pegasos.save on the pipeline, or clf.save(path, vectorizer=vec)) it is the
text model file `pegasos train` writes on the same documents with the same settings,
featurizer inside (README § Python).
"""
import json

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from . import _pegasos

# The `features` keys, in README order, with the tool's defaults.
_DEFAULTS = dict(mode="hashing", hash_bits=20, word_ngrams=1, char_ngrams_min=0, char_ngrams_max=0,
                 lowercase=True, strip_headers=True, stop_words=False, tf="sublinear", idf=True, normalize=True,
                 min_df=1, max_df=1.0, max_features=0, keep_terms=True)


def _documents(raw_documents):
    if isinstance(raw_documents, (str, bytes)):
        raise ValueError("TextVectorizer: expected an iterable of documents, got a single string")
    docs = []
    for doc in raw_documents:
        if isinstance(doc, bytes):
            doc = doc.decode("utf-8", errors="replace")
        if not isinstance(doc, str):
            raise TypeError("TextVectorizer: documents must be str or bytes, got %s" % type(doc).__name__)
        docs.append(doc)
    return docs


class TextVectorizer(TransformerMixin, BaseEstimator):
    """Raw documents (str) -> scipy CSR rows (float32), by the tool's featurizer.

    Parameters are the `features` setting's keys (defaults as in the tool):
    mode ("hashing" | "vocabulary"), hash_bits, word_ngrams, char_ngrams_min,
    char_ngrams_max, lowercase, strip_headers, stop_words, tf ("sublinear" | "raw"),
    idf, normalize, min_df, max_df, max_features, keep_terms. Invalid values raise
    ValueError with the tool's message (`features: ...`)."""

    def __init__(self, mode="hashing", hash_bits=20, word_ngrams=1, char_ngrams_min=0, char_ngrams_max=0,
                 lowercase=True, strip_headers=True, stop_words=False, tf="sublinear", idf=True, normalize=True,
                 min_df=1, max_df=1.0, max_features=0, keep_terms=True):
        self.mode = mode
        self.hash_bits = hash_bits
        self.word_ngrams = word_ngrams
        self.char_ngrams_min = char_ngrams_min
        self.char_ngrams_max = char_ngrams_max
        self.lowercase = lowercase
        self.strip_headers = strip_headers
        self.stop_words = stop_words
        self.tf = tf
        self.idf = idf
        self.normalize = normalize
        self.min_df = min_df
        self.max_df = max_df
        self.max_features = max_features
        self.keep_terms = keep_terms

    def features_setting(self):
        """The parameters as the tool's `features` object (only non-default values)."""
        out = {}
        for key, default in _DEFAULTS.items():
            value = getattr(self, key)
            if isinstance(value, np.generic):
                value = value.item()
            if value != default or type(value) is not type(default):
                out[key] = value
        return out

    def fit(self, raw_documents, y=None):
        featurizer = _pegasos.TextFeaturizer(json.dumps(self.features_setting()))
        docs = _documents(raw_documents)
        if featurizer.learns_from_fit:
            featurizer.fit(docs)
        elif not docs:  # hashing without idf or keep_terms learns nothing (as `pegasos train`, no fit)
            raise ValueError("text featurizer: no documents to fit")
        self._set_featurizer(featurizer)
        return self

    def _set_featurizer(self, featurizer):
        self._featurizer = featurizer
        self.n_features_out_ = featurizer.dimension

    @classmethod
    def _fitted(cls, featurizer):
        """A fitted TextVectorizer around an engine featurizer (a text model's), its
        parameters the featurizer's options."""
        vectorizer = cls(**json.loads(featurizer.options))
        vectorizer._set_featurizer(featurizer)
        return vectorizer

    def transform(self, raw_documents):
        check_is_fitted(self, "_featurizer")
        indptr, indices, data = self._featurizer.transform(_documents(raw_documents))
        return sp.csr_matrix((data, indices, indptr), shape=(len(indptr) - 1, self._featurizer.dimension))

    def fit_transform(self, raw_documents, y=None):
        docs = _documents(raw_documents)
        return self.fit(docs).transform(docs)

    @property
    def vocabulary_(self):
        """Vocabulary mode: {term: column}."""
        check_is_fitted(self, "_featurizer")
        return {term: i for i, term in enumerate(self._featurizer.vocabulary)}

    def __getstate__(self):
        state = dict(super().__getstate__())
        featurizer = state.pop("_featurizer", None)
        if featurizer is not None:
            state["_featurizer_json"] = featurizer.to_json()
        return state

    def __setstate__(self, state):
        text = state.pop("_featurizer_json", None)
        super().__setstate__(state)
        if text is not None:
            self._featurizer = _pegasos.TextFeaturizer.from_json(text)

    def _more_tags(self):
        return {"X_types": ["string"], "requires_y": False}
