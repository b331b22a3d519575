"""Writes the inputs and the float64 NumPy result of one mha.rope or
mha.rms_norm into a folder, for rope-and-norm.test: the formulas of the
ops' descriptions (dialects/MhaOps.td), element by element."""

import argparse
import os

import numpy as np


def rope(x, offsets, inv_freq, layout, rotary_dim, base, scale, mscale):
    b, h, t, d = x.shape
    pairs = rotary_dim // 2
    if inv_freq is None:
        inv_freq = base ** (-2.0 * np.arange(pairs) / rotary_dim)
    y = x.astype(np.float64).copy()
    for s in range(b):
        for p in range(t):
            position = p + (offsets[s] if offsets is not None else 0)
            angle = position / scale * np.asarray(inv_freq, np.float64)
            c, sn = np.cos(angle) * mscale, np.sin(angle) * mscale
            for i in range(pairs):
                first, second = (2 * i, 2 * i + 1) if layout == "interleaved" \
                    else (i, i + pairs)
                a = x[s, :, p, first].astype(np.float64)
                bb = x[s, :, p, second].astype(np.float64)
                y[s, :, p, first] = a * c[i] - bb * sn[i]
                y[s, :, p, second] = bb * c[i] + a * sn[i]
    return y


def rms_norm(x, weight, eps):
    x = x.astype(np.float64)
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * weight


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--shape", default="2,3,5,8")
    parser.add_argument("--op", choices=["rope", "rms_norm"], default="rope")
    parser.add_argument("--layout", default="half")
    parser.add_argument("--rotary-dim", type=int, default=8)
    parser.add_argument("--base", type=float, default=10000.0)
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--mscale", type=float, default=1.0)
    parser.add_argument("--offsets", action="store_true")
    parser.add_argument("--inv-freq", action="store_true")
    parser.add_argument("--eps", type=float, default=1e-6)
    args = parser.parse_args()
    rng = np.random.default_rng(7)
    shape = [int(n) for n in args.shape.split(",")]
    os.makedirs(args.out, exist_ok=True)
    x = rng.standard_normal(shape).astype(np.float32)
    np.save(os.path.join(args.out, "x.npy"), x)
    if args.op == "rms_norm":
        weight = rng.standard_normal(shape[-1]).astype(np.float32)
        np.save(os.path.join(args.out, "weight.npy"), weight)
        y = rms_norm(x, weight, args.eps)
    else:
        offsets = inv_freq = None
        if args.offsets:
            # Positions far along a long context, where an f32 angle
            # would be off.
            offsets = rng.integers(0, 200000, shape[0]).astype(np.int64)
            np.save(os.path.join(args.out, "offsets.npy"), offsets)
        if args.inv_freq:
            inv_freq = rng.uniform(1e-4, 1.0, args.rotary_dim // 2)
            inv_freq = inv_freq.astype(np.float32)
            np.save(os.path.join(args.out, "inv_freq.npy"), inv_freq)
        y = rope(x, offsets, inv_freq, args.layout, args.rotary_dim, args.base,
                 args.scale, args.mscale)
    np.save(os.path.join(args.out, "y.npy"), y.astype(np.float32))


if __name__ == "__main__":
    main()
