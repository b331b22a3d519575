#!/usr/bin/python3
"""Time a float32 matrix product with NumPy; print one JSON line.

The ceiling of layer_vs_torch.py: an attention layer is mostly matrix
products, so the GFLOP/s of a large square one on the same cores, with the
same BLAS and environment as the PyTorch peer, bounds what the whole layer
can reach. Run by layer_vs_torch.py under /usr/bin/python3 with
OPENBLAS_CORETYPE, OMP_WAIT_POLICY and OPENBLAS_NUM_THREADS set.

    OPENBLAS_CORETYPE=SkylakeX OPENBLAS_NUM_THREADS=2 \
        /usr/bin/python3 bench/gemm_ceiling.py --size 2048

Output: {"gflops" (from the median), "median_ms", "calls", "size", "blas"}.
"""

import argparse
import json
import statistics
import time

import blas_info


def build_product(n, threads):
    """One n x n x n float32 product into a preallocated result, on
    `threads` BLAS threads (layer_in_process.py makes the same)."""
    import numpy
    blas_info.set_blas_threads(threads)
    generator = numpy.random.default_rng(0)
    a = generator.standard_normal((n, n), dtype=numpy.float32)
    b = generator.standard_normal((n, n), dtype=numpy.float32)
    c = numpy.empty((n, n), dtype=numpy.float32)
    return lambda: numpy.matmul(a, b, out=c)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=2048,
                        help="M = N = K (default: %(default)s)")
    parser.add_argument("--repeat", type=int, default=10,
                        help="timed products (default: %(default)s)")
    parser.add_argument("--warmup", type=int, default=2,
                        help="untimed products first (default: %(default)s)")
    parser.add_argument("--threads", type=int, default=2,
                        help="OpenBLAS threads (default: %(default)s)")
    parser.add_argument("--budget", type=float, default=10,
                        help="seconds after which fewer calls are made, "
                        "at least 1 warm-up and 3 timed (default: "
                        "%(default)s)")
    args = parser.parse_args()

    import numpy
    product = build_product(args.size, args.threads)
    n = args.size
    # A slow BLAS (the reference one takes seconds per call at n = 2048)
    # gets fewer calls rather than minutes.
    start = time.perf_counter()
    for index in range(args.warmup):
        if index and time.perf_counter() - start > args.budget / 4:
            break
        product()
    times = []
    for index in range(args.repeat):
        if index >= 3 and sum(times) > args.budget * 1e3:
            break
        start = time.perf_counter()
        product()
        times.append((time.perf_counter() - start) * 1e3)
    median = statistics.median(times)
    print(json.dumps({
        "gflops": 2 * n ** 3 / median / 1e6, "median_ms": median,
        "calls": len(times), "size": n, "numpy": numpy.__version__,
        "blas": blas_info.loaded_blas()}))


if __name__ == "__main__":
    main()
