#!/usr/bin/env python3
"""SDCA with and without its stall polish (core/box_qp.hpp) on unscaled UCI
binary problems, against LIBLINEAR -s 3 (dual CD, L1 loss) for time.

usage: polish_uci.py BEFORE_BINARY AFTER_BINARY [UCI_DIR] [WORK_DIR]
UCI_DIR holds NAME.train.svm (data/cache/uci); multiclass sets become
"first class vs rest". C in {0.1, 1, 10, 100}, lambda = 1/(C n), default bias
(feature), tolerance 1e-3; plain hinge and weighted_hinge with balanced
class weights (LIBLINEAR: -w1 / -w-1 with the same costs). Prints one
markdown row per setting: passes, train time, relative gap, stop reason."""
import json, os, re, subprocess, sys, time

before, after = sys.argv[1], sys.argv[2]
uci = sys.argv[3] if len(sys.argv) > 3 else 'data/cache/uci'
work = sys.argv[4] if len(sys.argv) > 4 else '/tmp/pegasos-polish'
os.makedirs(work, exist_ok=True)
SETS = [('glass', '1'), ('glass', '2'), ('vehicle', '1'), ('ionosphere', '1'), ('sonar', '1'),
        ('pima', '1'), ('breast_cancer', '1')]


def binary(name, positive):
    out = os.path.join(work, f'{name}_{positive}.svm')
    with open(os.path.join(uci, name + '.train.svm')) as f, open(out, 'w') as g:
        for line in f:
            label, _, rest = line.partition(' ')
            g.write(('+1 ' if label == positive else '-1 ') + rest)
    return out


def pegasos(binary_path, data, lam, weighted):
    args = [binary_path, 'train', '--set', f'lambda={lam!r}']
    if weighted:
        args += ['--set', 'objective=weighted_hinge', '--set', 'class_weight="balanced"']
    model = os.path.join(work, 'model.json')
    out = subprocess.run(args + [data, model], capture_output=True, text=True, check=True)
    t = json.load(open(model))['training']
    secs = re.findall(r'train ([0-9.]+)s', out.stderr)
    return f"{t['epochs']:.0f} / {secs[-1] if secs else '?'}s / {t['relative_gap']:.1e} {t['stopped_by']}"


def liblinear(data, C, weighted, n):
    args = ['liblinear-train', '-s', '3', '-B', '1', '-c', str(C), '-e', '0.1']
    if weighted:
        pos = sum(1 for line in open(data) if line.startswith('+'))
        args += ['-w1', str(n / (2 * pos)), '-w-1', str(n / (2 * (n - pos)))]
    t0 = time.time()
    out = subprocess.run(args + [data, os.path.join(work, 'll.model')], capture_output=True, text=True)
    capped = ' (cap)' if 'WARNING' in out.stdout + out.stderr else ''
    return f'{(time.time() - t0) * 1000:.0f} ms{capped}'


print('| data | C | objective | before: passes / time / gap | after: passes / time / gap | LIBLINEAR |')
print('|---|---|---|---|---|---|')
for name, positive in SETS:
    data = binary(name, positive)
    n = sum(1 for _ in open(data))
    for C in (0.1, 1, 10, 100):
        for weighted in (False, True):
            lam = 1.0 / (C * n)
            print(f"| {name} {positive}/rest | {C} | {'balanced' if weighted else 'hinge'} | "
                  f"{pegasos(before, data, lam, weighted)} | {pegasos(after, data, lam, weighted)} | "
                  f"{liblinear(data, C, weighted, n)} |", flush=True)
