#!/usr/bin/env python3
"""`make bench`, second part: odd lengths and `?` sizes against the shapes
that the tiles divide, in one run.

Each row pairs a shape the user may send with its yardstick, measured back
to back in an order that alternates from round to round:

  odd      a static graph of an odd length T (prime, or no multiple of the
           64-query / 128-key tiles) against the static graph of the nearest
           multiple of 64, compared per GFLOP (8·B·T·D² + 4·B·T²·D);
  tiny     T = 7 and T = 9 against T = 8, compared per call;
  dynamic  the `mha-gen --dynamic` graph (compiled once, `?` batch and
           length), fed an x of T tokens, against the static graph of T;
  masked   the static graph with a boolean mask [B, T, T] (`mha-gen
           --mask`, random bytes from --random) against the same graph
           without one, per call: the mask is read as bytes in the vector
           code (mha-mask-bytes), so it should cost little;
  library  the `mha-compile` library of the static graph, called from C
           through its handle (examples/aot/time_layer.c), against mha-run;
           its second row is the same call with every array 4 bytes off a
           64-byte boundary against the aligned call.

Each side of a row makes --repeat calls per round, or more for a shape of
fewer GFLOP than (1,128,512,8), in proportion (up to 100 times): T = 8
takes 0.1 ms a call, and the median of 10 such calls moved by a third from
run to run on a shared machine. The ratio of a row is the median over
rounds of (time of the shape / time of its yardstick), per GFLOP where the
row says so. A row prints as soon as it is measured; the summary of the
targets follows the table.

How a round is timed (--via):

  package  (the default where the package imports: it is taken from
           --bin/../python, NumPy from Debian's python3) both graphs are
           compiled once in this process by mha.compile, with mha-run's
           pipeline and defaults, their weights bound by prepare(); each
           round runs the two sides in --blocks alternating blocks of calls
           (the first call of a block, after the other side's block, is not
           counted) and takes each side's median call. The shared machines
           this runs on have slow spells of seconds (docs/performance.md,
           2026-11-28): a spell now falls on both sides of a round, where
           with one process per side it fell on one side only, and one
           row's per-round ratios ranged from 0.53 to 2.06. Each call
           includes the package's own overhead, a few microseconds, the
           same on both sides (python/README.md).
  processes
           one mha-run process per side and round (its median), in an
           order that alternates from round to round; only Python's
           standard library is needed: inputs of `?` graphs are written as
           .npy by hand.

The library rows always time the C program against mha-run.

    /usr/bin/python3 bench/every_shape.py --bin build/bin
    /usr/bin/python3 bench/every_shape.py --bin build/bin --quick --rounds 1
    /usr/bin/python3 bench/every_shape.py --bin build/bin --via processes
"""

import argparse
import os
import random
import re
import statistics
import struct
import subprocess
import sys
import tempfile

MEDIAN = re.compile(r"median ([0-9.]+) ms")

# (label, kind, shape, yardstick shape); shapes are (B, T, D, H).
ROWS = [
    ("T=100", "odd", (1, 100, 512, 8), (1, 128, 512, 8)),
    ("T=333", "odd", (1, 333, 512, 8), (1, 320, 512, 8)),
    ("T=509", "odd", (1, 509, 512, 8), (1, 512, 512, 8)),
    ("T=1000", "odd", (1, 1000, 512, 8), (1, 1024, 512, 8)),
    ("T=2047", "odd", (1, 2047, 512, 8), (1, 2048, 512, 8)),
    ("(3,77,768,12)", "odd", (3, 77, 768, 12), (3, 64, 768, 12)),
    ("T=7", "tiny", (1, 7, 512, 8), (1, 8, 512, 8)),
    ("T=9", "tiny", (1, 9, 512, 8), (1, 8, 512, 8)),
    ("dynamic T=100", "dynamic", (1, 100, 512, 8), (1, 100, 512, 8)),
    ("dynamic T=509", "dynamic", (1, 509, 512, 8), (1, 509, 512, 8)),
    ("dynamic T=512", "dynamic", (1, 512, 512, 8), (1, 512, 512, 8)),
    ("dynamic T=2048", "dynamic", (1, 2048, 512, 8), (1, 2048, 512, 8)),
    ("masked T=512", "masked", (1, 512, 512, 8), (1, 512, 512, 8)),
    ("masked T=509", "masked", (1, 509, 512, 8), (1, 509, 512, 8)),
    ("library (1,512,512,8)", "library", (1, 512, 512, 8), (1, 512, 512, 8)),
]
QUICK = {"T=100", "T=509", "T=7", "dynamic T=509", "library (1,512,512,8)"}
LIBRARY = re.compile(r"layer_call, 64-byte aligned: median ([0-9.]+) ms")
OFFSET = re.compile(r"layer_call, offset 4 bytes: +median ([0-9.]+) ms")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from interleave import (bind_random_weights,  # noqa: E402
                        interleaved_rounds)
