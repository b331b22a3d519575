#!/usr/bin/env python3
"""bf16 next to float32, same run: our layer from
`mha-gen --dtype bf16` and from plain mha-gen, and PyTorch's
nn.MultiheadAttention in float32 and `.to(torch.bfloat16)` (under
inference_mode, in layer_vs_torch.py's tuned environment), at
(1,512,512,8), (8,512,512,8) and (1,2048,1024,16), 2 threads by default.

Per shape: our float32 and bf16 medians (ms, GFLOP/s), bf16 / float32
GFLOP/s (target >= 1.6x), PyTorch's float32 and bf16 medians and
our bf16 speed-up over PyTorch bf16 (target >= 2x). The FLOP count is
layer_vs_torch.py's.

--via package (the default where the build's package imports, from
--bin/../python): the four contenders of a shape run in one child, ours
through mha.layer (mha-run's pipeline and defaults, weights bound by
prepare, a float32 x rounded to bf16 at each call), for --rounds rounds of
--blocks alternating blocks of calls; a slow spell of a shared machine
then falls on every contender, and the ratios are medians of per-round
ratios. --via processes: each contender in its own child (mha-run for
ours), one after the other, for --rounds rounds; the ratios are those of
the medians over rounds.

    /usr/bin/python3 bench/bf16_vs_f32.py --bin build/bin
    /usr/bin/python3 bench/bf16_vs_f32.py --bin build/bin --shape 1,512,512,8 --rounds 1
    /usr/bin/python3 bench/bf16_vs_f32.py --bin build/bin --bf16-dot avx512  # vdpbf16ps
    /usr/bin/python3 bench/bf16_vs_f32.py --bin build/bin --via processes
    /usr/bin/python3 bench/bf16_vs_f32.py --bin build/bin --bf16-precision fast

--bf16-dot passes mha-run's option of that name (mha.layer's bf16_dot) for
the bf16 layer: `auto` (mha-run's default) takes AMX where the CPU has
AMX-BF16, vdpbf16ps on AMD Zen 4 and later, and the f32 path elsewhere;
`amx`, `avx512` (or `on`) and `off` force a path
(docs/pipeline.md). First, the CPU's bf16 ceilings (bf16_ceiling, beside
mha-run: TDPBF16PS, vdpbf16ps and f32 FMA rates, register-resident, on
the same threads), next to which the layer's GFLOP/s can be read.
"""

import argparse
import json
import os
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from layer_vs_torch import (MEDIAN, cpu_model, default_coretype,  # noqa: E402
                            importable, last_line, package_importable,
                            parse_shape, run_child)

SHAPES = ["1,512,512,8", "8,512,512,8", "1,2048,1024,16"]
BF16_TARGET = 1.6
TORCH_TARGET = 2.0

# The PyTorch child: one dtype, one shape; prints one JSON line.
TORCH_CHILD = r"""
import json, statistics, sys, time
import torch
batch, seq, width, heads, dtype, repeat, warmup, threads = sys.argv[1:9]
batch, seq, width, heads = int(batch), int(seq), int(width), int(heads)
torch.set_num_threads(int(threads))
torch.manual_seed(0)
dtype = {"f32": torch.float32, "bf16": torch.bfloat16}[dtype]
layer = torch.nn.MultiheadAttention(width, heads, batch_first=True).eval()
layer = layer.to(dtype)
x = torch.randn(batch, seq, width).to(dtype)
times = []
with torch.inference_mode():
    for _ in range(int(warmup)):
        layer(x, x, x, need_weights=False)
    for _ in range(int(repeat)):
        start = time.perf_counter()
        layer(x, x, x, need_weights=False)
        times.append((time.perf_counter() - start) * 1e3)
print(json.dumps({"median_ms": statistics.median(times)}))
"""


