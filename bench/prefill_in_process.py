#!/usr/bin/python3
"""The prefill row of decode_vs_bound.py (--via package) in one process;
prints one JSON line.

Run once by decode_vs_bound.py, under Debian's python (/usr/bin/python3,
where NumPy lives), with the build's package (mha.compile: mha-run's
pipeline and defaults):

  prefill  the cache graph (mha-gen --dynamic --kv-cache T): a decode
           session of B sequences, emptied (reset) before each call, takes
           T tokens per sequence, as `mha-run --prefill T --steps 0` does;
  causal   today's causal layer of T tokens (mha-gen --causal).

Both have their weights bound by prepare() on mha-run --random's scales
and the same random x. They alternate in blocks of calls (bench/
interleave.py), so that a slow spell of the shared machine falls on both;
one process per side, the prefill row of `make bench` had ranged from 0.88
to 1.18 times the causal layer over one day's runs (docs/performance.md).

    /usr/bin/python3 bench/prefill_in_process.py --package build/python \\
        --cache-graph cache.mlir --causal-graph causal.mlir --batch 1 \\
        --tokens 2048

Output: {"prefill": [median ms per round], "causal": [...]}.
"""

import argparse
import json
import sys

from interleave import bind_random_weights, interleaved_rounds

# The cache graph's arguments that the session passes at each call.
SESSION_ARGUMENTS = ("k_cache", "v_cache", "cache_lengths")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--package", required=True,
                        help="the folder of the package mha (build/python)")
    parser.add_argument("--cache-graph", required=True)
    parser.add_argument("--causal-graph", required=True)
    parser.add_argument("--batch", type=int, required=True)
    parser.add_argument("--tokens", type=int, required=True)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=10,
                        help="counted calls of each per round")
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--blocks", type=int, default=4)
    args = parser.parse_args()

    sys.path.insert(0, args.package)
    import mha
    import numpy
    mha.set_num_threads(args.threads)
    rng = numpy.random.default_rng(0)
    cache = mha.compile(args.cache_graph)
    bind_random_weights(cache, rng, skip=SESSION_ARGUMENTS)
    session = cache.session(batch=args.batch)
    causal = mha.compile(args.causal_graph)
    bind_random_weights(causal, rng)
    width = dict((name, dims) for name, dims, _ in causal.arguments)["x"][-1]
    x = rng.uniform(-1, 1, (args.batch, args.tokens, width)).astype(
        numpy.float32)

    def prefill():
        session.reset()
        return session.step(x)

    calls = {"prefill": prefill, "causal": lambda: causal(x)}
    for call in calls.values():
        for _ in range(args.warmup):
            call()
    medians = interleaved_rounds(calls, args.rounds, args.repeat,
                                 args.blocks)
    print(json.dumps(medians))
    return 0


if __name__ == "__main__":
    sys.exit(main())
