#!/usr/bin/env python3
"""One process of 2 threads against 2 MPI ranks of 1 thread, split by heads.

Both run the same decoder graph (mha-gen --kv-cache, causal) on the same
machine: a prefill of T tokens into the empty cache, then one-token steps
over that context, the way `mha-run GRAPH --prefill T --steps N` drives it.

| row | graph | one process | two ranks |
|---|---|---|---|
| prefill | (1, 4096, 1024, 16), causal | `mha-run ... --threads 2` | `mpirun -np 2 mha-run ... --threads 1 --parallel heads` |
| decode step | the same layer, one token over 4096 of context | the steps of that run | the steps of that run |

The split run's times include its all-reduce (each call's [B, t, D] float32
output, added up across the ranks) and the exchange of states before it;
mha-run prints the time they spent in MPI, which the table shows next to the
call's. In R rounds each configuration runs once, in an order reversed from
round to round; every figure is the median over the rounds of each run's
median.

    python3 bench/distributed.py                # the table above, a minute
    python3 bench/distributed.py --quick        # (1, 512, 256, 4), seconds
    python3 bench/distributed.py --rounds 7 --bin build/bin
    python3 bench/distributed.py --shape 1,2048,512,8   # another layer

It prints a Markdown table and exits 1 when a run fails; without mpirun, or
with an mha-run built without MPI, it prints one line saying so and exits 0.
Needs only Python's standard library.
"""

import os
import re
import shutil
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from layer_vs_torch import (  # noqa: E402
    bench_argument_parser, cpu_model, last_line, parse_shape, run_child)

PREFILL = re.compile(r"^prefill: median ([0-9.]+) ms", re.M)
STEP = re.compile(r"^step: median ([0-9.]+) ms", re.M)
REDUCE = re.compile(
    r"^all-reduce: prefill median ([0-9.]+) ms \(([0-9]+) bytes\)"
    r"(?:, step median ([0-9.]+) ms \(([0-9]+) bytes\))?"
    r"; the ranks' check before it median ([0-9.]+) ms", re.M)
# Open MPI's mpirun: both ranks on this machine, over shared memory; no ssh
# needed to start them (a container has none). Each rank's report goes to a
# file of its own (--output-filename): the lines of mpirun's own stdout may
# interleave mid-line.
# --oversubscribe: a machine of one core still runs the two ranks.
MPIRUN = ["mpirun", "-np", "2", "--bind-to", "none", "--oversubscribe",
          "--mca", "plm_rsh_agent", "false"]


def parse_args():
    parser = bench_argument_parser(__doc__)
    parser.add_argument("--quick", action="store_true",
                        help="small sizes, 1 round: a smoke run")
    parser.add_argument("--shape", type=parse_shape,
                        help="B,T,D,H of the layer (default 1,4096,1024,16; "
                        "--quick 1,512,256,4)")
    parser.add_argument("--rounds", type=int)
    parser.add_argument("--repeat", type=int,
                        help="timed prefills (each with its steps) per run")
    parser.add_argument("--steps", type=int, default=16,
                        help="timed decode steps per prefill")
    parser.add_argument("--timeout", type=float, default=600)
    args = parser.parse_args()
    if args.rounds is None:
        args.rounds = 1 if args.quick else 5
    if args.repeat is None:
        args.repeat = 2 if args.quick else 3
    if min(args.rounds, args.repeat, args.steps) < 1:
        parser.error("--rounds, --repeat and --steps must be >= 1")
    for tool in ("mha-gen", "mha-run"):
        if not os.access(os.path.join(args.bin, tool), os.X_OK):
            parser.error(f"no {tool} in {args.bin}")
    return args


def rank_zero(folder):
    """Rank 0's stdout, which `mpirun --output-filename FOLDER` wrote."""
    try:
        with open(os.path.join(folder, "1", "rank.0", "stdout")) as lines:
            return lines.read()
    except OSError:
        return ""


def measure(command, env, timeout, split):
    """{prefill, step[, prefill_reduce, step_reduce, check, bytes]} in ms,
    or an error line."""
    if split:
        folder = tempfile.mkdtemp(prefix="distributed_bench_ranks.")
        command = command[:len(MPIRUN)] + ["--output-filename", folder] + \
            command[len(MPIRUN):]
    code, out, err = run_child(command, env, timeout)
    text = rank_zero(folder) if split else out
    if split:
        shutil.rmtree(folder, ignore_errors=True)
    prefill, step = PREFILL.search(text), STEP.search(text)
    if code != 0 or not prefill or not step:
        return None, last_line(err or out)
    result = {"prefill": float(prefill.group(1)),
              "step": float(step.group(1))}
    if split:
        found = REDUCE.search(text)
        if not found or found.group(3) is None:
            return None, "no all-reduce times in mha-run's output"
        result.update(prefill_reduce=float(found.group(1)),
                      prefill_bytes=int(found.group(2)),
                      step_reduce=float(found.group(3)),
                      step_bytes=int(found.group(4)),
                      check=float(found.group(5)))
    return result, None