# Within this factor of the yardstick (docs/performance.md, "Odd lengths
# and `?` sizes").
TARGET = 1.15
# The library within this factor of mha-run, and offset arrays of aligned.
LIBRARY_TARGET = 1.10


def parse_row(text):
    """'KIND:B,T,D,H:B,T,D,H' -> a row of ROWS."""
    parts = text.split(":")
    try:
        if len(parts) != 3 or \
                parts[0] not in ("odd", "tiny", "dynamic", "masked", "library"):
            raise ValueError
        shape, yardstick = (tuple(int(n) for n in part.split(","))
                            for part in parts[1:])
        if len(shape) != 4 or len(yardstick) != 4 or \
                min(shape + yardstick) < 1 or shape[2] % shape[3] or \
                yardstick[2] % yardstick[3]:
            raise ValueError
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected KIND:B,T,D,H:B,T,D,H with KIND odd, tiny, dynamic, "
            f"masked or library, positive sizes and H dividing D, got "
            f"'{text}'")
    label = "(%d,%d,%d,%d)" % shape
    return (label, parts[0], shape, yardstick)


def gflop(shape):
    b, t, d, _ = shape
    return (8 * b * t * d * d + 4 * b * t * t * d) / 1e9


def write_npy(path, shape, seed):
    """A float32 C-order .npy of uniform values in [-1, 1)."""
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % (
        "".join(f"{n}, " for n in shape))
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    count = 1
    for n in shape:
        count *= n
    rng = random.Random(seed)
    with open(path, "wb") as out:
        out.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)))
        out.write(header.encode("latin1"))
        out.write(struct.pack(f"<{count}f",
                              *(rng.uniform(-1, 1) for _ in range(count))))


def generate(args, folder, shape, dynamic, mask=False):
    b, t, d, h = shape
    name = (f"{b}x{t}x{d}x{h}{'-dynamic' if dynamic else ''}"
            f"{'-mask' if mask else ''}.mlir")
    path = os.path.join(folder, name)
    if not os.path.exists(path):
        subprocess.run([os.path.join(args.bin, "mha-gen"), f"--batch={b}",
                        f"--seq={t}", f"--d-model={d}", f"--heads={h}", "-o",
                        path] + (["--dynamic"] if dynamic else []) +
                       (["--mask"] if mask else []),
                       check=True, stdout=subprocess.DEVNULL)
    return path


# Calls of a shape of fewer GFLOP than this are more than --repeat, in
# proportion (the classic layer at T = 128): a call of T = 8 takes 0.1 ms,
# and 10 of them are no median on a shared machine.
SHORT_GFLOP = gflop((1, 128, 512, 8))


def calls_for(args, shape):
    """--repeat, scaled up for shapes shorter than SHORT_GFLOP."""
    return max(args.repeat,
               min(100 * args.repeat,
                   round(args.repeat * SHORT_GFLOP / gflop(shape))))


def time_graph(args, graph, calls, x_file=None):
    """mha-run's median ms per call over `calls` calls, or None with the
    reason printed."""
    command = [os.path.join(args.bin, "mha-run"), graph, "--random",
               f"--repeat={calls}", f"--warmup={args.warmup}",
               f"--threads={args.threads}"]
    if x_file:
        command.append(f"--input=x={x_file}")
    done = subprocess.run(command, capture_output=True, text=True,
                          timeout=args.timeout)
    median = MEDIAN.search(done.stdout)
    if done.returncode != 0 or not median:
        lines = (done.stderr or done.stdout).strip().splitlines()
        print(f"  {os.path.basename(graph)}: "
              f"{lines[-1] if lines else 'no output'}", file=sys.stderr)
        return None
    return float(median.group(1))


class InProcess:
    """The shape and the yardstick of a row compiled in this process (--via
    package)."""

    def __init__(self, mha, numpy, args):
        self.mha, self.numpy, self.args = mha, numpy, args
        mha.set_num_threads(args.threads)

    def contender(self, graph, shape, seed):
        """A function that makes one call of `graph` on an x of `shape`
        (B, T, D, H) (and a random mask where the graph takes one, 80 % of
        its keys allowed, as mha-run --random's), with the weights bound
        once."""
        numpy = self.numpy
        layer = self.mha.compile(graph)
        rng = numpy.random.default_rng(seed)
        bind_random_weights(layer, rng)
        b, t, d, _ = shape
        per_call = {"x": rng.uniform(-1, 1, (b, t, d)).astype(numpy.float32)}
        if any(name == "mask" for name, _, _ in layer.arguments):
            per_call["mask"] = rng.random((b, t, t)) < 0.8
        call = lambda: layer(**per_call)  # noqa: E731
        for _ in range(self.args.warmup):
            call()
        return call


