"""The float64 layer of the differential test (differential.py, decoding.py).

Written from the semantics of test/vectors/README.md and of mha.attention's
description in dialects/MhaAttentionOps.td, sharing no code with the
compiler or its C++ reference: the classic layer, the served models' steps
in mha.sdpa's order, and the keys and values as a decoding layer's cache
holds them (int8: the quantization of test/Inputs/causal_decode_reference.py;
bf16: round to nearest even). `--check-reference` of differential.py runs it
on every case of test/vectors.
"""

import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Inputs"))
from causal_decode_reference import quantize  # noqa: E402


# Frequencies and slopes of the published models, copied from
# test/vectors/make_model_variants.py (NumPy ports of transformers' code).

def default_inv_freq(base, dim):
    return 1.0 / base ** (np.arange(0, dim, 2, dtype=np.float64) / dim)


def llama3_inv_freq(base, dim, factor, low_freq_factor, high_freq_factor, old_context_len):
    """Llama 3.1: long wavelengths divided by factor, short ones kept, a smooth ramp between."""
    inv = default_inv_freq(base, dim)
    wavelen = 2 * np.pi / inv
    low_wavelen = old_context_len / low_freq_factor
    high_wavelen = old_context_len / high_freq_factor
    out = np.empty_like(inv)
    for i, (f, w) in enumerate(zip(inv, wavelen)):
        if w < high_wavelen:
            out[i] = f
        elif w > low_wavelen:
            out[i] = f / factor
        else:
            smooth = (old_context_len / w - low_freq_factor) / (high_freq_factor - low_freq_factor)
            out[i] = (1 - smooth) * f / factor + smooth * f
    return out


