#!/usr/bin/env bash
# Build the Python package pegasos (pybind11 module on the C++ library + the
# scikit-learn estimator) for Debian's /usr/bin/python3 and install it.
#
#   bash scripts/python.sh
#
# Installs the missing Debian packages (python3-dev, pybind11-dev, numpy, scipy,
# scikit-learn, pytest), configures build/ with -DPEGASOS_PYTHON=ON, builds, and runs
# `cmake --install build --component python`, which copies build/python/pegasos/
# (the extension module and __init__.py) into Python's purelib directory,
# /usr/local/lib/python3.X/dist-packages on Debian (where a local, non-apt package
# belongs; /usr/lib/python3/dist-packages is apt's). Override with
# PEGASOS_PYTHON_INSTALL_DIR=DIR; BUILD_DIR=DIR builds elsewhere than build/.
# Without installing: PYTHONPATH=build/python /usr/bin/python3 -c "import pegasos".
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
bash scripts/install_deps.sh python3-dev pybind11-dev python3-numpy python3-scipy python3-sklearn python3-pytest
args=(-DPEGASOS_PYTHON=ON -DPython3_EXECUTABLE=/usr/bin/python3)
if [ -n "${PEGASOS_PYTHON_INSTALL_DIR:-}" ]; then args+=("-DPEGASOS_PYTHON_INSTALL_DIR=$PEGASOS_PYTHON_INSTALL_DIR"); fi
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "${args[@]}" >/dev/null
cmake --build "$build" --parallel "$(nproc)"
sudo=""
dest=$(grep '^PEGASOS_PYTHON_INSTALL_DIR:' "$build/CMakeCache.txt" | cut -d= -f2-)
if [ "$(id -u)" -ne 0 ] && ! [ -w "$(dirname "$dest")" ]; then sudo="sudo"; fi
$sudo cmake --install "$build" --component python
cd /
# Check the copy just installed (PYTHONPATH puts $dest first, also when it is not on
# Python's default path), not another pegasos found elsewhere.
PYTHONPATH="$dest${PYTHONPATH:+:$PYTHONPATH}" /usr/bin/python3 - "$dest" <<'PY'
import os, sys
import pegasos
dest = os.path.realpath(sys.argv[1])
found = os.path.realpath(pegasos.__file__)
if os.path.commonpath([dest, found]) != dest:
    sys.exit("scripts/python.sh: imported %s, not the copy installed in %s" % (found, dest))
print("installed:", found)
PY