def build_library_timer(args, folder, shape):
    """mha-compile's library of the static graph of `shape` and
    examples/aot/time_layer.c linked against it; the program's path."""
    b, t, d, h = shape
    work = os.path.join(folder, f"library-{b}x{t}x{d}x{h}")
    program = os.path.join(work, "time_layer")
    if os.path.exists(program):
        return program
    os.makedirs(work)
    graph = generate(args, folder, shape, dynamic=False)
    subprocess.run([os.path.join(args.bin, "mha-compile"), graph, "-o",
                    os.path.join(work, "liblayer.so"), "--header",
                    os.path.join(work, "layer.h")], check=True,
                   capture_output=True)
    subprocess.run([args.cc, "-std=c11", "-O2", f"-I{work}",
                    os.path.join(HERE, "..", "examples", "aot",
                                 "time_layer.c"),
                    "-o", program, f"-L{work}", "-llayer",
                    f"-Wl,-rpath,{work}", "-lm"], check=True)
    return program


def time_library(args, program, shape):
    """(aligned, offset) median ms of the library's handle call."""
    b, t, d, _ = shape
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
    done = subprocess.run([program, str(b), str(t), str(d),
                           str(args.repeat)], capture_output=True, text=True,
                          env=env, timeout=args.timeout)
    aligned, offset = LIBRARY.search(done.stdout), OFFSET.search(done.stdout)
    if done.returncode != 0 or not aligned or not offset:
        lines = (done.stderr or done.stdout).strip().splitlines()
        print(f"  time_layer: {lines[-1] if lines else 'no output'}",
              file=sys.stderr)
        return None
    return float(aligned.group(1)), float(offset.group(1))


def measure_library(args, folder, shape):
    """Rounds of library vs mha-run; returns the row's figures and the
    offset/aligned ratio's figures."""
    program = build_library_timer(args, folder, shape)
    graph = generate(args, folder, shape, dynamic=False)
    ratios, offsets, times, jit_times = [], [], [], []
    for round_index in range(args.rounds):
        if round_index % 2 == 0:
            library = time_library(args, program, shape)
            jit = time_graph(args, graph, args.repeat)
        else:
            jit = time_graph(args, graph, args.repeat)
            library = time_library(args, program, shape)
        if library is None or jit is None:
            return None
        times.append(library[0])
        jit_times.append(jit)
        ratios.append(library[0] / jit)
        offsets.append(library[1] / library[0])
    summary = (statistics.median(times), statistics.median(jit_times),
               statistics.median(ratios), min(ratios), max(ratios))
    offset = (statistics.median(offsets), min(offsets), max(offsets))
    return summary, offset


