#!/usr/bin/python3
"""Run a PyTorch nn.MultiheadAttention through mha and report the error.

Builds an nn.MultiheadAttention (batch_first) or loads one, writes its
weights as .npy files in mha's layout (X·W with W [D_in, D_out]), writes the
matching graph with mha-gen, runs mha-run on the same inputs with --expect
against PyTorch's output and --dump-attention, and prints the largest
differences of the output and of the attention weights.

    tools/torch_export.py --seq 16 --d-model 64 --heads 4 --causal
    tools/torch_export.py --load mha.pt --seq 32 --out /tmp/export

PyTorch stores nn.Linear weights as [D_out, D_in] and computes x·Wᵀ + b, so
w_q = in_proj_weight[0:D].T, w_k = in_proj_weight[D:2D].T,
w_v = in_proj_weight[2D:3D].T, w_o = out_proj.weight.T; the biases are
in_proj_bias[0:D], [D:2D], [2D:3D] and out_proj.bias (with separate key and
value widths, q/k/v_proj_weight are used instead). Causal is the boolean
attn_mask triu(ones(T, S), 1) (True = masked out in nn.MultiheadAttention):
query i sees keys j <= i, which is mha's `causal`.

Needs PyTorch (Debian: apt-get install python3-torch, which brings NumPy);
it is an optional dependency of mha, used by this tool only. Exit codes: 0
within the tolerance, 1 outside it, 2 bad usage or a failing tool.
"""
import argparse
import os
import shutil
import subprocess
import sys

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def parse_args():
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n".join(__doc__.splitlines()[2:]))
    shape = parser.add_argument_group("the layer (ignored where --load fixes it)")
    shape.add_argument("--batch", type=int, default=1, help="B (default 1)")
    shape.add_argument("--seq", type=int, default=8, help="T (default 8)")
    shape.add_argument("--kv-seq", type=int,
                       help="S: cross-attention over a second input of S tokens")
    shape.add_argument("--d-model", type=int, default=16, help="D (default 16)")
    shape.add_argument("--kv-dim", type=int,
                       help="width of the key/value input (cross-attention; default D)")
    shape.add_argument("--heads", type=int, default=2, help="H (default 2)")
    shape.add_argument("--causal", action="store_true",
                       help="query i attends keys j <= i (attn_mask)")
    shape.add_argument("--cross", action="store_true",
                       help="keys and values from a second input kv")
    shape.add_argument("--no-bias", action="store_true",
                       help="nn.MultiheadAttention(bias=False)")
    parser.add_argument("--load", metavar="FILE.pt",
                        help="a saved nn.MultiheadAttention or its state_dict "
                             "(torch.save) instead of a fresh, random one")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the weights and inputs (default 0)")
    parser.add_argument("--out", default="torch-export",
                        help="folder for graph.mlir, the .npy files and the "
                             "maps (default ./torch-export)")
    parser.add_argument("--bin", default=os.path.join(REPO_ROOT, "build", "bin"),
                        help="folder of mha-gen and mha-run (default build/bin)")
    parser.add_argument("--atol", type=float, default=1e-4)
    parser.add_argument("--rtol", type=float, default=1e-4)
    parser.add_argument("--threads", type=int, help="mha-run --threads")
    return parser.parse_args()


def fail(message):
    print("torch_export.py: error: " + message, file=sys.stderr)
    sys.exit(2)


def build_module(args, torch):
    """The nn.MultiheadAttention to export, in evaluation mode."""
    nn = torch.nn
    if args.load:
        loaded = torch.load(args.load)
        if isinstance(loaded, nn.MultiheadAttention):
            if not loaded.batch_first:
                fail("%s: mha takes [B, T, D] inputs; the module needs "
                     "batch_first=True" % args.load)
            args.d_model, args.heads = loaded.embed_dim, loaded.num_heads
            if loaded.kdim != loaded.embed_dim:
                args.kv_dim = loaded.kdim
            if loaded.kdim != loaded.vdim:
                fail("%s: mha needs one key/value input width (kdim == vdim)"
                     % args.load)
            args.no_bias = loaded.in_proj_bias is None
            return loaded.eval()
        module = make_module(args, nn)
        try:
            module.load_state_dict(loaded)
        except (RuntimeError, TypeError) as error:
            fail("%s does not fit the layer given by the options: %s"
                 % (args.load, error))
        return module.eval()
    module = make_module(args, nn)
    # PyTorch starts biases at zero; random ones test where they go.
    with torch.no_grad():
        for bias in (module.in_proj_bias, module.out_proj.bias):
            if bias is not None:
                bias.uniform_(-0.1, 0.1)
    return module.eval()


def make_module(args, nn):
    kv_dim = args.kv_dim or args.d_model
    return nn.MultiheadAttention(args.d_model, args.heads, bias=not args.no_bias,
                                 batch_first=True, kdim=kv_dim, vdim=kv_dim)


