#!/usr/bin/python3
"""Our layer against ONNX Runtime's com.microsoft.MultiHeadAttention.

For each shape (B, T, D, H[, causal][, kv=S]), as layer_vs_torch.py writes
them, ours is `mha-gen` (biases, P = 2 threads) and ONNX Runtime's (1.30,
CPU) the model its exporters build for such a layer: one MatMul by the
packed [W_q | W_k | W_v] and a Split (`--ort-qkv fused`, the default:
faster than three MatMuls, `--ort-qkv separate`, in 6 of 6 paired runs
here; kv= shapes always take three), then MultiHeadAttention with the
three biases as its `bias` input (`unidirectional=1` when causal: query i
attends keys j <= i, as mha's `causal`), then a MatMul by W_o and an Add
of b_o. ONNX Runtime 1.30 has no CPU kernel for MultiHeadAttention's packed
QKV ([B, T, H, 3, d]). Both take the same x (and kv) and weights,
drawn as mha-run --random draws them: ours reads them as .npy under
mha-gen's argument names (`mha-run GRAPH --inputs DIR`), ONNX Runtime has
the weights as initializers.

In R rounds (default 3) each shape runs `mha-run GRAPH --inputs DIR
--output y.npy --repeat N --warmup W --threads P` and `node
bench/ort_run.js` (the same N calls after W, P intra-op threads), one
process each, the order reversed from round to round; a ratio is ONNX
Runtime's median / ours of the same round, the median over the rounds. The
outputs of the first round are compared: max |y_mha - y_ort| / max |y_mha|
(the max rel error of the table) must be within --tolerance, else the shape
fails.

    /usr/bin/python3 bench/ort_mha.py --install          # the five shapes
    /usr/bin/python3 bench/ort_mha.py --quick            # one small shape
    /usr/bin/python3 bench/ort_mha.py --shape 1,2048,1024,16,causal --rounds 5

`--prepare DIR` (one --shape) writes DIR/layer.mlir, the arrays (DIR/inputs)
and ONNX Runtime's model (DIR/ort), runs each side once, compares and
prints one JSON line: how layer_vs_torch.py gets its ORT column, timing
`node bench/ort_run.js DIR/ort` in its own rounds.

Needs NumPy, python3-onnx, node and onnxruntime-node@1.30.0 (bench/ort_peer.py;
`--install` installs what is missing). When it cannot, it prints one line,
`ONNX Runtime peer skipped: ...`, and exits 0. Exits 1 when a run fails or
the outputs disagree.
"""

import json
import os
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from layer_vs_torch import (  # noqa: E402
    bench_argument_parser, cpu_model, format_ms, last_line, parse_shape,
    run_child)
import ort_peer  # noqa: E402

DEFAULT_SHAPES = ["1,128,512,8", "1,512,512,8", "8,512,512,8",
                  "1,2048,1024,16", "1,2048,1024,16,causal"]
QUICK_SHAPES = ["1,128,512,8"]


def parse_args():
    parser = bench_argument_parser(__doc__)
    parser.add_argument("--shape", action="append", type=parse_shape,
                        help="B,T,D,H[,causal][,kv=S]; repeatable (default: "
                        + " ".join(DEFAULT_SHAPES) + ")")
    parser.add_argument("--quick", action="store_true",
                        help="(1,128,512,8), 1 round of 3 calls: a smoke run")
    parser.add_argument("--rounds", type=int)
    parser.add_argument("--repeat", type=int)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--ort-qkv", choices=("fused", "separate"),
                        default="fused", help="ONNX Runtime's projections: "
                        "one MatMul by [W_q|W_k|W_v] and a Split (default; "
                        "not with kv=) or three MatMuls")
    ort_peer.add_ort_arguments(parser)
    parser.add_argument("--tolerance", type=float, default=1e-4,
                        help="max |y_mha - y_ort| / max |y_mha| (default "
                        "1e-4)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--prepare", metavar="DIR",
                        help="write and check one shape into DIR, print "
                        "JSON, time nothing (layer_vs_torch.py's child)")
    parser.add_argument("--work", help="folder for graphs, models and "
                        "arrays (default: a new temporary one, removed)")
    parser.add_argument("--json", help="also write every round's figures")
    args = parser.parse_args()
    args.shape = args.shape or [parse_shape(s) for s in (
        QUICK_SHAPES if args.quick else DEFAULT_SHAPES)]
    args.rounds = args.rounds or (1 if args.quick else 3)
    args.repeat = args.repeat or (3 if args.quick else 10)
    if min(args.rounds, args.repeat, args.threads) < 1 or args.warmup < 0:
        parser.error("--rounds, --repeat, --threads must be >= 1, --warmup "
                     ">= 0")
    if args.prepare and len(args.shape) != 1:
        parser.error("--prepare takes one --shape")
    for shape in args.shape:
        if unsupported(shape) and not args.prepare:
            parser.error(f"--shape {shape.spec()}: {unsupported(shape)}")
    for tool in ("mha-gen", "mha-run"):
        if not os.access(os.path.join(args.bin, tool), os.X_OK):
            parser.error(f"no {tool} in {args.bin}")
    args.ort_dir = args.ort_dir or ort_peer.default_ort_dir(args.bin)
    return args


