#!/usr/bin/python3
"""A Llama-style layer against ONNX Runtime's com.microsoft.GroupQueryAttention.

The layer: RoPE half-split, grouped-query attention (H query heads, Hkv
key/value heads), no biases, causal; by default (B, T, D, H, Hkv) =
(1, 2048, 1024, 16, 4). Ours is `mha-gen --rope half --heads H --kv-heads Hkv
--no-bias --causal`; ONNX Runtime's (1.30, CPU) is the model that its own
Llama exports use: one MatMul of x by the packed [W_q | W_k | W_v], then
GroupQueryAttention (do_rotary, half-split cos/sin caches, packed QKV, empty
past caches), then a MatMul by W_o (`--ort-qkv separate`: three MatMuls and
separate q, k, v inputs). Both take the same x and weights: ours reads them
as .npy under mha-gen's argument names (x, w_q, w_k, w_v, w_o), ONNX Runtime
has them as initializers.

| row | ours (mha-gen) | ONNX Runtime (GroupQueryAttention) |
|---|---|---|
| causal | the layer above | do_rotary=1 |
| window W | + `--window W` (query i sees i - W < j <= i) | local_window_size = W (the same keys: checked) |
| softcap C | + `--softcap C` | softcap = C |

In R rounds (default 5) each row runs `mha-run GRAPH --inputs DIR --output
y.npy --repeat N --warmup W --threads P` and `node bench/ort_run.js`
(the same N calls after W, P intra-op threads), one process each, the order
reversed from round to round; a ratio is ONNX Runtime's median / ours of the
same round, the median over the rounds. The outputs of the first round are
compared: max |y_mha - y_ort| must be within --tolerance (relative to
max |y|), else the row fails. `--reference` also compares both with a float64
NumPy layer (small shapes). Target: ours at least 1.5x faster on each row.

    /usr/bin/python3 bench/ort_gqa.py --install           # what make bench runs
    /usr/bin/python3 bench/ort_gqa.py --quick             # small, 1 round
    /usr/bin/python3 bench/ort_gqa.py --node-modules /tmp/ort/node_modules

Needs NumPy, python3-onnx (to write the models), node and the npm package
onnxruntime-node@1.30.0 (its install script fetches a GPU build: installed
with --ignore-scripts). `--install` installs what is missing: the Debian
packages with apt-get, the npm package into --ort-dir; when that fails, or
without --install when something is missing, it prints one line saying what
and why, and exits 0 (the peer is skipped, not failed). Exits 1 when a run
fails or the outputs disagree.
"""

import json
import os
import shutil
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from layer_vs_torch import (  # noqa: E402
    bench_argument_parser, cpu_model, last_line, run_child)
import ort_peer  # noqa: E402

TARGET = 1.5


