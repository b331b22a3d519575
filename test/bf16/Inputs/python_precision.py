"""mha.layer(dtype="bf16", bf16_precision=...): "fast" runs and stays
within twice the bf16 storage error (the float64 reference on the inputs
rounded to bf16 here, by bit arithmetic, against the float64 reference on
the float32 inputs), as mha-run --check holds a fast layer; "accurate"
within 1.5 times; any other value is a ValueError."""
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


def reference(a, heads):
    """The layer in float64 (no mask, not causal)."""
    x = a["x"]
    B, T, D = x.shape
    dk = D // heads

    def split(m):
        return m.reshape(B, T, heads, dk).transpose(0, 2, 1, 3)

    q, k, v = (split(x @ a["w_" + n] + a["b_" + n]) for n in "qkv")
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(dk)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    heads_out = (p @ v).transpose(0, 2, 1, 3).reshape(B, T, D)
    return heads_out @ a["w_o"] + a["b_o"]


B, T, D, H = 1, 64, 128, 2
rng = np.random.default_rng(7)
arrays = {"x": rng.uniform(-1, 1, (B, T, D))}
for n in "qkvo":
    arrays["w_" + n] = rng.uniform(-D ** -0.5, D ** -0.5, (D, D))
    arrays["b_" + n] = rng.uniform(-0.1, 0.1, D)
arrays = {n: a.astype(np.float32) for n, a in arrays.items()}
exact = reference({n: a.astype(np.float64) for n, a in arrays.items()}, H)
storage = np.abs(reference({n: round_bf16(a) for n, a in arrays.items()}, H)
                 - exact).max()

for precision, factor in (("fast", 2.0), ("accurate", 1.5)):
    layer = mha.layer(batch=B, seq=T, d_model=D, heads=H, dtype="bf16",
                      bf16_precision=precision)
    got = layer(**arrays)
    error = np.abs(got.astype(np.float64) - exact).max()
    check("bf16_precision=%r" % precision,
          got.shape == (B, T, D) and not np.isnan(got).any()
          and error <= factor * storage,
          " (error %.2f times the storage error, bound %.1f)"
          % (error / storage, factor))

graph = mha.layer_graph(batch=B, seq=T, d_model=D, heads=H, dtype="bf16")
got = mha.compile(graph, bf16_precision="fast")(**arrays)
error = np.abs(got.astype(np.float64) - exact).max()
check("compile(bf16_precision='fast')", error <= 2.0 * storage)

for call in (lambda: mha.layer(batch=B, seq=T, d_model=D, heads=H,
                               dtype="bf16", bf16_precision="medium"),
             lambda: mha.compile(graph, bf16_precision="medium")):
    try:
        call()
        check("bf16_precision='medium' raises ValueError", False)
    except ValueError as error:
        print("ValueError: %s" % error)

print("%d failures" % failures)
sys.exit(1 if failures else 0)
