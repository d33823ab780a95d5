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
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" "$@" >/dev/null
targets=()
for t in ${PEGASOS_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build build --parallel "$(nproc)" "${targets[@]}"
