#!/usr/bin/env bash
# A clean Release build (-Wall -Wextra) of everything, tests included, into
# build-warnings/ (removed afterwards): fails when the log has any "warning:"
# line (ours or a third-party header's). Arguments go to cmake's configure
# step; .ci/run passes scripts/test.sh's, so that with ccache (scripts/build.sh
# uses it when installed) every compilation is a cache hit whose stored output,
# warnings included, is replayed.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=build-warnings
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
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
