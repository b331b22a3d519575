#!/usr/bin/env python3
"""Two builds of mha on the shapes of `make bench`, in one run: is a change
of the compiler neutral (or faster) on every shape?

For each shape, the layer is written once with the NEW build's mha-gen;
then, in R rounds whose order alternates (old first, then new first), both
builds' `mha-run GRAPH --random --repeat N --warmup W --threads P` run it
back to back. A row gives each build's median over rounds of its median
per call, and the median over rounds of new / old (below 1: new is
faster). Comparing within a round cancels most of the drift of a shared
machine; the spread of the per-round ratios says how much is left.

    python3 bench/old_vs_new.py --old /tmp/old-bin --new build/bin
    python3 bench/old_vs_new.py --old A --new B --shape 1,509,512,8 --threads 1

The shapes are layer_vs_torch.py's (--shape, same syntax, repeatable), and
extra mha-run arguments go to both builds (--run-arg, repeatable).
"""

import argparse
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from layer_vs_torch import (DEFAULT_SHAPES, cpu_model, last_line,  # noqa: E402
                            measure_ours, parse_shape, run_child)


def parse_args():
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n".join(__doc__.splitlines()[2:]))
    parser.add_argument("--old", required=True, help="the old build's bin/")
    parser.add_argument("--new", required=True, help="the new build's bin/")
    parser.add_argument("--shape", action="append", type=parse_shape)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--run-arg", action="append", default=[])
    args = parser.parse_args()
    if args.rounds < 1 or args.repeat < 1 or args.threads < 1:
        parser.error("--rounds, --repeat and --threads must be >= 1")
    for build in (args.old, args.new):
        if not os.access(os.path.join(build, "mha-run"), os.X_OK):
            parser.error(f"no mha-run in {build}")
    args.shape = args.shape or [parse_shape(s) for s in DEFAULT_SHAPES]
    return args


def main():
    args = parse_args()
    print(f"old {args.old} against new {args.new}, {cpu_model()[0]}, "
          f"{args.threads} threads, {args.rounds} rounds of {args.repeat} "
          f"calls")
    print()
    print("| shape | old ms | new ms | new / old | per-round range |")
    print("|---|---:|---:|---:|---|")
    failed = False
    with tempfile.TemporaryDirectory() as work:
        for shape in args.shape:
            graph = os.path.join(work, "layer.mlir")
            code, out, err = run_child(
                [os.path.join(args.new, "mha-gen"), *shape.gen_args(),
                 "-o", graph], None, args.timeout)
            if code != 0:
                print(f"| {shape.name()} | mha-gen failed: "
                      f"{last_line(err or out)} | | | |")
                failed = True
                continue
            times = {"old": [], "new": []}
            ratios = []
            for round_index in range(args.rounds):
                order = ["old", "new"] if round_index % 2 == 0 else \
                    ["new", "old"]
                measured = {}
                for build in order:
                    result = measure_ours(
                        os.path.join(getattr(args, build), "mha-run"),
                        graph, args)
                    if "error" in result:
                        print(f"| {shape.name()} | {build}: "
                              f"{result['error']} | | | |")
                        failed = True
                        break
                    measured[build] = result["median_ms"]
                    times[build].append(result["median_ms"])
                if len(measured) < 2:
                    break
                ratios.append(measured["new"] / measured["old"])
            if not ratios:
                continue
            print(f"| {shape.name()} | {statistics.median(times['old']):.3f} "
                  f"| {statistics.median(times['new']):.3f} "
                  f"| {statistics.median(ratios):.3f} "
                  f"| {min(ratios):.3f} to {max(ratios):.3f} |", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