def unsupported(shape):
    """Why ONNX Runtime's model cannot be this shape's peer, or None."""
    if shape.causal and shape.kv_seq and shape.kv_seq != shape.seq:
        # Checked: it matched neither mha's causal nor
        # causal(bottom_right) at T = 64, S = 80.
        return ("MultiHeadAttention's unidirectional masks neither as "
                "causal nor as causal(bottom_right) when S != T")
    return None


def make_arrays(shape, seed):
    """x (and kv) standard normal; the weights and biases as mha-run
    --random draws them (a weight [K, N] uniform within 1/sqrt(K), a bias
    within 0.1), under mha-gen's argument names."""
    import numpy as np
    rng = np.random.default_rng(seed)
    B, T, D = shape.batch, shape.seq, shape.width
    arrays = {"x": rng.standard_normal((B, T, D))}
    if shape.kv_seq:
        arrays["kv"] = rng.standard_normal((B, shape.kv_seq, D))
    for name in ("w_q", "w_k", "w_v", "w_o"):
        arrays[name] = rng.uniform(-D ** -0.5, D ** -0.5, (D, D))
    for name in ("b_q", "b_k", "b_v", "b_o"):
        arrays[name] = rng.uniform(-0.1, 0.1, D)
    return {k: v.astype(np.float32) for k, v in arrays.items()}