# --via package: the four contenders of one shape in one process (our f32
# and bf16 layers through the package, PyTorch's module in float32 and in
# bf16), in rounds of alternating blocks of calls (bench/interleave.py);
# prints one JSON line, each contender's median per round. Run in
# torch_env's environment; the package sets libomp's KMP_BLOCKTIME
# (python/mha/__init__.py).
PACKAGE_CHILD = r"""
import json, sys
bench, package, batch, seq, width, heads, repeat, warmup, threads, rounds, \
    blocks, with_torch, bf16_dot, bf16_precision = sys.argv[1:15]
sys.path[:0] = [bench, package]
import numpy, mha
from interleave import bind_random_weights, interleaved_rounds
batch, seq, width, heads = int(batch), int(seq), int(width), int(heads)
mha.set_num_threads(int(threads))
rng = numpy.random.default_rng(0)
x = rng.uniform(-1, 1, (batch, seq, width)).astype(numpy.float32)
calls = {}
for dtype in ("f32", "bf16"):
    options = {}
    if dtype == "bf16" and bf16_dot:
        options["bf16_dot"] = bf16_dot
    if dtype == "bf16" and bf16_precision:
        options["bf16_precision"] = bf16_precision
    layer = mha.layer(batch=batch, seq=seq, d_model=width, heads=heads,
                      dtype=dtype, **options)
    bind_random_weights(layer, rng)
    calls[dtype] = (lambda layer: lambda: layer(x))(layer)
if with_torch == "1":
    import torch
    torch.set_num_threads(int(threads))
    torch.manual_seed(0)
    # Kept: the mode ends when its guard is collected.
    inference = torch.inference_mode()
    inference.__enter__()
    for dtype, torch_type in (("f32", torch.float32), ("bf16", torch.bfloat16)):
        module = torch.nn.MultiheadAttention(
            width, heads, batch_first=True).eval().to(torch_type)
        tensor = torch.from_numpy(x).to(torch_type)
        calls["torch_" + dtype] = (lambda m, t: lambda: m(
            t, t, t, need_weights=False))(module, tensor)
for call in calls.values():
    for _ in range(int(warmup)):
        call()
result = interleaved_rounds(calls, int(rounds), int(repeat), int(blocks))
print(json.dumps(result))
"""


def measure_ours(mha_run, graph, args, extra=()):
    code, out, err = run_child(
        [mha_run, graph, "--random", f"--repeat={args.repeat}",
         f"--warmup={args.warmup}", f"--threads={args.threads}", *extra],
        None, args.timeout)
    median = MEDIAN.search(out)
    if code != 0 or not median:
        return None, last_line(err or out)
    return float(median.group(1)), None


def torch_env(args):
    """layer_vs_torch.py's "tuned" environment of PyTorch: OpenBLAS's
    AVX-512 kernels, OpenMP threads that do not spin, P threads."""
    coretype = default_coretype(cpu_model()[1])
    tuned = {"OMP_WAIT_POLICY": "passive"}
    if coretype:
        tuned["OPENBLAS_CORETYPE"] = coretype
    return dict(os.environ, **tuned, OPENBLAS_NUM_THREADS=str(args.threads),
                OMP_NUM_THREADS=str(args.threads))


def measure_torch(shape, dtype, args):
    code, out, err = run_child(
        [args.python, "-c", TORCH_CHILD, str(shape.batch), str(shape.seq),
         str(shape.width), str(shape.heads), dtype, str(args.repeat),
         str(args.warmup), str(args.threads)], torch_env(args), args.timeout)
    if code != 0:
        return None, last_line(err or out)
    return json.loads(last_line(out))["median_ms"], None


def measure_in_process(shape, args, has_torch, rounds):
    """--via package: {contender: [median ms per round]}, or exits."""
    code, out, err = run_child(
        [args.python, "-c", PACKAGE_CHILD, HERE, args.package, str(shape.batch),
         str(shape.seq), str(shape.width), str(shape.heads), str(args.repeat),
         str(args.warmup), str(args.threads), str(rounds), str(args.blocks),
         "1" if has_torch else "0", args.bf16_dot or "",
         args.bf16_precision or ""], torch_env(args),
        args.timeout)
    if code != 0:
        sys.exit(f"{shape.name()}: the in-process measurement failed: "
                 f"{last_line(err or out)}")
    return json.loads(last_line(out))


