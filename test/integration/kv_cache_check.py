#!/usr/bin/env python3
"""Checks decoding with a KV cache against a float64 NumPy causal layer.

For each case folder that KvCacheTest wrote (MHA_KV_DUMP_DIR): tokens
[B, total, D], the weights (w_q, w_k, w_v, w_o, optional b_*), starts [B]
(where each sequence's steps begin), sizes [H, Hkv, T0], and the outputs:
prefill [B, T0, D] (the first T0 tokens, lengths 0) and steps [N, B, D]
(step n of sequence b is token starts[b] + n). The reference is the plain
causal multi-head layer over each sequence's own tokens, in float64, written
here from the definition (no code shared with the compiler or the C++
reference). Prints one line per case; exits 1 if any error exceeds 1e-5.
"""
import os
import sys

import numpy as np


def causal_layer(x, w, heads, kv_heads):
    """y [T, D] of causal self-attention over x [T, D], float64."""
    x = x.astype(np.float64)
    get = lambda name: w[name].astype(np.float64) if name in w else 0.0
    q = x @ get("w_q") + get("b_q")
    k = x @ get("w_k") + get("b_k")
    v = x @ get("w_v") + get("b_v")
    t = x.shape[0]
    dk = q.shape[1] // heads
    dv = v.shape[1] // kv_heads
    group = heads // kv_heads
    out = np.zeros((t, heads * dv))
    allowed = np.tril(np.ones((t, t), dtype=bool))
    for h in range(heads):
        g = h // group
        qh = q[:, h * dk:(h + 1) * dk]
        kh = k[:, g * dk:(g + 1) * dk]
        vh = v[:, g * dv:(g + 1) * dv]
        s = qh @ kh.T / np.sqrt(dk)
        s = np.where(allowed, s, -np.inf)
        p = np.exp(s - s.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        out[:, h * dv:(h + 1) * dv] = p @ vh
    return out @ get("w_o") + get("b_o")


def check(folder):
    load = lambda name: np.load(os.path.join(folder, name + ".npy"))
    tokens, starts, sizes = load("tokens"), load("starts"), load("sizes")
    heads, kv_heads, prefill_len = (int(v) for v in sizes)
    w = {name: load(name) for name in
         ("w_q", "w_k", "w_v", "w_o", "b_q", "b_k", "b_v", "b_o")
         if os.path.exists(os.path.join(folder, name + ".npy"))}
    prefill, steps = load("prefill"), load("steps")
    worst_prefill = worst_steps = 0.0
    for b in range(tokens.shape[0]):
        y = causal_layer(tokens[b, :prefill_len], w, heads, kv_heads)
        worst_prefill = max(worst_prefill, np.abs(prefill[b] - y).max())
        total = int(starts[b]) + steps.shape[0]
        y = causal_layer(tokens[b, :total], w, heads, kv_heads)
        got = steps[:, b, :]
        worst_steps = max(worst_steps,
                          np.abs(got - y[int(starts[b]):total]).max())
    ok = worst_prefill <= 1e-5 and worst_steps <= 1e-5 and \
        np.isfinite(prefill).all() and np.isfinite(steps).all()
    print("%s: prefill max abs error %.2e, %d steps max abs error %.2e: %s"
          % (os.path.basename(folder), worst_prefill, steps.shape[0],
             worst_steps, "ok" if ok else "FAILED"))
    return ok


def main():
    root = sys.argv[1]
    folders = sorted(os.path.join(root, d) for d in os.listdir(root))
    results = [check(folder) for folder in folders]
    print("%d of %d cases agree with the float64 reference"
          % (sum(results), len(results)))
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
