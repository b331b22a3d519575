#!/usr/bin/python3
"""Time PyTorch's nn.MultiheadAttention on one shape; print one JSON line.

The PyTorch side of layer_vs_torch.py, run by it in a child process under
Debian's python (/usr/bin/python3, where python3-torch lives) and the tuned
environment (OPENBLAS_CORETYPE=SkylakeX OMP_WAIT_POLICY=passive). The module
is nn.MultiheadAttention(D, H, batch_first=True).eval(), called under
torch.inference_mode() with need_weights=False; causal shapes pass a boolean
[T, T] attn_mask, and a shape with kv=S gets keys and values from a second
input [B, S, D] (decoding against a long sequence).

    /usr/bin/python3 bench/torch_layer.py --shape 1,512,512,8 --repeat 20
    /usr/bin/python3 bench/torch_layer.py --shape 1,2048,1024,16,causal
    /usr/bin/python3 bench/torch_layer.py --shape 4,1,512,8,kv=4096

Output: {"median_ms", "min_ms", "times_ms" (one per timed call), "path",
"torch", "threads", "blas"}; `path` says whether nn.MultiheadAttention took its fused fast path
(aten::_native_multi_head_attention) or the composed slow path.
"""

import argparse
import json
import statistics
import time

import blas_info


def parse_shape(text):
    """'B,T,D,H[,causal][,kv=S]' -> (B, T, D, H, causal, S or None)."""
    parts = text.split(",")
    causal = "causal" in parts
    kv = [p for p in parts if p.startswith("kv=")]
    sizes = [p for p in parts if p != "causal" and not p.startswith("kv=")]
    kv_seq = int(kv[0][3:]) if kv else None
    batch, seq, width, heads = map(int, sizes)
    return batch, seq, width, heads, causal, kv_seq


def which_path(call):
    """Profiles one call: did nn.MultiheadAttention take the fast path?"""
    import torch
    with torch.autograd.profiler.profile() as profile:
        call()
    names = {event.name for event in profile.function_events}
    return "fast" if "aten::_native_multi_head_attention" in names else "slow"


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--shape", required=True,
                        help="B,T,D,H[,causal][,kv=S]")
    parser.add_argument("--repeat", type=int, default=20,
                        help="timed calls (default: %(default)s)")
    parser.add_argument("--warmup", type=int, default=3,
                        help="untimed calls first (default: %(default)s)")
    parser.add_argument("--threads", type=int, default=2,
                        help="torch and OpenBLAS threads "
                        "(default: %(default)s)")
    parser.add_argument("--budget", type=float, default=30,
                        help="seconds after which fewer calls are made, at "
                        "least 1 warm-up and 3 timed (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    import torch
    torch.set_num_threads(args.threads)
    blas_info.set_blas_threads(args.threads)
    torch.manual_seed(args.seed)
    batch, seq, width, heads, causal, kv_seq = parse_shape(args.shape)
    layer = torch.nn.MultiheadAttention(width, heads, batch_first=True).eval()
    x = torch.randn(batch, seq, width)
    kv = torch.randn(batch, kv_seq, width) if kv_seq else x
    mask = None
    if causal:
        # True: may not attend. All T x T scores are still computed.
        mask = torch.ones(seq, kv_seq or seq, dtype=torch.bool).triu(1)

    def call():
        return layer(x, kv, kv, attn_mask=mask, need_weights=False)[0]

    times = []
    with torch.inference_mode():
        # The profiled call is a warm-up too. A slow BLAS (the reference
        # one) gets fewer calls rather than many minutes per shape.
        start = time.perf_counter()
        path = which_path(call)
        for _ in range(args.warmup):
            if time.perf_counter() - start > args.budget / 4:
                break
            call()
        for index in range(args.repeat):
            if index >= 3 and sum(times) > args.budget * 1e3:
                break
            start = time.perf_counter()
            call()
            times.append((time.perf_counter() - start) * 1e3)
    print(json.dumps({
        "median_ms": statistics.median(times), "min_ms": min(times),
        "times_ms": times, "path": path, "torch": torch.__version__,
        "threads": torch.get_num_threads(), "blas": blas_info.loaded_blas()}))


if __name__ == "__main__":
    main()
