#!/usr/bin/env python3
"""`make bench`: our attention layer against tuned PyTorch and a GEMM ceiling.

For each shape (B, T, D, H[, causal][, kv=S]) this writes the layer once with
mha-gen and then, in R rounds, runs three things back to back in an order
that rotates from round to round, so that drift of the machine hits them
alike:

  ours     mha-run GRAPH --random --repeat N --warmup W --threads P: the
           median time per call and the compile time it reports;
  PyTorch  bench/torch_layer.py: nn.MultiheadAttention(batch_first=True)
           .eval() under torch.inference_mode(), need_weights=False, P
           threads, OPENBLAS_CORETYPE=SkylakeX (on AVX-512 CPUs)
           OMP_WAIT_POLICY=passive ("tuned": OpenBLAS's kernels for the
           CPU, idle threads that do not spin), when python3-torch is
           installed;
  GEMM     bench/gemm_ceiling.py: a square float32 NumPy matmul under the
           same environment and threads, the ceiling;
  ORT      ONNX Runtime 1.30's MultiHeadAttention layer (bench/ort_mha.py:
           MatMuls, com.microsoft.MultiHeadAttention, MatMul, under node
           with P intra-op threads), its output first checked against ours
           on the same x and weights, when onnxruntime-node is installed
           (--install installs it; else one line says why it is left out).

With --via package (the default where the build's Python package
imports, from --bin/../python), ours and the GEMM run in one child per
round instead (bench/layer_in_process.py): our graph compiled by
mha.compile (mha-run's pipeline and defaults), the two in alternating
blocks of about the same length, so that the share of the ceiling compares
times of the same seconds; PyTorch keeps a child of its own. --via
processes (implied by --run-arg) runs mha-run and the GEMM apart.

It prints a Markdown table, one row per shape as soon as the shape is
measured (an interrupted run keeps the rows it printed): our median ms and
GFLOP/s, PyTorch's ms, the speed-up (the median over rounds of PyTorch ms /
our ms of the same round), our share of the GEMM ceiling (also per round,
then the median), the compile time (lowering + JIT) of mha-run, ONNX
Runtime's ms and ORT ms / our ms (per round, then the median), and which
peer each row beat or lost to, by how much; then, at the end, what
PyTorch, ONNX Runtime and the GEMM ran on and whether the targets of
docs/performance.md are met. FLOPs = 4·B·T·D² + 4·B·S·D² + 4·B·T·S·D with S = T for
self-attention (8·B·T·D² + 4·B·T²·D), the dense count also for causal
shapes. mha-run runs in the caller's environment. Progress goes to stderr.
This script needs only Python's standard library; the PyTorch and NumPy
children run under --python (default /usr/bin/python3, Debian's, where
python3-torch lives).

    make bench                                  # all shapes, 3 rounds
    make bench BENCH_ARGS=--quick               # two small shapes, 1 round
    python3 bench/layer_vs_torch.py --no-torch --no-gemm --install  # vs ORT
    python3 bench/layer_vs_torch.py --shape 1,512,512,8 --rounds 1
    python3 bench/layer_vs_torch.py --shape 4,1,512,8,kv=4096 --json out.json
"""

import argparse
import collections
import datetime
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

DEFAULT_SHAPES = [
    "1,128,512,8",
    "1,512,512,8",
    "8,512,512,8",
    "1,2048,1024,16",
    "1,4096,512,8",
    "1,2048,1024,16,causal",
    "4,1,512,8,kv=4096",
]
QUICK_SHAPES = ["1,128,512,8", "1,512,512,8"]

# The targets (docs/performance.md#targets), checked on the shapes of the
# run that have them.
SPEEDUP_TARGET = 1.5
CAUSAL_SPEEDUP_TARGET = 2.0
CEILING_TARGET = 0.60
CEILING_SHAPES = ["8,512,512,8", "1,2048,1024,16"]
COMPILE_TARGET_MS = 1000

COMPILE = re.compile(r"^compile ([0-9.]+) ms", re.M)
MEDIAN = re.compile(r"median ([0-9.]+) ms, min ([0-9.]+) ms")
ATTENTION_PATH = re.compile(r"^attention path: (.*)$", re.M)

HERE = os.path.dirname(os.path.abspath(__file__))


