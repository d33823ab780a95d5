#!/usr/bin/env bash
# The main job on bundled data: build, then train a spam filter on 1500 raw
# SpamAssassin messages (data/spam_sample_train.jsonl.gz), evaluate it on 500
# held-out messages (with the threshold for a 1% false-positive rate), show
# a few predictions and the words that weigh most for spam and for ham. A
# second model, on numeric data (Fashion-MNIST "T-shirt vs rest", LIBSVM
# format), shows the same commands on a LIBSVM file.
set -euo pipefail
cd "$(dirname "$0")/.."
PEGASOS_TARGETS=pegasos bash scripts/build.sh  # the CLI only; scripts/test.sh builds the tests
out=${1:-build/demo}
mkdir -p "$out"
set -x
build/pegasos train --config configs/spam.json data/spam_sample_train.jsonl.gz "$out/spam_model.json"
build/pegasos eval "$out/spam_model.json" data/spam_sample_test.jsonl.gz --max-fpr 0.01 --json "$out/spam_eval.json"
build/pegasos predict "$out/spam_model.json" data/spam_sample_test.jsonl.gz --output "$out/spam_predictions.tsv"
head -n 5 "$out/spam_predictions.tsv"
build/pegasos inspect "$out/spam_model.json" --top 10
build/pegasos train --config configs/binary.json data/fmnist_tshirt_train.svm.gz "$out/fmnist_model.json"
build/pegasos eval "$out/fmnist_model.json" data/fmnist_tshirt_test.svm.gz
