#!/usr/bin/python3
"""Reference cases for bottom-right aligned causal attention (mha's causal(bottom_right)).

  /usr/bin/python3 make_causal_bottom_right.py --out test/vectors [--seed N]

Writes, in the layout of the other cases (README.md): float32 .npy inputs named like the graph's
arguments, y.npy computed in float64 by the plain NumPy reference below, and meta.json (with
"causal_bottom_right": true). Bottom-right: query i may attend key j only when j <= i + (S - T), so
the last query sees every key; with S < T queries i < T - S see no key, and by the dialect's rule a
row that attends no key has a zero attention output (its y is b_o). The reference builds the
allowed matrix with np.tril's diagonal offset, independently of mha's C++ reference. Needs Debian's
python3-numpy. PyTorch cross-check: torch.nn.attention.bias.causal_lower_right where importable.
"""
import argparse, json, math, os, sys
import numpy as np


def reference(a, c):
    """float64 attention output y [B, T, D_out] of the case (arrays a, config c)."""
    f = lambda k: np.asarray(a[k], np.float64)
    x = f("x"); kv = f("kv") if "kv" in a else x
    B, T, _ = x.shape; S = kv.shape[1]
    H, dk, dv = c["H"], c["dk"], c["dv"]
    q = (x @ f("w_q") + f("b_q")).reshape(B, T, H, dk).transpose(0, 2, 1, 3)
    k = (kv @ f("w_k") + f("b_k")).reshape(B, S, H, dk).transpose(0, 2, 1, 3)
    v = (kv @ f("w_v") + f("b_v")).reshape(B, S, H, dv).transpose(0, 2, 1, 3)
    s = q @ k.transpose(0, 1, 3, 2) * c["scale"]
    # Diagonal k = S - T: element (i, j) is kept when j <= i + (S - T).
    allowed = np.tril(np.ones((T, S), bool), k=S - T)[None, None]
    s = np.where(allowed, s, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    p = np.where(allowed, np.exp(s - m), 0.0)
    den = p.sum(axis=-1, keepdims=True)
    p = np.where(den > 0, p / np.where(den > 0, den, 1), 0.0)  # no key: zeros
    o = (p @ v).transpose(0, 2, 1, 3).reshape(B, T, H * dv)
    return o @ f("w_o") + f("b_o")


def torch_check(a, c):
    """The same attention through PyTorch's lower-right causal bias; None without it."""
    try:
        import torch
        from torch.nn.attention.bias import causal_lower_right
    except ImportError:
        return None
    t = lambda k: torch.from_numpy(np.asarray(a[k], np.float64))
    x = t("x"); kv = t("kv") if "kv" in a else x
    B, T, _ = x.shape; S = kv.shape[1]; H, dk, dv = c["H"], c["dk"], c["dv"]
    q = (x @ t("w_q") + t("b_q")).reshape(B, T, H, dk).transpose(1, 2)
    k = (kv @ t("w_k") + t("b_k")).reshape(B, S, H, dk).transpose(1, 2)
    v = (kv @ t("w_v") + t("b_v")).reshape(B, S, H, dv).transpose(1, 2)
    if S < T:
        return None  # PyTorch gives NaN for rows that see no key; our rule is zeros
    o = torch.nn.functional.scaled_dot_product_attention(
        q, k, v, attn_mask=causal_lower_right(T, S), scale=c["scale"])
    return (o.transpose(1, 2).reshape(B, T, H * dv) @ t("w_o") + t("b_o")).numpy()


def make(name, rng, B, T, S, D, H):
    dk = dv = D // H
    c = dict(name=name, B=B, T=T, S=S, D=D, D_kv=D, D_out=D, H=H, Hkv=H, dk=dk, dv=dv,
             causal=True, causal_bottom_right=True, split_first=False, bias=True,
             scale=1.0 / math.sqrt(dk), cross=True, mask=False, xscale=1.0)
    u = lambda *s, b=1.0: ((rng.random(s) * 2 - 1) * b).astype(np.float32)
    a = {"x": rng.standard_normal((B, T, D)).astype(np.float32),
         "kv": rng.standard_normal((B, S, D)).astype(np.float32)}
    for w in ("w_q", "w_k", "w_v"):
        a[w] = u(D, D, b=math.sqrt(6 / (2 * D)))
    a["w_o"] = u(D, D, b=math.sqrt(6 / (2 * D)))
    for b in ("b_q", "b_k", "b_v", "b_o"):
        a[b] = u(D, b=0.1)
    return a, c


def cases(rng):
    return [
        # More keys than queries (S - T = 5): query 0 already sees 6 keys.
        make("causal_bottom_right_cross", rng, 2, 7, 12, 32, 4),
        # Fewer keys than queries (S - T = -4): queries 0..3 see no key.
        make("causal_bottom_right_short", rng, 1, 9, 5, 16, 2),
    ]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=20261125)
    o = ap.parse_args()
    rng = np.random.default_rng(o.seed)
    for a, c in cases(rng):
        y = reference(a, c)
        yt = torch_check(a, c)
        c["torch_max_abs_diff"] = None if yt is None else float(np.abs(yt - y).max())
        a["y"] = y.astype(np.float32)
        d = os.path.join(o.out, c["name"]); os.makedirs(d, exist_ok=True)
        for k, v in a.items():
            np.save(os.path.join(d, k + ".npy"), np.ascontiguousarray(v))
        c["files"] = sorted(a)
        c["tolerance"] = {"atol": 1e-4, "rtol": 1e-4}
        with open(os.path.join(d, "meta.json"), "w") as fh:
            json.dump(c, fh, indent=1)
        print(f"{c['name']}: " + " ".join(f"{k}{list(v.shape)}" for k, v in a.items())
              + f"  torch diff {c['torch_max_abs_diff']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
