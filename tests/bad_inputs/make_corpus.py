#!/usr/bin/env python3
"""Write the bad-input corpus (tests/bad_inputs/{data,config,model}/...) and
its manifest.json. tests/test_bad_inputs.cpp runs the real `pegasos` CLI on
every case and checks the exit code, that stderr contains every listed
substring, and that nothing crashed (no signal, no exit code >= 128).

Run from anywhere: python3 tests/bad_inputs/make_corpus.py
The files are committed; re-run after editing a case here.

Manifest fields per case:
  file      path relative to tests/bad_inputs/
  command   train | train --config | predict | eval
            train:          pegasos train -q [--set ...] FILE OUT
            train --config: pegasos train -q --config FILE [--set ...] data/good.svm OUT
            predict / eval: FILE is the model (role "model", run on data/good.svm)
                            or the data (role "data", with model/good.json)
  role      data | model | config (what FILE is)
  set       optional list of KEY=VALUE for --set
  exit      expected exit code: 2 = bad input, 0 = documented acceptance
  stderr    substrings stderr must contain (exit 2: the file name and the
            line/column or JSON field, and the problem)
  expect    exit 0 only, train: {"dimension": d, "classes": [...]} of the model;
            predict: {"lines": n} of stdout
  why       one line: what the case is about
"""
import gzip
import json
import os
import random

ROOT = os.path.dirname(os.path.abspath(__file__))
cases = []


