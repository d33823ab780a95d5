"""TextVectorizer: the tool's featurizer from Python, the same rows as `pegasos featurize`;
pipelines of it and PegasosClassifier saved as (and loaded from) the CLI's text model files."""
import gzip
import json
import os
import pickle
import subprocess

import numpy as np
import pytest
from sklearn.datasets import load_svmlight_file
from sklearn.pipeline import Pipeline, make_pipeline

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


# ---- text model files from Python (pegasos.save / pegasos.load on pipelines) ----------

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "data")
SPAM_TRAIN = os.path.join(DATA, "spam_sample_train.jsonl.gz")
SPAM_TEST = os.path.join(DATA, "spam_sample_test.jsonl.gz")


def read_jsonl(path):
    """(texts, labels) of a JSONL corpus with the default fields, read in the test (not by pegasos)."""
    with gzip.open(path, "rt", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    return [r["text"] for r in rows], np.array([str(r["label"]) for r in rows])


def cli_predict(binary, model, data):
    out = subprocess.run([binary, "predict", str(model), str(data)], check=True, capture_output=True, text=True)
    return [line.split("\t") for line in out.stdout.splitlines()]


def python_predict(pipe, docs):
    """What `pegasos predict` prints for the pipeline: label, then the scores (%.9g) in the
    model file's class order."""
    clf = pipe[-1]
    scores = clf.decision_function(pipe[0].transform(docs))
    names = [str(c) for c in clf.classes_]
    engine = list(clf._model.classes)
    if scores.ndim == 1:
        scores = (scores if names.index(engine[1]) == 1 else -scores).reshape(-1, 1)
    else:
        scores = scores[:, [names.index(c) for c in engine]]
    return [[str(label)] + ["%.9g" % s for s in row] for label, row in zip(pipe.predict(docs), scores)]


def cli_train_text(binary, pipe, data, model, extra=()):
    """`pegasos train` on the JSONL with the pipeline's settings: the classifier's overrides
    and the vectorizer's parameters as the `features` setting (left out when all default)."""
    vec, clf = pipe[0], pipe[-1]
    args = [binary, "train"]
    for override in clf._overrides(2) + list(extra):
        args += ["--set", override]
    if vec.features_setting():
        args += ["--set", "features=" + json.dumps(vec.features_setting())]
    subprocess.run(args + [str(data), str(model)], check=True, capture_output=True)


# featurizer settings x classifier settings
TEXT_CASES = [
    (dict(), dict(lam=1e-4, solver="sdca", random_state=7)),
    (dict(hash_bits=16, word_ngrams=2, keep_terms=False), dict(lam=1e-3, solver="sdca", random_state=3)),
    # hashing without idf or keep_terms: nothing to fit (the CLI does not fit it either)
    (dict(hash_bits=14, idf=False, keep_terms=False, tf="raw"),
     dict(objective="weighted_hinge", class_weight="balanced", lam=1e-4, random_state=11)),
    (dict(mode="vocabulary", min_df=2, max_features=5000),
     dict(lam=1e-4, solver="pegasos", epochs=3, batch_size=8, random_state=5)),
]


@pytest.fixture(scope="module")
def spam():
    return read_jsonl(SPAM_TRAIN), read_jsonl(SPAM_TEST)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("vec_params,clf_params", TEXT_CASES)
def test_python_text_model_is_the_cli_text_model(binary, tmp_path, spam, vec_params, clf_params):
    (texts, labels), (test_texts, _) = spam
    pipe = make_pipeline(pegasos.TextVectorizer(**vec_params), pegasos.PegasosClassifier(**clf_params))
    pipe.fit(texts, labels)
    pegasos.save(pipe, tmp_path / "py.json")
    cli_train_text(binary, pipe, SPAM_TRAIN, tmp_path / "cli.json")
    py_model = json.loads((tmp_path / "py.json").read_text())
    assert py_model["features"]["options"] == json.loads(pipe[0]._featurizer.options)
    assert py_model["data"]["text_field"] == "text" and py_model["data"]["format"] == "auto"
    # the same file, byte for byte
    assert (tmp_path / "py.json").read_bytes() == (tmp_path / "cli.json").read_bytes()
    # `pegasos predict` on JSONL gives the same lines from both files, and the pipeline's values
    from_py = cli_predict(binary, tmp_path / "py.json", SPAM_TEST)
    assert from_py == cli_predict(binary, tmp_path / "cli.json", SPAM_TEST)
    assert from_py == python_predict(pipe, test_texts)
    assert len(from_py) == len(test_texts)
    # one raw document (a mail message as a file), as the CLI reads one for its own text models
    (tmp_path / "mail.eml").write_text(test_texts[0], encoding="utf-8")
    assert cli_predict(binary, tmp_path / "py.json", tmp_path / "mail.eml") == python_predict(pipe, test_texts[:1])


def test_python_text_model_loads_back_as_its_pipeline(tmp_path, spam):
    (texts, labels), (test_texts, _) = spam
    pipe = make_pipeline(pegasos.TextVectorizer(hash_bits=18, word_ngrams=2),
                         pegasos.PegasosClassifier(lam=1e-4, random_state=1)).fit(texts, labels)
    pegasos.save(pipe, tmp_path / "py.json")
    loaded = pegasos.load(tmp_path / "py.json")
    assert isinstance(loaded, Pipeline) and len(loaded.steps) == 2
    assert isinstance(loaded[0], pegasos.TextVectorizer) and isinstance(loaded[1], pegasos.PegasosClassifier)
    assert loaded[0].features_setting() == pipe[0].features_setting() == {"hash_bits": 18, "word_ngrams": 2}
    assert list(loaded.classes_) == ["ham", "spam"]
    expected = pipe.decision_function(test_texts)
    np.testing.assert_array_equal(loaded.decision_function(test_texts), expected)
    assert np.abs(expected).max() > 0.1  # real scores, not zeros
    np.testing.assert_array_equal(loaded.predict(test_texts), pipe.predict(test_texts))
    # saved again: the same file
    pegasos.save(loaded, tmp_path / "again.json")
    assert (tmp_path / "again.json").read_bytes() == (tmp_path / "py.json").read_bytes()
    # the classifier's own save is a numeric model (the featurizer is the vectorizer's)
    loaded[1].save(tmp_path / "numeric.json")
    assert json.loads((tmp_path / "numeric.json").read_text()).get("features") is None
    assert isinstance(pegasos.load(tmp_path / "numeric.json"), pegasos.PegasosClassifier)
    # clf.save(path, vectorizer=vec) is pegasos.save(pipeline, path)
    pipe[1].save(tmp_path / "method.json", vectorizer=pipe[0])
    assert (tmp_path / "method.json").read_bytes() == (tmp_path / "py.json").read_bytes()
    # pickled, the loaded pipeline predicts the same
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(loaded)).decision_function(test_texts), expected)


