#!/usr/bin/env bash
# Build the libFuzzer targets (tests/fuzz/fuzz_*.cpp) with clang in the
# AddressSanitizer tree build-asan/ (shared with scripts/sanitize.sh, see
# scripts/clang_tree.sh) and run each for SECONDS (default 60), all at once (so the
# wall time is about SECONDS plus the build, whatever the number of cores).
#
#   scripts/fuzz.sh [SECONDS]
#
# Each target starts from its seeds in tests/fuzz/corpus/<target>/ and keeps
# what it finds in build-asan/fuzz-corpus/<target>/ (reused by the next run).
# A crash (sanitizer report, uncaught exception other than InputError,
# timeout, or more than 2 GB of memory) is saved as
# build-asan/fuzz-crashes/<target>-crash-<sha1> and fails the script: reproduce it
# with `build-asan/fuzz_<target> FILE`, fix it, and add it to
# tests/bad_inputs (make_corpus.py) as a regression case.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
source scripts/clang_tree.sh
out=$(clang_tree address fuzz_all)

targets=()
for exe in "$out"/fuzz_*; do
  [ -x "$exe" ] && [ -f "$exe" ] && targets+=("$(basename "$exe")")
done
mkdir -p "$out/fuzz-crashes" "$out/fuzz-logs"
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export ASAN_OPTIONS=detect_leaks=1

run_one() {  # TARGET
  local t=$1 name=${1#fuzz_}
  local work=$out/fuzz-corpus/$name seeds=tests/fuzz/corpus/$name
  mkdir -p "$work" "$seeds"
  # One thread inside the target (see fuzz_common.hpp); -timeout catches hangs.
  "$out/$t" "$work" "$seeds" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -seed=1 -max_len=8192 -print_final_stats=1 -artifact_prefix="$out/fuzz-crashes/$name-" \
    >"$out/fuzz-logs/$name.log" 2>&1
}

pids=() names=() failed=()
for t in "${targets[@]}"; do
  run_one "$t" &
  pids+=($!) names+=("$t")
done
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || failed+=("${names[$i]}")
done

printf '%-14s %8s %10s %10s %s\n' target seconds runs corpus bytes
for t in "${targets[@]}"; do
  name=${t#fuzz_}
  log=$out/fuzz-logs/$name.log
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  files=$(find "$out/fuzz-corpus/$name" -type f | wc -l)
  bytes=$(du -sb "$out/fuzz-corpus/$name" | cut -f1)
  printf '%-14s %8s %10s %10s %s\n' "$name" "$seconds" "${runs:-?}" "$files" "$bytes"
done
if [ ${#failed[@]} -gt 0 ]; then
  for t in "${failed[@]}"; do
    echo "=== $t failed; the end of $out/fuzz-logs/${t#fuzz_}.log:" >&2
    tail -n 40 "$out/fuzz-logs/${t#fuzz_}.log" >&2
  done
  ls -l "$out/fuzz-crashes" >&2
  exit 1
fi
echo "fuzzing: ${#targets[@]} targets, no crash"
