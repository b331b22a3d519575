"""mha.layer(dtype="bf16"): float32 arrays in, rounded to bfloat16 (nearest
even) by the layer, float32 out. Compared with a float64 NumPy reference on
the same values rounded here, by bit arithmetic independent of the runtime's
rounding; the unrounded reference must differ by far more, or the rounding
did not happen. Static and `?` sizes, keywords, positional and prepare(), the
attention weights, and the errors of wrong dtypes."""
import sys

import numpy as np

import mha

failures = 0


def check(what, ok, detail=""):
    global failures
    print("%s: %s%s" % (what, "ok" if ok else "FAILED", detail))
    failures += not ok


def round_bf16(a):
    """float32 -> nearest bfloat16 (ties to even), as float64."""
    bits = a.astype(np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
    return bits.astype(np.uint32).view(np.float32).astype(np.float64)


def reference(a, heads, causal=False):
    """The layer in float64, and its softmax weights [B, H, T, T]."""
    x = a["x"]
    B, T, D = x.shape
    dk = D // heads

    def split(m):
        return m.reshape(B, T, heads, dk).transpose(0, 2, 1, 3)

    q, k, v = (split(x @ a["w_" + n] + a["b_" + n]) for n in "qkv")
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(dk)
    if causal:
        s = np.where(np.tril(np.ones((T, T), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    o = (p @ v).transpose(0, 2, 1, 3).reshape(B, T, D)
    return o @ a["w_o"] + a["b_o"], p


rng = np.random.default_rng(7)
B, T, D, H = 2, 9, 64, 4
for name, options in (("static", dict(batch=B, seq=T)),
                      ("dynamic", {}),
                      ("causal", dict(batch=B, seq=T, causal=True))):
    layer = mha.layer(d_model=D, heads=H, dtype="bf16", **options)
    dtypes = {n: t for n, _, t in layer.arguments}
    check(name + " arguments are bfloat16",
          set(dtypes.values()) == {"bfloat16"}, " %s" % sorted(set(dtypes.values())))
    arrays = {}
    for n, shape, _ in layer.arguments:
        shape = [B, T, D] if n == "x" else [s for s in shape]
        scale = 0.15 if n.startswith("w") else 1.0
        arrays[n] = (rng.standard_normal(shape) * scale).astype(np.float32)
    want, weights = reference({n: round_bf16(v) for n, v in arrays.items()},
                              H, options.get("causal", False))
    unrounded, _ = reference({n: v.astype(np.float64) for n, v in arrays.items()},
                             H, options.get("causal", False))
    y = layer(**arrays)
    error = np.abs(y - want).max()
    storage = np.abs(unrounded - want).max()
    check(name + " keywords", y.dtype == np.float32 and error < 2e-5
          and storage > 100 * error,
          " max abs error %.2e, storage error %.2e" % (error, storage))
    y2 = layer(*[arrays[n] for n, _, _ in layer.arguments])
    check(name + " positional", np.array_equal(y, y2))
    # A non-contiguous x is copied, then rounded.
    wide = np.zeros((B, T, 2 * D), np.float32)
    wide[:, :, ::2] = arrays["x"]
    y3 = layer(**{**arrays, "x": wide[:, :, ::2]})
    check(name + " strided x", np.array_equal(y, y3))
    layer.prepare(**{n: v for n, v in arrays.items() if n != "x"})
    y4 = layer(arrays["x"])
    check(name + " prepared", np.abs(y4 - want).max() < 2e-5)
    got = layer.attention_weights(arrays["x"])
    check(name + " attention weights", got.shape == weights.shape
          and np.abs(got - weights).max() < 2e-5,
          " max abs error %.2e" % np.abs(got - weights).max())

layer = mha.layer(d_model=D, heads=H, batch=B, seq=T, dtype="bf16")
arrays = {n: np.zeros(s, np.float32) for n, s, _ in layer.arguments}
for dtype in (np.float64, np.uint16):
    try:
        layer(**{**arrays, "w_q": arrays["w_q"].astype(dtype)})
        check("w_q of dtype %s refused" % np.dtype(dtype), False)
    except ValueError as error:
        print("ValueError:", error)
try:
    mha.layer(d_model=D, heads=H, dtype="float16")
    check("dtype float16 refused", False)
except ValueError as error:
    print("ValueError:", error)

print("%d failures" % failures)
sys.exit(1 if failures else 0)
