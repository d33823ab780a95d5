#!/usr/bin/env bash
# Install missing dependencies, then configure and build (Release) into build/.
# Arguments are passed to cmake's configure step (e.g. -DPEGASOS_PYTHON=ON).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build build --parallel "$(nproc)"