def yarn_inv_freq(base, dim, factor, original_max, beta_fast=32.0, beta_slow=1.0):
    """YaRN as gpt-oss configures it: returns (inv_freq, mscale)."""
    def correction_dim(rotations):
        return dim * np.log(original_max / (rotations * 2 * np.pi)) / (2 * np.log(base))
    low = max(correction_dim(beta_fast), 0.0)
    high = min(correction_dim(beta_slow), dim - 1.0)
    if low == high:
        high += 0.001
    ramp = np.clip((np.arange(dim // 2, dtype=np.float64) - low) / (high - low), 0, 1)
    extrapolation = 1 - ramp
    pos_freqs = base ** (np.arange(0, dim, 2, dtype=np.float64) / dim)
    inv = (1 / (factor * pos_freqs)) * (1 - extrapolation) + (1 / pos_freqs) * extrapolation
    return inv, float(0.1 * np.log(factor) + 1.0)


def bloom_slopes(n_heads):
    """BLOOM's ALiBi slopes (build_alibi_tensor)."""
    p = 2 ** int(np.floor(np.log2(n_heads)))
    base = 2.0 ** (-(2.0 ** -(np.log2(p) - 3)))
    slopes = [base ** k for k in range(1, p + 1)]
    if p != n_heads:
        extra = 2.0 ** (-(2.0 ** -(np.log2(2 * p) - 3)))
        slopes += [extra ** k for k in range(1, 2 * min(p, n_heads - p), 2)]
    return np.array(slopes)


def causal_allowed(c):
    """[T, S]: key j allowed for query i: j <= i when causal (top-left),
    j <= i + S - T when aligned bottom-right (queries i < T - S see none);
    with a window W also j > p_i - W (p_i: i or i + S - T)."""
    T, S = c["T"], c["S"]
    if not c["causal"]:
        return np.ones((T, S), dtype=bool)
    position = query_positions(c)[:, None]
    allowed = np.arange(S)[None, :] <= position
    if c.get("window") is not None:
        # The window: W keys up to the query's own position.
        allowed &= np.arange(S)[None, :] > position - c["window"]
    return allowed


def query_positions(c):
    """[T]: the position p_i of query i among the keys: i, or i + S - T
    when causal is aligned bottom-right."""
    offset = c["S"] - c["T"] if c["causal"] and c.get("causal_bottom_right") else 0
    return np.arange(c["T"]) + offset


def reference(c, inputs):
    """The layer in float64, from the semantics of test/vectors/README.md."""
    B, T, S, D, Dkv = c["B"], c["T"], c["S"], c["D"], c["Dkv"]
    H, Hkv, dk, dv = c["H"], c["Hkv"], c["dk"], c["dv"]
    f = {k: v.astype(np.float64) for k, v in inputs.items() if k != "mask"}
    x = f["x"]
    kv = f["kv"] if c["cross"] else x
    zero = np.zeros
    b_q = f.get("b_q", zero(H * dk))
    b_k = f.get("b_k", zero(Hkv * dk))
    b_v = f.get("b_v", zero(Hkv * dv))
    b_o = f.get("b_o", zero(c["Dout"]))
    if c["split_first"]:
        # Head h projects its own contiguous slice of width D/H with w_q[h].
        xs = x.reshape(B, T, H, D // H)
        kvs = kv.reshape(B, S, Hkv, Dkv // Hkv)
        q = np.einsum("bthw,hwd->bhtd", xs, f["w_q"])
        k = np.einsum("bshw,hwd->bhsd", kvs, f["w_k"])
        v = np.einsum("bshw,hwd->bhsd", kvs, f["w_v"])
        q = q + b_q.reshape(H, 1, dk)
        k = k + b_k.reshape(Hkv, 1, dk)
        v = v + b_v.reshape(Hkv, 1, dv)
    else:
        # Head h owns columns h*d ... (h+1)*d - 1 of the projection.
        q = (x @ f["w_q"] + b_q).reshape(B, T, H, dk).transpose(0, 2, 1, 3)
        k = (kv @ f["w_k"] + b_k).reshape(B, S, Hkv, dk).transpose(0, 2, 1, 3)
        v = (kv @ f["w_v"] + b_v).reshape(B, S, Hkv, dv).transpose(0, 2, 1, 3)
    # The served models' steps on Q and K (mha.attention's description in
    # dialects/MhaOps.td): QK-norm, an RMSNorm of each head's features
    # (eps 1e-6 unless given), then RoPE at positions 0 .. T-1.
    if "qk_norm_eps" in c:
        eps = 1e-6 if c["qk_norm_eps"] is None else c["qk_norm_eps"]
        q = q / np.sqrt((q * q).mean(-1, keepdims=True) + eps) * f["q_norm"]
        k = k / np.sqrt((k * k).mean(-1, keepdims=True) + eps) * f["k_norm"]
    if c.get("rope"):
        q = rope_np(q, c["rope"], f.get("rope_inv_freq"))
        k = rope_np(k, c["rope"], f.get("rope_inv_freq"))
    # A decoding layer reads its keys and values as its cache holds them.
    k, v = cache_rows(c, k), cache_rows(c, v)
    group = H // Hkv
    allowed = np.broadcast_to(causal_allowed(c), (B, T, S))
    if c["mask"]:
        allowed = allowed & inputs["mask"]  # [1, T, S] broadcasts over B
    # j - p_i, the distance of ALiBi
    distance = np.arange(S)[None, :] - query_positions(c)[:, None]
    heads = np.zeros((B, T, H * dv))
    for h in range(H):
        g = h // group  # grouped-query: query head h reads kv head h / (H/Hkv)
        # The score steps in mha.sdpa's order: scale, softcap, ALiBi, bias,
        # mask / causal / window, sinks in the denominator.
        scores = q[:, h] @ k[:, g].transpose(0, 2, 1)
        scores = scores / np.sqrt(dk) if c.get("scale") is None else scores * c["scale"]
        if c.get("softcap") is not None:
            scores = c["softcap"] * np.tanh(scores / c["softcap"])
        if c.get("alibi"):
            scores = scores + f["alibi_slopes"][h] * distance
        if c.get("attn_bias"):
            ab = f["attn_bias"]  # [B or 1, H or 1, T or 1, S]
            scores = scores + ab[:, min(h, ab.shape[1] - 1)]
        scores = np.where(allowed, scores, -np.inf)
        finite = np.isfinite(scores)  # -inf: a masked key or a bias of -inf
        row_max = np.where(finite, scores, -np.inf).max(axis=-1, keepdims=True)
        if c.get("sinks"):
            row_max = np.maximum(row_max, f["sinks"][h])
        row_max = np.where(np.isfinite(row_max), row_max, 0.0)
        p = np.exp(np.where(finite, scores - row_max, -np.inf))
        denom = p.sum(axis=-1, keepdims=True)
        if c.get("sinks"):
            denom = denom + np.exp(f["sinks"][h] - row_max)
        # A row that may attend no key gives zeros, never NaN (sinks or not).
        p = np.divide(p, denom, out=np.zeros_like(p),
                      where=(denom > 0) & finite.any(axis=-1, keepdims=True))
        heads[:, :, h * dv:(h + 1) * dv] = p @ v[:, g]
    return heads @ f["w_o"] + b_o


def rope_np(x, rope, inv_freq):
    """RoPE (from test/vectors/make_model_variants.py): rotates the first R
    features of every head of x [B, heads, T, dk] by position / scale times
    the frequency, cos and sin times mscale: pairs (i, i + R/2) for the half
    layout, (2i, 2i + 1) for the interleaved one."""
    R = rope["rotary_dim"]
    inv = inv_freq if inv_freq is not None else \
        float(rope["base"]) ** (-np.arange(R // 2, dtype=np.float64) * 2 / R)
    pos = np.arange(x.shape[2], dtype=np.float64) / rope["scale"]
    angle = pos[:, None] * inv[None, :]  # [T, R/2]
    cos, sin = rope["mscale"] * np.cos(angle), rope["mscale"] * np.sin(angle)
    if rope["layout"] == "half":
        first, second = np.arange(R // 2), np.arange(R // 2) + R // 2
    else:
        first, second = np.arange(0, R, 2), np.arange(1, R, 2)
    out = x.copy()
    u, v = x[..., first], x[..., second]
    out[..., first] = u * cos - v * sin
    out[..., second] = v * cos + u * sin
    return out


def config_of_meta(m):
    """The configuration of a reference case's meta.json (test/vectors/README.md;
    the served models' options of test/vectors/model_variants as
    make_model_variants.py writes them). None if it has an option this
    script cannot express."""
    c = {"B": m["B"], "T": m["T"], "S": m["S"], "D": m["D"], "Dkv": m["D_kv"],
         "Dout": m["D_out"], "H": m["H"], "Hkv": m["Hkv"], "dk": m["dk"], "dv": m["dv"],
         "causal": m["causal"],
         "causal_bottom_right": m.get("causal_bottom_right", False),
         "split_first": m["split_first"], "bias": m["bias"],
         "cross": m["cross"], "mask": "full" if m["mask"] else None}
    # (xscale is how the inputs were drawn: x.npy has it already.)
    if m.get("positions", "0..T-1") != "0..T-1":
        return None
    if abs(m["scale"] - 1 / np.sqrt(m["dk"])) >= 1e-12:
        c["scale"] = m["scale"]
    rope = m.get("rope")
    if rope:
        c["rope"] = {"layout": rope["layout"], "base": rope["base"],
                     "rotary_dim": rope["rotary_dim"], "scale": rope["scale"],
                     "mscale": rope["mscale"]}
    if m.get("qk_norm_eps") is not None:
        c["qk_norm_eps"] = m["qk_norm_eps"]
    for key in ("window", "softcap", "attn_bias"):
        if m.get(key) is not None:
            c[key] = m[key]
    for key in ("alibi", "sinks"):
        if m.get(key):
            c[key] = True
    return c


def check_reference(vectors):
    """Runs reference() on the cases of test/vectors (meta.json, inputs,
    y.npy) and of its subfolders (model_variants/...): the reference of this
    script against the team's. Returns the number of cases that differ by
    more than their tolerance."""
    bad = 0
    cases = []
    for case in sorted(os.listdir(vectors)):
        folder = os.path.join(vectors, case)
        if os.path.isfile(os.path.join(folder, "meta.json")):
            cases.append(case)
        elif os.path.isdir(folder):
            cases += [case + "/" + sub for sub in sorted(os.listdir(folder))
                      if os.path.isfile(os.path.join(folder, sub, "meta.json"))]
    for case in cases:
        folder = os.path.join(vectors, case)
        with open(os.path.join(folder, "meta.json")) as f:
            m = json.load(f)
        c = config_of_meta(m)
        if c is None:
            print("reference %s: an option this script does not draw: FAILED" % case)
            bad += 1
            continue
        inputs = {name: np.load(os.path.join(folder, name + ".npy"))
                  for name in m["files"] if name != "y"}
        expected = np.load(os.path.join(folder, "y.npy"))
        with np.errstate(all="raise", under="ignore"):
            got = reference(c, inputs)
        tol = m["tolerance"]
        ok = (got.shape == expected.shape and
              np.all(np.abs(got - expected) <= tol["atol"] + tol["rtol"] * np.abs(expected)))
        print("reference %s: max abs difference %.1e: %s" % (
            case, float(np.abs(got - expected).max()) if got.shape == expected.shape else np.inf,
            "ok" if ok else "FAILED"))
        bad += not ok
    return bad


def bf16(a):
    """a rounded to the nearest bfloat16 (ties to even), as float64."""
    bits = np.asarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return bits.astype(np.uint32).view(np.float32).astype(np.float64)


def cache_rows(c, rows):
    """Keys or values [..., d] as the cache holds them, float64."""
    if c.get("cache") == "int8":
        codes, scale = quantize(rows)
        return codes * scale[..., None]
    if c.get("cache") == "bf16":
        return bf16(rows)
    return rows