def write_model(folder, arrays, shape, qkv):
    """ONNX Runtime's layer as FOLDER/layer.onnx with its inputs
    (ort_peer.write_inputs)."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    B, T, D, H = shape.batch, shape.seq, shape.width, shape.heads
    source = "kv" if shape.kv_seq else "x"
    nodes = []
    if qkv == "fused" and not shape.kv_seq:
        weights = {"w_qkv": np.concatenate(
            [arrays["w_q"], arrays["w_k"], arrays["w_v"]], axis=1)}
        nodes += [helper.make_node("MatMul", ["x", "w_qkv"], ["qkv"]),
                  helper.make_node("Split", ["qkv"], ["q", "k", "v"],
                                   axis=2)]
    else:
        weights = {n: arrays[n] for n in ("w_q", "w_k", "w_v")}
        nodes += [helper.make_node("MatMul", ["x", "w_q"], ["q"]),
                  helper.make_node("MatMul", [source, "w_k"], ["k"]),
                  helper.make_node("MatMul", [source, "w_v"], ["v"])]
    weights["bias_qkv"] = np.concatenate(
        [arrays["b_q"], arrays["b_k"], arrays["b_v"]])
    weights["w_o"], weights["b_o"] = arrays["w_o"], arrays["b_o"]
    nodes += [
        helper.make_node("MultiHeadAttention", ["q", "k", "v", "bias_qkv"],
                         ["att"], domain="com.microsoft", num_heads=H,
                         unidirectional=int(shape.causal)),
        helper.make_node("MatMul", ["att", "w_o"], ["proj"]),
        helper.make_node("Add", ["proj", "b_o"], ["y"])]
    inputs = {"x": arrays["x"]}
    if shape.kv_seq:
        inputs["kv"] = arrays["kv"]
    graph = helper.make_graph(
        nodes, "mha_layer",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(v.shape))
         for n, v in inputs.items()],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [B, T, D])],
        [numpy_helper.from_array(v, k) for k, v in weights.items()])
    model = helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8
    ort_peer.write_inputs(folder, inputs)
    onnx.save(model, os.path.join(folder, "layer.onnx"))


def prepare(shape, folder, args):
    """FOLDER/layer.mlir, FOLDER/inputs/*.npy and ONNX Runtime's FOLDER/ort;
    None, or why mha-gen failed."""
    import numpy as np
    arrays = make_arrays(shape, args.seed)
    inputs = os.path.join(folder, "inputs")
    os.makedirs(inputs, exist_ok=True)
    for name, value in arrays.items():
        np.save(os.path.join(inputs, name + ".npy"), value)
    code, out, err = run_child(
        [os.path.join(args.bin, "mha-gen"), *shape.gen_args(), "-o",
         os.path.join(folder, "layer.mlir")], None, args.timeout)
    if code != 0:
        return f"mha-gen: {last_line(err or out)}"
    write_model(os.path.join(folder, "ort"), arrays, shape, args.ort_qkv)
    return None


def run_side(folder, side, node_modules, args, repeat, warmup):
    if side == "mha":
        return ort_peer.run_mha(
            args.bin, os.path.join(folder, "layer.mlir"),
            os.path.join(folder, "inputs"), os.path.join(folder, "y_mha.npy"),
            args.threads, repeat, warmup, args.timeout)
    return ort_peer.run_ort(os.path.join(folder, "ort"), node_modules,
                            args.threads, repeat, warmup, args.timeout)


def check(folder, args):
    import numpy as np
    y_mha = np.load(os.path.join(folder, "y_mha.npy"))
    y_ort = ort_peer.read_y_ort(os.path.join(folder, "ort"), y_mha.shape)
    return ort_peer.compare(y_mha, y_ort, args.tolerance)


def prepare_only(args, node_modules, version):
    """--prepare: one call of each side (untimed) and the comparison, as
    one JSON line."""
    folder = os.path.abspath(args.prepare)
    error = prepare(args.shape[0], folder, args)
    for side in ("mha", "ort"):
        if not error:
            _, error = run_side(folder, side, node_modules, args, 1, 0)
    if error:
        print(json.dumps({"error": error}))
        return 1
    result = check(folder, args)
    print(json.dumps({"model": os.path.join(folder, "ort"),
                      "version": version, "qkv": args.ort_qkv, **result}))
    return 0 if result["agree"] else 1


def main():
    args = parse_args()
    node_modules, version, reason = ort_peer.find_ort(
        sys.executable, args.node_modules, args.ort_dir, args.install)
    if reason:
        if args.prepare:
            print(json.dumps({"skipped": reason}))
        else:
            print(f"ONNX Runtime peer skipped: {reason}", flush=True)
        return 0
    if args.prepare and unsupported(args.shape[0]):
        print(json.dumps({"unsupported": unsupported(args.shape[0])}))
        return 0
    if args.prepare:
        return prepare_only(args, node_modules, version)
    work = args.work or tempfile.mkdtemp(prefix="ort_mha_bench.")
    rows = [shape.spec() for shape in args.shape]
    for shape in args.shape:
        error = prepare(shape, os.path.join(work, shape.spec()), args)
        if error:
            sys.exit(f"ort_mha.py: {shape.name()}: {error}")
    times, ratios, checks, failed = ort_peer.alternate(
        rows, lambda row, side: run_side(os.path.join(work, row), side,
                                         node_modules, args, args.repeat,
                                         args.warmup),
        args.rounds, lambda row: check(os.path.join(work, row), args),
        "ort_mha.py")

    print(f"mha against ONNX Runtime {version} MultiHeadAttention (CPU, QKV "
          f"{args.ort_qkv}), {time.strftime('%Y-%m-%d')}, {cpu_model()[0]}, "
          f"{args.threads} threads each; {args.rounds} rounds of "
          f"{args.repeat} calls after {args.warmup}, alternating processes"
          f"{' (--quick)' if args.quick else ''}")
    print()
    print("| shape (B,T,D,H) | mha ms | ORT ms | ORT / mha | per-round range "
          "| max rel error |")
    print("|---|---:|---:|---:|---|---:|")
    for shape, row in zip(args.shape, rows):
        found = checks.get(row)
        error = f"{found['max_rel_err']:.1e}" if found else ""
        if not ratios[row]:
            print(f"| {shape.name()} | failed | | | | {error} |")
            continue
        mha_ms = statistics.median(times[row]["mha"])
        ort_ms = statistics.median(times[row]["ort"])
        print(f"| {shape.name()} | {format_ms(mha_ms)} | {format_ms(ort_ms)} "
              f"| {statistics.median(ratios[row]):.2f}× "
              f"| {min(ratios[row]):.2f} to {max(ratios[row]):.2f} "
              f"| {error} |", flush=True)
    if args.json:
        with open(args.json, "w") as file:
            json.dump({"version": version, "qkv": args.ort_qkv,
                       "threads": args.threads, "times": times,
                       "ratios": ratios, "checks": checks}, file, indent=1)
    if not args.work:
        import shutil
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
