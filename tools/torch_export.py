#!/usr/bin/python3
"""Run a PyTorch nn.MultiheadAttention through mha and report the error.

Builds an nn.MultiheadAttention (batch_first) or loads one, runs it through
mha's Python package (mha.torch.MultiheadAttention: the same compiler and
runtime as mha-run, in this process) on the same inputs, with the attention
weights per head (need_weights=True, average_attn_weights=False), and prints
the largest differences of the output and of the attention weights. It also
writes what mha-run needs to repeat the run: the weights as .npy files in
mha's layout (X·W with W [D_in, D_out]), the inputs, the matching graph
(what mha-gen prints) and both outputs.

    tools/torch_export.py --seq 16 --d-model 64 --heads 4 --causal
    tools/torch_export.py --load mha.pt --seq 32 --out /tmp/export
    build/bin/mha-run torch-export/graph.mlir --inputs torch-export \
        --expect torch-export/y.npy --dump-attention torch-export/maps

PyTorch stores nn.Linear weights as [D_out, D_in] and computes x·Wᵀ + b, so
w_q = in_proj_weight[0:D].T, w_k = in_proj_weight[D:2D].T,
w_v = in_proj_weight[2D:3D].T, w_o = out_proj.weight.T; the biases are
in_proj_bias[0:D], [D:2D], [2D:3D] and out_proj.bias (with separate key and
value widths, q/k/v_proj_weight are used instead). Causal is the boolean
attn_mask triu(ones(T, S), 1) (True = masked out in nn.MultiheadAttention):
query i sees keys j <= i, which is mha's `causal`.

Needs PyTorch (Debian: apt-get install python3-torch, which brings NumPy)
and mha's Python package (built by `make` into build/python); PyTorch is an
optional dependency of mha. Exit codes: 0 within the tolerance, 1 outside
it, 2 bad usage or a missing package.
"""
import argparse
import os
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
                             "weights maps/attention.npy (default ./torch-export)")
    parser.add_argument("--bin", default=os.path.join(REPO_ROOT, "build", "bin"),
                        help="folder of mha's tools of the build whose Python "
                             "package (BIN/../python) runs the layer "
                             "(default build/bin)")
    parser.add_argument("--atol", type=float, default=1e-4)
    parser.add_argument("--rtol", type=float, default=1e-4)
    parser.add_argument("--threads", type=int,
                        help="OpenMP threads of the compiled code (default: all cores)")
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


def import_mha(bin_dir):
    """mha's Python package of the build at BIN/../python."""
    sys.path.insert(0, os.path.join(bin_dir, "..", "python"))
    try:
        import mha
        import mha.torch
    except ImportError as error:
        fail("no Python package mha in %s (build mha first, or give --bin): %s"
             % (os.path.normpath(os.path.join(bin_dir, "..", "python")), error))
    return mha


def main():
    args = parse_args()
    try:
        import numpy as np
        import torch
    except ImportError as error:
        fail("needs PyTorch and NumPy (apt-get install python3-torch): %s" % error)
    mha = import_mha(args.bin)
    if args.threads:
        mha.set_num_threads(args.threads)

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

    # The same call through mha: the causal mask is recognized as `causal`.
    try:
        layer = mha.torch.MultiheadAttention.from_torch(module)
        with torch.no_grad():
            y_mha, weights_mha = layer(x, kv, kv, attn_mask=mask,
                                       need_weights=True,
                                       average_attn_weights=False)
    except (ValueError, NotImplementedError, MemoryError) as error:
        fail(str(error))

    os.makedirs(args.out, exist_ok=True)
    arrays = export_weights(module, np)
    arrays["x"] = x.numpy()
    if cross:
        arrays["kv"] = kv.numpy()
    for name, value in arrays.items():
        np.save(os.path.join(args.out, name + ".npy"), value)
    np.save(os.path.join(args.out, "y.npy"), y.numpy())
    np.save(os.path.join(args.out, "y_mha.npy"), y_mha.numpy())
    os.makedirs(os.path.join(args.out, "maps"), exist_ok=True)
    np.save(os.path.join(args.out, "maps", "attention.npy"), weights_mha.numpy())
    options = dict(batch=args.batch, seq=args.seq, d_model=args.d_model,
                   heads=args.heads, causal=args.causal, bias=not args.no_bias)
    if cross:
        options.update(cross=True, kv_seq=kv_seq, kv_dim=kv_dim)
    with open(os.path.join(args.out, "graph.mlir"), "w") as f:
        f.write(mha.layer_graph(**options))
    print("wrote graph.mlir, the inputs, y.npy (PyTorch), y_mha.npy and "
          "maps/attention.npy to %s" % args.out)

    # mha-run --expect's rule: |got - want| <= atol + rtol * |want|.
    difference = (y_mha - y).abs()
    output_ok = bool((difference <= args.atol + args.rtol * y.abs()).all())
    output_error = difference.max().item()
    weights_error = (weights_mha - weights).abs().max().item()
    print("torch %s, nn.MultiheadAttention(%d, %d%s), x %s%s%s"
          % (torch.__version__, module.embed_dim, module.num_heads,
             ", bias=False" if args.no_bias else "", list(x.shape),
             ", kv %s" % list(kv.shape) if cross else "",
             ", causal" if args.causal else ""))
    print("max abs error against PyTorch: output %.2e, attention weights %.2e "
          "(atol %g)" % (output_error, weights_error, args.atol))
    ok = output_ok and weights_error <= args.atol
    print("ok" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
