#!/usr/bin/env bash
# Build everything and run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
# scikit-learn: tests/svmlight_diff.py compares the LIBSVM reader with load_svmlight_file.
bash scripts/install_deps.sh python3-sklearn
bash scripts/build.sh
ctest --test-dir build --output-on-failure --parallel "$(nproc)"
