#!/usr/bin/env bash
# Peak memory of streaming predict: the bundled test mail (JSONL) repeated to
# GB gigabytes (default 5) and piped into `pegasos predict MODEL -`; prints rows,
# wall time and the peak resident set size (GNU time). The issue's target: a 5 GB
# stream under 300 MB.
#   bash bench/stream_memory.sh [GB]
set -euo pipefail
cd "$(dirname "$0")/.."
GB=${1:-5}
[ -x build/pegasos ] || bash scripts/build.sh
command -v /usr/bin/time > /dev/null || { echo "needs GNU time (apt-get install time)" >&2; exit 2; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
zcat data/spam_sample_test.jsonl.gz > "$T/mail.jsonl"
build/pegasos train -q --config configs/spam.json data/spam_sample_train.jsonl.gz "$T/model.json"
size=$(stat -c %s "$T/mail.jsonl")
copies=$(( GB * 1024 * 1024 * 1024 / size + 1 ))
start=$(date +%s.%N)
rows=$(for _ in $(seq "$copies"); do cat "$T/mail.jsonl"; done |
  /usr/bin/time -f "%M" -o "$T/rss" build/pegasos predict "$T/model.json" - | wc -l)
end=$(date +%s.%N)
awk -v b=$((copies * size)) -v r="$rows" -v s="$start" -v e="$end" -v k="$(cat "$T/rss")" 'BEGIN {
  printf "streamed %.2f GB (%d rows) through predict in %.1f s: peak RSS %.0f MB\n", b / 1e9, r, e - s, k / 1024 }'
