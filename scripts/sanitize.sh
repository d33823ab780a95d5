#!/usr/bin/env bash
# Build the whole test suite with AddressSanitizer + UndefinedBehaviorSanitizer
# into build-asan/ and run all of it; then with ThreadSanitizer into
# build-tsan/ and run the tests that exercise threads. Any sanitizer report
# fails the run (UB is not recoverable; the CLI that the tests start is
# instrumented too, and a report there makes it exit 1, which the tests reject).
#
#   scripts/sanitize.sh [address|thread]...     (default: both)
#
# The trees: scripts/clang_tree.sh. PEGASOS_BUILD_ROOT=DIR puts them under DIR.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/clang_tree.sh
jobs=$(nproc)
modes=("$@")
[ ${#modes[@]} -eq 0 ] && modes=(address thread)

for mode in "${modes[@]}"; do
  case "$mode" in
    address)
      dir=$(clang_tree address)
      export ASAN_OPTIONS=detect_leaks=1:check_initialization_order=1:strict_init_order=1:detect_stack_use_after_return=1
      export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
      # A smaller generated line keeps the instrumented run short; the code path is the same.
      PEGASOS_HUGE_LINE_MB=100 ctest --test-dir "$dir" --output-on-failure --parallel "$jobs"
      ;;
    thread)
      # Only the tests (and the CLI they start) under TSan.
      dir=$(clang_tree thread pegasos_tests)
      # Debian's libtbb is not instrumented: TSan cannot see TBB's task
      # synchronisation, so reports through TBB frames are suppressed (see
      # scripts/tsan.supp for what this run can and cannot find).
      export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/scripts/tsan.supp"
      # The tests that run work on several threads (tsan_tags, clang_tree.sh),
      # in two processes at once: the [kernel] tests and the others (one
      # process took 206 s, mostly on one core). Each one's report is printed
      # whole; either failing fails the run.
      rest=$(for t in "${tsan_tags[@]}"; do [ "$t" = kernel ] || printf '[%s]~[kernel],' "$t"; done)
      log=$(mktemp -d)
      "$dir/pegasos_tests" "[kernel]" >"$log/kernel" 2>&1 &
      kernel_pid=$!
      status=0
      "$dir/pegasos_tests" "${rest%,}" >"$log/rest" 2>&1 || status=$?
      wait "$kernel_pid" || status=$?
      cat "$log/kernel" "$log/rest"
      rm -rf "$log"
      [ "$status" -eq 0 ] || exit "$status"
      ;;
    *) echo "unknown mode: $mode (address or thread)" >&2; exit 2 ;;
  esac
done