def measure_apart(shape, graphs, mha_run, args, has_torch, rounds):
    """--via processes: {contender: [median ms per round]}, each contender
    in a child of its own, one after the other; exits if ours fails."""
    times = {key: [] for key in ("f32", "bf16", "torch_f32", "torch_bf16")}
    for round_index in range(rounds):
        print(f"{shape.name()}: round {round_index + 1}/{rounds}",
              file=sys.stderr)
        for dtype in ("f32", "bf16"):
            extra = ([f"--bf16-dot={args.bf16_dot}"]
                     if dtype == "bf16" and args.bf16_dot else [])
            if dtype == "bf16" and args.bf16_precision:
                extra.append(f"--bf16-precision={args.bf16_precision}")
            ms, error = measure_ours(mha_run, graphs[dtype], args, extra)
            if error:
                sys.exit(f"mha-run {dtype} failed: {error}")
            times[dtype].append(ms)
        if has_torch:
            for dtype in ("f32", "bf16"):
                ms, error = measure_torch(shape, dtype, args)
                if error:
                    print(f"PyTorch {dtype}: {error}", file=sys.stderr)
                else:
                    times["torch_" + dtype].append(ms)
    return times


def gflops(shape, ms):
    return shape.flops() / (ms * 1e6) if ms else None


def fmt(value, digits=2):
    return "-" if value is None else f"{value:.{digits}f}"


