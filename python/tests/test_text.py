"""TextVectorizer: the tool's featurizer from Python, the same rows as `pegasos featurize`."""
import json
import pickle
import subprocess

import numpy as np
import pytest
from sklearn.datasets import load_svmlight_file
from sklearn.pipeline import make_pipeline

import pegasos

DOCS = ["Cheap pills, buy now!!! Free offer", "Meeting moved to Tuesday, see agenda", "FREE money: click here now",
        "Lunch on Friday? The agenda is attached", "Win a free cruise now", "Minutes of the project meeting",
        "Subject: offer\n\nclick now for cheap watches", "Re: the release notes for Tuesday"] * 3
LABELS = ["spam", "ham", "spam", "ham", "spam", "ham", "spam", "ham"] * 3

SETTINGS = [dict(), dict(mode="vocabulary", min_df=2), dict(hash_bits=12, word_ngrams=2, tf="raw", idf=False),
            dict(mode="vocabulary", char_ngrams_min=3, char_ngrams_max=4, word_ngrams=0, normalize=False)]


@pytest.mark.parametrize("params", SETTINGS)
def test_rows_are_those_of_pegasos_featurize(binary, tmp_path, params):
    vec = pegasos.TextVectorizer(**params)
    rows = vec.fit_transform(DOCS)
    assert rows.shape == (len(DOCS), vec.n_features_out_) and rows.dtype == np.float32
    with open(tmp_path / "docs.jsonl", "w") as f:
        for doc, label in zip(DOCS, LABELS):
            f.write(json.dumps({"text": doc, "label": label}) + "\n")
    subprocess.run([binary, "featurize", "--set", "features=" + json.dumps(vec.features_setting()),
                    str(tmp_path / "docs.jsonl"), str(tmp_path / "out.svm")], check=True, capture_output=True)
    expected, _ = load_svmlight_file(str(tmp_path / "out.svm"), n_features=vec.n_features_out_, zero_based=False)
    np.testing.assert_array_equal(rows.toarray(), expected.toarray().astype(np.float32))


def test_pipeline_pickle_and_vocabulary():
    pipe = make_pipeline(pegasos.TextVectorizer(mode="vocabulary"), pegasos.PegasosClassifier(lam=1e-2))
    pipe.fit(DOCS, LABELS)
    assert pipe.score(DOCS, LABELS) == 1.0
    copy = pickle.loads(pickle.dumps(pipe))
    np.testing.assert_array_equal(copy.decision_function(DOCS), pipe.decision_function(DOCS))
    vocabulary = pipe[0].vocabulary_
    assert "agenda" in vocabulary and vocabulary["agenda"] < pipe[0].n_features_out_


def test_bad_settings_and_inputs():
    with pytest.raises(ValueError, match="features"):
        pegasos.TextVectorizer(mode="words").fit(DOCS)
    with pytest.raises(ValueError, match="hash_bits"):
        pegasos.TextVectorizer(hash_bits=99).fit(DOCS)
    with pytest.raises(ValueError, match="single string"):
        pegasos.TextVectorizer().fit("one document")
    with pytest.raises(TypeError):
        pegasos.TextVectorizer().fit([1, 2])