def format_bytes(count):
    for unit, size in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if count >= size:
            return f"{count / size:.1f} {unit}"
    return f"{count} B"


def print_table(shape, times, args):
    batch, seq, width, heads = shape
    print(f"Split by heads on one machine, {cpu_model()[0]}, "
          f"{os.cpu_count()} cores, {args.rounds} round(s)"
          f"{' (--quick)' if args.quick else ''}: ({batch}, {seq}, {width}, "
          f"{heads}) causal, a prefill of {seq} tokens, then steps of one "
          f"token over that context")
    print()
    print("| row | 1 rank x 2 threads ms | 2 ranks x 1 thread ms | "
          "2x1 / 1x2 | all-reduce ms | all-reduce share | bytes added | "
          "rank check ms |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    check = statistics.median(times["check"])
    for row, key in (("prefill", "prefill"), ("decode step", "step")):
        one = statistics.median(times["one", key])
        two = statistics.median(times["two", key])
        reduce = statistics.median(times[f"{key}_reduce"])
        print(f"| {row} | {one:.3f} | {two:.3f} | {two / one:.3f} "
              f"| {reduce:.3f} | {100 * reduce / two:.1f}% "
              f"| {format_bytes(times[f'{key}_bytes'])} | {check:.3f} |",
              flush=True)


def main():
    args = parse_args()
    if not shutil.which("mpirun"):
        print("bench/distributed.py: skipped, no mpirun (make deps installs "
              "Open MPI)")
        return 0
    shape = (1, 512, 256, 4) if args.quick else (1, 4096, 1024, 16)
    if args.shape:
        shape = (args.shape.batch, args.shape.seq, args.shape.width,
                 args.shape.heads)
    batch, seq, width, heads = shape
    work = tempfile.mkdtemp(prefix="distributed_bench.")
    graph = os.path.join(work, "decode.mlir")
    gen = [os.path.join(args.bin, "mha-gen"), f"--d-model={width}",
           f"--heads={heads}", "--causal", "--dynamic",
           f"--kv-cache={seq + args.steps}", "-o", graph]
    code, out, err = run_child(gen, None, args.timeout)
    if code != 0:
        sys.exit(f"distributed.py: mha-gen: {last_line(err or out)}")
    run = [os.path.join(args.bin, "mha-run"), graph, "--random",
           f"--dims=B={batch}", f"--prefill={seq}", f"--steps={args.steps}",
           f"--repeat={args.repeat}", "--warmup=1"]
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    env.pop("OMP_NUM_THREADS", None)
    configs = {
        "one": (run + ["--threads=2"], False),
        "two": (MPIRUN + run + ["--threads=1", "--parallel=heads"], True),
    }
    # mha-run says so when it was built without MPI.
    probe = MPIRUN + run[:4] + ["--prefill=1", "--parallel=heads"]
    code, out, err = run_child(probe, env, args.timeout)
    if "built without it" in err + out:
        print("bench/distributed.py: skipped, this mha-run was built without "
              "MPI (install libopenmpi-dev, e.g. with make deps, and "
              "configure again)")
        return 0
    times = {key: [] for key in (("one", "prefill"), ("one", "step"),
                                 ("two", "prefill"), ("two", "step"),
                                 "prefill_reduce", "step_reduce", "check")}
    failed = False
    for index in range(args.rounds):
        print(f"distributed.py: round {index + 1} of {args.rounds}",
              file=sys.stderr)
        order = list(configs) if index % 2 == 0 else list(configs)[::-1]
        for config in order:
            command, split = configs[config]
            result, error = measure(command, env, args.timeout, split)
            if error:
                print(f"distributed.py: {config}: {error}", file=sys.stderr)
                failed = True
                continue
            times[config, "prefill"].append(result["prefill"])
            times[config, "step"].append(result["step"])
            if split:
                for key in ("prefill_reduce", "step_reduce", "check"):
                    times[key].append(result[key])
                times["prefill_bytes"] = result["prefill_bytes"]
                times["step_bytes"] = result["step_bytes"]
    if failed or not all(times[key] for key in (("one", "step"),
                                                ("two", "step"))):
        return 1
    print_table(shape, times, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
