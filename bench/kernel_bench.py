#!/usr/bin/python3
"""Kernel Pegasos (RBF, one-vs-all) against LIBSVM (svm-train -t 2, one-vs-one SMO).

Data: Fashion-MNIST, a 10,000-image training subset and the 10,000 test
images, pixels in [0, 1] (scripts/fashion_mnist.py). Every tool runs as its
own process; "wall" is process start to exit (loading included), "cpu" the
process's user + system time (pegasos uses all cores, LIBSVM one). Same
kernel k(x, x') = exp(-gamma ||x - x'||^2) and C = 1/(lambda n) for LIBSVM.
Also: pegasos' linear one-vs-all (objective=ova, default settings) on the
same subset, and kernel Pegasos with a support-vector budget.

    /usr/bin/python3 bench/kernel_bench.py [--build build] [--gamma 0.03] [--C 10]
        [--epochs 5,10] [--budgets 500,1000,2000] [--skip-libsvm] [--out FILE]

Until `pegasos train` knows objective=kernel_hinge, the kernel runs use a
small stand-alone driver (embedded below) compiled against
BUILD/libpegasos_core.a; once the CLI is integrated the script uses the CLI.
"""
import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

DRIVER = r"""
// kernel_driver train DATA MODEL key=value...   eval MODEL DATA
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <vector>
#include "core/dataset.hpp"
#include "kernel/kernel_model.hpp"
#include "kernel/kernel_trainer.hpp"
using namespace pegasos;
int main(int argc, char** argv) try {
  if (argc < 4) return 2;
  const std::string cmd = argv[1];
  if (cmd == "train") {
    std::map<std::string, std::string> kv;
    for (int i = 4; i < argc; ++i) {
      const std::string a = argv[i];
      kv[a.substr(0, a.find('='))] = a.substr(a.find('=') + 1);
    }
    auto get = [&](const std::string& k, const std::string& d) { return kv.count(k) ? kv[k] : d; };
    const Dataset data = read_dataset(argv[2], ReadOptions{});
    EngineSettings s;
    s.lambda = std::stod(get("lambda", "1e-4"));
    s.epochs = std::stod(get("epochs", "0"));
    s.batch_size = std::stoi(get("batch_size", "1"));
    s.seed = std::stoull(get("seed", "42"));
    s.sampling = get("sampling", "uniform") == "permutation" ? Sampling::kPermutation : Sampling::kUniform;
    KernelSettings k;
    parse_kernel_type(get("type", "rbf"), k.kernel.type);
    k.kernel.gamma = std::stod(get("gamma", "0"));
    k.max_support_vectors = std::stoull(get("max_support_vectors", "0"));
    KernelModel m = train_kernel(data, k, s);
    save_kernel_model(m, argv[3]);
    std::printf("%s\n", m.training.dump().c_str());
    return 0;
  }
  if (cmd == "eval") {
    const KernelModel m = load_kernel_model(argv[2]);
    Dataset data = read_dataset(argv[3], ReadOptions{});
    data.remap_classes(m.classes);
    const std::size_t K = static_cast<std::size_t>(m.outputs);
    const std::vector<double> scores = m.scores(data);
    std::size_t correct = 0;
    for (std::size_t i = 0; i < data.size(); ++i) correct += m.predict_class(&scores[i * K]) == data.labels[i];
    std::printf("{\"accuracy\": %.6f}\n", static_cast<double>(correct) / static_cast<double>(data.size()));
    return 0;
  }
  return 2;
} catch (const std::exception& e) {
  std::fprintf(stderr, "error: %s\n", e.what());
  return 1;
}
"""


