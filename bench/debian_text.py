#!/usr/bin/python3
"""A multiclass text set from Debian's package descriptions (stdlib only).

    /usr/bin/python3 bench/debian_text.py [--out data/cache/debian_text.jsonl]

Document = the package name, its short description and its long description;
label = the package's Section without an archive prefix ("contrib/", "non-free/").
One document per source package (the first binary package of each source in
name order: lib, -dev and -doc packages of one source have near-identical
descriptions), and only sections with at least --min-section documents are
kept. On Debian 12 (bookworm, main) that is about 31k documents in 28 classes.

Where it reads from: `apt-cache dumpavail` (names, sections, sources, short
descriptions) and the long descriptions from apt's Translation-en index files,
which apt downloads only when asked, e.g.

    apt-get update -o Acquire::Languages=en

(the Docker images set Acquire::Languages "none"). Without them the documents
are the names and short descriptions only, and a warning says so.
Output: JSONL, one {"text": ..., "label": ...} per line, in a fixed order
(sorted by source package name), so the file is the same on every run of the
same package lists.
"""
import argparse
import collections
import glob
import json
import os
import subprocess
import sys


def stanzas(text):
    """Debian control stanzas as dicts; continuation lines are joined with '\n'."""
    for block in text.split("\n\n"):
        fields = {}
        key = None
        for line in block.split("\n"):
            if not line:
                continue
            if line[0] in " \t":
                if key is not None:
                    fields[key] += "\n" + line[1:]
                continue
            key, _, value = line.partition(":")
            fields[key] = value.strip()
        if fields:
            yield fields


def long_descriptions():
    """Description-md5 -> long description, from apt's Translation-en files."""
    out = {}
    for path in sorted(glob.glob("/var/lib/apt/lists/*_i18n_Translation-en*")):
        if path.endswith(".diff") or os.path.isdir(path):
            continue
        # apt-helper decompresses whatever apt stored (lz4, gz, xz, plain).
        text = subprocess.run(["/usr/lib/apt/apt-helper", "cat-file", path], check=True,
                              stdout=subprocess.PIPE).stdout.decode("utf-8", "replace")
        for f in stanzas(text):
            md5 = f.get("Description-md5")
            desc = f.get("Description-en")
            if md5 and desc:
                out[md5] = desc
    return out


def clean(desc):
    """A control-file description as plain text ('.' lines are paragraph breaks)."""
    lines = []
    for line in desc.split("\n"):
        line = line.strip()
        if line != ".":
            lines.append(line)
    return " ".join(x for x in lines if x)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                                  "data", "cache", "debian_text.jsonl"))
    ap.add_argument("--min-section", type=int, default=300, help="keep sections with at least this many documents")
    ap.add_argument("--all-binaries", action="store_true",
                    help="one document per binary package (identical descriptions once) instead of per source")
    args = ap.parse_args()

    dump = subprocess.run(["apt-cache", "dumpavail"], check=True, stdout=subprocess.PIPE).stdout
    packages = [f for f in stanzas(dump.decode("utf-8", "replace")) if "Package" in f and "Section" in f]
    longs = long_descriptions()
    if not longs:
        print("warning: no Translation-en index (run apt-get update -o Acquire::Languages=en): "
              "documents are names and short descriptions only", file=sys.stderr)

    packages.sort(key=lambda f: f["Package"])
    chosen = {}
    for f in packages:
        if args.all_binaries:
            key = f.get("Description-md5") or f["Package"]
        else:
            key = f.get("Source", f["Package"]).split()[0]
        chosen.setdefault(key, f)

    docs = []
    for key in sorted(chosen):
        f = chosen[key]
        label = f["Section"].split("/")[-1]
        desc = longs.get(f.get("Description-md5", ""), f.get("Description", ""))
        docs.append((f["Package"] + " " + clean(desc), label))
    counts = collections.Counter(label for _, label in docs)
    keep = {label for label, c in counts.items() if c >= args.min_section}
    docs = [(t, label) for t, label in docs if label in keep]

    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    tmp = args.out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as out:
        for text, label in docs:
            out.write(json.dumps({"text": text, "label": label}, ensure_ascii=False) + "\n")
    os.replace(tmp, args.out)
    with_long = sum(1 for f in chosen.values() if f.get("Description-md5") in longs)
    print("%s: %d documents, %d classes (%d of %d chosen packages with a long description)"
          % (args.out, len(docs), len(keep), with_long, len(chosen)), file=sys.stderr)


if __name__ == "__main__":
    main()