def export_weights(module, np):
    """The module's parameters in mha's layout, by argument name."""
    d = module.embed_dim

    def array(tensor):
        return np.ascontiguousarray(tensor.detach().numpy(), dtype=np.float32)

    if module._qkv_same_embed_dim:
        w = module.in_proj_weight
        w_q, w_k, w_v = w[0:d], w[d:2 * d], w[2 * d:3 * d]
    else:
        w_q, w_k, w_v = (module.q_proj_weight, module.k_proj_weight,
                         module.v_proj_weight)
    arrays = {"w_q": array(w_q.T), "w_k": array(w_k.T), "w_v": array(w_v.T),
              "w_o": array(module.out_proj.weight.T)}
    if module.in_proj_bias is not None:
        b = module.in_proj_bias
        arrays.update(b_q=array(b[0:d]), b_k=array(b[d:2 * d]),
                      b_v=array(b[2 * d:3 * d]), b_o=array(module.out_proj.bias))
    return arrays


def run(command):
    """Runs a tool; its output goes to ours. Returns (exit code, stdout)."""
    print("$ " + " ".join(command), flush=True)
    result = subprocess.run(command, stdout=subprocess.PIPE, text=True)
    sys.stdout.write(result.stdout)
    return result.returncode, result.stdout


def main():
    args = parse_args()
    try:
        import numpy as np
        import torch
    except ImportError as error:
        fail("needs PyTorch and NumPy (apt-get install python3-torch): %s" % error)
    tools = {}
    for name in ("mha-gen", "mha-run"):
        tools[name] = os.path.join(args.bin, name)
        if not shutil.which(tools[name]):
            fail("no %s in %s (build mha first, or give --bin)" % (name, args.bin))

    torch.manual_seed(args.seed)
    module = build_module(args, torch)
    cross = args.cross or args.kv_seq is not None or args.kv_dim is not None
    kv_seq = args.kv_seq or args.seq
    kv_dim = args.kv_dim or args.d_model
    x = torch.rand(args.batch, args.seq, args.d_model) * 2 - 1
    kv = torch.rand(args.batch, kv_seq, kv_dim) * 2 - 1 if cross else x
    mask = None
    if args.causal:
        mask = torch.triu(torch.ones(args.seq, kv_seq, dtype=torch.bool), 1)
    # With autograd on, PyTorch 1.13 takes its general path, which returns
    # the weights and handles bias=False (its no_grad fast path does not).
    y, weights = module(x, kv, kv, attn_mask=mask, need_weights=True,
                        average_attn_weights=False)
    y, weights = y.detach(), weights.detach()

    os.makedirs(args.out, exist_ok=True)
    arrays = export_weights(module, np)
    arrays["x"] = x.numpy()
    if cross:
        arrays["kv"] = kv.numpy()
    for name, value in arrays.items():
        np.save(os.path.join(args.out, name + ".npy"), value)
    np.save(os.path.join(args.out, "y.npy"), y.numpy())

    graph = os.path.join(args.out, "graph.mlir")
    generate = [tools["mha-gen"], "--batch", str(args.batch), "--seq",
                str(args.seq), "--d-model", str(args.d_model), "--heads",
                str(args.heads), "-o", graph]
    if cross:
        generate += ["--kv-seq", str(kv_seq), "--kv-dim", str(kv_dim)]
    if args.causal:
        generate.append("--causal")
    if args.no_bias:
        generate.append("--no-bias")
    if run(generate)[0] != 0:
        fail("mha-gen failed")

    maps = os.path.join(args.out, "maps")
    output = os.path.join(args.out, "y_mha.npy")
    command = [tools["mha-run"], graph, "--inputs", args.out, "--expect",
               os.path.join(args.out, "y.npy"), "--atol", str(args.atol),
               "--rtol", str(args.rtol), "--output", output,
               "--dump-attention", maps]
    if args.threads:
        command += ["--threads", str(args.threads)]
    status, _ = run(command)
    if status not in (0, 1):
        fail("mha-run failed with exit code %d" % status)

    output_error = float(np.abs(np.load(output) - y.numpy()).max())
    weights_error = float(np.abs(np.load(os.path.join(maps, "attention.npy")) -
                                 weights.numpy()).max())
    print("torch %s, nn.MultiheadAttention(%d, %d%s), x %s%s%s"
          % (torch.__version__, module.embed_dim, module.num_heads,
             ", bias=False" if args.no_bias else "", list(x.shape),
             ", kv %s" % list(kv.shape) if cross else "",
             ", causal" if args.causal else ""))
    print("max abs error against PyTorch: output %.2e, attention weights %.2e "
          "(atol %g)" % (output_error, weights_error, args.atol))
    ok = status == 0 and weights_error <= args.atol
    print("ok" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
