#!/usr/bin/env bash
# The reduced C-range sweep (CI): a few public UCI sets from Debian's R packages
# x C in {0.1, 10, 100} x every solver, against a certified optimum; fails when a
# run says "converged" above its tolerance or the default misses the optimum.
# Needs build/pegasos (scripts/build.sh). Full sweep: /usr/bin/python3 bench/c_sweep.py
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh r-cran-mlbench r-cran-kernlab python3-rdata python3-numpy liblinear-tools
/usr/bin/python3 scripts/uci_data.py
/usr/bin/python3 bench/c_sweep.py --quick --strict-checks
