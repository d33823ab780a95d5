#!/usr/bin/env bash
# Generate the benchmark data into $1 (default /tmp/pegasos-bench); never into the repo.
# Files that already exist are kept. Run: bash bench/make_data.sh [DIR]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(dirname "$here")"
out="${1:-/tmp/pegasos-bench}"
py=/usr/bin/python3            # Debian's python (numpy for the synthetic files)
fm="$repo/scripts/fashion_mnist.py"
mkdir -p "$out"

make() {  # make FILE COMMAND...: run COMMAND (which writes FILE) unless FILE exists
  local f="$1"; shift
  if [[ -s "$f" ]]; then echo "keep   $f"; return; fi
  echo "make   $f"; "$@"
}

# Fashion-MNIST, class 0 (T-shirt/top) vs rest, unit-norm rows.
make "$out/fmnist0_train.svm" $py "$fm" --split train --binary 0 --unit-norm --out "$out/fmnist0_train.svm"
make "$out/fmnist0_test.svm"  $py "$fm" --split test  --binary 0 --unit-norm --out "$out/fmnist0_test.svm"
# 540k rows: the 60k training rows 9 times over. Byte-identical to fashion_mnist.py
# --repeat 9, but concatenating the file is much faster than re-formatting the rows.
repeat9() {
  local f="$out/fmnist0_train_x9.svm"
  for _ in 1 2 3 4 5 6 7 8 9; do cat "$out/fmnist0_train.svm"; done > "$f.tmp"
  mv "$f.tmp" "$f"
}
make "$out/fmnist0_train_x9.svm" repeat9

# Synthetic pair: same rows and nnz per row, indices from 1..1e3 vs 1..1e7.
make "$out/synth_d1e3.svm" $py "$here/synth.py" --dim 1000     --out "$out/synth_d1e3.svm"
make "$out/synth_d1e7.svm" $py "$here/synth.py" --dim 10000000 --out "$out/synth_d1e7.svm"
# The d = 1e3 rows with every index multiplied by 10^4: dimension 10^7, but only 1000
# distinct weights are ever touched (a 10^7 table, a cache-sized working set).
spread() {
  local f="$out/synth_d1e7_spread.svm"
  awk '{printf "%s", $1; for (i = 2; i <= NF; i++) { split($i, a, ":"); printf " %d:%s", a[1] * 10000, a[2] } printf "\n"}' \
    "$out/synth_d1e3.svm" > "$f.tmp"
  mv "$f.tmp" "$f"
}
make "$out/synth_d1e7_spread.svm" spread
ls -l "$out"
