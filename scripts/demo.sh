#!/usr/bin/env bash
# The main job on bundled data: build, train a linear SVM (Fashion-MNIST
# "T-shirt/top vs rest", 3000 training images), evaluate it on 1000 held-out
# images and show a few predictions.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
out=${1:-build/demo}
mkdir -p "$out"
set -x
build/pegasos train --config configs/binary.json data/fmnist_tshirt_train.svm.gz "$out/model.json"
build/pegasos eval "$out/model.json" data/fmnist_tshirt_test.svm.gz --max-fpr 0.01 --json "$out/eval.json"
build/pegasos predict "$out/model.json" data/fmnist_tshirt_test.svm.gz --output "$out/predictions.tsv"
head -n 5 "$out/predictions.tsv"
