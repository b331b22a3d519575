#!/usr/bin/env python3
"""bf16-precision=fast next to accurate, PyTorch bf16 and the AMX ceiling,
same run: our bf16 layer (mha.layer(dtype="bf16"), mha-run's pipeline and
defaults) with `bf16_precision="accurate"` (the default: f32 operands of
attention's products split in bf16 hi + lo) and `"fast"` (Q, K, P, V and
the output projection's input rounded to bf16), and PyTorch's
nn.MultiheadAttention `.to(torch.bfloat16)` under inference_mode, at
(8,512,512,8) and (1,2048,1024,16), 2 threads by default.

The three contenders of a shape run in one child, for --rounds rounds of
--blocks alternating blocks of calls (bench/interleave.py), so that a slow
spell of a shared machine falls on all of them; the ratios are medians of
per-round ratios. The AMX ceiling is bf16_ceiling's TDPBF16PS rate
(register-resident tiles, the same threads), measured just before each
shape's contenders; "of AMX" is a layer's GFLOP/s (layer_vs_torch.py's
FLOP count) over it. The issue's target for fast is 40 % of it.

    /usr/bin/python3 bench/bf16_precision.py --bin build/bin
    /usr/bin/python3 bench/bf16_precision.py --bin build/bin --shape 1,512,512,8 --rounds 1
"""

import argparse
import json
import os
import re
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bf16_vs_f32 import torch_env  # noqa: E402
from layer_vs_torch import (importable, last_line,  # noqa: E402
                            package_importable, parse_shape, run_child)

SHAPES = ["8,512,512,8", "1,2048,1024,16"]
CEILING_TARGET = 0.40

# The child: one shape's contenders in one process; prints one JSON line,
# each contender's median per round.
CHILD = r"""
import json, sys
bench, package, batch, seq, width, heads, repeat, warmup, threads, rounds, \
    blocks, with_torch = sys.argv[1:13]
sys.path[:0] = [bench, package]
import numpy, mha
from interleave import bind_random_weights, interleaved_rounds
batch, seq, width, heads = int(batch), int(seq), int(width), int(heads)
mha.set_num_threads(int(threads))
rng = numpy.random.default_rng(0)
x = rng.uniform(-1, 1, (batch, seq, width)).astype(numpy.float32)
calls = {}
for precision in ("accurate", "fast"):
    layer = mha.layer(batch=batch, seq=seq, d_model=width, heads=heads,
                      dtype="bf16", bf16_precision=precision)
    bind_random_weights(layer, rng)
    calls[precision] = (lambda layer: lambda: layer(x))(layer)
if with_torch == "1":
    import torch
    torch.set_num_threads(int(threads))
    torch.manual_seed(0)
    # Kept: the mode ends when its guard is collected.
    inference = torch.inference_mode()
    inference.__enter__()
    module = torch.nn.MultiheadAttention(
        width, heads, batch_first=True).eval().to(torch.bfloat16)
    tensor = torch.from_numpy(x).to(torch.bfloat16)
    calls["torch"] = lambda: module(tensor, tensor, tensor, need_weights=False)
for call in calls.values():
    for _ in range(int(warmup)):
        call()
result = interleaved_rounds(calls, int(rounds), int(repeat), int(blocks))
print(json.dumps(result))
"""

AMX_LINE = re.compile(r"bf16_ceiling: amx \d+ threads.*median ([0-9.]+) GFLOP/s")


def amx_ceiling(args):
    """bf16_ceiling's median TDPBF16PS rate in GFLOP/s, or None when it is
    not built or the CPU has no AMX (it then prints no amx line)."""
    ceiling = os.path.join(args.bin, "bf16_ceiling")
    if not os.path.exists(ceiling):
        return None
    code, out, err = run_child(
        [ceiling, "--threads", str(args.threads)] +
        (["--passes", "1", "--millis", "50"] if args.quick else []),
        None, args.timeout)
    if code != 0:
        sys.exit(f"bf16_ceiling failed: {last_line(err or out)}")
    match = AMX_LINE.search(out)
    return float(match.group(1)) if match else None


