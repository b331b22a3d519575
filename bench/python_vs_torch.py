#!/usr/bin/python3
"""`make bench`: the Python package against mha-run and against PyTorch.

Two tables, medians of one run (python/README.md, docs/performance.md):

1. Calling overhead. At (1,128,512,8) (--overhead-shape), in R rounds
   (--rounds, default 7) whose order rotates: `mha-run GRAPH --random
   --repeat N --warmup W --threads P` (its median per call), then in this
   process N calls of the same graph compiled by mha.compile, after
   prepare(), on a NumPy array as NumPy allocates it, and N calls of
   mha.torch.MultiheadAttention (batch_first=True, need_weights=False) on a
   torch tensor, under one torch.inference_mode() around the calls as a
   server has it, whose graph has `?` batch and sequence sizes (mha-run
   runs that graph too, with --dims). Each row: the median over rounds of each
   side's median, and the median over rounds of the ratio (target: within
   5 %). Before each mha-run, this process sleeps 0.3 s, so that its OpenMP
   threads stop spinning and the child has the cores to itself.

2. mha.torch.MultiheadAttention against nn.MultiheadAttention at a few
   shapes (--shape B,T,D,H, repeatable): both under torch.inference_mode(),
   need_weights=False, batch_first=True, P threads (torch.set_num_threads,
   mha.set_num_threads). In R rounds (--rounds) whose order alternates,
   each module runs a block of N/4 calls after W/4 (--interleave blocks,
   the default): a server runs one of them, call after call, and each is
   measured so, in its steady state. Each round gives each side's median
   and their ratio; the row gives the medians over rounds, the ratio's
   range, and the target (mha >= 1.5x faster) is judged on the median
   ratio. --interleave calls alternates call by call instead (N calls
   each after W): each call then starts where the other module's call
   left the caches and the threads (PyTorch's OpenBLAS threads still
   spinning, our packed weights evicted), which no server does.

Environment, set before torch and mha load and inherited by mha-run (as
bench/layer_vs_torch.py does for PyTorch): OMP_NUM_THREADS=P,
OPENBLAS_NUM_THREADS=P, OPENBLAS_CORETYPE=SkylakeX on AVX-512 CPUs (Debian's
OpenBLAS 0.3.21 does not know recent ones), OMP_WAIT_POLICY=passive: two
OpenMP runtimes share the process (PyTorch's libgomp, mha's libomp) and
alternate call by call; threads that spin after their call would take the
cores from the other one. --wait-policy active to compare. The package sets
libomp's KMP_BLOCKTIME=200us where it is not set (python/mha/__init__.py):
mha's threads spin through one call's parallel regions and sleep soon
after it, which passive waiting alone would not allow; mha-run inherits it.

    python3 bench/python_vs_torch.py --bin build/bin
    python3 bench/python_vs_torch.py --quick          # fewer calls, 1 shape
"""
import argparse
import datetime
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

DEFAULT_SHAPES = ["1,128,512,8", "1,512,512,8", "4,256,768,12"]


def parse_args():
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n".join(__doc__.splitlines()[2:]))
    parser.add_argument("--bin", default=os.path.join(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "build", "bin"),
        help="folder of mha-gen and mha-run (the package is in BIN/../python)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--calls", type=int, default=200,
                        help="timed calls per side and round (default 200)")
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=7,
                        help="rounds of the overhead table (default 7)")
    parser.add_argument("--overhead-shape", default="1,128,512,8")
    parser.add_argument("--shape", action="append",
                        help="B,T,D,H of the PyTorch table (default %s)"
                        % " ".join(DEFAULT_SHAPES))
    parser.add_argument("--wait-policy", default="passive",
                        choices=("passive", "active"))
    parser.add_argument("--interleave", default="blocks",
                        choices=("blocks", "calls"),
                        help="PyTorch table: blocks of calls per round "
                        "(default) or call by call")
    parser.add_argument("--quick", action="store_true",
                        help="3 rounds, 50 calls, one PyTorch shape")
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.calls, args.warmup = 3, 50, 5
        args.shape = args.shape or DEFAULT_SHAPES[:1]
    args.shape = args.shape or DEFAULT_SHAPES
    return args


