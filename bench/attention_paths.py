#!/usr/bin/env python3
"""Time the fused and decomposed attention paths of mha-run on a list of shapes.

For each shape (batch, sequence, model width, heads[, causal]) this writes the
layer with mha-gen, runs `mha-run --random --repeat N` once per attention path
and thread count, and prints the median time, GFLOP/s (as mha-run reports
them) and the peak resident memory of the mha-run process. Standard library
only.

    python3 bench/attention_paths.py                 # the default shapes
    python3 bench/attention_paths.py --quick         # small shapes, 3 repeats
    python3 bench/attention_paths.py --shape 1,512,512,8 --shape 1,2048,1024,16,causal
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

DEFAULT_SHAPES = [
    "1,128,512,8",
    "1,512,512,8",
    "1,2048,1024,16",
    "1,2048,1024,16,causal",
    "1,8192,512,8",
]
QUICK_SHAPES = ["1,128,512,8", "1,512,512,8"]

MEDIAN = re.compile(r"median ([0-9.]+) ms")
GFLOPS = re.compile(r"([0-9.]+) GFLOP/s")


def parse_shape(text):
    """'B,T,D,H[,causal]' -> (B, T, D, H, causal)."""
    parts = text.split(",")
    causal = parts[-1] == "causal"
    if causal:
        parts = parts[:-1]
    if len(parts) != 4 or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise argparse.ArgumentTypeError(
            f"expected B,T,D,H[,causal] with positive sizes, got '{text}'")
    batch, seq, width, heads = map(int, parts)
    if width % heads:
        raise argparse.ArgumentTypeError(
            f"heads ({heads}) must divide the model width ({width})")
    return batch, seq, width, heads, causal


def shape_name(shape):
    batch, seq, width, heads, causal = shape
    return f"({batch},{seq},{width},{heads})" + (" causal" if causal else "")


def run_measured(command, timeout):
    """Runs `command`; returns (exit code, output, peak RSS in MiB, wall s).

    os.wait4 gives the rusage of exactly this child, so the peak RSS is that
    of mha-run alone (ru_maxrss is in KiB on Linux)."""
    start = time.monotonic()
    with tempfile.TemporaryFile() as output:
        child = subprocess.Popen(command, stdout=output,
                                 stderr=subprocess.STDOUT)
        deadline = start + timeout
        while True:
            pid, status, usage = os.wait4(child.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                child.kill()
                pid, status, usage = os.wait4(child.pid, 0)
                output.seek(0)
                return None, output.read().decode(errors="replace"), \
                    usage.ru_maxrss / 1024, time.monotonic() - start
            time.sleep(0.02)
        child.returncode = os.waitstatus_to_exitcode(status)
        output.seek(0)
        text = output.read().decode(errors="replace")
    return child.returncode, text, usage.ru_maxrss / 1024, \
        time.monotonic() - start


def supports_attention_option(mha_run):
    """Older mha-run builds have no --attention; then only its default path
    is measured."""
    help_text = subprocess.run([mha_run, "--help"], capture_output=True,
                               text=True).stdout
    return "--attention" in help_text


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--shape", action="append", type=parse_shape,
                        help="B,T,D,H[,causal]; repeatable (default: "
                        + " ".join(DEFAULT_SHAPES) + ")")
    parser.add_argument("--paths", default="fused,decomposed",
                        help="attention paths to run (default: %(default)s)")
    parser.add_argument("--threads", default="1,2",
                        help="thread counts (default: %(default)s)")
    parser.add_argument("--repeat", type=int, default=5,
                        help="timed calls per run; the median is shown "
                        "(default: %(default)s)")
    parser.add_argument("--warmup", type=int, default=1,
                        help="untimed calls first (default: %(default)s)")
    parser.add_argument("--quick", action="store_true",
                        help="small shapes and 3 repeats: a smoke test")
    parser.add_argument("--timeout", type=float, default=1800,
                        help="seconds per run before it is killed "
                        "(default: %(default)s)")
    parser.add_argument("--bin", default=os.path.join(root, "build", "bin"),
                        help="folder of mha-gen and mha-run "
                        "(default: %(default)s)")
    parser.add_argument("--run-arg", action="append", default=[],
                        help="extra argument for every mha-run call, e.g. "
                        "--run-arg=--fuse-projections=true")
    args = parser.parse_args()

    shapes = args.shape or [parse_shape(s) for s in
                            (QUICK_SHAPES if args.quick else DEFAULT_SHAPES)]
    repeat = 3 if args.quick and args.repeat == 5 else args.repeat
    threads = [int(t) for t in args.threads.split(",")]
    mha_gen = os.path.join(args.bin, "mha-gen")
    mha_run = os.path.join(args.bin, "mha-run")
    for tool in (mha_gen, mha_run):
        if not os.access(tool, os.X_OK):
            sys.exit(f"attention_paths.py: error: {tool} not found; build "
                     "first (make) or pass --bin")
    paths = args.paths.split(",")
    if not supports_attention_option(mha_run):
        print("note: this mha-run has no --attention; measuring its default "
              "path only")
        paths = ["default"]

    print(f"mha-run median of {repeat} calls after {args.warmup} warm-up; "
          f"{os.cpu_count()} CPUs; peak RSS of the whole mha-run process")
    header = (f"{'shape (B,T,D,H)':<26} {'path':<11} {'threads':>7} "
              f"{'ms':>10} {'GFLOP/s':>8} {'peak RSS MiB':>13}")
    print(header)
    print("-" * len(header))
    workdir = tempfile.mkdtemp(prefix="mha-bench-")
    failures = 0
    try:
        for shape in shapes:
            batch, seq, width, heads, causal = shape
            graph = os.path.join(workdir, "layer.mlir")
            gen = [mha_gen, f"--batch={batch}", f"--seq={seq}",
                   f"--d-model={width}", f"--heads={heads}", "-o", graph]
            if causal:
                gen.append("--causal")
            subprocess.run(gen, check=True, stdout=subprocess.DEVNULL)
            for path in paths:
                for count in threads:
                    command = [mha_run, graph, "--random",
                               f"--repeat={repeat}", f"--warmup={args.warmup}",
                               f"--threads={count}"] + args.run_arg
                    if path != "default":
                        command.append(f"--attention={path}")
                    code, text, rss, _ = run_measured(command, args.timeout)
                    median = MEDIAN.search(text)
                    gflops = GFLOPS.search(text)
                    if code != 0 or not median:
                        failures += 1
                        why = "timed out" if code is None else \
                            (text.strip().splitlines() or ["no output"])[-1]
                        print(f"{shape_name(shape):<26} {path:<11} "
                              f"{count:>7} failed: {why}")
                        continue
                    print(f"{shape_name(shape):<26} {path:<11} {count:>7} "
                          f"{float(median.group(1)):>10.1f} "
                          f"{float(gflops.group(1)) if gflops else 0:>8.1f} "
                          f"{rss:>13.0f}", flush=True)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