def measure(shape, args, has_torch):
    """{contender: [median ms per round]}, or exits."""
    code, out, err = run_child(
        [args.python, "-c", CHILD, HERE, args.package, str(shape.batch),
         str(shape.seq), str(shape.width), str(shape.heads), str(args.repeat),
         str(args.warmup), str(args.threads), str(args.rounds),
         str(args.blocks), "1" if has_torch else "0"], torch_env(args),
        args.timeout)
    if code != 0:
        sys.exit(f"{shape.name()}: the measurement failed: "
                 f"{last_line(err or out)}")
    return json.loads(last_line(out))


def fmt(value, digits=2, suffix=""):
    return "-" if value is None else f"{value:.{digits}f}{suffix}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", required=True,
                        help="folder of mha-run and bf16_ceiling (the "
                        "package is in its ../python)")
    parser.add_argument("--shape", action="append", type=parse_shape,
                        help="B,T,D,H (repeatable; default: (8,512,512,8), "
                        "(1,2048,1024,16))")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--blocks", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument("--python", default="/usr/bin/python3",
                        help="the Python that has torch (default: %(default)s)")
    parser.add_argument("--no-torch", action="store_true",
                        help="leave PyTorch out")
    parser.add_argument("--quick", action="store_true",
                        help="(1,512,512,8), one round, a short ceiling")
    args = parser.parse_args()
    if min(args.rounds, args.repeat, args.blocks, args.threads) < 1:
        parser.error("--rounds, --repeat, --blocks and --threads must be "
                     "positive")
    args.package = os.path.join(os.path.abspath(args.bin), "..", "python")
    if not package_importable(args.python, args.package):
        sys.exit(f"no package mha in {args.package} for {args.python} "
                 "(make builds it)")
    if args.quick:
        args.rounds = 1
    shapes = args.shape or [parse_shape(s) for s in
                            (["1,512,512,8"] if args.quick else SHAPES)]
    has_torch = not args.no_torch and \
        "torch" in importable(args.python, ["torch"])

    print(f"bf16 fast vs accurate · {args.threads} threads · {args.rounds} "
          f"rounds of {args.repeat} calls after {args.warmup} warm-up, in one "
          f"process, {args.blocks} alternating blocks per round · medians")
    print()
    print("| shape (B,T,D,H) | accurate ms | fast ms | fast / accurate | "
          "PyTorch bf16 ms | fast vs PyTorch | fast GFLOP/s | AMX ceiling "
          "GFLOP/s | accurate of AMX | fast of AMX |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    shares = []
    for shape in shapes:
        ceiling = amx_ceiling(args)
        times = measure(shape, args, has_torch)
        med = {name: statistics.median(v) for name, v in times.items()}
        speedup = statistics.median(
            a / f for a, f in zip(times["accurate"], times["fast"]))
        vs_torch = statistics.median(
            t / f for t, f in zip(times["torch"], times["fast"])) \
            if "torch" in times else None
        rate = {name: shape.flops() / (ms * 1e6) for name, ms in med.items()}
        share = {name: rate[name] / ceiling if ceiling else None
                 for name in ("accurate", "fast")}
        if share["fast"] is not None:
            shares.append(share["fast"])
        print(f"| {shape.name()} | {fmt(med['accurate'])} | "
              f"{fmt(med['fast'])} | {speedup:.2f}x | "
              f"{fmt(med.get('torch'))} | {fmt(vs_torch, 2, 'x')} | "
              f"{rate['fast']:.1f} | {fmt(ceiling, 1)} | "
              f"{fmt(share['accurate'] and 100 * share['accurate'], 1, ' %')} | "
              f"{fmt(share['fast'] and 100 * share['fast'], 1, ' %')} |",
              flush=True)
    print()
    if shares:
        met = min(shares) >= CEILING_TARGET
        print(f"fast of the AMX ceiling: min {100 * min(shares):.1f} % "
              f"(target >= {100 * CEILING_TARGET:.0f} %: "
              f"{'met' if met else 'not met'})")
    else:
        print("AMX ceiling: none (no AMX on this CPU, or bf16_ceiling not "
              "built)")
    if not has_torch:
        print("PyTorch: left out" if args.no_torch else
              "PyTorch: not importable under " + args.python)


if __name__ == "__main__":
    main()
