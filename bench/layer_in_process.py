#!/usr/bin/python3
"""Our layer and the GEMM ceiling of layer_vs_torch.py (--via package) in
one process; prints one JSON line.

Run by layer_vs_torch.py once per round, under Debian's python
(/usr/bin/python3, where NumPy lives) in its tuned environment:

  ours  the graph, compiled by the build's Python package (mha.compile:
        mha-run's pipeline and defaults), its weights bound by prepare()
        and its inputs (x, kv) random, on mha-run --random's scales;
  gemm  gemm_ceiling.py's product, the ceiling.

The two alternate in blocks of calls of about the same length
(bench/interleave.py), so that a slow spell of the shared machine falls on
both, and the share of the ceiling is taken from times of the same
seconds. PyTorch stays in a process of its
own: in one process with it, our blocks ran up to twice as long as alone
(docs/performance.md, 2026-11-28).

    /usr/bin/python3 bench/layer_in_process.py --package build/python \\
        --graph layer.mlir

Output: {"ours": {"median_ms", "compile_ms"}, "gemm": {"gflops",
"median_ms", "size", "blas"}}; without --gemm-size, ours only.
"""

import argparse
import json
import sys
import time

import blas_info
import gemm_ceiling
from interleave import ACTIVATIONS, bind_random_weights, interleaved_rounds


def build_ours(package, graph, threads):
    """Our layer's call and its compile time in ms."""
    sys.path.insert(0, package)
    import mha
    import numpy
    mha.set_num_threads(threads)
    start = time.perf_counter()
    layer = mha.compile(graph)
    compile_ms = (time.perf_counter() - start) * 1e3
    rng = numpy.random.default_rng(0)
    bind_random_weights(layer, rng)
    activations = {name: rng.uniform(-1, 1, dims).astype(numpy.float32)
                   for name, dims, _ in layer.arguments
                   if name in ACTIVATIONS}
    return (lambda: layer(**activations)), compile_ms


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--package", required=True,
                        help="the folder of the package mha (build/python)")
    parser.add_argument("--graph", required=True)
    parser.add_argument("--repeat", type=int, default=20,
                        help="counted calls of our layer")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--blocks", type=int, default=4)
    parser.add_argument("--gemm-size", type=int, default=0,
                        help="M = N = K of the ceiling (0: no ceiling)")
    parser.add_argument("--gemm-repeat", type=int, default=10,
                        help="counted products")
    args = parser.parse_args()

    calls = {}
    calls["ours"], compile_ms = build_ours(args.package, args.graph,
                                           args.threads)
    result = {"ours": {"compile_ms": compile_ms}}
    if args.gemm_size:
        calls["gemm"] = gemm_ceiling.build_product(args.gemm_size,
                                                   args.threads)
        result["gemm"] = {"size": args.gemm_size,
                          "blas": blas_info.loaded_blas()}
    warm = {}
    for name, call in calls.items():
        for _ in range(max(1, args.warmup)):
            start = time.perf_counter()
            call()
            warm[name] = time.perf_counter() - start
    counts = {"ours": args.repeat, "gemm": args.gemm_repeat}
    if "gemm" in calls:
        # Blocks of about the same length: a short layer makes as many
        # calls as take the GEMM's time (up to 100 times --repeat), so that
        # a brief slow spell cannot fall on all of its blocks alone.
        balanced = round(args.gemm_repeat * warm["gemm"] / warm["ours"])
        counts["ours"] = max(args.repeat, min(100 * args.repeat, balanced))
    medians = interleaved_rounds(calls, 1, {name: counts[name]
                                            for name in calls}, args.blocks)
    result["ours"]["median_ms"] = medians["ours"][0]
    if "gemm" in calls:
        result["gemm"]["median_ms"] = medians["gemm"][0]
        result["gemm"]["gflops"] = \
            2 * args.gemm_size ** 3 / medians["gemm"][0] / 1e6
    print(json.dumps(result))


if __name__ == "__main__":
    main()
