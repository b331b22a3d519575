#!/usr/bin/env python3
"""`make bench`: decoding with a key/value cache against its bandwidth bound.

For each decode shape (B, context, D, H[, Hkv]) this writes a cache graph
with mha-gen --kv-cache and, in R rounds whose order rotates, measures:

  ours       mha-run --prefill CONTEXT --steps N --threads P: the median
             time of a one-token step once the cache holds CONTEXT tokens;
  bf16       the same with bf16 caches and weights (mha-gen --dtype bf16),
             against its own bound (half the bytes);
  int8       the same with int8 caches (mha-gen --cache-dtype int8: codes
             and an f32 scale per row), float32 weights, against its own
             bound (a quarter of the caches' bytes plus the scales);
  paged      the same with a paged cache (mha-gen --paged-kv 16: pools of
             pages of 16 rows and a block table, shuffled by mha-run),
             against the float32 step of the same round;
  bound      the bytes a step must read (the K and V caches up to the
             context, B·Hkv·(context+1)·(dk+dv)·4, plus the four weight
             matrices) ÷ the read bandwidth of bench/stream_read (P threads,
             a buffer 4× the last-level cache, median of passes), measured
             in the same round; "LLC" is the same bound at the bandwidth of
             a buffer the size of the step's reads, for machines whose
             last-level cache holds the whole cache;
  recompute  today's way without a cache: a cross-attention layer of one
             query per sequence over the whole history (mha-gen --kv-seq
             CONTEXT), mha-run --repeat;
  PyTorch    the peer torch_decode.py (a preallocated cache, one token per
             step), bench/torch_decode.py (--torch-decode or $TORCH_DECODE
             to run another), under
             OMP_WAIT_POLICY=passive and OPENBLAS_CORETYPE as
             layer_vs_torch.py runs PyTorch; the row says when it is absent.

Then a prefill row: T tokens into an empty cache against today's causal
layer of T tokens (mha-gen --causal). --via package (the default where
--python imports the build's package from --bin/../python): both in one
child (bench/prefill_in_process.py), a decode session emptied before each
call against the causal layer, in alternating blocks of --repeat calls per
round, so that a slow spell of the machine falls on both. --via processes:
mha-run --prefill T --steps 0 against mha-run on the causal layer, one
process each, within the decode rounds. Ratios are per round, then the
median over rounds. It prints one
Markdown table per kind, the machine, and whether the targets
(docs/performance.md#targets) are met: every row within 1.5× its bound; the
layer (4, 4096, 512, 8) also 20× faster than the recompute and 2× faster
than PyTorch; a grouped-query row's caches read H/Hkv× less than the same
layer's with H key/value heads. Needs only Python's standard library.

    make bench                                          # with the other rows
    python3 bench/decode_vs_bound.py --quick            # small and fast
    python3 bench/decode_vs_bound.py --shape 4,4096,512,8,2 --rounds 3
"""

import argparse
import json
import os
import re
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from layer_vs_torch import (last_line, package_importable,  # noqa: E402
                            run_child)

ROOT = os.path.dirname(HERE)
DEFAULT_TORCH_DECODE = os.path.join(HERE, "torch_decode.py")

DEFAULT_SHAPES = ["4,4096,512,8", "4,4096,512,8,2"]
QUICK_SHAPES = ["2,512,256,4", "2,512,256,4,2"]
DEFAULT_PREFILL = "1,2048,512,8"
QUICK_PREFILL = "1,256,256,4"

# The targets (docs/performance.md#targets). Every row: within BOUND_TARGET
# of its own bound. The main layer (MAIN_SHAPE) also: RECOMPUTE_TARGET× faster than the
# recompute and TORCH_TARGET× faster than PyTorch. A row with fewer
# key/value heads than heads (grouped-query attention): its caches read
# H/Hkv× less than the same layer's with H key/value heads (4× for the
# default Hkv=2 row; the weights aside, which both read).
BOUND_TARGET = 1.5
RECOMPUTE_TARGET = 20.0
TORCH_TARGET = 2.0
PREFILL_TARGET = 1.10
PAGED_TARGET = 1.10
PAGE_ROWS = 16
MAIN_SHAPE = (4, 4096, 512, 8, 8)