def parse_args():
    parser = bench_argument_parser(__doc__)
    parser.add_argument("--shape", help="B,T,D,H,Hkv (default "
                        "1,2048,1024,16,4; --quick: 1,256,256,8,2)")
    parser.add_argument("--window", type=int,
                        help="W of the window row (default 512; --quick 64)")
    parser.add_argument("--softcap", type=float, default=50.0,
                        help="C of the softcap row (default 50)")
    parser.add_argument("--rows", default="causal,window,softcap",
                        help="rows to run, comma-separated")
    parser.add_argument("--quick", action="store_true",
                        help="small shape, 1 round of 3 calls: a smoke run")
    parser.add_argument("--rounds", type=int)
    parser.add_argument("--repeat", type=int)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--ort-qkv", choices=("packed", "separate"),
                        default="packed", help="ONNX Runtime's projections: "
                        "one MatMul by [W_q|W_k|W_v] (default) or three")
    ort_peer.add_ort_arguments(parser)
    parser.add_argument("--reference", action="store_true",
                        help="also check against a float64 NumPy layer")
    parser.add_argument("--tolerance", type=float, default=1e-4,
                        help="max |y_mha - y_ort| / max |y| (default 1e-4)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--work", help="folder for graphs, models and "
                        "arrays (default: a new temporary one, removed)")
    parser.add_argument("--json", help="also write every round's figures")
    args = parser.parse_args()
    shape = args.shape or ("1,256,256,8,2" if args.quick
                           else "1,2048,1024,16,4")
    try:
        args.B, args.T, args.D, args.H, args.Hkv = map(int, shape.split(","))
    except ValueError:
        parser.error(f"--shape {shape}: want B,T,D,H,Hkv")
    if args.D % args.H or args.H % args.Hkv or (args.D // args.H) % 2:
        parser.error("--shape: H must divide D (into an even head size) and "
                     "Hkv must divide H")
    args.window = args.window or (64 if args.quick else 512)
    args.rounds = args.rounds or (1 if args.quick else 5)
    args.repeat = args.repeat or (3 if args.quick else 10)
    args.rows = [r for r in args.rows.split(",") if r]
    for row in args.rows:
        if row not in ("causal", "window", "softcap"):
            parser.error(f"--rows: no row {row} (causal, window, softcap)")
    if min(args.rounds, args.repeat, args.threads, args.window) < 1:
        parser.error("--rounds, --repeat, --threads, --window must be >= 1")
    for tool in ("mha-gen", "mha-run"):
        if not os.access(os.path.join(args.bin, tool), os.X_OK):
            parser.error(f"no {tool} in {args.bin}")
    args.ort_dir = args.ort_dir or ort_peer.default_ort_dir(args.bin)
    return args


def skip(reason):
    print(f"ONNX Runtime peer skipped: {reason}", flush=True)
    sys.exit(0)


def make_weights(args):
    import numpy as np
    B, T, D, H, Hkv = args.B, args.T, args.D, args.H, args.Hkv
    dk = D // H
    rng = np.random.default_rng(args.seed)
    scale = 1 / np.sqrt(D)
    arrays = {
        "x": rng.standard_normal((B, T, D)),
        "w_q": rng.standard_normal((D, H * dk)) * scale,
        "w_k": rng.standard_normal((D, Hkv * dk)) * scale,
        "w_v": rng.standard_normal((D, Hkv * dk)) * scale,
        "w_o": rng.standard_normal((H * dk, D)) / np.sqrt(H * dk)}
    return {k: v.astype(np.float32) for k, v in arrays.items()}


def rope_tables(T, dk):
    """cos and sin [T, dk/2] of mha-gen's default RoPE (base 10000,
    inverse frequencies base^(-2i/dk)), computed in float64."""
    import numpy as np
    inverse = 10000.0 ** (-np.arange(0, dk, 2, dtype=np.float64) / dk)
    angle = np.arange(T, dtype=np.float64)[:, None] * inverse[None, :]
    return np.cos(angle), np.sin(angle)


def write_model(path, arrays, args, row):
    """ONNX Runtime's layer for ROW as PATH/layer.onnx, with x as its
    input (ort_peer.write_inputs)."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    B, T, D, H, Hkv = args.B, args.T, args.D, args.H, args.Hkv
    dk = D // H
    cos, sin = rope_tables(T, dk)
    attributes = dict(num_heads=H, kv_num_heads=Hkv, do_rotary=1,
                      rotary_interleaved=0, scale=1 / float(np.sqrt(dk)))
    if row == "window":
        attributes["local_window_size"] = args.window
    if row == "softcap":
        attributes["softcap"] = args.softcap
    attention = ["pk", "pv", "seqlens_k", "total_len", "cos", "sin"]
    if args.ort_qkv == "packed":
        weights = {"w_qkv": np.concatenate(
            [arrays["w_q"], arrays["w_k"], arrays["w_v"]], axis=1),
            "w_o": arrays["w_o"]}
        nodes = [helper.make_node("MatMul", ["x", "w_qkv"], ["qkv"]),
                 helper.make_node("GroupQueryAttention",
                                  ["qkv", "", ""] + attention,
                                  ["att", "present_k", "present_v"],
                                  domain="com.microsoft", **attributes)]
    else:
        weights = {n: arrays[n] for n in ("w_q", "w_k", "w_v", "w_o")}
        nodes = [helper.make_node("MatMul", ["x", f"w_{n}"], [n])
                 for n in "qkv"]
        nodes.append(helper.make_node("GroupQueryAttention",
                                      ["q", "k", "v"] + attention,
                                      ["att", "present_k", "present_v"],
                                      domain="com.microsoft", **attributes))
    nodes.append(helper.make_node("MatMul", ["att", "w_o"], ["y"]))
    empty = np.zeros((B, Hkv, 0, dk), np.float32)
    initializers = [numpy_helper.from_array(v, k) for k, v in weights.items()]
    initializers += [
        numpy_helper.from_array(empty, "pk"),
        numpy_helper.from_array(empty.copy(), "pv"),
        numpy_helper.from_array(np.full(B, T - 1, np.int32), "seqlens_k"),
        numpy_helper.from_array(np.array(T, np.int32), "total_len"),
        numpy_helper.from_array(cos.astype(np.float32), "cos"),
        numpy_helper.from_array(sin.astype(np.float32), "sin")]
    graph = helper.make_graph(
        nodes, "llama_layer",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [B, T, D])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [B, T, D])],
        initializers)
    model = helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8
    ort_peer.write_inputs(path, {"x": arrays["x"]})
    onnx.save(model, os.path.join(path, "layer.onnx"))


def reference(arrays, args, row):
    """The layer in float64 NumPy."""
    import numpy as np
    B, T, D, H, Hkv = args.B, args.T, args.D, args.H, args.Hkv
    dk = D // H
    x = arrays["x"].astype(np.float64)
    cos, sin = rope_tables(T, dk)

    def heads(w, n):
        return (x @ w.astype(np.float64)).reshape(B, T, n, dk).transpose(
            0, 2, 1, 3)

    def rope(t):
        a, b = t[..., :dk // 2], t[..., dk // 2:]
        return np.concatenate([a * cos - b * sin, b * cos + a * sin], -1)

    q, k, v = rope(heads(arrays["w_q"], H)), rope(heads(arrays["w_k"], Hkv)), \
        heads(arrays["w_v"], Hkv)
    k, v = np.repeat(k, H // Hkv, axis=1), np.repeat(v, H // Hkv, axis=1)
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(dk)
    if row == "softcap":
        s = args.softcap * np.tanh(s / args.softcap)
    i, j = np.arange(T)[:, None], np.arange(T)[None, :]
    keep = j <= i
    if row == "window":
        keep &= j > i - args.window
    s = np.where(keep, s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    o = (p @ v).transpose(0, 2, 1, 3).reshape(B, T, H * dk)
    return o @ arrays["w_o"].astype(np.float64)


def main():
    args = parse_args()
    node_modules, version, reason = ort_peer.find_ort(
        sys.executable, args.node_modules, args.ort_dir, args.install)
    if reason:
        skip(reason)
    import numpy as np
    work = args.work or tempfile.mkdtemp(prefix="ort_gqa_bench.")
    os.makedirs(work, exist_ok=True)
    B, T, D, H, Hkv = args.B, args.T, args.D, args.H, args.Hkv
    arrays = make_weights(args)
    inputs = os.path.join(work, "inputs")
    os.makedirs(inputs, exist_ok=True)
    for name, value in arrays.items():
        np.save(os.path.join(inputs, name + ".npy"), value)
    base = [f"--batch={B}", f"--seq={T}", f"--d-model={D}", f"--heads={H}",
            f"--kv-heads={Hkv}", "--rope=half", "--no-bias", "--causal"]
    extra = {"causal": [], "window": [f"--window={args.window}"],
             "softcap": [f"--softcap={args.softcap:g}"]}
    names = {"causal": "causal", "window": f"window {args.window}",
             "softcap": f"softcap {args.softcap:g}"}
    for row in args.rows:
        graph = os.path.join(work, row + ".mlir")
        code, out, err = run_child(
            [os.path.join(args.bin, "mha-gen"), *base, *extra[row],
             "-o", graph], None, args.timeout)
        if code != 0:
            sys.exit(f"ort_gqa.py: mha-gen {row}: {last_line(err or out)}")
        write_model(os.path.join(work, row), arrays, args, row)

    def run(row, side):
        folder = os.path.join(work, row)
        if side == "mha":
            return ort_peer.run_mha(
                args.bin, os.path.join(work, row + ".mlir"), inputs,
                os.path.join(folder, "y_mha.npy"), args.threads, args.repeat,
                args.warmup, args.timeout)
        return ort_peer.run_ort(folder, node_modules, args.threads,
                                args.repeat, args.warmup, args.timeout)

    def check(row):
        folder = os.path.join(work, row)
        y_mha = np.load(os.path.join(folder, "y_mha.npy"))
        y_ort = ort_peer.read_y_ort(folder, y_mha.shape)
        result = ort_peer.compare(y_mha, y_ort, args.tolerance)
        if args.reference:
            want = reference(arrays, args, row)
            result["mha_vs_float64"] = float(np.abs(y_mha - want).max())
            result["ort_vs_float64"] = float(np.abs(y_ort - want).max())
        return result

    times, ratios, checks, failed = ort_peer.alternate(
        args.rows, run, args.rounds, check, "ort_gqa.py")

    print(f"mha against ONNX Runtime {version} GroupQueryAttention (CPU, "
          f"QKV {args.ort_qkv}), {time.strftime('%Y-%m-%d')}, "
          f"{cpu_model()[0]}, {args.threads} threads each")
    print(f"Llama-style layer (B, T, D, H, Hkv) = ({B}, {T}, {D}, {H}, {Hkv}):"
          f" RoPE half, no biases, causal; {args.rounds} rounds of "
          f"{args.repeat} calls after {args.warmup}, alternating processes"
          f"{' (--quick)' if args.quick else ''}")
    print()
    print("| row | mha ms | ORT ms | ORT / mha | per-round range | "
          "max abs diff | target | met |")
    print("|---|---:|---:|---:|---|---:|---:|---|")
    met_all = True
    for row in args.rows:
        check = checks.get(row)
        diff = f"{check['max_abs_diff']:.1e}" if check else ""
        if check and args.reference:
            diff += (f" (vs f64: mha {check['mha_vs_float64']:.1e}, "
                     f"ORT {check['ort_vs_float64']:.1e})")
        if not ratios[row]:
            print(f"| {names[row]} | failed | | | | {diff} | {TARGET} | no |")
            met_all = False
            continue
        ratio = statistics.median(ratios[row])
        met = ratio >= TARGET and check is not None and check["agree"]
        met_all &= met
        print(f"| {names[row]} | {statistics.median(times[row]['mha']):.2f} "
              f"| {statistics.median(times[row]['ort']):.2f} | {ratio:.2f} "
              f"| {min(ratios[row]):.2f} to {max(ratios[row]):.2f} | {diff} "
              f"| >= {TARGET} | {'yes' if met else 'NO'} |", flush=True)
    print()
    print(f"Target (ours >= {TARGET}x faster, outputs agreeing): "
          + ("met on every row." if met_all else "missed."))
    if args.json:
        with open(args.json, "w") as file:
            json.dump({"version": version, "shape": [B, T, D, H, Hkv],
                       "threads": args.threads, "times": times,
                       "ratios": ratios, "checks": checks}, file, indent=1)
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