class Shape(collections.namedtuple(
        "Shape", "batch seq width heads causal kv_seq")):
    """One layer: kv_seq is None for self-attention."""

    @property
    def keys(self):
        return self.kv_seq or self.seq

    def flops(self):
        b, t, d, s = self.batch, self.seq, self.width, self.keys
        return 4 * b * t * d * d + 4 * b * s * d * d + 4 * b * t * s * d

    def spec(self):
        """The --shape text, which torch_layer.py reads too."""
        text = f"{self.batch},{self.seq},{self.width},{self.heads}"
        return text + (",causal" if self.causal else "") + \
            (f",kv={self.kv_seq}" if self.kv_seq else "")

    def name(self):
        text = f"({self.batch},{self.seq},{self.width},{self.heads})"
        return text + (" causal" if self.causal else "") + \
            (f" S={self.kv_seq}" if self.kv_seq else "")

    def gen_args(self):
        args = [f"--batch={self.batch}", f"--seq={self.seq}",
                f"--d-model={self.width}", f"--heads={self.heads}"]
        if self.causal:
            args.append("--causal")
        if self.kv_seq:
            args.append(f"--kv-seq={self.kv_seq}")
        return args


def bench_argument_parser(doc):
    """The parser every benchmark script starts from: its docstring as the
    description (first line) and epilog (the rest), and --bin, the folder
    of mha-gen and mha-run (default: build/bin next to bench/)."""
    parser = argparse.ArgumentParser(
        description=doc.splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n".join(doc.splitlines()[2:]))
    parser.add_argument("--bin", default=os.path.join(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "build",
        "bin"), help="mha-gen and mha-run")
    return parser


def parse_shape(text):
    """'B,T,D,H[,causal][,kv=S]' -> Shape."""
    parts = text.split(",")
    causal = "causal" in parts
    kv = [p[3:] for p in parts if p.startswith("kv=")]
    sizes = [p for p in parts if p != "causal" and not p.startswith("kv=")]
    if len(sizes) != 4 or len(kv) > 1 or \
            not all(p.isdigit() and int(p) > 0 for p in sizes + kv):
        raise argparse.ArgumentTypeError(
            f"expected B,T,D,H[,causal][,kv=S] with positive sizes, "
            f"got '{text}'")
    batch, seq, width, heads = map(int, sizes)
    if width % heads:
        raise argparse.ArgumentTypeError(
            f"heads ({heads}) must divide the model width ({width}) in "
            f"'{text}'")
    return Shape(batch, seq, width, heads, causal,
                 int(kv[0]) if kv else None)


def cpu_model():
    """The model name of /proc/cpuinfo, and the CPU's AVX flags."""
    model, flags = "unknown CPU", set()
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                key, _, value = line.partition(":")
                if key.strip() == "model name" and model == "unknown CPU":
                    model = value.strip()
                elif key.strip() == "flags" and not flags:
                    flags = set(value.split())
    except OSError:
        pass
    return model, flags


def default_coretype(flags):
    """The OpenBLAS kernels for this CPU: Debian's OpenBLAS 0.3.21 does not
    recognize recent CPUs and falls back to SSE3 kernels unless told which
    to use; SkylakeX needs AVX-512, Haswell AVX2."""
    if "avx512f" in flags:
        return "SkylakeX"
    return "Haswell" if "avx2" in flags else ""


def run_child(command, env, timeout):
    """Runs a child; returns (exit code or None on timeout, stdout, stderr)."""
    try:
        done = subprocess.run(command, env=env, capture_output=True,
                              text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "", f"timed out after {timeout:.0f} s"
    except OSError as error:
        return 127, "", str(error)
    return done.returncode, done.stdout, done.stderr


def last_line(text):
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


def failure(code, out, err):
    return {"error": last_line(err or out) if code is not None else err}


def measure_ours(mha_run, graph, args):
    code, out, err = run_child(
        [mha_run, graph, "--random", f"--repeat={args.repeat}",
         f"--warmup={args.warmup}", f"--threads={args.threads}"]
        + args.run_arg, None, args.timeout)
    median = MEDIAN.search(out)
    if code != 0 or not median:
        return failure(code, out, err)
    compile_ms = COMPILE.search(out)
    path = ATTENTION_PATH.search(out)
    return {"median_ms": float(median.group(1)),
            "min_ms": float(median.group(2)),
            "compile_ms": float(compile_ms.group(1)) if compile_ms else None,
            "attention_path": path.group(1) if path else None}


def measure_in_process(graph, with_gemm, env, args):
    """--via package: {"ours": ..., "gemm": ...} of one child
    (bench/layer_in_process.py), the two in alternating blocks."""
    measured = measure_json(
        [args.python, os.path.join(HERE, "layer_in_process.py"),
         f"--package={args.package}", f"--graph={graph}",
         f"--repeat={args.repeat}", f"--warmup={args.warmup}",
         f"--threads={args.threads}", f"--blocks={args.blocks}",
         f"--gemm-size={args.gemm_size if with_gemm else 0}"], env,
        args.timeout)
    if "error" in measured:
        return {"ours": measured}
    return measured


def package_importable(python, folder):
    """Whether `python` imports the package mha from `folder`."""
    code, out, _ = run_child(
        [python, "-c", "import sys; sys.path.insert(0, sys.argv[1])\n"
         "import mha; print('mha')", folder], None, 120)
    return code == 0 and out.split() == ["mha"]


def measure_json(command, env, timeout):
    """A child that prints one JSON line last (torch_layer.py,
    gemm_ceiling.py)."""
    code, out, err = run_child(command, env, timeout)
    if code != 0:
        return failure(code, out, err)
    try:
        return json.loads(last_line(out))
    except ValueError:
        return {"error": "no JSON result: " + last_line(out)}


def measure_torch(shape, args, env):
    return measure_json(
        [args.python, os.path.join(HERE, "torch_layer.py"),
         f"--shape={shape.spec()}", f"--repeat={args.repeat}",
         f"--warmup={args.warmup}", f"--threads={args.threads}"],
        env, args.timeout)


def measure_gemm(args, env):
    return measure_json(
        [args.python, os.path.join(HERE, "gemm_ceiling.py"),
         f"--size={args.gemm_size}", f"--threads={args.threads}"],
        env, args.timeout)


def importable(python, modules):
    """The subset of `modules` that `python` finds (without importing them,
    which takes seconds for torch)."""
    code, out, _ = run_child(
        [python, "-c", "import importlib.util, sys\n"
         "for name in sys.argv[1:]:\n"
         "    if importlib.util.find_spec(name): print(name)", *modules],
        None, 120)
    return set(out.split()) if code == 0 else set()


def median_or_none(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def summarize(shape, rounds):
    """Medians over the rounds of one shape; ratios pair the runs of one
    round. A time that rounds to 0 ms gives no ratio."""
    def timed(measured, peer):
        return measured.get(peer, {}).get("median_ms", 0) > 0

    ours = [r["ours"] for r in rounds if "median_ms" in r.get("ours", {})]
    torch = [r["torch"] for r in rounds if "median_ms" in r.get("torch", {})]
    ort = [r["ort"] for r in rounds if "median_ms" in r.get("ort", {})]
    flops = shape.flops()
    summary = {
        "ours_ms": median_or_none([o["median_ms"] for o in ours]),
        "compile_ms": median_or_none([o["compile_ms"] for o in ours]),
        "torch_ms": median_or_none([t["median_ms"] for t in torch]),
        "torch_path": torch[0]["path"] if torch else None,
        "speedup": median_or_none([
            r["torch"]["median_ms"] / r["ours"]["median_ms"] for r in rounds
            if timed(r, "ours") and timed(r, "torch")]),
        "ceiling_share": median_or_none([
            flops / r["ours"]["median_ms"] / 1e6 / r["gemm"]["gflops"]
            for r in rounds if timed(r, "ours") and timed(r, "gemm")]),
        "ort_ms": median_or_none([o["median_ms"] for o in ort]),
        "ort_speedup": median_or_none([
            r["ort"]["median_ms"] / r["ours"]["median_ms"] for r in rounds
            if timed(r, "ours") and timed(r, "ort")]),
    }
    summary["ours_gflops"] = (flops / summary["ours_ms"] / 1e6
                              if summary["ours_ms"] else None)
    return summary


def format_ms(value):
    if value is None:
        return "–"
    return f"{value:.0f}" if value >= 100 else \
        f"{value:.1f}" if value >= 10 else \
        f"{value:.2f}" if value >= 1 else f"{value:.3f}"


def format_share(value):
    if value is None:
        return "–"
    return f"{value:.0%}" if value >= 0.1 else f"{value:.1%}"


def blas_text(blas):
    """'OpenBLAS (core SkylakeX)', or a warning for the reference BLAS."""
    if not blas:
        return "an unidentified BLAS library"
    name = os.path.basename(blas["library"])
    if blas["openblas"]:
        return f"OpenBLAS {name}" + \
            (f", core {blas['core']}" if blas["core"] else "")
    return f"{name} (not OpenBLAS)"


TABLE_HEADER = ("| shape (B,T,D,H) | GFLOP | ours ms | ours GFLOP/s | PyTorch ms "
                "| speed-up | share of GEMM ceiling | compile ms | ORT ms "
                "| vs ORT | verdict |\n"
                "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")


def print_header(results, args):
    """What is known before measuring: the date, the machine, the table's
    head. Rows follow as shapes are measured (print_row)."""
    model, _ = cpu_model()
    print("## mha layer vs PyTorch and ONNX Runtime\n")
    print(f"{results['date']} · CPU: {model} ({os.cpu_count()} logical CPUs)"
          f" · {args.threads} threads · {args.rounds} "
          f"round{'s' if args.rounds > 1 else ''} × "
          f"{args.repeat} calls after {args.warmup} warm-up, per contender "
          f"and round\n")
    print(TABLE_HEADER, flush=True)


def print_row(row):
    """One shape's row of the table, printed as soon as it is measured."""
    shape, s = parse_shape(row["shape"]), row["summary"]
    ours_gflops = f"{s['ours_gflops']:.1f}" if s["ours_gflops"] else "–"
    slow = " \\*" if s["torch_path"] == "slow" else ""
    gflop = shape.flops() / 1e9
    cells = [shape.name(),
             f"{gflop:.2f}" if gflop >= 0.01 else f"{gflop:.1e}",
             format_ms(s["ours_ms"]) if s["ours_ms"] is not None
             else "failed",
             ours_gflops, format_ms(s["torch_ms"]) + slow,
             format_speedup(s["speedup"]),
             format_share(s["ceiling_share"]),
             format_ms(s["compile_ms"]),
             format_ms(s["ort_ms"]), format_speedup(s["ort_speedup"]),
             verdict(s)]
    print("| " + " | ".join(cells) + " |", flush=True)


def verdict(summary):
    """Which peers the row beat ("mha 1.21× ORT") and which beat it ("ORT
    1.10× mha"), the closest first."""
    ratios = sorted((ratio, name) for name, ratio in (
        ("ORT", summary["ort_speedup"]), ("PyTorch", summary["speedup"]))
        if ratio is not None)
    beaten = [f"{format_speedup(r)} {name}" for r, name in ratios if r >= 1]
    lost = [f"{name} {format_speedup(1 / r)} mha" for r, name in ratios
            if r < 1]
    parts = lost + (["mha " + ", ".join(beaten)] if beaten else [])
    return "; ".join(parts) or "–"


def print_summary(results, args, notes):
    """After the last row: what the columns mean, what PyTorch and the GEMM
    ran on, notes and the targets."""
    env_text = " ".join(f"{k}={v}" for k, v in results["env"].items())
    print()
    ours = ("ours through the Python package"
            + (", in one process with the GEMM (alternating blocks)"
               if results["gemm"] else "")
            + "; compile: mha.compile's parsing, lowering and JIT"
            if args.via == "package" else
            "ours by mha-run; compile: mha-run's lowering + JIT")
    print("Speed-up: PyTorch ms / our ms in the same round, median over the "
          "rounds; vs ORT: ONNX Runtime's ms / ours, the same way; verdict: "
          "the peers each row beat and those that beat it, the closest "
          "first; share: our GFLOP/s / the GEMM's in the same round, median."
          " GFLOP = 4·B·T·D² + 4·B·S·D² + 4·B·T·S·D (S = T unless given), "
          f"dense for causal shapes too. Measured: {ours}.")
    if any(row["summary"]["torch_path"] == "slow"
           for row in results["shapes"]):
        print("\\* PyTorch's slow path (F.multi_head_attention_forward): "
              "nn.MultiheadAttention has no fast path with an attn_mask or "
              "with separate key/value inputs.")
    torch_info = results.get("torch")
    if torch_info:
        print(f"\nPyTorch {torch_info['torch']}: nn.MultiheadAttention under "
              f"inference_mode, need_weights=False; {env_text}; "
              f"BLAS: {blas_text(torch_info['blas'])}")
    ort_info = results.get("ort")
    if ort_info:
        errors = [row["ort_check"]["max_rel_err"] for row in results["shapes"]
                  if "max_rel_err" in row.get("ort_check", {})]
        agreed = (f"; its output within {max(errors):.1e} of ours (max "
                  "|y_mha - y_ort| / max |y_mha|, same x and weights) at "
                  f"{'every shape' if len(errors) > 1 else 'the shape'}"
                  " it ran" if errors else "")
        print(f"\nONNX Runtime {ort_info['version']} (onnxruntime-node, CPU, "
              f"{args.threads} intra-op threads): MatMul "
              + ("by [W_q|W_k|W_v] + Split" if ort_info["qkv"] == "fused"
                 else "× 3")
              + ", com.microsoft.MultiHeadAttention (biases, unidirectional "
              f"when causal), MatMul + Add (bench/ort_mha.py){agreed}")
    gemm = [r["gflops"] for r in results["gemm"] if "gflops" in r]
    if gemm:
        blas = next(r["blas"] for r in results["gemm"] if "gflops" in r)
        n = args.gemm_size
        print(f"\nGEMM ceiling: NumPy float32 matmul {n}×{n}×{n}, median "
              f"{statistics.median(gemm):.1f} GFLOP/s (rounds: "
              f"{min(gemm):.1f}–{max(gemm):.1f}); BLAS: {blas_text(blas)}")
    for note in notes:
        print(f"\n**Note:** {note}")
    print_targets(results, torch_info)


def format_speedup(value):
    return f"{value:.2f}×" if value is not None else "–"


def print_targets(results, torch_info):
    """The targets of docs/performance.md, for the shapes this run
    measured."""
    rows = {row["shape"]: row["summary"] for row in results["shapes"]}
    lines = []

    def verdict(misses):
        return "met" if not misses else "not met: " + ", ".join(misses)

    speedups = {k: v["speedup"] for k, v in rows.items()
                if v["speedup"] is not None}
    if speedups:
        caveat = "" if torch_info and torch_info["blas"] and \
            torch_info["blas"]["openblas"] else \
            " (PyTorch without OpenBLAS is not tuned: does not count)"
        misses = [f"{parse_shape(k).name()} {format_speedup(v)}"
                  for k, v in speedups.items() if v < SPEEDUP_TARGET]
        lines.append(f"speed-up ≥ {SPEEDUP_TARGET}× on every shape: "
                     f"{verdict(misses)}{caveat}")
        causal = {k: v for k, v in speedups.items()
                  if parse_shape(k).causal}
        if causal:
            misses = [f"{parse_shape(k).name()} {format_speedup(v)}"
                      for k, v in causal.items()
                      if v < CAUSAL_SPEEDUP_TARGET]
            lines.append(f"speed-up ≥ {CAUSAL_SPEEDUP_TARGET}× on causal "
                         f"shapes: {verdict(misses)}{caveat}")
    shares = {k: rows[k]["ceiling_share"] for k in CEILING_SHAPES
              if k in rows and rows[k]["ceiling_share"] is not None}
    if shares:
        misses = [f"{parse_shape(k).name()} {format_share(v)}"
                  for k, v in shares.items() if v < CEILING_TARGET]
        lines.append(f"≥ {CEILING_TARGET:.0%} of the GEMM ceiling at "
                     + ", ".join(parse_shape(k).name() for k in shares)
                     + f": {verdict(misses)}")
    compiles = {k: v["compile_ms"] for k, v in rows.items()
                if v["compile_ms"] is not None}
    if compiles:
        misses = [f"{parse_shape(k).name()} {v:.0f} ms"
                  for k, v in compiles.items() if v > COMPILE_TARGET_MS]
        lines.append(f"compile ≤ {COMPILE_TARGET_MS / 1000:.0f} s: "
                     f"{verdict(misses)}")
    if lines:
        print("\nTargets (docs/performance.md; medians of this run):\n")
        for line in lines:
            print(f"- {line}")


def main():
    root = os.path.dirname(HERE)
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--shape", action="append", type=parse_shape,
                        help="B,T,D,H[,causal][,kv=S]; repeatable (default: "
                        + " ".join(DEFAULT_SHAPES) + ")")
    parser.add_argument("--rounds", type=int, default=None,
                        help="rounds per shape (default: 3; 1 with --quick)")
    parser.add_argument("--repeat", type=int, default=None,
                        help="timed calls per run (default: 20; 5 with "
                        "--quick)")
    parser.add_argument("--warmup", type=int, default=None,
                        help="untimed calls first (default: 3; 1 with "
                        "--quick)")
    parser.add_argument("--threads", type=int, default=2,
                        help="threads of every peer (default: %(default)s)")
    parser.add_argument("--quick", action="store_true",
                        help="the shapes " + " ".join(QUICK_SHAPES)
                        + ", 1 round of 5 calls: a fast check")
    parser.add_argument("--no-torch", action="store_true",
                        help="leave PyTorch out")
    parser.add_argument("--no-gemm", action="store_true",
                        help="leave the GEMM ceiling out")
    parser.add_argument("--no-ort", action="store_true",
                        help="leave ONNX Runtime out")
    parser.add_argument("--gemm-size", type=int, default=2048,
                        help="M = N = K of the ceiling GEMM "
                        "(default: %(default)s)")
    parser.add_argument("--coretype", default=None,
                        help="OPENBLAS_CORETYPE of PyTorch and NumPy; '' for "
                        "the library's own choice (default: SkylakeX with "
                        "AVX-512, Haswell with AVX2)")
    parser.add_argument("--torch-heap-reuse", action="store_true",
                        help="let glibc keep PyTorch's and NumPy's freed "
                        "blocks up to 32 MiB instead of unmapping them: the "
                        "nearest thing to the buffer cache that mha-run's "
                        "compiled code has (runtime/BufferCache.h), to see "
                        "how much of the speed-up that is")
    parser.add_argument("--python", default="/usr/bin/python3",
                        help="the Python with torch and numpy "
                        "(default: %(default)s)")
    parser.add_argument("--bin", default=os.path.join(root, "build", "bin"),
                        help="folder of mha-gen and mha-run "
                        "(default: %(default)s)")
    parser.add_argument("--run-arg", action="append", default=[],
                        help="extra mha-run argument (repeatable), e.g. "
                        "--run-arg=--attention=fused")
    parser.add_argument("--timeout", type=float, default=1800,
                        help="seconds per run before it is killed "
                        "(default: %(default)s)")
    parser.add_argument("--json", metavar="FILE",
                        help="also write every measurement to FILE")
    parser.add_argument("--via", choices=("package", "processes"),
                        help="package: ours (through the build's Python "
                        "package) and the GEMM in one child per round, in "
                        "alternating blocks (bench/layer_in_process.py; the "
                        "default where the package imports); processes: "
                        "mha-run and the GEMM each in a child of its own")
    parser.add_argument("--blocks", type=int, default=4,
                        help="--via package: alternating blocks per round "
                        "(default: %(default)s)")
    # Here: ort_peer imports this module, which must be whole by then.
    import ort_peer
    ort_peer.add_ort_arguments(parser)
    args = parser.parse_args()
    quick = args.quick
    for name, normal, fast in (("rounds", 3, 1), ("repeat", 20, 5),
                               ("warmup", 3, 1)):
        if getattr(args, name) is None:
            setattr(args, name, fast if quick else normal)
    shapes = args.shape or [parse_shape(s) for s in
                            (QUICK_SHAPES if quick else DEFAULT_SHAPES)]
    if min(args.rounds, args.repeat, args.threads) < 1 or args.warmup < 0:
        parser.error("--rounds, --repeat and --threads must be positive, "
                     "--warmup not negative")

    mha_gen = os.path.join(args.bin, "mha-gen")
    mha_run = os.path.join(args.bin, "mha-run")
    args.package = os.path.join(os.path.abspath(args.bin), "..", "python")
    if args.run_arg:
        # mha-run's own arguments: the package takes pipeline options only.
        if args.via == "package":
            parser.error("--run-arg goes to mha-run: use --via processes")
        args.via = "processes"
    if args.via != "processes":
        has_package = package_importable(args.python, args.package)
        if args.via == "package" and not has_package:
            sys.exit(f"layer_vs_torch.py: error: --via package: "
                     f"{args.python} cannot import mha from {args.package} "
                     "(make builds it)")
        args.via = "package" if has_package else "processes"
    if args.blocks < 1:
        parser.error("--blocks must be positive")
    for tool in (mha_gen, mha_run):
        if not os.access(tool, os.X_OK):
            sys.exit(f"layer_vs_torch.py: error: {tool} not found; build "
                     "first (make) or pass --bin")

    _, flags = cpu_model()
    coretype = default_coretype(flags) if args.coretype is None \
        else args.coretype
    tuned = {"OMP_WAIT_POLICY": "passive"}
    if coretype:
        tuned["OPENBLAS_CORETYPE"] = coretype
    if args.torch_heap_reuse:
        tuned["GLIBC_TUNABLES"] = ("glibc.malloc.mmap_threshold=33554432:"
                                   "glibc.malloc.trim_threshold=1073741824")
    env = dict(os.environ, **tuned, OPENBLAS_NUM_THREADS=str(args.threads),
               OMP_NUM_THREADS=str(args.threads))

    notes = []
    peers = ["ours"]
    found = importable(args.python, ["torch", "numpy"])
    for left_out, module, peer, missing in (
            (args.no_torch, "torch", "torch",
             "PyTorch not installed (apt-get install python3-torch): "
             "skipped"),
            (args.no_gemm, "numpy", "gemm",
             "NumPy not installed (apt-get install python3-numpy): "
             "no GEMM ceiling")):
        if left_out:
            continue
        if module in found:
            peers.append(peer)
        else:
            notes.append(f"{missing} ({args.python} cannot import {module}).")
    ort = None
    if not args.no_ort:
        node_modules, version, reason = ort_peer.find_ort(
            args.python, args.node_modules,
            args.ort_dir or ort_peer.default_ort_dir(args.bin), args.install)
        if reason:
            notes.append(f"ONNX Runtime peer skipped: {reason}.")
        else:
            peers.append("ort")
            ort = {"node_modules": node_modules, "version": version}
    for note in notes:
        print(f"layer_vs_torch.py: {note}", file=sys.stderr)

    results = {"date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
               "cpu": cpu_model()[0], "logical_cpus": os.cpu_count(),
               "threads": args.threads, "rounds": args.rounds,
               "repeat": args.repeat, "warmup": args.warmup,
               "env": tuned, "gemm_size": args.gemm_size,
               "run_args": args.run_arg, "shapes": [], "gemm": []}
    failed = False
    print_header(results, args)
    workdir = tempfile.mkdtemp(prefix="mha-bench-")
    try:
        for number, shape in enumerate(shapes):
            graph = os.path.join(workdir, "layer.mlir")
            code, _, err = run_child([mha_gen, *shape.gen_args(), "-o", graph],
                                     None, args.timeout)
            rounds = []
            ort_check = {}
            if code != 0:
                failed = True
                print(f"{shape.name()}: mha-gen failed: {last_line(err)}",
                      file=sys.stderr)
            else:
                if ort:
                    ort_check = check_ort(
                        shape, os.path.join(workdir, f"ort{number}"), args,
                        ort, results)
                    failed |= "error" in ort_check
                rounds = measure_rounds(
                    shape, graph, [p for p in peers if p != "ort"
                                   or "model" in ort_check],
                    mha_run, env, args, results,
                    lambda: measure_ort(ort_check["model"], ort, args))
            failed |= any("error" in measured
                          for one in rounds for measured in one.values())
            results["shapes"].append({"shape": shape.spec(),
                                      "flops": shape.flops(),
                                      "rounds": rounds,
                                      "ort_check": ort_check,
                                      "summary": summarize(shape, rounds)})
            print_row(results["shapes"][-1])
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    for info in [results.get("torch")] + results["gemm"][:1]:
        blas = info and info.get("blas")
        if info and (not blas or not blas["openblas"]):
            notes.append(
                "PyTorch and NumPy do not run on OpenBLAS here but on "
                + (os.path.basename(blas["library"]) if blas
                   else "an unidentified BLAS library")
                + ", so PyTorch is not "
                "tuned and the GEMM ceiling is far too low; install "
                "OpenBLAS (apt-get install libopenblas0-pthread) to measure "
                "against them.")
            break
    print_summary(results, args, notes)
    if args.json:
        with open(args.json, "w") as out:
            json.dump(results, out, indent=1)
    return 1 if failed else 0


def check_ort(shape, folder, args, ort, results):
    """ONNX Runtime's model of SHAPE in FOLDER, run once against our layer
    on the same x and weights (ort_mha.py --prepare): the comparison and
    "model" to time, or "error" (also when the outputs disagree), or
    "unsupported" (the shape has no ORT peer). Keeps ORT's version and
    model kind in `results`."""
    code, out, err = run_child(
        [args.python, os.path.join(HERE, "ort_mha.py"), f"--prepare={folder}",
         f"--shape={shape.spec()}", f"--bin={args.bin}",
         f"--node-modules={ort['node_modules']}", f"--threads={args.threads}",
         f"--timeout={args.timeout}"], None, args.timeout)
    try:
        # Its exit code says whether the outputs agreed; the line says more.
        checked = json.loads(last_line(out))
    except ValueError:
        checked = {"error": last_line(err or out) if code is not None
                   else err}
    if "unsupported" in checked:
        print(f"{shape.name()}: no ONNX Runtime peer: "
              f"{checked['unsupported']}", file=sys.stderr)
        return checked
    if "agree" not in checked:
        checked = {"error": checked.get("error") or checked.get("skipped")
                   or "no result"}
    elif not checked["agree"]:
        checked["error"] = (f"its output differs from ours by "
                            f"{checked['max_rel_err']:.1e} of max |y|")
        checked.pop("model", None)
    if "error" in checked:
        print(f"{shape.name()}: ONNX Runtime's check failed: "
              f"{checked['error']}", file=sys.stderr)
    else:
        results.setdefault("ort", {"version": checked["version"],
                                   "qkv": checked["qkv"]})
    return checked


def measure_ort(model, ort, args):
    import ort_peer
    median, error = ort_peer.run_ort(model, ort["node_modules"], args.threads,
                                     args.repeat, args.warmup, args.timeout)
    return {"error": error} if error else {"median_ms": median}


def measure_rounds(shape, graph, peers, mha_run, env, args, results,
                   run_ort=None):
    """The rounds of one shape: every peer once per round, starting with the
    next one each round (`run_ort()` measures ONNX Runtime once). Keeps the
    GEMMs and PyTorch's version in `results` too."""
    rounds = []
    # In one child, ours and the GEMM are one step of the round.
    together = args.via == "package"
    steps = [peer for peer in peers if not (together and peer == "gemm")]
    for index in range(args.rounds):
        start = index % len(steps)
        measured = {}
        for peer in steps[start:] + steps[:start]:
            if peer == "ours" and together:
                both = measure_in_process(graph, "gemm" in peers, env, args)
                measured.update(both)
                if "gemm" in both:
                    results["gemm"].append(both["gemm"])
            elif peer == "ours":
                measured[peer] = measure_ours(mha_run, graph, args)
            elif peer == "ort":
                measured[peer] = run_ort()
            elif peer == "torch":
                measured[peer] = measure_torch(shape, args, env)
                if "torch" in measured[peer] and "torch" not in results:
                    results["torch"] = {key: measured[peer][key]
                                        for key in ("torch", "blas")}
            else:
                measured[peer] = measure_gemm(args, env)
                results["gemm"].append(measured[peer])
        rounds.append(measured)
        print(f"{shape.name()} round {index + 1}/{args.rounds}: "
              + "; ".join(progress(k, v) for k, v in measured.items()),
              file=sys.stderr, flush=True)
    return rounds


def progress(peer, result):
    if "error" in result:
        return f"{peer} failed: {result['error']}"
    if peer == "ours":
        return f"ours {format_ms(result['median_ms'])} ms (compile " \
            f"{format_ms(result['compile_ms'])} ms)"
    if peer == "torch":
        return f"PyTorch {format_ms(result['median_ms'])} ms " \
            f"({result['path']} path)"
    if peer == "ort":
        return f"ORT {format_ms(result['median_ms'])} ms"
    return f"GEMM {result['gflops']:.1f} GFLOP/s"


if __name__ == "__main__":
    sys.exit(main())