STEP = re.compile(r"^step: median ([0-9.]+) ms", re.M)
PREFILL = re.compile(r"^prefill: median ([0-9.]+) ms", re.M)
MEDIAN = re.compile(r"median ([0-9.]+) ms, min ([0-9.]+) ms")
STREAM = re.compile(r"median ([0-9.]+) GB/s")
TORCH = re.compile(r"median ([0-9.]+) ms, min ([0-9.]+) ms per step")


def parse_shape(text):
    """'B,CONTEXT,D,H[,HKV]' -> (B, context, D, H, Hkv)."""
    parts = text.split(",")
    if len(parts) not in (4, 5) or not all(p.isdigit() and int(p) > 0
                                           for p in parts):
        raise argparse.ArgumentTypeError(
            f"expected B,CONTEXT,D,H[,HKV] with positive sizes, got '{text}'")
    b, context, d, h = map(int, parts[:4])
    hkv = int(parts[4]) if len(parts) == 5 else h
    if d % h or h % hkv:
        raise argparse.ArgumentTypeError(
            f"H must divide D and HKV must divide H in '{text}'")
    return b, context, d, h, hkv


def name(shape):
    b, context, d, h, hkv = shape
    return f"({b}, {context}, {d}, {h})" + (f" Hkv={hkv}" if hkv != h else "")