def bf16_path(mha_gen, mha_run, bf16_dot, timeout):
    """Which instructions a bf16 layer's products take with `bf16_dot` (None:
    mha-run's default, `auto`) on this CPU, read off the path that
    mha-strategy records (bf16_path) when mha-run lowers a small bf16 layer:
    "AMX", "vdpbf16ps" or "the f32 path"."""
    with tempfile.TemporaryDirectory() as work:
        graph = os.path.join(work, "bf16.mlir")
        code, out, err = run_child(
            [mha_gen, "--dtype", "bf16", "--seq", "32", "--d-model", "64",
             "--heads", "2", "-o", graph], None, timeout)
        if code != 0:
            sys.exit(f"mha-gen failed: {last_line(err or out)}")
        code, out, err = run_child(
            [mha_run, graph, "--random", "--mlir-print-ir-after=mha-strategy"] +
            ([f"--bf16-dot={bf16_dot}"] if bf16_dot else []), None, timeout)
        if code != 0:
            sys.exit(f"mha-run --mlir-print-ir-after failed: "
                     f"{last_line(err or out)}")
    if 'bf16_path = "amx"' in err:
        return "AMX"
    if 'bf16_path = "avx512"' in err:
        return "vdpbf16ps"
    return "the f32 path"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", required=True, help="folder of mha-gen and mha-run")
    parser.add_argument("--bf16-dot",
                        choices=("auto", "amx", "avx512", "on", "off"),
                        help="mha-run's --bf16-dot for the bf16 layer "
                             "(default: mha-run's own)")
    parser.add_argument("--bf16-precision", choices=("accurate", "fast"),
                        help="mha-run's --bf16-precision for the bf16 layer "
                             "(default: mha-run's own, accurate)")
    parser.add_argument("--shape", action="append", type=parse_shape,
                        help="B,T,D,H (repeatable; default: (1,512,512,8), (8,512,512,8), (1,2048,1024,16))")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--python", default="/usr/bin/python3",
                        help="the Python that has torch (default: %(default)s)")
    parser.add_argument("--no-torch", action="store_true",
                        help="leave PyTorch out")
    parser.add_argument("--quick", action="store_true",
                        help="one small shape, one round")
    parser.add_argument("--via", choices=("package", "processes"),
                        help="all four contenders of a shape in one process "
                        "through the package, in alternating blocks (the "
                        "default where it is built), or one child per "
                        "contender and round")
    parser.add_argument("--blocks", type=int, default=5,
                        help="--via package: alternating blocks per round")
    args = parser.parse_args()
    args.package = os.path.join(os.path.abspath(args.bin), "..", "python")
    has_package = package_importable(args.python, args.package)
    if args.via is None:
        args.via = "package" if has_package else "processes"
    elif args.via == "package" and not has_package:
        sys.exit(f"--via package: no package mha in {args.package} for "
                 f"{args.python} (make builds it)")
    if args.blocks < 1:
        parser.error("--blocks must be positive")
    shapes = args.shape or [parse_shape(s) for s in
                            (["1,512,512,8"] if args.quick else SHAPES)]
    rounds = 1 if args.quick else args.rounds
    has_torch = not args.no_torch and \
        "torch" in importable(args.python, ["torch"])
    mha_gen = os.path.join(args.bin, "mha-gen")
    mha_run = os.path.join(args.bin, "mha-run")

    ceiling = os.path.join(args.bin, "bf16_ceiling")
    if os.path.exists(ceiling):
        code, out, err = run_child(
            [ceiling, "--threads", str(args.threads)] +
            (["--passes", "1", "--millis", "50"] if args.quick else []),
            None, args.timeout)
        if code != 0:
            sys.exit(f"bf16_ceiling failed: {last_line(err or out)}")
        print(out.strip())
    else:
        print(f"bf16_ceiling: not built ({ceiling})")
    print()
    path = bf16_path(mha_gen, mha_run, args.bf16_dot, args.timeout)
    how = (f"in one process, {args.blocks} alternating blocks per round"
           if args.via == "package" else "one child per contender and round")
    print(f"bf16 vs float32 · {args.threads} threads · {rounds} rounds of "
          f"{args.repeat} calls after {args.warmup} warm-up, {how} · "
          f"medians · bf16-dot={args.bf16_dot or 'auto (default)'}: {path}")
    print()
    print("| shape (B,T,D,H) | ours f32 ms | ours f32 GFLOP/s | ours bf16 ms | "
          "ours bf16 GFLOP/s | bf16/f32 | PyTorch f32 ms | PyTorch bf16 ms | "
          "ours bf16 vs PyTorch bf16 |")
    print("|---|---|---|---|---|---|---|---|---|")
    ratios, torch_ratios = [], []
    with tempfile.TemporaryDirectory() as work:
        for shape in shapes:
            graphs = {}
            for dtype in ("f32", "bf16"):
                graphs[dtype] = os.path.join(work, f"{dtype}.mlir")
                code, out, err = run_child(
                    [mha_gen] + shape.gen_args() +
                    (["--dtype", "bf16"] if dtype == "bf16" else []) +
                    ["-o", graphs[dtype]], None, args.timeout)
                if code != 0:
                    sys.exit(f"mha-gen failed: {last_line(err or out)}")
            times = {key: [] for key in ("f32", "bf16", "torch_f32", "torch_bf16")}
            if args.via == "package":
                times.update(measure_in_process(shape, args, has_torch,
                                                rounds))
            else:
                times.update(measure_apart(shape, graphs, mha_run, args,
                                           has_torch, rounds))
            med = {k: statistics.median(v) if v else None for k, v in times.items()}
            # In one process the rounds pair up: the ratios are per round,
            # then their median, as every_shape.py's.
            paired = args.via == "package"
            ratio = statistics.median(
                f / b for f, b in zip(times["f32"], times["bf16"])) \
                if paired else med["f32"] / med["bf16"]
            ratios.append(ratio)
            vs_torch = None
            if med["torch_bf16"]:
                vs_torch = statistics.median(
                    t / b for t, b in zip(times["torch_bf16"], times["bf16"])) \
                    if paired else med["torch_bf16"] / med["bf16"]
            if vs_torch:
                torch_ratios.append(vs_torch)
            print(f"| {shape.name()} | {fmt(med['f32'])} | "
                  f"{fmt(gflops(shape, med['f32']), 1)} | {fmt(med['bf16'])} | "
                  f"{fmt(gflops(shape, med['bf16']), 1)} | {ratio:.2f}x | "
                  f"{fmt(med['torch_f32'])} | {fmt(med['torch_bf16'])} | "
                  f"{fmt(vs_torch)}{'x' if vs_torch else ''} |", flush=True)
    print()
    print(f"bf16 / f32 GFLOP/s: min {min(ratios):.2f}x (target >= "
          f"{BF16_TARGET}x: {'met' if min(ratios) >= BF16_TARGET else 'not met'})")
    if torch_ratios:
        print(f"ours bf16 / PyTorch bf16: min {min(torch_ratios):.2f}x (target >= "
              f"{TORCH_TARGET}x: {'met' if min(torch_ratios) >= TORCH_TARGET else 'not met'})")
    else:
        print("PyTorch: left out" if args.no_torch else
              "PyTorch: not importable under " + args.python)


if __name__ == "__main__":
    main()