def test_cli_text_model_loads_as_a_pipeline(binary, tmp_path, spam):
    _, (test_texts, _) = spam
    config = os.path.join(DATA, "..", "configs", "spam.json")
    subprocess.run([binary, "train", "--config", config, SPAM_TRAIN, str(tmp_path / "cli.json")], check=True,
                   capture_output=True)
    loaded = pegasos.load(tmp_path / "cli.json")
    assert isinstance(loaded, Pipeline) and isinstance(loaded[0], pegasos.TextVectorizer)
    expected = cli_predict(binary, tmp_path / "cli.json", SPAM_TEST)
    scores = loaded.decision_function(test_texts)
    assert [["%.9g" % s] for s in scores] == [row[1:] for row in expected]
    assert [str(c) for c in loaded.predict(test_texts)] == [row[0] for row in expected]
    assert len(set(row[0] for row in expected)) == 2
    # back to a file: the CLI's file (its `features` echo as the config wrote it)
    pegasos.save(loaded, tmp_path / "again.json")
    assert (tmp_path / "again.json").read_bytes() == (tmp_path / "cli.json").read_bytes()


def test_cli_multiclass_vocabulary_model_loads_as_a_pipeline(binary, tmp_path):
    topics = ["sports", "cooking", "travel"]
    words = {"sports": "match goal team score league coach",
             "cooking": "recipe oven flour sugar bake dinner",
             "travel": "flight hotel beach passport train museum"}
    rng = np.random.default_rng(0)
    docs, labels = [], []
    for i in range(90):
        topic = topics[i % 3]
        vocabulary = words[topic].split() + "the a of and today news".split()
        docs.append(" ".join(rng.choice(vocabulary, size=12)))
        labels.append(topic)
    with open(tmp_path / "docs.jsonl", "w") as f:
        for doc, label in zip(docs, labels):
            f.write(json.dumps({"text": doc, "label": label}) + "\n")
    subprocess.run([binary, "train", "--set", "objective=ova", "--set", "lambda=0.01", "--set",
                    'features={"mode": "vocabulary", "word_ngrams": 2}', str(tmp_path / "docs.jsonl"),
                    str(tmp_path / "cli.json")], check=True, capture_output=True)
    loaded = pegasos.load(tmp_path / "cli.json")
    assert loaded[0].mode == "vocabulary" and loaded[0].word_ngrams == 2
    assert list(loaded.classes_) == sorted(topics)
    expected = cli_predict(binary, tmp_path / "cli.json", tmp_path / "docs.jsonl")
    scores = loaded.decision_function(docs)
    assert scores.shape == (90, 3)
    assert [["%.9g" % s for s in row] for row in scores] == [row[1:] for row in expected]
    assert list(loaded.predict(docs)) == [row[0] for row in expected] == labels