def cache_bytes(shape, element_bytes=4, row_bytes=0):
    """What one step reads of both caches: up to the context and the new
    token's row, float32 (element_bytes 4), bf16 (2) or int8 codes (1, with
    row_bytes 4 for each row's scale)."""
    b, context, d, h, hkv = shape
    return 2 * b * hkv * (context + 1) * ((d // h) * element_bytes + row_bytes)


def step_bytes(shape, element_bytes=4):
    """What one step must read: both caches (cache_bytes) and the four
    weight matrices, of element_bytes each."""
    b, context, d, h, hkv = shape
    dk = d // h
    weights = (d * h * dk + 2 * d * hkv * dk + h * dk * d) * element_bytes
    return cache_bytes(shape, element_bytes) + weights


def measured(pattern, command, env=None, timeout=1800):
    """The first group of `pattern` in the child's output, as a float, or
    the child's error line."""
    code, out, err = run_child(command, env, timeout)
    match = pattern.search(out)
    if code != 0 or not match:
        return None, last_line(err or out)
    return float(match.group(1)), None


def generate(mha_gen, path, args):
    code, out, err = run_child([mha_gen, "-o", path] + args, None, 1800)
    if code != 0:
        sys.exit(f"decode_vs_bound.py: error: mha-gen {' '.join(args)}: "
                 f"{last_line(err or out)}")


def median_or_none(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def fmt(value, digits=2, suffix=""):
    return "–" if value is None else f"{value:.{digits}f}{suffix}"


def cpu_model():
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                key, _, value = line.partition(":")
                if key.strip() == "model name":
                    return value.strip()
    except OSError:
        pass
    return "unknown CPU"


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shape", type=parse_shape, action="append",
                        help="B,CONTEXT,D,H[,HKV] (repeatable; default: "
                        + " and ".join(DEFAULT_SHAPES) + ")")
    parser.add_argument("--prefill-shape", type=parse_shape,
                        help=f"B,T,D,H of the prefill row (default: "
                        f"{DEFAULT_PREFILL})")
    parser.add_argument("--quick", action="store_true",
                        help="small shapes, 1 round")
    parser.add_argument("--rounds", type=int, help="default 3 (1 quick)")
    parser.add_argument("--steps", type=int, default=32,
                        help="timed steps per round (default: %(default)s)")
    parser.add_argument("--repeat", type=int, default=10,
                        help="timed calls of the recompute and prefill "
                        "layers (default: %(default)s)")
    parser.add_argument("--threads", type=int, default=2,
                        help="threads of everything (default: %(default)s)")
    parser.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"),
                        help="folder of mha-gen, mha-run and stream_read")
    parser.add_argument("--python", default="/usr/bin/python3",
                        help="the Python with torch (default: %(default)s)")
    parser.add_argument("--torch-decode",
                        default=os.environ.get("TORCH_DECODE",
                                               DEFAULT_TORCH_DECODE),
                        help="the PyTorch peer (default: $TORCH_DECODE, "
                        "else bench/torch_decode.py)")
    parser.add_argument("--no-torch", action="store_true",
                        help="leave the PyTorch peer out")
    parser.add_argument("--stream-mib", type=int,
                        help="the bandwidth buffer in MiB (default: "
                        "stream_read's, 4× the last-level cache)")
    parser.add_argument("--via", choices=("package", "processes"),
                        help="how the prefill row is timed (default: "
                        "package where --python imports it)")
    parser.add_argument("--stream-passes", type=int, default=20,
                        help="stream_read's timed passes (default: "
                        "%(default)s)")
    args = parser.parse_args()
    rounds = args.rounds or (1 if args.quick else 3)
    shapes = args.shape or [parse_shape(s) for s in
                            (QUICK_SHAPES if args.quick else DEFAULT_SHAPES)]
    prefill_shape = args.prefill_shape or parse_shape(
        QUICK_PREFILL if args.quick else DEFAULT_PREFILL)
    if min(rounds, args.steps, args.repeat, args.threads,
           args.stream_passes, args.stream_mib or 1) < 1:
        parser.error("--rounds, --steps, --repeat, --threads and the "
                     "--stream options must be positive")
    tools = {tool: os.path.join(args.bin, tool)
             for tool in ("mha-gen", "mha-run", "stream_read")}
    for path in tools.values():
        if not os.access(path, os.X_OK):
            sys.exit(f"decode_vs_bound.py: error: {path} not found; build "
                     "first (make) or pass --bin")
    threads = [f"--threads={args.threads}"]
    package = os.path.join(args.bin, "..", "python")
    if args.via != "processes":
        has_package = package_importable(args.python, package)
        if args.via == "package" and not has_package:
            sys.exit(f"decode_vs_bound.py: error: --via package: "
                     f"{args.python} cannot import mha from {package} "
                     "(make builds it)")
        args.via = "package" if has_package else "processes"
    torch_note = None
    torch_decode = os.path.abspath(args.torch_decode)
    if args.no_torch:
        torch_note = "PyTorch peer left out (--no-torch)."
    elif not os.path.isfile(torch_decode):
        torch_note = (f"PyTorch peer {torch_decode} not found: its column is "
                      "empty (set TORCH_DECODE or --torch-decode).")
    tuned = dict(os.environ, OMP_WAIT_POLICY="passive",
                 OMP_NUM_THREADS=str(args.threads),
                 OPENBLAS_NUM_THREADS=str(args.threads))
    if "avx512f" in open("/proc/cpuinfo").read():
        tuned["OPENBLAS_CORETYPE"] = "SkylakeX"

    work = tempfile.mkdtemp(prefix="decode_bench.")
    graphs = {}
    for shape in shapes:
        b, context, d, h, hkv = shape
        heads = [f"--d-model={d}", f"--heads={h}", f"--kv-heads={hkv}"]
        cache = os.path.join(work, f"cache_{b}_{context}_{d}_{h}_{hkv}.mlir")
        generate(tools["mha-gen"], cache, heads + [
            "--dynamic", f"--kv-cache={context + args.steps + 1}"])
        cache_bf16 = os.path.join(
            work, f"cache_bf16_{b}_{context}_{d}_{h}_{hkv}.mlir")
        generate(tools["mha-gen"], cache_bf16, heads + [
            "--dynamic", f"--kv-cache={context + args.steps + 1}",
            "--dtype=bf16"])
        cache_int8 = os.path.join(
            work, f"cache_int8_{b}_{context}_{d}_{h}_{hkv}.mlir")
        generate(tools["mha-gen"], cache_int8, heads + [
            "--dynamic", f"--kv-cache={context + args.steps + 1}",
            "--cache-dtype=int8"])
        cache_paged = os.path.join(
            work, f"cache_paged_{b}_{context}_{d}_{h}_{hkv}.mlir")
        generate(tools["mha-gen"], cache_paged, heads + [
            "--dynamic", f"--kv-cache={context + args.steps + 1}",
            f"--paged-kv={PAGE_ROWS}"])
        recompute = os.path.join(work, f"cross_{b}_{context}_{d}_{h}_{hkv}.mlir")
        generate(tools["mha-gen"], recompute, heads + [
            f"--batch={b}", "--seq=1", f"--kv-seq={context}"])
        graphs[shape] = (cache, recompute, cache_bf16, cache_int8, cache_paged)
    b, t, d, h, hkv = prefill_shape
    prefill_cache = os.path.join(work, "prefill_cache.mlir")
    generate(tools["mha-gen"], prefill_cache, [
        f"--d-model={d}", f"--heads={h}", f"--kv-heads={hkv}", "--dynamic",
        f"--kv-cache={t}"])
    prefill_causal = os.path.join(work, "prefill_causal.mlir")
    generate(tools["mha-gen"], prefill_causal, [
        f"--batch={b}", f"--seq={t}", f"--d-model={d}", f"--heads={h}",
        f"--kv-heads={hkv}", "--causal"])

    def stream(mib=None):
        command = [tools["stream_read"], "--threads", str(args.threads),
                   "--passes", str(args.stream_passes)]
        if mib or args.stream_mib:
            command += ["--mib", str(mib or args.stream_mib)]
        value, error = measured(STREAM, command)
        if error:
            sys.exit(f"decode_vs_bound.py: error: stream_read: {error}")
        return value

    rows = {shape: [] for shape in shapes}
    prefill_rounds = []
    for index in range(rounds):
        print(f"decode_vs_bound.py: round {index + 1} of {rounds}",
              file=sys.stderr)
        dram = stream()
        for shape in shapes:
            bsz, context = shape[0], shape[1]
            cache, recompute, cache_bf16, cache_int8, cache_paged = graphs[shape]
            llc = stream(max(1, step_bytes(shape) >> 20))

            def step(graph):
                return measured(STEP, [
                    tools["mha-run"], graph, "--random", f"--dims=B={bsz}",
                    f"--prefill={context}", f"--steps={args.steps}"]
                    + threads)
            jobs = {
                "ours": lambda: step(cache),
                "bf16": lambda: step(cache_bf16),
                "int8": lambda: step(cache_int8),
                "paged": lambda: step(cache_paged),
                "recompute": lambda: measured(MEDIAN, [
                    tools["mha-run"], recompute, "--random",
                    f"--repeat={args.repeat}", "--warmup=1"] + threads),
            }
            if torch_note is None:
                b_, c_, d_, h_, hkv_ = shape
                jobs["torch"] = lambda: measured(TORCH, [
                    args.python, torch_decode, f"--batch={b_}",
                    f"--context={c_}", f"--d-model={d_}", f"--heads={h_}",
                    f"--kv-heads={hkv_}", f"--steps={args.steps}",
                    f"--threads={args.threads}"], tuned)
            names = list(jobs)
            result = {"dram": dram, "llc": llc}
            for k in range(len(names)):  # rotate the order by round
                peer = names[(index + k) % len(names)]
                value, error = jobs[peer]()
                result[peer] = value
                if error:
                    print(f"decode_vs_bound.py: {name(shape)} {peer}: "
                          f"{error}", file=sys.stderr)
            rows[shape].append(result)
        if args.via == "package":
            continue
        b, t = prefill_shape[0], prefill_shape[1]
        prefill_jobs = {
            "prefill": lambda: measured(PREFILL, [
                tools["mha-run"], prefill_cache, "--random", f"--dims=B={b}",
                f"--prefill={t}", "--steps=0", f"--repeat={args.repeat}",
                "--warmup=1"] + threads),
            "causal": lambda: measured(MEDIAN, [
                tools["mha-run"], prefill_causal, "--random",
                f"--repeat={args.repeat}", "--warmup=1"] + threads),
        }
        result = {}
        for k in range(2):
            peer = list(prefill_jobs)[(index + k) % 2]
            value, error = prefill_jobs[peer]()
            result[peer] = value
            if error:
                print(f"decode_vs_bound.py: prefill {peer}: {error}",
                      file=sys.stderr)
        prefill_rounds.append(result)

    if args.via == "package":
        b, t = prefill_shape[0], prefill_shape[1]
        code, out, err = run_child(
            [args.python, os.path.join(HERE, "prefill_in_process.py"),
             f"--package={package}", f"--cache-graph={prefill_cache}",
             f"--causal-graph={prefill_causal}", f"--batch={b}",
             f"--tokens={t}", f"--rounds={rounds}",
             f"--repeat={args.repeat}", f"--threads={args.threads}"],
            None, 1800)
        try:
            medians = json.loads(last_line(out)) if code == 0 else None
        except ValueError:
            medians = None
        if medians is None:
            print("decode_vs_bound.py: prefill: "
                  + last_line(err or out), file=sys.stderr)
        else:
            prefill_rounds = [{"prefill": p, "causal": c} for p, c in
                              zip(medians["prefill"], medians["causal"])]

    def per_round(results, numerator, denominator):
        return median_or_none([
            r[numerator] / r[denominator] for r in results
            if r.get(numerator) and r.get(denominator)])

    print(f"\nDecode, one token per sequence per step, {args.threads} "
          f"threads, median of {args.steps} steps per round, {rounds} "
          "round(s); ratios per round, then the median:\n")
    print("| layer (B, context, D, H) | ours ms/step | MiB read | bound ms "
          "(GB/s) | ours / bound | LLC bound ms (GB/s) | recompute ms | "
          "recompute / ours | PyTorch ms | PyTorch / ours |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    verdicts = []
    for shape in shapes:
        results = rows[shape]
        nbytes = step_bytes(shape)
        for r in results:
            r["bound"] = nbytes / (r["dram"] * 1e9) * 1e3
            r["llc_bound"] = nbytes / (r["llc"] * 1e9) * 1e3
        ours = median_or_none([r.get("ours") for r in results])
        over_bound = per_round(results, "ours", "bound")
        recompute = per_round(results, "recompute", "ours")
        torch = per_round(results, "torch", "ours")
        print(f"| {name(shape)} | {fmt(ours, 3)} | {nbytes / 2**20:.1f} | "
              f"{fmt(median_or_none([r['bound'] for r in results]), 3)} "
              f"({fmt(median_or_none([r['dram'] for r in results]), 1)}) | "
              f"{fmt(over_bound, 2, '×')} | "
              f"{fmt(median_or_none([r['llc_bound'] for r in results]), 3)} "
              f"({fmt(median_or_none([r['llc'] for r in results]), 1)}) | "
              f"{fmt(median_or_none([r.get('recompute') for r in results]), 2)}"
              f" | {fmt(recompute, 1, '×')} | "
              f"{fmt(median_or_none([r.get('torch') for r in results]), 3)} | "
              f"{fmt(torch, 2, '×')} |")
        targets = [(f"≤ {BOUND_TARGET}× the bound", over_bound,
                    over_bound is not None and over_bound <= BOUND_TARGET)]
        if shape == MAIN_SHAPE:
            targets += [
                (f"≥ {RECOMPUTE_TARGET:.0f}× faster than recompute",
                 recompute, recompute is not None and
                 recompute >= RECOMPUTE_TARGET),
                (f"≥ {TORCH_TARGET:.0f}× faster than PyTorch", torch,
                 torch is not None and torch >= TORCH_TARGET)]
        for label, value, ok in targets:
            if value is not None:
                verdicts.append(f"{name(shape)}: {label}: "
                                f"{'met' if ok else 'not met'} "
                                f"({value:.2f}×)")
        b, context, d, h, hkv = shape
        if hkv < h:
            # The caches are what grouped-query attention shrinks; the
            # weights of both layers are read the same.
            full = cache_bytes((b, context, d, h, h))
            less = full / cache_bytes(shape)
            verdicts.append(
                f"{name(shape)}: caches read ≥ {h // hkv}× less than with "
                f"{h} key/value heads (weights aside): "
                f"{'met' if less >= h / hkv else 'not met'} "
                f"({cache_bytes(shape) / 2**20:.1f} MiB against "
                f"{full / 2**20:.1f} MiB, {less:.2f}×)")

    print("\nThe same steps with bf16 caches and weights, against their own "
          "bound (half the bytes) and the float32 step of the same round:\n")
    print("| layer (B, context, D, H) | bf16 ms/step | MiB read | bound ms | "
          "bf16 / bound | bf16 / float32 step |")
    print("|---|---|---|---|---|---|")
    for shape in shapes:
        results = rows[shape]
        nbytes = step_bytes(shape, element_bytes=2)
        for r in results:
            r["bf16_bound"] = nbytes / (r["dram"] * 1e9) * 1e3
        print(f"| {name(shape)} | "
              f"{fmt(median_or_none([r.get('bf16') for r in results]), 3)} | "
              f"{nbytes / 2**20:.1f} | "
              f"{fmt(median_or_none([r['bf16_bound'] for r in results]), 3)}"
              f" | {fmt(per_round(results, 'bf16', 'bf16_bound'), 2, '×')} | "
              f"{fmt(per_round(results, 'bf16', 'ours'), 2, '×')} |")

    print("\nThe same steps with int8 caches (codes and a float32 scale per "
          "row, float32 weights), against their own bound and the float32 "
          "step of the same round:\n")
    print("| layer (B, context, D, H) | int8 ms/step | MiB read | bound ms | "
          "int8 / bound | int8 / float32 step |")
    print("|---|---|---|---|---|---|")
    for shape in shapes:
        results = rows[shape]
        nbytes = (step_bytes(shape) - cache_bytes(shape)
                  + cache_bytes(shape, element_bytes=1, row_bytes=4))
        for r in results:
            r["int8_bound"] = nbytes / (r["dram"] * 1e9) * 1e3
        print(f"| {name(shape)} | "
              f"{fmt(median_or_none([r.get('int8') for r in results]), 3)} | "
              f"{nbytes / 2**20:.1f} | "
              f"{fmt(median_or_none([r['int8_bound'] for r in results]), 3)}"
              f" | {fmt(per_round(results, 'int8', 'int8_bound'), 2, '×')} | "
              f"{fmt(per_round(results, 'int8', 'ours'), 2, '×')} |")

    print(f"\nThe same steps with a paged cache (pages of {PAGE_ROWS} rows, a "
          "shuffled block table), against the float32 step of the same "
          "round:\n")
    print("| layer (B, context, D, H) | paged ms/step | float32 ms/step | "
          "paged / float32 step |")
    print("|---|---|---|---|")
    for shape in shapes:
        results = rows[shape]
        ratio = per_round(results, "paged", "ours")
        print(f"| {name(shape)} | "
              f"{fmt(median_or_none([r.get('paged') for r in results]), 3)} | "
              f"{fmt(median_or_none([r.get('ours') for r in results]), 3)} | "
              f"{fmt(ratio, 2, '×')} |")
        if ratio is not None:
            verdicts.append(
                f"{name(shape)}: paged within {PAGED_TARGET:.1f}× of the "
                f"dense step: "
                f"{'met' if ratio <= PAGED_TARGET else 'not met'} "
                f"({ratio:.2f}×)")

    b, t, d, h, hkv = prefill_shape
    prefill = median_or_none([r.get("prefill") for r in prefill_rounds])
    causal = median_or_none([r.get("causal") for r in prefill_rounds])
    ratio = per_round(prefill_rounds, "prefill", "causal")
    how = ("in one process (the package), alternating blocks"
           if args.via == "package" else "one mha-run process each")
    print(f"\nPrefill into an empty cache against today's causal layer, "
          f"{args.repeat} calls per round, {how}:\n")
    print("| layer (B, T, D, H) | prefill ms | causal layer ms | "
          "prefill / causal |")
    print("|---|---|---|---|")
    print(f"| {name(prefill_shape)} | {fmt(prefill, 2)} | {fmt(causal, 2)} | "
          f"{fmt(ratio, 3, '×')} |")
    if ratio is not None:
        verdicts.append(f"prefill within {PREFILL_TARGET - 1:.0%} of the "
                        f"causal layer: "
                        f"{'met' if ratio <= PREFILL_TARGET else 'not met'} "
                        f"({ratio:.3f}×)")
    print(f"\nMachine: {cpu_model()}, {os.cpu_count()} CPUs; stream_read: "
          f"{args.threads} threads, "
          + (f"{args.stream_mib} MiB" if args.stream_mib
             else "4× the last-level cache")
          + f", median of {args.stream_passes} passes.")
    if torch_note:
        print(f"\n**Note:** {torch_note}")
    if verdicts:
        print("\nTargets:\n")
        for line in verdicts:
            print(f"- {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