def cpu_model():
    with open("/proc/cpuinfo") as f:
        text = f.read()
    model = re.search(r"model name\s*:\s*(.*)", text)
    return (model.group(1).strip() if model else "unknown CPU",
            " avx512f" in text or "\tavx512f" in text or "avx512f " in text)


def shape_of(text):
    b, t, d, h = (int(v) for v in text.split(","))
    return b, t, d, h


def median_ms(call, calls, warmup):
    for _ in range(warmup):
        call()
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def mha_run_ms(args, graph, dims=None):
    time.sleep(0.3)  # this process's OpenMP threads stop spinning
    command = [os.path.join(args.bin, "mha-run"), graph, "--random",
               "--repeat", str(args.calls), "--warmup", str(args.warmup),
               "--threads", str(args.threads)]
    if dims:
        command += ["--dims", dims]
    output = subprocess.run(command, check=True, stdout=subprocess.PIPE,
                            text=True).stdout
    return float(re.search(r"median ([0-9.]+) ms", output).group(1))


def main():
    args = parse_args()
    model, avx512 = cpu_model()
    threads = str(args.threads)
    os.environ.update(OMP_NUM_THREADS=threads, OPENBLAS_NUM_THREADS=threads,
                      OMP_WAIT_POLICY=args.wait_policy)
    if avx512:
        os.environ.setdefault("OPENBLAS_CORETYPE", "SkylakeX")
    sys.path.insert(0, os.path.join(args.bin, "..", "python"))
    import numpy as np
    import mha
    try:
        import torch
        import mha.torch
    except ImportError as error:
        torch = None
        print("PyTorch not importable (%s): only mha's rows" % error,
              file=sys.stderr)
    mha.set_num_threads(args.threads)
    if torch is not None:
        torch.set_num_threads(args.threads)

    print("%s · CPU: %s · %d threads · OMP_WAIT_POLICY=%s KMP_BLOCKTIME=%s%s · medians of %d calls after %d"
          % (datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), model,
             args.threads, args.wait_policy,
             os.environ.get("KMP_BLOCKTIME", "(libomp's default)"),
             " OPENBLAS_CORETYPE=" + os.environ["OPENBLAS_CORETYPE"]
             if "OPENBLAS_CORETYPE" in os.environ else "", args.calls,
             args.warmup))
    print()

    # 1. The calling overhead against mha-run.
    b, t, d, h = shape_of(args.overhead_shape)
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as folder:
        static = os.path.join(folder, "static.mlir")
        dynamic = os.path.join(folder, "dynamic.mlir")
        gen = os.path.join(args.bin, "mha-gen")
        common = ["--batch", str(b), "--seq", str(t), "--d-model", str(d),
                  "--heads", str(h)]
        subprocess.run([gen] + common + ["-o", static], check=True,
                       stdout=subprocess.DEVNULL)
        subprocess.run([gen] + common + ["--dynamic", "-o", dynamic],
                       check=True, stdout=subprocess.DEVNULL)
        layer = mha.compile(static)
        weights = {n: rng.standard_normal(s, dtype=np.float32) * 0.05
                   for n, s, _ in layer.arguments if n != "x"}
        layer.prepare(**weights)
        x = rng.standard_normal((b, t, d), dtype=np.float32)
        sides = [("mha-run", lambda: mha_run_ms(args, static)),
                 ("layer(x), NumPy", lambda: median_ms(lambda: layer(x),
                                                       args.calls, args.warmup))]
        pairs = [(0, 1)]
        if torch is not None:
            module = torch.nn.MultiheadAttention(d, h, batch_first=True).eval()
            fast = mha.torch.MultiheadAttention.from_torch(module)
            xt = torch.from_numpy(x)

            def torch_median():
                # Under inference_mode as a server runs, entered once: its
                # enter and exit are PyTorch calls, not mha's, and cost
                # about 2 % of a call here (the caches are cold after one).
                with torch.inference_mode():
                    return median_ms(
                        lambda: fast(xt, xt, xt, need_weights=False),
                        args.calls, args.warmup)

            sides += [("mha-run, ? sizes", lambda: mha_run_ms(
                          args, dynamic, "B=%d,T=%d" % (b, t))),
                      ("mha.torch, tensor", torch_median)]
            pairs.append((2, 3))
        results = [[] for _ in sides]
        for round_ in range(args.rounds):
            order = list(range(len(sides)))
            order = order[round_ % len(order):] + order[:round_ % len(order)]
            for i in order:
                results[i].append(sides[i][1]())
            print("round %d/%d: %s" % (round_ + 1, args.rounds, ", ".join(
                "%s %.3f ms" % (sides[i][0], results[i][-1])
                for i in range(len(sides)))), file=sys.stderr)
    print("Calling overhead at (%d,%d,%d,%d), %d rounds:" % (b, t, d, h,
                                                             args.rounds))
    print()
    print("| graph | mha-run ms | Python | Python ms | Python / mha-run |")
    print("|---|---:|---|---:|---:|")
    for run, py in pairs:
        ratios = [p / r for r, p in zip(results[run], results[py])]
        ratio = statistics.median(ratios)
        print("| %s | %.3f | %s | %.3f | %.3f (%s) |" % (
            "static sizes" if run == 0 else "`?` batch, sequence",
            statistics.median(results[run]), sides[py][0],
            statistics.median(results[py]), ratio,
            "within 5 %" if ratio <= 1.05 else "NOT within 5 %"))
    print()
    if torch is None:
        return 0

    # 2. mha.torch against nn.MultiheadAttention.
    blocks = args.interleave == "blocks"
    print("mha.torch.MultiheadAttention against nn.MultiheadAttention "
          "(inference_mode, need_weights=False, %s), torch %s:"
          % ("%d rounds of a block of %d calls each after %d"
             % (args.rounds, max(args.calls // 4, 1), max(args.warmup // 4, 1))
             if blocks else "alternating call by call", torch.__version__))
    print()
    print("| shape (B,T,D,H) | nn.MultiheadAttention ms | mha.torch ms | speed-up | per-round range |")
    print("|---|---:|---:|---:|---|")
    met = True
    for text in args.shape:
        b, t, d, h = shape_of(text)
        torch.manual_seed(0)
        module = torch.nn.MultiheadAttention(d, h, batch_first=True).eval()
        fast = mha.torch.MultiheadAttention.from_torch(module)
        xt = torch.randn(b, t, d)
        peers = [lambda: module(xt, xt, xt, need_weights=False),
                 lambda: fast(xt, xt, xt, need_weights=False)]
        with torch.inference_mode():
            expected, _ = peers[0]()
            error = (peers[1]()[0] - expected).abs().max().item()
            if blocks:
                medians = [[], []]
                for round_ in range(args.rounds):
                    for j in ((0, 1) if round_ % 2 == 0 else (1, 0)):
                        medians[j].append(median_ms(
                            peers[j], max(args.calls // 4, 1),
                            max(args.warmup // 4, 1)))
                ratios = [them / us for them, us in zip(*medians)]
                theirs = statistics.median(medians[0])
                ours = statistics.median(medians[1])
            else:
                times = [[], []]
                for i in range(args.warmup + args.calls):
                    for j in ((0, 1) if i % 2 == 0 else (1, 0)):
                        start = time.perf_counter()
                        peers[j]()
                        if i >= args.warmup:
                            times[j].append(time.perf_counter() - start)
                ours = statistics.median(times[1]) * 1e3
                theirs = statistics.median(times[0]) * 1e3
                ratios = [theirs / ours]
        speedup = statistics.median(ratios) if blocks else theirs / ours
        met = met and speedup >= 1.5
        print("| (%d,%d,%d,%d) | %.3f | %.3f | %.2f× | %.2f to %.2f |" % (
            b, t, d, h, theirs, ours, speedup, min(ratios), max(ratios)))
        print("(%d,%d,%d,%d): max abs difference %.1e" % (b, t, d, h, error),
              file=sys.stderr)
    print()
    print("target mha.torch >= 1.5x nn.MultiheadAttention: %s"
          % ("met" if met else "NOT met"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
