#!/usr/bin/env bash
# A clean Release build (-Wall -Wextra) of everything, tests included, into
# build-warnings/ (removed afterwards): fails when the log has any "warning:"
# line (ours or a third-party header's). Arguments go to cmake's configure
# step; .ci/run passes scripts/test.sh's, so that with ccache (scripts/build.sh
# uses it when installed) every compilation is a cache hit whose stored output,
# warnings included, is replayed.
#
#   scripts/check_warnings.sh [--reuse] [CMAKE ARGS...]
#
# --reuse: when build/build.log is the log of a fresh, complete
# scripts/build.sh run with the same arguments (as in CI, where the tests'
# build comes first on a fresh clone), check that log instead of building
# again; otherwise build as above.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = --reuse ]; then
  shift
  header="# build.sh fresh=1 targets=all unity=${PEGASOS_UNITY:-0} args=$*"
  if [ -f build/build.log ] && [ "$(head -n 1 build/build.log)" = "$header" ]; then
    if grep -q "warning:" build/build.log; then
      grep -B8 -A4 "warning:" build/build.log | head -n 200
      echo "check_warnings: $(grep -c 'warning:' build/build.log) warning(s) in the fresh Release build (build/build.log)" >&2
      exit 1
    fi
    echo "check_warnings: no warnings in the fresh Release build's $(grep -c '^\[' build/build.log) steps (build/build.log)"
    exit 0
  fi
  echo "check_warnings: build/build.log is not a fresh full build with these arguments; building" >&2
fi
dir=build-warnings
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
# PEGASOS_UNITY=N: compile the library, the CLI and the tests in unity batches
# of N (CI: a fresh build, where this halves the compile time; 0, the default,
# keeps one file per compile for quick rebuilds).
launcher+=("-DPEGASOS_UNITY=${PEGASOS_UNITY:-0}")
rm -rf "$dir"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" "$@" >"$log" 2>&1
cmake --build "$dir" --parallel "$(nproc)" >>"$log" 2>&1 || { cat "$log"; echo "check_warnings: build failed" >&2; exit 1; }
if grep -q "warning:" "$log"; then
  grep -B8 -A4 "warning:" "$log" | head -n 200
  echo "check_warnings: $(grep -c 'warning:' "$log") warning(s) in the Release build (log above)" >&2
  exit 1
fi
echo "check_warnings: no warnings in $(grep -c '^\[' "$log") build steps"
rm -rf "$dir"