def write(rel, content):
    path = os.path.join(ROOT, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if isinstance(content, str):
        content = content.encode("utf-8", "surrogateescape")
    with open(path, "wb") as f:
        f.write(content)


def case(rel, content, command, code, stderr=(), role=None, set_=(), expect=None, why=""):
    if content is not None:
        write(rel, content)
    if role is None:
        role = {"train": "data", "train --config": "config"}.get(command, "model")
    c = {"file": rel, "command": command, "role": role, "exit": code, "stderr": list(stderr), "why": why}
    if set_:
        c["set"] = list(set_)
    if expect:
        c["expect"] = expect
    cases.append(c)


def name(rel):
    return os.path.basename(rel)


# ---------------------------------------------------------------- fixtures
GOOD_SVM = "1 1:0.5 2:1\n-1 1:-0.5 3:1\n1 1:1 2:0.5\n-1 1:-1 3:0.5\n"
write("data/good.svm", GOOD_SVM)
GOOD_MODEL = {
    "format_version": 1, "kind": "linear", "objective": "hinge", "classes": ["-1", "1"],
    "dimension": 3, "outputs": 1, "bias_mode": "feature", "bias": [0.125],
    "weights": [[1.5, 0.25, -0.75]],
    "settings": {"lambda": 0.01, "normalize": "none", "objective": "hinge"},
    "data": {"format": "auto", "label_column": 0, "normalize": "none"},
    "training": {"class_cost": [1.0, 1.0], "regularizer": 0.01, "examples": 4},
}
write("model/good.json", json.dumps(GOOD_MODEL, indent=1) + "\n")


def model_variant(rel, change, command, code, stderr, why, role="model"):
    m = json.loads(json.dumps(GOOD_MODEL))
    change(m)
    case(rel, json.dumps(m, indent=1) + "\n", command, code, stderr, role=role, why=why)


# ---------------------------------------------------------------- LIBSVM
d = "data/libsvm/"
def svm(fname, text, code, stderr_tail=(), line_col=None, set_=(), expect=None, why="", command="train"):
    rel = d + fname
    parts = [name(rel) + (":" + line_col + ":" if line_col else "")] if code == 2 else []
    case(rel, text, command, code, parts + list(stderr_tail), role="data", set_=set_, expect=expect, why=why)

svm("truncated_value.svm", "1 1:0.5 2:0.3\n-1 1:", 2, ["is not a number"], "2:6", why="line cut after 'INDEX:'")
svm("truncated_token.svm", "1 1:0.5\n-1 1:0.2 2", 2, ["expected INDEX:VALUE"], "2:10", why="last line cut inside a token, no final newline")
svm("double_colon.svm", "1 1:2:3\n-1 2:1\n", 2, ["value '2:3' is not a number"], "1:5", why="1:2:3")
svm("negative_index.svm", "1 -1:0.5\n-1 2:1\n", 2, ["feature index '-1' is not a positive integer"], "1:3", why="-1:0.5 as a feature")
svm("index_zero.svm", "1 0:0.5\n-1 2:1\n", 2, ["feature index 0 is not positive"], "1:3", why="indices are 1-based")
svm("index_2pow40.svm", "1 1:1\n-1 1099511627776:0.5\n", 2, ["exceeds the maximum 2147483648"], "2:4", why="2^40 > default max_feature_index 2^31")
svm("index_2pow31.svm", "1 1:1\n-1 2147483649:0.5\n", 2, ["'2147483649' exceeds the maximum 2147483648"], "2:4", why="one above the default maximum")
svm("index_huge_digits.svm", "1 1:1\n-1 " + "9" * 40 + ":1\n", 2, ["exceeds the maximum"], "2:4", why="index does not fit in 64 bits")
svm("index_above_setting.svm", "1 1:1\n-1 11:0.5\n", 2, ["'11' exceeds the maximum 10", "raise max_feature_index"], "2:4",
    set_=["max_feature_index=10"], why="max_feature_index from --set")
svm("index_at_setting.svm", "1 1:1\n-1 10:0.5\n", 0, set_=["max_feature_index=10", "epochs=2"],
    expect={"dimension": 10, "classes": ["-1", "1"]}, why="max_feature_index is inclusive; dimension comes from the data")
svm("index_uint32_max.svm", "1 1:1\n-1 4294967295:0.5\n", 2, ["exceeds the maximum 4294967294"], "2:4",
    set_=["max_feature_index=4294967294"], why="regression: index 2^32-1 overflowed the engine's bias slot (SIGSEGV)")
svm("index_plus_sign.svm", "1 +1:1\n-1 2:1\n", 2, ["'+1' is not a positive integer"], "1:3", why="signed index")
svm("index_space.svm", "1 1 :1\n-1 2:1\n", 2, ["expected INDEX:VALUE, got '1'"], "1:3", why="space before the colon")
svm("unsorted.svm", "1 1:1 3:1 2:1\n-1 2:1\n", 2, ["feature index 2 is smaller than the previous index 3"], "1:11", why="decreasing indices")
svm("duplicate.svm", "1 2:1 2:0.5\n-1 2:1\n", 2, ["feature index 2 is repeated"], "1:7", why="same index twice")
svm("nan_value.svm", "1 1:nan\n-1 2:1\n", 2, ["value 'nan' is NaN"], "1:5", why="NaN value")
svm("inf_value.svm", "1 1:1\n-1 2:-inf\n", 2, ["infinite"], "2:6", why="-inf value")
svm("overflow_1e999.svm", "1 1:1e999\n-1 2:1\n", 2, ["'1e999'", "out of range"], "1:5", why="overflows even a double")
svm("overflow_float32.svm", "1 1:1e39\n-1 2:1\n", 2, ["'1e39'", "out of range for float32"], "1:5", why="fits a double, not a float")
svm("hex_value.svm", "1 1:0x10\n-1 2:1\n", 2, ["value '0x10' is not a number"], "1:5", why="hex floats are not accepted")
svm("nan_label.svm", "nan 1:1\n-1 2:1\n", 2, ["label 'nan' is not finite"], "1:1", why="NaN label")
svm("label_1e999.svm", "1 1:1\n1e999 2:1\n", 2, ["label '1e999' is not finite"], "2:1", why="overflowing numeric label (was kept as a string)")
svm("label_too_long.svm", "x" * 2000 + " 1:1\n-1 2:1\n", 2, ["is longer than 1024 bytes"], "1:1", why="a 2000-byte label")
svm("missing_label.svm", "1 1:1\n2:1 3:1\n", 2, ["missing label: the line starts with feature '2:1'"], "2:1", why="first token is a feature")
svm("invalid_utf8_label.svm", b"\xc3\x28 1:1\n-1 1:-1\n", 2, ["is not valid UTF-8"], "1:1", why="regression: was an internal error when saving the model JSON")
svm("invalid_utf8_label_late.svm", b"1 1:1\n-1 1:-1\nspam\xff 2:1\n", 2, ["is not valid UTF-8"], "3:1", why="invalid UTF-8 label on a later line")
svm("overlong_utf8_label.svm", b"\xc0\xaf 1:1\n-1 1:-1\n", 2, ["is not valid UTF-8"], "1:1", why="overlong encoding of '/'")
svm("surrogate_utf8_label.svm", b"\xed\xa0\x80 1:1\n-1 1:-1\n", 2, ["is not valid UTF-8"], "1:1", why="UTF-16 surrogate in UTF-8")
svm("invalid_utf8_value.svm", b"1 1:1\n-1 1:\xff\xfe\n", 2, ["is not a number"], "2:6", why="invalid UTF-8 bytes as a value")
svm("utf8_labels.svm", "café 1:1\nthé 1:-1\ncafé 2:1\n", 0, set_=["epochs=2"],
    expect={"dimension": 2, "classes": ["café", "thé"]}, why="valid non-ASCII labels are kept")
svm("empty.svm", "", 2, ["no examples"], why="0 bytes")
svm("blank_lines_only.svm", "\n\n   \n\t\n", 2, ["no examples"], why="whitespace only")
svm("comments_only.svm", "# a comment\n# another\n", 2, ["no examples"], why="comments only")
svm("bom_only.svm", "\ufeff", 2, ["no examples"], why="a UTF-8 BOM and nothing else")
svm("blank_lines_between.svm", "\n1 1:1\n\n\n-1 1:-1 2:1\n   \n", 0, set_=["epochs=2"],
    expect={"dimension": 2, "classes": ["-1", "1"]}, why="blank lines are skipped")
svm("crlf.svm", "1 1:1 2:0.5\r\n-1 1:-1\r\n1 3:1\r\n", 0, set_=["epochs=2"],
    expect={"dimension": 3, "classes": ["-1", "1"]}, why="CRLF line ends are accepted")
svm("bom.svm", "\ufeff1 1:1\n-1 1:-1 2:1\n", 0, set_=["epochs=2"],
    expect={"dimension": 2, "classes": ["-1", "1"]}, why="a UTF-8 BOM is accepted")
svm("bom_crlf_no_final_newline.svm", "\ufeff1 1:1\r\n-1 4:1", 0, set_=["epochs=2"],
    expect={"dimension": 4, "classes": ["-1", "1"]}, why="BOM + CRLF + no final newline")
svm("plus_sign_values.svm", "+1 1:+2 2:+.5e+1\n-1\t\t003:-1E-2  qid:+4 # note 9:9\n+1\n", 0, set_=["epochs=2"],
    expect={"dimension": 3, "classes": ["-1", "1"]},
    why="issue 19: '+' on values and labels, exponents, tabs, leading zeros, qid, comments, label-only rows")
svm("plus_sign_alone.svm", "1 1:1\n-1 2:+\n", 2, ["value '+' is not a number"], "2:6", why="a sign with no number")
svm("plus_sign_doubled.svm", "1 1:++2\n-1 2:1\n", 2, ["value '++2' is not a number"], "1:5", why="two signs")
svm("qid_not_integer.svm", "1 qid:x 1:1\n-1 2:1\n", 2, ["qid value 'x' is not an integer"], "1:7",
    why="qid:N needs an integer (was silently ignored)")
svm("cr_only.svm", "1 1:1\r-1 1:-1\r", 2, ["expected INDEX:VALUE, got '-1'"], "1:7",
    why="old Mac CR-only line ends: one line; CR counts as a space")
svm("labels_only.svm", "1\n-1\n1\n", 0, set_=["epochs=2"], expect={"dimension": 0, "classes": ["-1", "1"]},
    why="rows without features: dimension 0, only the bias learns")
svm("csv_as_libsvm.data", "1,0.5,2\n0,1.5,1\n1,0.25,3\n", 2, ["no row has a feature and the labels hold commas",
    "--set format=csv"], why="CSV lines in a file named neither .csv nor .svm: read as LIBSVM, each line a label alone")
svm("all_zero_rows.svm", "1 1:0 2:0\n-1 1:0\n1 3:0\n", 0, set_=["epochs=3"], expect={"dimension": 3, "classes": ["-1", "1"]},
    why="explicit zeros are dropped; the dimension still counts them")
svm("huge_values.svm", "1 1:1e30 2:1\n-1 1:-1e30 2:0.5\n1 1:3e38\n-1 2:-3.4e38\n", 0, set_=["epochs=5"],
    expect={"dimension": 2, "classes": ["-1", "1"]}, why="values near FLT_MAX train to a finite model")
svm("huge_values_tiny_lambda.svm", "1 1:3e38\n-1 1:-3e38 2:3e38\n", 0, set_=["lambda=1e-9", "projection=false", "epochs=20"],
    expect={"dimension": 2, "classes": ["-1", "1"]}, why="lambda 1e-9 without projection: still finite")
svm("single_example.svm", "1 1:0.5\n", 2, ["only one class"], why="one example, one class")
svm("one_class.svm", "spam 1:1\nspam 2:1\n", 2, ["only one class", "'spam'"], why="every row has the same label")
random.seed(7)
garbage = bytes(random.randrange(256) for _ in range(512))
svm("binary_garbage.svm", b"\x00\x01\x02" + garbage, 2, ["binary data (NUL bytes)"], why="random bytes")
import bz2, lzma
_rows = b"1 1:0.5 2:1\n-1 2:0.25\n" * 50
svm("compressed.svm.bz2", bz2.compress(_rows), 2, ["bzip2-compressed data, which is not read (gzip is)"], why="bzip2: named, not 'binary data'")
svm("compressed.svm.xz", lzma.compress(_rows), 2, ["xz-compressed data, which is not read (gzip is)"], why="xz: named")
svm("compressed.svm.zst", b"\x28\xb5\x2f\xfd" + b"\x01" * 40, 2, ["zstd-compressed data"], why="zstd magic: named")
svm("binary_no_nul.svm", bytes(b if b not in (0, 10) else 0x41 for b in garbage), 2, [], "1",
    why="random bytes without NUL or newline: a parse error on line 1")
svm("nul_in_late_line.svm", "1 1:1\n" * 20000 + "-1 1:\x002\n", 2, ["20001:6:", "is not a number"],
    why="NUL after the first 64 KB (not sniffed as binary): an ordinary parse error")
# gzip
good_gz = gzip.compress(GOOD_SVM.encode() * 50)
svm("truncated.svm.gz", good_gz[: len(good_gz) // 2], 2, ["truncated gzip stream"], why="half a gzip file")
svm("corrupt.svm.gz", b"\x1f\x8b\x08\x00" + bytes(60), 2, ["corrupt gzip data"], why="gzip magic, garbage body")
# predict / eval on bad data with a good model
svm("predict_unsorted.svm", "1:1 3:1 2:1\n", 2, ["is smaller than the previous index 3"], "1:9", why="predict reads with the same rules",
    command="predict")
svm("predict_unlabeled.svm", "1:1 3:1\n2:0.5\n\n-1 1:-1\n", 0, expect={"lines": 3}, command="predict",
    why="predict: labels optional, blank lines skipped")
svm("predict_wide.svm", "1 1:1 5:1 99999:1\n", 0, expect={"lines": 1}, command="predict",
    why="indices beyond the model's dimension are ignored")
svm("eval_unknown_label.svm", "1 1:1\neggs 1:0.5\n", 2, ["label 'eggs' does not occur in the model's classes"], command="eval",
    why="eval: a label the model does not know")
svm("eval_unlabeled.svm", "1 1:1\n2:1\n", 2, ["missing label"], "2:1", command="eval", why="eval needs labels")

# ---------------------------------------------------------------- CSV
d = "data/csv/"
def csv(fname, text, code, stderr_tail=(), line_col=None, set_=(), expect=None, why=""):
    rel = d + fname
    parts = [name(rel) + (":" + line_col + ":" if line_col else "")] if code == 2 else []
    case(rel, text, "train", code, parts + list(stderr_tail), set_=set_, expect=expect, why=why)

csv("short_row.csv", "label,x,y\n1,0.5,0.2\n-1,0.1\n", 2, ["expected 3 fields, found 2"], "3:7", why="a field missing")
csv("long_row.csv", "label,x,y\n1,0.5,0.2\n-1,0.1,0.2,0.3\n", 2, ["too many fields"], "3:12", why="an extra field")
csv("nan.csv", "label,x,y\n1,nan,0.2\n-1,0.1,0.2\n", 2, ["value 'nan' is NaN"], "2:3", why="NaN value")
csv("inf.csv", "label,x,y\n1,0.5,inf\n-1,0.1,0.2\n", 2, ["infinite"], "2:7", why="inf value")
csv("overflow.csv", "label,x,y\n1,1e999,0.2\n-1,0.1,0.2\n", 2, ["out of range"], "2:3", why="1e999")
csv("empty_field.csv", "label,x,y\n1,,0.2\n-1,0.1,0.2\n", 2, ["empty field 2"], "2:3", why="missing value")
csv("empty_label.csv", "label,x,y\n,0.3,0.2\n-1,0.1,0.3\n", 2, ["missing label"], "2:1", why="empty label field")
csv("not_a_number.csv", "label,x,y\n1,abc,0.2\n-1,0.1,0.3\n", 2, ["value 'abc' is not a number"], "2:3", why="text in a feature column")
csv("text_lines.tsv", "spam\tbuy now cheap\nham\thello there\nspam\tcheap pills\n", 2,
    ["value 'hello there' is not a number", "--set format=text_tsv"], "2:5", why="LABEL<TAB>TEXT lines named .tsv: the text format is suggested")
csv("decimal_comma.csv", "label;x\n1;0,5\n-1;1\n", 2, ["value '0,5' is not a number"], "2:3", why="decimal comma with ';' separator")
csv("unbalanced_quote.csv", '1,"0.5",0.2\n-1,",0.1,0.3\n', 2, ["unclosed quote"], "2:4", why="a lone quote")
csv("quoted_delimiter_header.csv", 'label,a,"b,c"\n1,0.5,2\n-1,1,3\n', 2, ["field '\"b' has an unclosed quote", "not supported"], "1:9",
    why="RFC 4180 quoting of a delimiter in a header name: said so, not 'expected 4 fields' on line 2")
csv("quoted_delimiter_value.csv", 'label,a,b\n1,"1,5",2\n-1,1,3\n', 2, ["field '\"1' has an unclosed quote"], "2:3",
    why="a quoted decimal comma: the quote named, not '\"1 is not a number'")
csv("compressed.csv.xz", __import__("lzma").compress(b"label,a\n1,2\n-1,3\n"), 2, ["xz-compressed data"], why="xz CSV: named")
csv("empty.csv", "", 2, ["no examples"], why="0 bytes")
csv("header_only.csv", "label,x,y\n", 2, ["no examples"], why="a header and no rows")
csv("single_column.csv", "1\n-1\n", 2, ["a CSV row needs a label and at least one feature"], "1", why="one field per row")
csv("invalid_utf8_label.csv", b"label,a\n\xff,1\n1,2\n", 2, ["is not valid UTF-8"], "2:1", why="regression: was an internal error when saving")
csv("nul.csv", b"label,a\n1,\x001\n", 2, ["binary data (NUL bytes)"], why="NUL byte")
csv("crlf.csv", "label,x,y\r\n1,0.5,0.2\r\n-1,0.1,0.3\r\n", 0, set_=["epochs=2"], expect={"dimension": 2, "classes": ["-1", "1"]},
    why="CRLF accepted")
csv("bom.csv", "\ufefflabel,x,y\n1,0.5,0.2\n-1,0.1,0.3\n", 0, set_=["epochs=2"], expect={"dimension": 2, "classes": ["-1", "1"]},
    why="BOM accepted (header detected after it)")
csv("all_zero.csv", "label,x\n1,0\n-1,0\n", 0, set_=["epochs=2"], expect={"dimension": 1, "classes": ["-1", "1"]},
    why="all-zero feature column")
csv("label_column_missing.csv", "label,x,y\n1,0.5,0.2\n-1,0.1,0.3\n", 2, ["no column named 'zz' in the header"], "1",
    set_=["label_column=zz"], why="label_column by a name that is not there")
csv("label_column_out_of_range.csv", "label,x,y\n1,0.5,0.2\n-1,0.1,0.3\n", 2, ["label_column 7 is outside the 3 fields"], "1",
    set_=["label_column=7"], why="label_column index too large")

# ---------------------------------------------------------------- config
d = "config/"
def cfg(fname, text, code, stderr, why, set_=(), names_file=True):
    rel = d + fname
    parts = [name(rel)] if names_file and code == 2 else []
    case(rel, text, "train --config", code, parts + list(stderr), set_=set_, why=why)

cfg("lambda_string.json", '{"lambda": "0.1"}', 2, ["lambda: expected a number, found string"], "wrong type")
cfg("epochs_bool.json", '{"epochs": true}', 2, ["epochs: expected a number, found boolean"], "wrong type")
cfg("lambda_null.json", '{"lambda": null}', 2, ["lambda: expected a number, found null\n"], "null value (said once, not 'null null')")
cfg("seed_past_int64.json", '{"seed": 18446744073709551615}', 2, ["seed: the integer 18446744073709551615 is out of range"], "an integer too large, not 'expected an integer'")
cfg("text_field_on_numeric.json", '{"text_field": "body"}', 2, ["text_field: names a field of JSONL documents", "is numeric data"], "a setting that does not apply to LIBSVM data", names_file=False)
cfg("label_column_array.json", '{"label_column": [1]}', 2, ["label_column: expected a number, found array"], "wrong type")
cfg("batch_size_fraction.json", '{"batch_size": 1.5}', 2, ["batch_size: expected an integer"], "fractional integer")
cfg("seed_negative.json", '{"seed": -1}', 2, ["seed: must be >= 0"], "out of range")
cfg("lambda_zero.json", '{"lambda": 0}', 2, ["lambda: must be > 0"], "out of range")
cfg("iterations_huge.json", '{"iterations": 1e300}', 2, ["iterations: the integer 1e+300 is out of range"], "too large for an integer")
cfg("max_feature_index_huge.json", '{"max_feature_index": 1099511627776}', 2, ["max_feature_index: must be between 1 and 4294967294"], "2^40")
cfg("threads_huge.json", '{"threads": 100000}', 2, ["threads: must be between 0"], "out of range")
cfg("unknown_key.json", '{"frobnicate": 1}', 2, ["frobnicate: unknown setting"], "unknown key")
cfg("typo_key.json", '{"lamda": 0.1}', 2, ["lamda: unknown setting (did you mean 'lambda'?)"], "misspelt key")
cfg("objective_unknown.json", '{"objective": "svr"}', 2, ["objective: 'svr' is not one of"], "unknown objective")
cfg("class_weight_on_hinge.json", '{"objective": "hinge", "class_weight": {"1": 2}}', 2, ["class_weight: only used by objective"], "key that the objective ignores")
cfg("class_weight_unknown_label.json", '{"objective": "weighted_hinge", "class_weight": {"7": 2}}', 2,
    ["class_weight: label '7' does not occur in", "good.svm"], "label not in the data (message names the data file)", names_file=False)
cfg("not_object.json", "[1, 2]", 2, ["a configuration file is a JSON object"], "top level is an array")
cfg("truncated.json", '{"lambda": 0.1', 2, ["invalid JSON (it ends early: the file is cut off)"], "cut short")
cfg("empty.json", "", 2, ["invalid JSON (the file is empty)"], "0 bytes")
cfg("overflow_number.json", '{"lambda": 1e999}', 2, ["invalid JSON", "number overflow"], "1e999 is not a double")
cfg("invalid_utf8.json", b'{"positive_label": "\xff"}', 2, ["invalid JSON", "ill-formed UTF-8"], "invalid UTF-8 in a string")
cfg("binary_garbage.json", b"\x00\x01\x02" + garbage[:64], 2, ["invalid JSON"], "random bytes")
cfg("lambda_denormal.json", '{"lambda": 1e-320, "solver": "pegasos", "epochs": 2}', 2,
    ["lambda_denormal.json", "lambda: must be at least 2.2e-308"], "a subnormal lambda (1/lambda overflows) is refused before training (Pegasos had run to infinite weights; SDCA ran at C = inf)")
cfg("lambda_denormal_sdca.json", '{"lambda": 1e-320, "solver": "sdca", "epochs": 2}', 2,
    ["lambda_denormal_sdca.json", "lambda: must be at least 2.2e-308"], "a subnormal lambda (1/lambda overflows) is refused before training (Pegasos had run to infinite weights; SDCA ran at C = inf)")
cfg("lambda_tiny.json", '{"lambda": 1e-9, "epochs": 5}', 0, [], "lambda 1e-9 is fine")
cfg("lambda_large.json", '{"lambda": 1e3, "epochs": 5}', 0, [], "lambda 1e3 is fine")
cfg("comments.json", '// a comment\n{"lambda": 0.01, /* inline */ "epochs": 2}\n', 0, [], "comments are allowed in config files")
cfg("duplicate_key.json", '{"lambda": 0.1, "lambda": 0.01, "epochs": 2}', 0, [], "duplicate keys: the last one wins (JSON parser behaviour)")
cfg("bom.json", '\ufeff{"lambda": 0.01, "epochs": 2}', 0, [], "a UTF-8 BOM is skipped")

# ---------------------------------------------------------------- model
d = "model/"
def mdl(fname, change, code, stderr, why, command="predict"):
    model_variant(d + fname, change, command, code, ([name(fname)] if code == 2 else []) + list(stderr), why)

mdl("missing_weights.json", lambda m: m.pop("weights"), 2, ["/weights: missing field"], "missing field")
mdl("missing_classes.json", lambda m: m.pop("classes"), 2, ["/classes: missing field"], "missing field")
mdl("missing_format_version.json", lambda m: m.pop("format_version"), 2, ["/format_version: missing field"], "missing field")
mdl("missing_bias.json", lambda m: m.pop("bias"), 2, ["/bias: missing field"], "missing field")
mdl("extra_fields.json", lambda m: m.update(comment="from a newer writer", extra={"x": [1, 2]}), 0, [],
    "unknown fields are ignored (forward compatible)")
mdl("extra_fields_eval.json", lambda m: m.update(comment="from a newer writer"), 0, [], "unknown fields are ignored by eval too",
    command="eval")
mdl("newer_version.json", lambda m: m.update(format_version=3), 2, ["/format_version: version 3 is newer", "upgrade pegasos"],
    "a model from a newer pegasos")
mdl("version_string.json", lambda m: m.update(format_version="1"), 2, ["/format_version: expected an integer"], "wrong type")
mdl("version_zero.json", lambda m: m.update(format_version=0), 2, ["/format_version: invalid version"], "out of range")
mdl("kind_kernel.json", lambda m: m.update(kind="alien"), 2, ["/kind: unsupported model kind"], "unknown kind")
mdl("objective_number.json", lambda m: m.update(objective=3), 2, ["wrong type", "/objective"], "wrong type")
mdl("classes_one.json", lambda m: m.update(classes=["1"]), 2, ["/classes: a model needs at least two classes"], "one class")
mdl("classes_numbers.json", lambda m: m.update(classes=[-1, 1]), 2, ["wrong type", "/classes/0"], "classes must be strings")
mdl("classes_duplicate.json", lambda m: m.update(classes=["1", "1"]), 2, ["/classes/1: class '1' is repeated"], "duplicate class")
mdl("classes_tab.json", lambda m: m.update(classes=["a\tb", "1"]), 2,
    ["/classes/0: class name contains a control character"], "predict prints classes as a tab-separated column")
mdl("classes_newline.json", lambda m: m.update(classes=["-1", "a\nb"]), 2,
    ["/classes/1: class name contains a control character"], "a line break would split predict's output lines")
mdl("classes_empty.json", lambda m: m.update(classes=["", "1"]), 2, ["/classes/0: a class name cannot be empty"],
    "an empty class printed as an empty column")
mdl("threshold_other_class.json", lambda m: m.update(threshold={"score": 0.5, "positive_class": "7"}), 2,
    ["/threshold/positive_class: expected \"1\""], "a threshold record naming a class the model does not have")
# The error names the data file and its row (the model file is valid).
model_variant(d + "weights_overflow.json", lambda m: m.update(weights=[[1.7e308, 1.7e308, -1.7e308]]), "predict", 2,
              ["good.svm: row 1: the model's decision value is"], "finite weights whose scores overflow: no NaN label")
model_variant(d + "weights_overflow_eval.json", lambda m: m.update(weights=[[1.7e308, 1.7e308, -1.7e308]]), "eval", 2,
              ["good.svm: row 1: the model's decision value is"], "eval hung in its ROC walk on a NaN score")
mdl("bias_mode_unknown.json", lambda m: m.update(bias_mode="sideways"), 2, ["/bias_mode: expected none, feature or unregularized"],
    "unknown bias mode")
mdl("bias_none_nonzero.json", lambda m: m.update(bias_mode="none"), 2, ["/bias/0: is 0.125 but bias_mode is none"],
    "an edited model: a bias with bias_mode none (it was applied)")
mdl("outputs_mismatch.json", lambda m: m.update(outputs=3), 2, ["/outputs: 3 outputs do not match 2 classes"], "shape")
mdl("dimension_mismatch.json", lambda m: m.update(dimension=5), 2, ["/weights/0: has 3 entries, dimension is 5"], "shape")
mdl("dimension_negative.json", lambda m: m.update(dimension=-1), 2, ["/dimension: expected a non-negative 32-bit integer"], "range")
mdl("dimension_huge_dense.json", lambda m: m.update(dimension=4000000000), 2, ["/weights/0: has 3 entries, dimension is 4000000000"],
    "a huge dimension with a short dense array is caught before allocating 32 GB")
mdl("bias_null.json", lambda m: m.update(bias=[None]), 2, ["/bias/0: expected a number, found null"], "JSON has no NaN: null")
mdl("weight_string.json", lambda m: m["weights"][0].__setitem__(1, "x"), 2, ["/weights/0/1: expected a number, found string"], "wrong type")
mdl("weights_not_array.json", lambda m: m.update(weights="abc"), 2, ["/weights: expected 1 weight vectors"], "wrong type")
mdl("sparse_index_zero.json", lambda m: m.update(weights=[{"indices": [0], "values": [1.0]}]), 2, ["/weights/0/indices/0"], "1-based")
mdl("sparse_unsorted.json", lambda m: m.update(weights=[{"indices": [2, 1], "values": [1.0, 2.0]}]), 2,
    ["/weights/0/indices/1", "out of order"], "unsorted sparse indices")
mdl("sparse_length_mismatch.json", lambda m: m.update(weights=[{"indices": [1], "values": [1.0, 2.0]}]), 2,
    ["/weights/0: indices and values must be arrays of equal length"], "shape")
mdl("settings_string.json", lambda m: m.update(settings="fast"), 2, ["/settings: expected an object, found string"], "wrong type")
mdl("data_format_number.json", lambda m: m.update(data={"format": 5}), 2, ["/data/format: expected a string, found number"],
    "regression: was an internal error in predict")
mdl("data_label_column_fraction.json", lambda m: m.update(data={"label_column": 1.5}), 2,
    ["/data/label_column: expected an integer or a column name"], "was silently ignored")
mdl("lambda_string.json", lambda m: m["settings"].update({"lambda": "x"}), 2, ["/settings/lambda: expected a number"],
    "regression: was an internal error in eval", command="eval")
mdl("lambda_negative.json", lambda m: m["settings"].update({"lambda": -1}), 2, ["/settings/lambda: must be >= 0"],
    "a negative lambda made eval's objective meaningless", command="eval")
mdl("class_cost_strings.json", lambda m: m["training"].update({"class_cost": ["a", "b"]}), 2,
    ["/training/class_cost/0: expected a number"], "regression: was an internal error in eval", command="eval")
mdl("training_string.json", lambda m: m.update(training="x"), 2, ["/training: expected an object"], "wrong type")
# A kernel-approximation model (kernel_approximation: RFF with 2 components
# on data/good.svm; format_version 2) and corrupt feature_map sections.
FM_MODEL = json.loads(json.dumps(GOOD_MODEL))
FM_MODEL.update(format_version=2, dimension=2, bias=[-0.25113577104261436], weights=[[0.05916123742954625, 1.2206837016871281]])
FM_MODEL["feature_map"] = {
    "type": "rff", "gamma": 0.5, "components": 2, "input_dimension": 3, "output_dimension": 2, "seed": 10530694040342555761,
    "basis": [-1.4782145, -0.8065022, -1.0047468, -1.4119836, -0.8387032, -0.09988757],
    "offset": [1.2785443363314748, 1.658068037495888]}
NYSTROEM = {
    "type": "nystroem", "gamma": 0.5, "components": 3, "input_dimension": 3, "output_dimension": 3, "seed": 1,
    "basis": [0.5, 1, 0, 1, 0.5, 0, -1, 0, 0.5],
    "projection": [0.5125506, 0.50521046, 0.17228408, -0.1221656, -0.21455036, 0.9925998, 1.52315, -1.4987353, -0.13648771]}


def fm(fname, change, code, stderr, why):
    m = json.loads(json.dumps(FM_MODEL))
    change(m["feature_map"])
    case(d + fname, json.dumps(m, indent=1) + "\n", "predict", code, ([name(fname)] if code == 2 else []) + list(stderr),
         expect={"lines": 4} if code == 0 else None, why=why)


fm("feature_map_good.json", lambda f: None, 0, [], "a kernel-approximation model (RFF, 2 components) predicts")
fm("feature_map_gamma_negative.json", lambda f: f.update(gamma=-1), 2, ["/feature_map/gamma: must be > 0"], "gamma must be > 0")
fm("feature_map_type_unknown.json", lambda f: f.update(type="laplace"), 2, ["/feature_map/type: expected rff or nystroem"],
   "unknown map type")
fm("feature_map_basis_short.json", lambda f: f["basis"].pop(), 2, ["/feature_map/basis: has 5 numbers, expected 6"],
   "basis shorter than components × input_dimension")
fm("feature_map_basis_string.json", lambda f: f["basis"].__setitem__(2, "x"), 2, ["/feature_map/basis/2: expected a number"],
   "a string in the basis")
fm("feature_map_offset_range.json", lambda f: f["offset"].__setitem__(1, 7.5), 2, ["/feature_map/offset/1: must be in [0, 2π]"],
   "RFF offset outside [0, 2π]")
fm("feature_map_missing_offset.json", lambda f: f.pop("offset"), 2, ["/feature_map/offset: missing field"], "RFF without offsets")
fm("feature_map_components_zero.json", lambda f: f.update(components=0), 2,
   ["/feature_map/components: expected an integer between 1"], "zero components")
fm("feature_map_output_dimension.json", lambda f: f.update(output_dimension=1), 2, ["/feature_map/output_dimension"],
   "output dimension disagrees with the map")
fm("feature_map_input_dimension_huge.json", lambda f: f.update(input_dimension=4000000000), 2,
   ["/feature_map/input_dimension: components × input_dimension exceeds"], "a map too large to allocate")
fm("feature_map_seed_negative.json", lambda f: f.update(seed=-3), 2, ["/feature_map/seed: expected an integer"], "negative seed")
fm("feature_map_projection_ragged.json", lambda f: (f.clear(), f.update(json.loads(json.dumps(NYSTROEM))), f["projection"].pop()), 2,
   ["/feature_map/projection: expected a positive multiple of 3"], "Nyström projection not r × m")
fm("feature_map_nystroem_dimension.json", lambda f: (f.clear(), f.update(json.loads(json.dumps(NYSTROEM)))), 2,
   ["/feature_map/output_dimension", "weights' dimension is 2"], "a Nyström map of 3 outputs for 2 weights")
case("data/good.svm", None, "train", 2, ["kernel_approximation", "objective kernel_hinge trains the exact kernel"],
     set_=["objective=kernel_hinge", "kernel_approximation=rff"], why="kernel_approximation is for the linear objectives")
case("data/good.svm", None, "train", 2, ["kernel_approximation/components", "between 1 and 100000"],
     set_=['kernel_approximation={"type": "rff", "components": 0}'], why="components < 1")
case("data/good.svm", None, "train", 2, ["kernel_approximation/components", "data/good.svm has 4"],
     set_=['kernel_approximation={"type": "nystroem", "components": 5}'], why="Nyström: more landmarks than training rows")
case("data/good.svm", None, "train", 0, [], set_=['kernel_approximation={"type": "nystroem", "components": 4}'],
     expect={"dimension": 4}, why="Nyström with every row a landmark")

good_text = json.dumps(GOOD_MODEL, indent=1) + "\n"
def where(text, token):  # "LINE:COLUMN" of token's first occurrence (1-based)
    at = text.index(token)
    return f"{text.count(chr(10), 0, at) + 1}:{at - (text.rfind(chr(10), 0, at) + 1) + 1}"
case(d + "truncated.json", good_text[: len(good_text) // 2], "predict", 2, ["truncated.json", "not a valid model file", "the file is cut off"], why="cut in half")
case(d + "truncated_eval.json", good_text[: len(good_text) - 3], "eval", 2, ["truncated_eval.json", "not a valid model file"],
     why="last bytes missing")
case(d + "empty.json", "", "predict", 2, ["empty.json", "not a valid model file (the file is empty)"], why="0 bytes")
case(d + "not_object.json", "[]", "predict", 2, ["not_object.json", "/: a model file is a JSON object"], why="top level array")
case(d + "nan_literal.json", good_text.replace("0.125", "NaN"), "predict", 2,
     ["nan_literal.json:" + where(good_text.replace("0.125", "NaN"), "NaN") + " near 'NaN", "not a valid model file"],
     why="NaN is not JSON")
case(d + "overflow_weight.json", good_text.replace("0.25", "1e999"), "predict", 2,
     ["overflow_weight.json:" + where(good_text.replace("0.25", "1e999"), "1e999"), "a number beyond a double's range, '1e999'"],
     why="1e999 overflows a double")
case(d + "invalid_utf8.json", good_text.replace('"hinge"', '"hinge\udcff"', 1), "predict", 2, ["invalid_utf8.json", "not a valid model file"],
     why="invalid UTF-8 in a string")
case(d + "bom.json", "\ufeff" + good_text, "predict", 0, [], expect={"lines": 4}, why="a UTF-8 BOM is skipped")
case(d + "good.json", None, "predict", 0, [], expect={"lines": 4}, why="the fixture itself")

with open(os.path.join(ROOT, "manifest.json"), "w") as f:
    json.dump({"cases": cases}, f, indent=1, ensure_ascii=False)
    f.write("\n")
print(len(cases), "cases")
