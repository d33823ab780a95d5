#!/usr/bin/env bash
# Install missing dependencies, then configure and build (Release) into build/.
# Arguments are passed to cmake's configure step (e.g. -DPEGASOS_PYTHON=ON).
# PEGASOS_TARGETS="pegasos" builds only those targets (scripts/demo.sh: the CLI,
# not the test suite); default: everything.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
# ccache (installed by install_deps.sh) makes rebuilds and scripts/check_warnings.sh cheap.
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
# PEGASOS_UNITY=N: compile the library, the CLI and the tests in unity batches
# of N (CI: a fresh build, where this halves the compile time; 0, the default,
# keeps one file per compile for quick rebuilds).
launcher+=("-DPEGASOS_UNITY=${PEGASOS_UNITY:-0}")
fresh=1
[ -f build/build.ninja ] && fresh=0
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" "$@" >/dev/null
targets=()
for t in ${PEGASOS_TARGETS:-}; do targets+=(--target "$t"); done
# build/build.log: this build's output, headed by whether the tree was fresh
# and the arguments; scripts/check_warnings.sh --reuse reads a fresh full one.
{
  echo "# build.sh fresh=$fresh targets=${PEGASOS_TARGETS:-all} unity=${PEGASOS_UNITY:-0} args=$*"
  cmake --build build --parallel "$(nproc)" "${targets[@]}" 2>&1
} | tee build/build.log
