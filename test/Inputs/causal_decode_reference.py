"""The float64 causal layer that the KV-cache checks compare against.

Written from the definition of multi-head attention, sharing no code with
the compiler or the C++ reference: used by test/integration/kv_cache_check.py
(f32 caches) and test/kv-cache-int8/Inputs/int8_cache_check.py (int8
caches), which read the case folders that the unit tests write
(MHA_KV_DUMP_DIR), by the differential test's decoding layers, and by the
Python decoding tests (test/python/Inputs/*decode.py), which also draw their
weights here (random_weights).
"""
import os

import numpy as np

WEIGHTS = ("w_q", "w_k", "w_v", "w_o", "b_q", "b_k", "b_v", "b_o")


def random_weights(rng, d_model, heads, kv_heads, dk, dv=None, bias=True):
    """A layer's weights (and biases) as the KV-cache tests draw them:
    float32, uniform in [-1, 1) times 1/sqrt(fan-in) (biases times 0.1),
    from `rng`; dv defaults to dk."""
    dv = dk if dv is None else dv

    def r(*shape, scale=1.0):
        return (rng.uniform(-1, 1, shape) * scale).astype(np.float32)
    w = {"w_q": r(d_model, heads * dk, scale=d_model ** -0.5),
         "w_k": r(d_model, kv_heads * dk, scale=d_model ** -0.5),
         "w_v": r(d_model, kv_heads * dv, scale=d_model ** -0.5),
         "w_o": r(heads * dv, d_model, scale=(heads * dv) ** -0.5)}
    if bias:
        w.update(b_q=r(heads * dk, scale=0.1), b_k=r(kv_heads * dk, scale=0.1),
                 b_v=r(kv_heads * dv, scale=0.1), b_o=r(d_model, scale=0.1))
    return w


def quantize(rows):
    """The int8 codes and scales of rows [..., d], float64: scale =
    max|x| / 127, codes round_half_even(x / scale) clamped to [-127, 127]
    (0 for a row of zeros)."""
    scale = np.abs(rows).max(axis=-1) / 127.0
    safe = np.where(scale == 0, 1.0, scale)
    codes = np.clip(np.rint(rows / safe[..., None]), -127, 127)
    codes = np.where(scale[..., None] == 0, 0, codes)
    return codes, scale


def project(x, w, heads_count, name):
    """x [T, D] @ w_name (+ b_name) as heads [Hx, T, d], float64."""
    rows = x.astype(np.float64) @ w["w_" + name] + w.get("b_" + name, 0.0)
    return rows.reshape(rows.shape[0], heads_count, -1).transpose(1, 0, 2)


def causal_layer(x, w, heads, kv_heads, quantized=False):
    """y [T, D] of causal self-attention over x [T, D], float64; with
    `quantized`, every key and value row is read as its int8 codes times
    its scale."""
    q = project(x, w, heads, "q")
    k = project(x, w, kv_heads, "k")
    v = project(x, w, kv_heads, "v")
    if quantized:
        kc, ks = quantize(k)
        vc, vs = quantize(v)
        k, v = kc * ks[..., None], vc * vs[..., None]
    t, dk = q.shape[1], q.shape[2]
    group = heads // kv_heads
    allowed = np.tril(np.ones((t, t), dtype=bool))
    out = []
    for h in range(heads):
        s = q[h] @ k[h // group].T / np.sqrt(dk)
        s = np.where(allowed, s, -np.inf)
        p = np.exp(s - s.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        out.append(p @ v[h // group])
    return np.concatenate(out, axis=1) @ w["w_o"] + w.get("b_o", 0.0)


class Case:
    """One case folder: tokens [B, total, D], the weights (biases where
    given), starts [B] (where each sequence's steps begin), sizes
    [H, Hkv, T0], and the outputs prefill [B, T0, D] (the first T0 tokens,
    lengths 0) and steps [N, B, D] (step n of sequence b is token
    starts[b] + n)."""

    def __init__(self, folder):
        self.folder = folder
        self.name = os.path.basename(folder)
        self.tokens, self.starts = self.load("tokens"), self.load("starts")
        self.heads, self.kv_heads, self.prefill_len = (
            int(v) for v in self.load("sizes"))
        self.weights = {name: self.load(name).astype(np.float64)
                        for name in WEIGHTS if self.has(name)}
        self.prefill, self.steps = self.load("prefill"), self.load("steps")

    def has(self, name):
        return os.path.exists(os.path.join(self.folder, name + ".npy"))

    def load(self, name):
        return np.load(os.path.join(self.folder, name + ".npy"))

    def rows(self):
        """(outputs, tokens, first) per sequence and call: the prefill's
        rows, then the steps' rows, with the tokens that lead to them and
        the index of the first output row among the reference's."""
        for b in range(self.tokens.shape[0]):
            yield self.prefill[b], self.tokens[b, :self.prefill_len], 0
            total = int(self.starts[b]) + self.steps.shape[0]
            yield (self.steps[:, b, :], self.tokens[b, :total],
                   int(self.starts[b]))

    def reference(self, tokens, first, quantized=False):
        return causal_layer(tokens, self.weights, self.heads, self.kv_heads,
                            quantized)[first:]


def check_folders(root, check):
    """Runs check(Case) on every case folder under root; prints the count
    and returns the exit status (1 if any case fails)."""
    folders = sorted(os.path.join(root, d) for d in os.listdir(root))
    results = [check(Case(folder)) for folder in folders]
    print("%d of %d cases agree with the float64 reference"
          % (sum(results), len(results)))
    return 0 if all(results) else 1
