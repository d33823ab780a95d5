#!/usr/bin/env bash
# Every Catch test name must register whole in ctest: a ';' splits it in
# CMake's list, ctest then runs a filter that matches nothing, and Catch
# passes it (27 tests were silently skipped so). Usage: test_names.sh PEGASOS_TESTS
set -euo pipefail
names="$("$1" --list-test-names-only || true)"  # Catch v2 exits with the count listed
[ -n "$names" ] || { echo "FAIL: $1 listed no tests" >&2; exit 1; }
if printf '%s\n' "$names" | grep ';'; then
  echo "FAIL: the test names above contain ';' (ctest would skip them)" >&2
  exit 1
fi
echo "$(printf '%s\n' "$names" | wc -l) test names, none with ';'"