def test_saved_text_model_reads_the_fields_its_settings_name(binary, tmp_path):
    """The reader settings (text_field, label_field) come from the classifier's settings, as
    `pegasos train --set text_field=...` stores them."""
    pipe = make_pipeline(pegasos.TextVectorizer(),
                         pegasos.PegasosClassifier(lam=1e-2, settings={"text_field": "body"})).fit(DOCS, LABELS)
    pegasos.save(pipe, tmp_path / "m.json")
    with open(tmp_path / "mail.jsonl", "w") as f:
        for doc in DOCS:
            f.write(json.dumps({"body": doc}) + "\n")
    assert cli_predict(binary, tmp_path / "m.json", tmp_path / "mail.jsonl") == python_predict(pipe, DOCS)


def test_bad_text_model_inputs(tmp_path):
    from sklearn.exceptions import NotFittedError
    from sklearn.preprocessing import MaxAbsScaler
    path = tmp_path / "m.json"
    fitted = make_pipeline(pegasos.TextVectorizer(hash_bits=12), pegasos.PegasosClassifier(lam=1e-2)).fit(DOCS, LABELS)
    with pytest.raises(TypeError, match=r"exactly \[TextVectorizer, PegasosClassifier\].*MaxAbsScaler"):
        pegasos.save(make_pipeline(pegasos.TextVectorizer(), MaxAbsScaler(), pegasos.PegasosClassifier()), path)
    with pytest.raises(TypeError, match="exactly"):
        pegasos.save(make_pipeline(pegasos.TextVectorizer()), path)
    with pytest.raises(TypeError, match="exactly"):
        pegasos.save(make_pipeline(pegasos.PegasosClassifier(), pegasos.TextVectorizer()), path)
    with pytest.raises(TypeError, match="expected a fitted PegasosClassifier or Pipeline"):
        pegasos.save(fitted[0], path)
    with pytest.raises(NotFittedError):
        pegasos.save(make_pipeline(pegasos.TextVectorizer(), pegasos.PegasosClassifier()), path)
    with pytest.raises(NotFittedError):  # a fitted classifier, an unfitted vectorizer
        fitted[1].save(path, vectorizer=pegasos.TextVectorizer(hash_bits=12))
    with pytest.raises(TypeError, match="vectorizer: expected a fitted pegasos.TextVectorizer"):
        fitted[1].save(path, vectorizer=MaxAbsScaler())
    # a classifier not trained on this vectorizer's rows
    other = pegasos.TextVectorizer(hash_bits=13).fit(DOCS)
    with pytest.raises(ValueError, match="trained on 4096 features but the text featurizer makes 8192"):
        fitted[1].save(path, vectorizer=other)
    # parameters changed after fit: the file would claim settings the featurizer does not have
    changed = pickle.loads(pickle.dumps(fitted))
    changed[0].set_params(lowercase=False)
    with pytest.raises(ValueError, match="not the text featurizer's options"):
        pegasos.save(changed, path)
    # a classifier whose settings read numeric data
    numeric = make_pipeline(pegasos.TextVectorizer(hash_bits=12),
                            pegasos.PegasosClassifier(lam=1e-2, settings={"format": "libsvm"})).fit(DOCS, LABELS)
    with pytest.raises(ValueError, match="format: .*libsvm.*a text model reads raw text"):
        pegasos.save(numeric, path)
    assert not path.exists()
