#!/usr/bin/env bash
# Build everything and run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
# scikit-learn: tests/svmlight_diff.py compares the LIBSVM reader with load_svmlight_file.
bash scripts/install_deps.sh python3-sklearn man-db groff-base  # man: tests/install.sh renders pegasos(1)
# With Debian's python3 present, the Python package is built and its pytest suite
# (ctest python_pytest) runs too; PEGASOS_PYTHON=OFF leaves it out.
if [ -x /usr/bin/python3 ] && [ "${PEGASOS_PYTHON:-ON}" != OFF ]; then
  bash scripts/install_deps.sh python3-dev pybind11-dev python3-numpy python3-scipy python3-sklearn python3-pytest
  bash scripts/build.sh -DPEGASOS_PYTHON=ON -DPython3_EXECUTABLE=/usr/bin/python3
else
  bash scripts/build.sh
fi
ctest --test-dir build --output-on-failure --parallel "$(nproc)"
