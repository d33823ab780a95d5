# Sourced by scripts/sanitize.sh and scripts/fuzz.sh: the clang-16 build
# trees they share. One AddressSanitizer + UBSan tree (build-asan/) holds the
# whole test suite and the libFuzzer targets (coverage instrumentation costs
# the tests little, and CI then compiles the library once for both); the
# ThreadSanitizer tree (build-tsan/) holds the tests. Everything is
# compiled in unity batches (PEGASOS_UNITY): the test files instantiate the
# same solver templates, whose instrumented code generation dominates the
# build, and the library's files parse the same JSON and TBB headers.
# Build type RelWithDebInfo with -O1 -gline-tables-only: readable stacks,
# quicker builds, and assert() stays on (no NDEBUG).
# PEGASOS_BUILD_ROOT=DIR puts the trees under DIR.
# Compiler: clang-16 (Debian 12 package; clang-14 cannot compile the C++20
# lambda captures of structured bindings used in the sources).
bash "$(dirname "${BASH_SOURCE[0]}")/install_deps.sh" clang-16 libclang-rt-16-dev llvm-16
export CC=clang-16 CXX=clang++-16
# Sanitizer reports need llvm-symbolizer for file:line stacks.
export PATH="/usr/lib/llvm-16/bin:$PATH"
clang_root=${PEGASOS_BUILD_ROOT:-.}
# The tests that run work on several threads (readers' parallel chunks,
# engine, one-vs-all, text featurizer, kernel trainer): the TSan run's tags.
tsan_tags=(ova io engine text kernel)

# clang_tree MODE [TARGET...]: configure build-MODE (address or thread) and
# build TARGETs (default: everything); prints the tree's path last.
clang_tree() {
  local mode=$1 dir
  shift
  dir=$clang_root/build-$( [ "$mode" = address ] && echo asan || echo tsan )
  local extra=()
  [ "$mode" = address ] && extra=(-DPEGASOS_FUZZ=ON)
  # TSan runs only the threaded tests: only their files are compiled.
  [ "$mode" = thread ] && extra=("-DPEGASOS_TEST_TAGS=$(IFS=';'; echo "${tsan_tags[*]}")")
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" -DPEGASOS_SANITIZE="$mode" \
    -DPEGASOS_UNITY=8 "${extra[@]}" >/dev/null
  local targets=()
  for t in "$@"; do targets+=(--target "$t"); done
  cmake --build "$dir" --parallel "$(nproc)" "${targets[@]}" >&2
  echo "$dir"
}
