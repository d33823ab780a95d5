#!/usr/bin/env bash
# Build the whole test suite with AddressSanitizer + UndefinedBehaviorSanitizer
# into build-asan/ and run all of it; then with ThreadSanitizer into
# build-tsan/ and run the tests that exercise threads. Any sanitizer report
# fails the run (UB is not recoverable; the CLI that the tests start is
# instrumented too, and a report there makes it exit 1, which the tests reject).
#
#   scripts/sanitize.sh [address|thread]...     (default: both)
#
# Compiler: clang-16 (Debian 12 package; clang-14 cannot compile the C++20
# lambda captures of structured bindings used in the sources). Build type
# RelWithDebInfo with -O1 -gline-tables-only: readable stacks, quicker builds,
# and assert() stays on (no NDEBUG).
# PEGASOS_BUILD_ROOT=DIR puts build-asan/ and build-tsan/ under DIR.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh clang-16 libclang-rt-16-dev llvm-16
export CC=clang-16 CXX=clang++-16
jobs=$(nproc)
root=${PEGASOS_BUILD_ROOT:-.}   # PEGASOS_BUILD_ROOT: put the builds elsewhere
# Sanitizer reports need llvm-symbolizer for file:line stacks.
export PATH="/usr/lib/llvm-16/bin:$PATH"
modes=("$@")
[ ${#modes[@]} -eq 0 ] && modes=(address thread)

configure() {  # DIR MODE
  cmake -S . -B "$1" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" -DPEGASOS_SANITIZE="$2" >/dev/null
  cmake --build "$1" --parallel "$jobs"
}

for mode in "${modes[@]}"; do
  case "$mode" in
    address)
      configure "$root/build-asan" address
      export ASAN_OPTIONS=detect_leaks=1:check_initialization_order=1:strict_init_order=1:detect_stack_use_after_return=1
      export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
      # A smaller generated line keeps the instrumented run short; the code path is the same.
      PEGASOS_HUGE_LINE_MB=100 ctest --test-dir "$root/build-asan" --output-on-failure --parallel "$jobs"
      ;;
    thread)
      configure "$root/build-tsan" thread
      # Debian's libtbb is not instrumented: TSan cannot see TBB's task
      # synchronisation, so reports through TBB frames are suppressed (see
      # scripts/tsan.supp for what this run can and cannot find).
      export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/scripts/tsan.supp"
      # Tests that run work on several threads: readers (parallel chunks),
      # engine, one-vs-all, text featurizer, kernel trainer.
      "$root/build-tsan/pegasos_tests" "[ova],[io],[engine],[text],[kernel]"
      ;;
    *) echo "unknown mode: $mode (address or thread)" >&2; exit 2 ;;
  esac
done