def measure_row(args, folder, row):
    label, kind, shape, yardstick = row
    if kind == "dynamic":
        graph = generate(args, folder, shape, dynamic=True)
        x_file = os.path.join(folder, f"x-{shape[0]}x{shape[1]}.npy")
        if not os.path.exists(x_file):
            write_npy(x_file, shape[:2] + shape[2:3], seed=shape[1])
        first = (graph, x_file, shape)
        second = (generate(args, folder, yardstick, dynamic=False), None,
                  yardstick)
    elif kind == "masked":
        first = (generate(args, folder, shape, dynamic=False, mask=True), None,
                 shape)
        second = (generate(args, folder, yardstick, dynamic=False), None,
                  yardstick)
    else:
        first = (generate(args, folder, shape, dynamic=False), None, shape)
        second = (generate(args, folder, yardstick, dynamic=False), None,
                  yardstick)
    calls = max(calls_for(args, shape), calls_for(args, yardstick))
    if args.in_process:
        try:
            ours_call = args.in_process.contender(first[0], shape, seed=1)
            theirs_call = args.in_process.contender(second[0], yardstick,
                                                    seed=2)
        except (ValueError, RuntimeError) as error:
            print(f"  {label}: {error}", file=sys.stderr)
            return None
        # Two contenders: the order of the blocks alternates per round.
        medians = interleaved_rounds({"ours": ours_call,
                                      "theirs": theirs_call},
                                     args.rounds, calls, args.blocks)
    ratios, times, yard_times = [], [], []
    for round_index in range(args.rounds):
        if args.in_process:
            ours, theirs = (medians["ours"][round_index],
                            medians["theirs"][round_index])
        else:
            order = [first, second] if round_index % 2 == 0 \
                else [second, first]
            measured = {}
            for graph, x_file, graph_shape in order:
                measured[graph] = time_graph(args, graph, calls, x_file)
            ours, theirs = measured[first[0]], measured[second[0]]
        if ours is None or theirs is None:
            return None
        times.append(ours)
        yard_times.append(theirs)
        if kind == "odd":
            ratios.append((ours / gflop(shape)) / (theirs / gflop(yardstick)))
        else:
            ratios.append(ours / theirs)
    return (statistics.median(times), statistics.median(yard_times),
            statistics.median(ratios), min(ratios), max(ratios))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", default="build/bin")
    # 5: the median of 3 moved past a target when 2 rounds of a row fell in
    # one of the shared machine's slow spells (2026-11-28).
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--cc", default="/usr/lib/llvm-22/bin/clang",
                        help="C compiler for the library's timing program")
    parser.add_argument("--quick", action="store_true",
                        help="four rows only")
    parser.add_argument("--row", action="append", type=parse_row,
                        default=[], metavar="KIND:B,T,D,H:B,T,D,H",
                        help="measure this row instead of the default ones "
                        "(KIND odd, tiny or dynamic; the second shape is "
                        "the yardstick)")
    parser.add_argument("--via", choices=("package", "processes"),
                        help="time rows in this process through the "
                        "package, in alternating blocks (the default where "
                        "`import mha` works), or one mha-run per side")
    parser.add_argument("--blocks", type=int, default=4,
                        help="--via package: alternating blocks per side and "
                        "round")
    args = parser.parse_args()
    if args.rounds < 1 or args.repeat < 1 or args.blocks < 1:
        parser.error("--rounds, --repeat and --blocks must be positive")
    args.in_process = None
    if args.via != "processes":
        # The package that make built next to the tools.
        sys.path.insert(0, os.path.join(args.bin, "..", "python"))
        try:
            import mha
            import numpy
            args.in_process = InProcess(mha, numpy, args)
            args.via = "package"
        except ImportError as error:
            if args.via == "package":
                parser.error(f"--via package: {error} (make builds the "
                             f"package into BIN/../python; Debian's "
                             f"python3-numpy)")
            print(f"every_shape: {error}; timing with mha-run",
                  file=sys.stderr)
            args.via = "processes"

    rows = args.row or [row for row in ROWS
                        if not args.quick or row[0] in QUICK]
    how = (f"in this process, {args.blocks} alternating blocks"
           if args.in_process else "one mha-run per side")
    print(f"\nEvery shape on the fast path: {args.rounds} rounds x "
          f"{args.repeat} calls (more for shapes of fewer GFLOP than "
          f"(1,128,512,8), in proportion), {args.threads} threads, {how}; "
          f"ratio = shape / yardstick (per GFLOP for odd lengths), median "
          f"over rounds [min-max]\n")
    print("| shape | kind | yardstick | ms | yardstick ms | ratio |")
    print("|---|---|---|---:|---:|---:|", flush=True)
    missed = []
    with tempfile.TemporaryDirectory(prefix="mha-every-shape-") as folder:
        for row in rows:
            label, kind, shape, yardstick = row
            if kind == "library":
                measured = measure_library(args, folder, shape)
                if measured is None:
                    print(f"| {label} | library | mha-run | failed | | |",
                          flush=True)
                    missed.append(f"{label}: failed")
                    continue
                (ms, jit_ms, ratio, low, high), (offset, o_low, o_high) = \
                    measured
                print(f"| {label} | library | mha-run | {ms:.2f} | "
                      f"{jit_ms:.2f} | {ratio:.2f}x [{low:.2f}-{high:.2f}] |")
                print(f"| {label}, arrays 4 bytes off | library | aligned "
                      f"arrays | | | {offset:.2f}x [{o_low:.2f}-{o_high:.2f}] "
                      f"|", flush=True)
                if ratio > LIBRARY_TARGET:
                    missed.append(f"{label}: {ratio:.2f}x")
                if offset > LIBRARY_TARGET:
                    missed.append(f"{label} offset: {offset:.2f}x")
                continue
            result = measure_row(args, folder, row)
            what = {"odd": "(%d,%d,%d,%d)" % yardstick,
                    "tiny": "(%d,%d,%d,%d)" % yardstick,
                    "dynamic": "static, same T",
                    "masked": "no mask, same T"}[kind]
            if result is None:
                print(f"| {label} | {kind} | {what} | failed | | |",
                      flush=True)
                missed.append(f"{label}: failed")
                continue
            ms, yard_ms, ratio, low, high = result
            print(f"| {label} | {kind} | {what} | {ms:.2f} | {yard_ms:.2f} "
                  f"| {ratio:.2f}x [{low:.2f}-{high:.2f}] |", flush=True)
            if ratio > TARGET:
                missed.append(f"{label}: {ratio:.2f}x")
    print(f"\nTarget: every ratio at most {TARGET}x (the library's "
          f"{LIBRARY_TARGET}x): "
          + ("met" if not missed else "not met for " + ", ".join(missed)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