def run(cmd):
    """Run cmd; return (wall seconds, cpu seconds of the child, stdout)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode:
        raise RuntimeError("exit %d: %s\n%s" % (p.returncode, " ".join(cmd), p.stdout[-2000:]))
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, p.stdout


def make_data(d):
    os.makedirs(d, exist_ok=True)
    script = os.path.join(ROOT, "scripts", "fashion_mnist.py")
    train, test = os.path.join(d, "fmnist_train10k.svm"), os.path.join(d, "fmnist_test.svm")
    if not os.path.exists(train):
        subprocess.check_call([sys.executable, script, "--split", "train", "--limit", "10000", "--out", train])
    if not os.path.exists(test):
        subprocess.check_call([sys.executable, script, "--split", "test", "--out", test])
    return train, test


def cli_has_kernel(pegasos):
    p = subprocess.run([pegasos, "train", "--help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return "kernel_hinge" in p.stdout


def build_driver(build, workdir):
    lib = os.path.join(build, "libpegasos_core.a")
    if not os.path.exists(lib):
        sys.exit("missing %s: build first (cmake -S . -B %s -G Ninja && ninja -C %s)" % (lib, build, build))
    src = os.path.join(workdir, "kernel_driver.cpp")
    exe = os.path.join(workdir, "kernel_driver")
    with open(src, "w") as f:
        f.write(DRIVER)
    libs = ["-ltbb", "-lz"]
    cache = os.path.join(build, "CMakeCache.txt")
    if os.path.exists(cache) and "XXHASH_LIBRARY" in open(cache).read():
        libs.append("-lxxhash")
    subprocess.check_call(["g++", "-std=c++20", "-O3", "-DNDEBUG", "-DJSON_DIAGNOSTICS=1", "-I", ROOT,
                           "-I", "/usr/include/eigen3", src, os.path.join(build, "libpegasos_kernel.a"), lib] + libs +
                          ["-o", exe])
    return exe


class Kernel:
    """Kernel Pegasos through the CLI when integrated, else the embedded driver."""

    def __init__(self, pegasos, build, workdir):
        self.pegasos = pegasos
        self.cli = cli_has_kernel(pegasos)
        self.driver = None if self.cli else build_driver(build, workdir)

    def train(self, data, model, gamma, lam, epochs, budget, seed, extra=()):
        if self.cli:
            cmd = [self.pegasos, "train", "--quiet", "--set", "objective=kernel_hinge",
                   "--set", "kernel=" + json.dumps({"type": "rbf", "gamma": gamma}), "--set", "lambda=%r" % lam,
                   "--set", "epochs=%r" % epochs, "--set", "sampling=uniform", "--set", "seed=%d" % seed,
                   "--set", "max_support_vectors=%d" % budget, data, model]
            for setting in extra:
                cmd[-2:-2] = ["--set", setting]
        else:
            cmd = [self.driver, "train", data, model, "type=rbf", "gamma=%r" % gamma, "lambda=%r" % lam,
                   "epochs=%r" % epochs, "sampling=uniform", "seed=%d" % seed, "max_support_vectors=%d" % budget]
        wall, cpu, _ = run(cmd)
        with open(model) as f:
            training = json.load(f)["training"]
        return wall, cpu, training

    def eval(self, model, data, workdir):
        if self.cli:
            out = os.path.join(workdir, "eval.json")
            wall, cpu, _ = run([self.pegasos, "eval", model, data, "--json", out])
            with open(out) as f:
                return wall, cpu, json.load(f)["accuracy"]
        wall, cpu, text = run([self.driver, "eval", model, data])
        return wall, cpu, json.loads(text)["accuracy"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"), help="CMake build directory")
    ap.add_argument("--data", default="/tmp/pegasos-kernel-bench")
    ap.add_argument("--gamma", type=float, default=0.03)
    ap.add_argument("--C", type=float, default=10.0, help="LIBSVM C; lambda = 1/(C n)")
    ap.add_argument("--epochs", default="2,5,10", help="kernel Pegasos epochs (comma-separated)")
    ap.add_argument("--budgets", default="500,1000,2000", help="max_support_vectors runs (at --budget-epochs)")
    ap.add_argument("--budget-epochs", type=float, default=5)
    ap.add_argument("--budget-refit", default="true,false",
                    help="budget_refit values of the budget runs (comma-separated; true is the default)")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--libsvm-cache", type=float, default=100, help="svm-train -m (MB), LIBSVM's default 100")
    ap.add_argument("--skip-libsvm", action="store_true")
    ap.add_argument("--out", default=None, help="results JSON (default DATA/kernel_results.json)")
    args = ap.parse_args()

    train, test = make_data(args.data)
    n = sum(1 for _ in open(train))
    lam = 1.0 / (args.C * n)
    pegasos = os.path.join(args.build, "pegasos")
    work = tempfile.mkdtemp(prefix="kbench-")
    kernel = Kernel(pegasos, args.build, work)
    load_before = os.getloadavg()[0]
    rows = []

    def record(method, settings, acc, sv, tw, tc, pw, pc, extra=None):
        row = {"method": method, "settings": settings, "accuracy": acc, "support_vectors": sv,
               "train_wall": tw, "train_cpu": tc, "predict_wall": pw, "predict_cpu": pc}
        row.update(extra or {})
        rows.append(row)
        print("%-28s %-34s acc %.4f  SV %6s  train %7.1fs (cpu %7.1fs)  predict %6.1fs (cpu %6.1fs)" %
              (method, settings, acc, sv, tw, tc, pw, pc), flush=True)

    epochs_list = [float(e) for e in args.epochs.split(",") if e]
    for e in epochs_list:
        model = os.path.join(work, "kernel_e%g.json" % e)
        tw, tc, training = kernel.train(train, model, args.gamma, lam, e, 0, args.seed)
        pw, pc, acc = kernel.eval(model, test, work)
        record("pegasos kernel rbf", "lambda=%.3g epochs=%g" % (lam, e), acc, training["support_vectors"], tw, tc, pw, pc,
               {"kernel_evaluations": training.get("kernel_evaluations"), "objective": training.get("objective")})
    for b in [int(b) for b in args.budgets.split(",") if b]:
        for refit in [r for r in args.budget_refit.split(",") if r]:
            model = os.path.join(work, "kernel_b%d_%s.json" % (b, refit))
            extra = ["budget_refit=" + refit] if kernel.cli else []
            tw, tc, training = kernel.train(train, model, args.gamma, lam, args.budget_epochs, b, args.seed, extra)
            pw, pc, acc = kernel.eval(model, test, work)
            record("pegasos kernel rbf budget", "B=%d epochs=%g refit=%s" % (b, args.budget_epochs, refit), acc,
                   training["support_vectors"], tw, tc, pw, pc,
                   {"evictions": training.get("evictions"), "objective": training.get("objective"),
                    "budget_refit": training.get("budget_refit")})

    if not args.skip_libsvm:
        model = os.path.join(work, "libsvm.model")
        tw, tc, _ = run(["svm-train", "-q", "-t", "2", "-g", repr(args.gamma), "-c", repr(args.C),
                         "-m", repr(args.libsvm_cache), train, model])
        with open(model) as f:
            sv = int(re.search(r"total_sv (\d+)", f.read(4096)).group(1))
        pw, pc, out = run(["svm-predict", test, model, os.path.join(work, "libsvm.pred")])
        acc = float(re.search(r"Accuracy = ([\d.]+)%", out).group(1)) / 100
        record("LIBSVM svm-train -t 2", "g=%g C=%g" % (args.gamma, args.C), acc, sv, tw, tc, pw, pc)

    model = os.path.join(work, "linear_ova.json")
    tw, tc, _ = run([pegasos, "train", "--quiet", "--set", "objective=ova", "--set", "lambda=%r" % lam,
                     "--set", "seed=%d" % args.seed, train, model])
    ev = os.path.join(work, "linear_eval.json")
    pw, pc, _ = run([pegasos, "eval", model, test, "--json", ev])
    with open(ev) as f:
        acc = json.load(f)["accuracy"]
    record("pegasos linear ova", "lambda=%.3g (defaults)" % lam, acc, "-", tw, tc, pw, pc)

    load_after = os.getloadavg()[0]
    print("\n| method | settings | test accuracy | SVs | train wall s | train CPU s | predict wall s | predict CPU s |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print("| %s | %s | %.4f | %s | %.1f | %.1f | %.1f | %.1f |" % (
            r["method"], r["settings"], r["accuracy"], r["support_vectors"], r["train_wall"], r["train_cpu"],
            r["predict_wall"], r["predict_cpu"]))
    print("\nn = %d, gamma = %g, C = %g (lambda = %.3g); %s; %d cores; load average %.1f before, %.1f after" % (
        n, args.gamma, args.C, lam, "CLI" if kernel.cli else "stand-alone driver", os.cpu_count(), load_before,
        load_after))
    out = args.out or os.path.join(args.data, "kernel_results.json")
    with open(out, "w") as f:
        json.dump({"n": n, "gamma": args.gamma, "C": args.C, "lambda": lam, "cli": kernel.cli,
                   "load_before": load_before, "load_after": load_after, "rows": rows}, f, indent=1)
    print("results written to %s" % out)


if __name__ == "__main__":
    main()
